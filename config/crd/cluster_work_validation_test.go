package crd

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// indentYAML re-indents a flush-left YAML fragment (leading newline trimmed)
// so it can sit under a key at the given depth.
func indentYAML(fragment string, spaces int) string {
	pad := strings.Repeat(" ", spaces)
	lines := strings.Split(strings.Trim(fragment, "\n"), "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = pad + l
		}
	}
	return strings.Join(lines, "\n")
}

// clusterWithSpec is a Cluster named member1 with the given spec.
func clusterWithSpec(spec string) string {
	return `
apiVersion: cluster.karmada.io/v1alpha1
kind: Cluster
metadata:
  name: member1
spec:
` + indentYAML(spec, 2)
}

// pushSpec is the spec of a minimal valid Push cluster, to extend.
const pushSpec = `
syncMode: Push
apiEndpoint: https://10.0.0.1:6443
secretRef:
  namespace: karmada-cluster
  name: member1
`

// workWithSpec is a Work with the given spec (runValidationCases puts it in
// "default"; the API server does not care that it is no execution namespace).
func workWithSpec(spec string) string {
	return `
apiVersion: work.karmada.io/v1alpha1
kind: Work
metadata:
  name: nginx-687f7fb96f
spec:
` + indentYAML(spec, 2)
}

// ricWithSpec is a ResourceInterpreterCustomization with the given spec.
func ricWithSpec(spec string) string {
	return `
apiVersion: config.karmada.io/v1alpha1
kind: ResourceInterpreterCustomization
metadata:
  name: workload-customization
spec:
` + indentYAML(spec, 2)
}

// riwcWithWebhook is a ResourceInterpreterWebhookConfiguration holding one
// webhook written in full by the caller (a list item without the dash).
func riwcWithWebhook(webhook string) string {
	return `
apiVersion: config.karmada.io/v1alpha1
kind: ResourceInterpreterWebhookConfiguration
metadata:
  name: examples
webhooks:
- ` + strings.TrimPrefix(indentYAML(webhook, 2), "  ")
}

// webhookWithRule is a valid URL webhook with the given rules list.
func webhookWithRule(rules string) string {
	return `
name: workloads.example.com
clientConfig:
  url: https://interpreter.example.com:443/interpret
interpreterContextVersions: [v1alpha1]
rules:
` + indentYAML(rules, 0)
}

// wrWithSpec is a WorkloadRebalancer with the given spec.
func wrWithSpec(spec string) string {
	return `
apiVersion: apps.karmada.io/v1alpha1
kind: WorkloadRebalancer
metadata:
  name: rebalance-nginx
spec:
` + indentYAML(spec, 2)
}

// dryRunCreate creates manifest with a server-side dry run and returns the
// object as the API server would have stored it (defaults applied, unknown
// fields pruned).
func dryRunCreate(t *testing.T, manifest string) *unstructured.Unstructured {
	t.Helper()
	obj := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(manifest), &obj.Object); err != nil {
		t.Fatalf("bad test manifest: %v", err)
	}
	namespaced, err := apiClient.IsObjectNamespaced(obj)
	if err != nil {
		t.Fatalf("resolving %s: %v", obj.GroupVersionKind(), err)
	}
	if namespaced && obj.GetNamespace() == "" {
		obj.SetNamespace("default")
	}
	if err := apiClient.Create(context.Background(), obj, client.DryRunAll); err != nil {
		t.Fatalf("want accepted, got: %v", err)
	}
	return obj
}

func TestClusterValidation(t *testing.T) {
	t.Run("spec.id is write-once", func(t *testing.T) {
		ctx := context.Background()
		obj := &unstructured.Unstructured{}
		manifest := strings.Replace(clusterWithSpec(pushSpec+"id: 6b1f3c2e-0000-4000-8000-000000000001\n"),
			"name: member1", "name: id-immutable", 1)
		if err := yaml.Unmarshal([]byte(manifest), &obj.Object); err != nil {
			t.Fatal(err)
		}
		if err := apiClient.Create(ctx, obj); err != nil {
			t.Fatalf("creating: %v", err)
		}
		t.Cleanup(func() { _ = apiClient.Delete(context.Background(), obj) })

		changed := obj.DeepCopy()
		_ = unstructured.SetNestedField(changed.Object, "another-cluster", "spec", "id")
		err := apiClient.Update(ctx, changed, client.DryRunAll)
		if err == nil || !strings.Contains(err.Error(), "spec.id is immutable once set") {
			t.Errorf("changing spec.id: want rejected as immutable, got %v", err)
		}

		same := obj.DeepCopy()
		_ = unstructured.SetNestedField(same.Object, "eu-west-1", "spec", "region")
		if err := apiClient.Update(ctx, same, client.DryRunAll); err != nil {
			t.Errorf("updating another field with the id unchanged: %v", err)
		}
	})

	runValidationCases(t, []validationCase{
		// Realistic clusters that must be accepted.
		{
			name: "Push cluster with credentials, taints and resource models",
			manifest: clusterWithSpec(pushSpec + `
id: 6b1f3c2e-9a4d-4e1b-8f2a-3c5d7e9f1a2b
impersonatorSecretRef:
  namespace: karmada-cluster
  name: member1-impersonator
provider: aws
region: eu-west-1
zones: [eu-west-1a, eu-west-1b]
proxyURL: socks5://proxy.internal:1080
proxyHeader:
  Proxy-Authorization: Basic dXNlcjpwYXNz
taints:
- key: cluster.karmada.io/unschedulable
  effect: NoSchedule
- key: dedicated
  value: gpu
  effect: NoExecute
  timeAdded: "2026-01-02T03:04:05Z"
- key: dedicated
  value: gpu
  effect: PreferNoSchedule
resourceModels:
- grade: 0
  ranges:
  - {name: cpu, min: 0, max: 1}
  - {name: memory, min: "0", max: 4Gi}
- grade: 1
  ranges:
  - {name: cpu, min: 1, max: 4}
  - {name: memory, min: 4Gi, max: 16Gi}
- grade: 2
  ranges:
  - {name: cpu, min: 4, max: "9223372036854775807"}
  - {name: memory, min: 16Gi, max: "9223372036854775807"}
`),
		},
		{
			name: "Pull cluster without an endpoint",
			manifest: clusterWithSpec(`
syncMode: Pull
region: us-east-1
zone: us-east-1a
`),
		},
		{
			name:     "Push cluster skipping TLS verification, no secretRef",
			manifest: clusterWithSpec("syncMode: Push\napiEndpoint: https://127.0.0.1:34567\ninsecureSkipTLSVerification: true\n"),
		},

		// spec and syncMode.
		{
			name:     "no spec",
			manifest: "apiVersion: cluster.karmada.io/v1alpha1\nkind: Cluster\nmetadata:\n  name: member1\n",
			wantErr:  []string{"spec", "Required value"},
		},
		{
			name:     "no syncMode",
			manifest: clusterWithSpec("apiEndpoint: https://10.0.0.1:6443\n"),
			wantErr:  []string{"spec.syncMode", "Required value"},
		},
		{
			name:     "unknown syncMode",
			manifest: clusterWithSpec("syncMode: Both\napiEndpoint: https://10.0.0.1:6443\n"),
			wantErr:  []string{"spec.syncMode", "Unsupported value", `"Both"`},
		},

		// Endpoints and proxies.
		{
			name:     "Push cluster without apiEndpoint",
			manifest: clusterWithSpec("syncMode: Push\nsecretRef: {namespace: karmada-cluster, name: member1}\n"),
			wantErr:  []string{"spec", "spec.apiEndpoint is required when spec.syncMode is Push"},
		},
		{
			name:     "Push cluster with an empty apiEndpoint",
			manifest: clusterWithSpec("syncMode: Push\napiEndpoint: \"\"\n"),
			wantErr:  []string{"spec.apiEndpoint is required when spec.syncMode is Push"},
		},
		{
			name:     "apiEndpoint that is not a URL",
			manifest: clusterWithSpec("syncMode: Push\napiEndpoint: not a url\n"),
			wantErr:  []string{"spec.apiEndpoint", "must be an http(s) URL with a host"},
		},
		{
			name:     "apiEndpoint that is a bare path",
			manifest: clusterWithSpec("syncMode: Push\napiEndpoint: /api\n"),
			wantErr:  []string{"spec.apiEndpoint", "must be an http(s) URL with a host"},
		},
		{
			name:     "apiEndpoint with another scheme",
			manifest: clusterWithSpec("syncMode: Push\napiEndpoint: unix:///var/run/kube.sock\n"),
			wantErr:  []string{"spec.apiEndpoint", "must be an http(s) URL with a host"},
		},
		{
			name:     "proxyURL with an unsupported scheme",
			manifest: clusterWithSpec(pushSpec + "proxyURL: ftp://proxy.internal:21\n"),
			wantErr:  []string{"spec.proxyURL", "must be an http, https or socks5 URL"},
		},

		// Secret references.
		{
			name:     "secretRef without a name",
			manifest: clusterWithSpec("syncMode: Push\napiEndpoint: https://10.0.0.1:6443\nsecretRef: {namespace: karmada-cluster}\n"),
			wantErr:  []string{"spec.secretRef.name", "Required value"},
		},
		{
			name:     "impersonatorSecretRef without a namespace",
			manifest: clusterWithSpec(pushSpec + "impersonatorSecretRef: {name: member1-impersonator}\n"),
			wantErr:  []string{"spec.impersonatorSecretRef.namespace", "Required value"},
		},

		// Taints.
		{
			name:     "taint with an unknown effect",
			manifest: clusterWithSpec(pushSpec + "taints:\n- {key: dedicated, effect: NoRun}\n"),
			wantErr:  []string{"spec.taints", "spec.taints[].effect must be one of NoSchedule, PreferNoSchedule, NoExecute"},
		},
		{
			name:     "taint without an effect",
			manifest: clusterWithSpec(pushSpec + "taints:\n- {key: dedicated}\n"),
			wantErr:  []string{"spec.taints[0].effect", "Required value"},
		},
		{
			name:     "same taint key and effect twice",
			manifest: clusterWithSpec(pushSpec + "taints:\n- {key: dedicated, value: a, effect: NoSchedule}\n- {key: dedicated, value: b, effect: NoSchedule}\n"),
			wantErr:  []string{"spec.taints[1]", "Duplicate value"},
		},

		// Resource models.
		{
			name: "resource models out of grade order",
			manifest: clusterWithSpec(pushSpec + `
resourceModels:
- grade: 1
  ranges: [{name: cpu, min: 1, max: 2}]
- grade: 0
  ranges: [{name: cpu, min: 0, max: 1}]
`),
			wantErr: []string{"spec.resourceModels", "spec.resourceModels must be sorted by ascending grade"},
		},
		{
			name: "two resource models with the same grade",
			manifest: clusterWithSpec(pushSpec + `
resourceModels:
- grade: 0
  ranges: [{name: cpu, min: 0, max: 1}]
- grade: 0
  ranges: [{name: cpu, min: 1, max: 2}]
`),
			wantErr: []string{"spec.resourceModels[1]", "Duplicate value"},
		},
		{
			name: "resource models naming different resources",
			manifest: clusterWithSpec(pushSpec + `
resourceModels:
- grade: 0
  ranges: [{name: cpu, min: 0, max: 1}, {name: memory, min: 0, max: 4Gi}]
- grade: 1
  ranges: [{name: memory, min: 4Gi, max: 8Gi}, {name: cpu, min: 1, max: 2}]
`),
			wantErr: []string{"spec.resourceModels", "must name the same resources in the same order in every model"},
		},
		{
			name:     "resource model without ranges",
			manifest: clusterWithSpec(pushSpec + "resourceModels:\n- grade: 0\n  ranges: []\n"),
			wantErr:  []string{"spec.resourceModels[0].ranges", "should have at least 1 items"},
		},
		{
			name:     "resource model range bound that is not a quantity",
			manifest: clusterWithSpec(pushSpec + "resourceModels:\n- grade: 0\n  ranges: [{name: cpu, min: zero, max: 1}]\n"),
			wantErr:  []string{"spec.resourceModels[0].ranges[0].min", "should match"},
		},
		{
			name:     "resource model range without max",
			manifest: clusterWithSpec(pushSpec + "resourceModels:\n- grade: 0\n  ranges: [{name: cpu, min: 0}]\n"),
			wantErr:  []string{"spec.resourceModels[0].ranges[0].max", "Required value"},
		},
	})
}

func TestWorkValidation(t *testing.T) {
	const deployment = `
workload:
  manifests:
  - apiVersion: apps/v1
    kind: Deployment
    metadata:
      name: nginx
      namespace: default
      labels:
        app: nginx
        karmada.io/managed: "true"
      annotations:
        resourcetemplate.karmada.io/uid: 0f6b1c8e-2d3a-4b5c-9d7e-1a2b3c4d5e6f
        resourcetemplate.karmada.io/generation: "3"
        work.karmada.io/conflict-resolution: overwrite
    spec:
      replicas: 2
      selector:
        matchLabels: {app: nginx}
      template:
        metadata:
          labels: {app: nginx}
        spec:
          containers:
          - name: nginx
            image: nginx:1.27
            resources:
              requests: {cpu: 100m, memory: 128Mi}
`

	t.Run("manifests are kept verbatim", func(t *testing.T) {
		obj := dryRunCreate(t, workWithSpec(deployment))
		manifests, _, _ := unstructured.NestedSlice(obj.Object, "spec", "workload", "manifests")
		if len(manifests) != 1 {
			t.Fatalf("want 1 manifest back, got %d", len(manifests))
		}
		m := manifests[0].(map[string]any)
		if got, _, _ := unstructured.NestedInt64(m, "spec", "replicas"); got != 2 {
			t.Errorf("spec.replicas of the manifest: want 2, got %d (pruned?)", got)
		}
		if got, _, _ := unstructured.NestedString(m, "metadata", "annotations", "work.karmada.io/conflict-resolution"); got != "overwrite" {
			t.Errorf("manifest annotation: want overwrite, got %q", got)
		}
	})

	runValidationCases(t, []validationCase{
		// Realistic Works that must be accepted.
		{name: "Work with a Deployment manifest", manifest: workWithSpec(deployment)},
		{
			name: "suspended Work with several manifests, one of a custom kind",
			manifest: workWithSpec(`
suspendDispatching: true
preserveResourcesOnDeletion: true
workload:
  manifests:
  - apiVersion: v1
    kind: ConfigMap
    metadata: {name: nginx-conf, namespace: default}
    data: {nginx.conf: "worker_processes 1;"}
  - apiVersion: v1
    kind: Service
    metadata: {name: nginx, namespace: default}
    spec:
      ports: [{port: 80, targetPort: 8080}]
  - apiVersion: workload.example.io/v1alpha1
    kind: Workload
    metadata: {name: sample, namespace: default}
    spec:
      anything: {goes: [1, 2, 3]}
    status:
      readyReplicas: 1
`),
		},
		{name: "Work with an empty spec", manifest: workWithSpec("{}")},

		{
			name:     "no spec",
			manifest: "apiVersion: work.karmada.io/v1alpha1\nkind: Work\nmetadata:\n  name: w\n",
			wantErr:  []string{"spec", "Required value"},
		},
		{
			name:     "manifest without kind",
			manifest: workWithSpec("workload:\n  manifests:\n  - apiVersion: v1\n    metadata: {name: a}\n"),
			wantErr:  []string{"spec.workload.manifests[0].kind", "Required value"},
		},
		{
			name:     "manifest without apiVersion",
			manifest: workWithSpec("workload:\n  manifests:\n  - kind: ConfigMap\n    metadata: {name: a}\n"),
			wantErr:  []string{"spec.workload.manifests[0].apiVersion", "Required value"},
		},
		{
			name:     "manifest with a malformed apiVersion",
			manifest: workWithSpec("workload:\n  manifests:\n  - {apiVersion: a/b/c, kind: ConfigMap, metadata: {name: a}}\n"),
			wantErr:  []string{"spec.workload.manifests[0].apiVersion", "Invalid value"},
		},
		{
			name:     "manifest with an invalid label key",
			manifest: workWithSpec("workload:\n  manifests:\n  - apiVersion: v1\n    kind: ConfigMap\n    metadata:\n      name: a\n      labels: {\"bad key!\": x}\n"),
			wantErr:  []string{"spec.workload.manifests[0].metadata.labels", "Invalid value"},
		},
		{
			name:     "manifest that is not an object",
			manifest: workWithSpec("workload:\n  manifests:\n  - just a string\n"),
			wantErr:  []string{"spec.workload.manifests[0]", "must be of type object"},
		},
		{
			name:     "suspendDispatching that is not a boolean",
			manifest: workWithSpec("suspendDispatching: \"yes\"\n"),
			wantErr:  []string{"spec.suspendDispatching", "must be of type boolean"},
		},
	})
}

func TestInterpreterConfigValidation(t *testing.T) {
	const target = `
target:
  apiVersion: workload.example.io/v1alpha1
  kind: Workload
`
	t.Run("webhook timeout defaults to 10 seconds", func(t *testing.T) {
		obj := dryRunCreate(t, riwcWithWebhook(webhookWithRule("- {operations: ['*'], apiGroups: ['*'], apiVersions: ['*'], kinds: ['*']}")))
		webhooks, _, _ := unstructured.NestedSlice(obj.Object, "webhooks")
		if len(webhooks) != 1 {
			t.Fatalf("want 1 webhook back, got %d", len(webhooks))
		}
		got, found, _ := unstructured.NestedInt64(webhooks[0].(map[string]any), "timeoutSeconds")
		if !found || got != 10 {
			t.Errorf("timeoutSeconds: want defaulted to 10, got %d (found=%v)", got, found)
		}
	})

	runValidationCases(t, []validationCase{
		// ResourceInterpreterCustomization: realistic objects.
		{
			name: "customization with every Lua rule",
			manifest: ricWithSpec(target + `
customizations:
  replicaResource:
    luaScript: |
      local kube = require("kube")
      function GetReplicas(obj)
        local replica = obj.spec.replicas
        local requires = kube.accuratePodRequirements(obj.spec.template)
        return replica, requires
      end
  componentResource:
    luaScript: |
      function GetComponents(obj)
        return {{name = "main", replicas = obj.spec.replicas}}
      end
  replicaRevision:
    luaScript: |
      function ReviseReplica(obj, desiredReplica)
        obj.spec.replicas = desiredReplica
        return obj
      end
  retention:
    luaScript: |
      function Retain(desiredObj, observedObj)
        desiredObj.spec.paused = observedObj.spec.paused
        return desiredObj
      end
  statusReflection:
    luaScript: |
      function ReflectStatus(observedObj)
        return {readyReplicas = observedObj.status.readyReplicas}
      end
  statusAggregation:
    luaScript: |
      function AggregateStatus(desiredObj, statusItems)
        local ready = 0
        for i = 1, #statusItems do
          ready = ready + (statusItems[i].status.readyReplicas or 0)
        end
        desiredObj.status = {readyReplicas = ready}
        return desiredObj
      end
  healthInterpretation:
    luaScript: |
      function InterpretHealth(observedObj)
        return observedObj.status.readyReplicas == observedObj.spec.replicas
      end
  dependencyInterpretation:
    luaScript: |
      local kube = require("kube")
      function GetDependencies(desiredObj)
        return kube.getPodDependencies(desiredObj.spec.template, desiredObj.metadata.namespace)
      end
`),
		},
		{
			name: "customization of a core kind with one rule",
			manifest: ricWithSpec(`
target: {apiVersion: v1, kind: Service}
customizations:
  healthInterpretation:
    luaScript: "function InterpretHealth(observedObj) return true end"
`),
		},

		// ResourceInterpreterCustomization: rejections.
		{
			name:     "customization without target",
			manifest: ricWithSpec("customizations: {}\n"),
			wantErr:  []string{"spec.target", "Required value"},
		},
		{
			name:     "customization target without kind",
			manifest: ricWithSpec("target: {apiVersion: apps/v1}\ncustomizations: {}\n"),
			wantErr:  []string{"spec.target.kind", "Required value"},
		},
		{
			name:     "customization target with an empty apiVersion",
			manifest: ricWithSpec("target: {apiVersion: \"\", kind: Deployment}\ncustomizations: {}\n"),
			wantErr:  []string{"spec.target.apiVersion", "should be at least 1 chars long"},
		},
		{
			name:     "customization target with a malformed apiVersion",
			manifest: ricWithSpec("target: {apiVersion: apps/v1/beta, kind: Deployment}\ncustomizations: {}\n"),
			wantErr:  []string{"spec.target.apiVersion", "spec.target.apiVersion must be <group>/<version> or <version>"},
		},
		{
			name:     "customization without customizations",
			manifest: ricWithSpec(target),
			wantErr:  []string{"spec.customizations", "Required value"},
		},
		{
			name:     "rule without luaScript",
			manifest: ricWithSpec(target + "customizations:\n  replicaResource: {}\n"),
			wantErr:  []string{"spec.customizations.replicaResource.luaScript", "Required value"},
		},
		{
			name:     "rule with an empty luaScript",
			manifest: ricWithSpec(target + "customizations:\n  retention: {luaScript: \"\"}\n"),
			wantErr:  []string{"spec.customizations.retention.luaScript", "should be at least 1 chars long"},
		},

		// ResourceInterpreterWebhookConfiguration: realistic objects.
		{
			name: "webhooks by URL and by Service",
			manifest: `
apiVersion: config.karmada.io/v1alpha1
kind: ResourceInterpreterWebhookConfiguration
metadata:
  name: examples
webhooks:
- name: workloads.example.com
  clientConfig:
    url: https://karmada-interpreter-webhook-example.karmada-system.svc:443/interpreter-workload
    caBundle: ` + "ZmFrZS1jYS1idW5kbGU=" + `
  rules:
  - operations: [InterpretReplica, ReviseReplica, Retain, AggregateStatus, InterpretHealth, InterpretStatus, InterpretDependency]
    apiGroups: [workload.example.io]
    apiVersions: [v1alpha1]
    kinds: [Workload]
  - operations: [InterpretComponent, Prune]
    apiGroups: [""]
    apiVersions: [v1]
    kinds: [Pod, Service]
  timeoutSeconds: 3
  interpreterContextVersions: [v1alpha1]
- name: everything.interpreter.example.com
  clientConfig:
    service:
      namespace: karmada-system
      name: interpreter
      path: /interpret
      port: 8443
  rules:
  - {operations: ["*"], apiGroups: ["*"], apiVersions: ["*"], kinds: ["*"]}
  interpreterContextVersions: [v1beta1, v1alpha1]
`,
		},

		// ResourceInterpreterWebhookConfiguration: rejections.
		{
			name:     "no webhooks",
			manifest: "apiVersion: config.karmada.io/v1alpha1\nkind: ResourceInterpreterWebhookConfiguration\nmetadata:\n  name: examples\n",
			wantErr:  []string{"webhooks", "Required value"},
		},
		{
			name: "two webhooks with the same name",
			manifest: `
apiVersion: config.karmada.io/v1alpha1
kind: ResourceInterpreterWebhookConfiguration
metadata:
  name: examples
webhooks:
- {name: a.example.com, clientConfig: {url: "https://a.example.com"}, interpreterContextVersions: [v1alpha1]}
- {name: a.example.com, clientConfig: {url: "https://b.example.com"}, interpreterContextVersions: [v1alpha1]}
`,
			wantErr: []string{"webhooks[1]", "Duplicate value"},
		},
		{
			name:     "webhook name with fewer than three labels",
			manifest: riwcWithWebhook("name: example.com\nclientConfig: {url: \"https://a.example.com\"}\ninterpreterContextVersions: [v1alpha1]\n"),
			wantErr:  []string{"webhooks[0].name", "should match"},
		},
		{
			name:     "webhook with both url and service",
			manifest: riwcWithWebhook("name: a.example.com\nclientConfig:\n  url: https://a.example.com\n  service: {namespace: karmada-system, name: interpreter}\ninterpreterContextVersions: [v1alpha1]\n"),
			wantErr:  []string{"webhooks[0].clientConfig", "exactly one of url or service must be specified"},
		},
		{
			name:     "webhook with neither url nor service",
			manifest: riwcWithWebhook("name: a.example.com\nclientConfig: {caBundle: ZmFrZQ==}\ninterpreterContextVersions: [v1alpha1]\n"),
			wantErr:  []string{"webhooks[0].clientConfig", "exactly one of url or service must be specified"},
		},
		{
			name:     "webhook url over plain http",
			manifest: riwcWithWebhook("name: a.example.com\nclientConfig: {url: \"http://a.example.com/interpret\"}\ninterpreterContextVersions: [v1alpha1]\n"),
			wantErr:  []string{"webhooks[0].clientConfig", "clientConfig.url must be an https URL"},
		},
		{
			name:     "webhook service port out of range",
			manifest: riwcWithWebhook("name: a.example.com\nclientConfig:\n  service: {namespace: karmada-system, name: interpreter, port: 70000}\ninterpreterContextVersions: [v1alpha1]\n"),
			wantErr:  []string{"webhooks[0].clientConfig", "clientConfig.service.port must be between 1 and 65535"},
		},
		{
			name:     "webhook service path without a leading slash",
			manifest: riwcWithWebhook("name: a.example.com\nclientConfig:\n  service: {namespace: karmada-system, name: interpreter, path: interpret}\ninterpreterContextVersions: [v1alpha1]\n"),
			wantErr:  []string{"webhooks[0].clientConfig", "clientConfig.service.path must start with '/'"},
		},
		{
			name:     "webhook service without a namespace",
			manifest: riwcWithWebhook("name: a.example.com\nclientConfig:\n  service: {name: interpreter}\ninterpreterContextVersions: [v1alpha1]\n"),
			wantErr:  []string{"webhooks[0].clientConfig.service.namespace", "Required value"},
		},
		{
			name:     "webhook timeout above 30 seconds",
			manifest: riwcWithWebhook("name: a.example.com\nclientConfig: {url: \"https://a.example.com\"}\ntimeoutSeconds: 31\ninterpreterContextVersions: [v1alpha1]\n"),
			wantErr:  []string{"webhooks[0].timeoutSeconds", "should be less than or equal to 30"},
		},
		{
			name:     "webhook timeout of zero",
			manifest: riwcWithWebhook("name: a.example.com\nclientConfig: {url: \"https://a.example.com\"}\ntimeoutSeconds: 0\ninterpreterContextVersions: [v1alpha1]\n"),
			wantErr:  []string{"webhooks[0].timeoutSeconds", "should be greater than or equal to 1"},
		},
		{
			name:     "webhook without interpreterContextVersions",
			manifest: riwcWithWebhook("name: a.example.com\nclientConfig: {url: \"https://a.example.com\"}\n"),
			wantErr:  []string{"webhooks[0].interpreterContextVersions", "Required value"},
		},
		{
			name:     "webhook with empty interpreterContextVersions",
			manifest: riwcWithWebhook("name: a.example.com\nclientConfig: {url: \"https://a.example.com\"}\ninterpreterContextVersions: []\n"),
			wantErr:  []string{"webhooks[0].interpreterContextVersions", "should have at least 1 items"},
		},
		{
			name:     "webhook speaking only an unknown context version",
			manifest: riwcWithWebhook("name: a.example.com\nclientConfig: {url: \"https://a.example.com\"}\ninterpreterContextVersions: [v2]\n"),
			wantErr:  []string{"webhooks[0].interpreterContextVersions", "interpreterContextVersions must include v1alpha1"},
		},
		{
			name:     "webhook listing a context version twice",
			manifest: riwcWithWebhook("name: a.example.com\nclientConfig: {url: \"https://a.example.com\"}\ninterpreterContextVersions: [v1alpha1, v1alpha1]\n"),
			wantErr:  []string{"webhooks[0].interpreterContextVersions[1]", "Duplicate value"},
		},
		{
			name:     "rule with an unknown operation",
			manifest: riwcWithWebhook(webhookWithRule("- {operations: [InterpretReplica, Delete], apiGroups: [apps], apiVersions: [v1], kinds: [Deployment]}")),
			wantErr:  []string{"webhooks[0].rules[0].operations", "operations must be one of"},
		},
		{
			name:     "rule mixing '*' with other operations",
			manifest: riwcWithWebhook(webhookWithRule("- {operations: ['*', Retain], apiGroups: [apps], apiVersions: [v1], kinds: [Deployment]}")),
			wantErr:  []string{"webhooks[0].rules[0].operations", "'*' must be the only operation when present"},
		},
		{
			name:     "rule without operations",
			manifest: riwcWithWebhook(webhookWithRule("- {operations: [], apiGroups: [apps], apiVersions: [v1], kinds: [Deployment]}")),
			wantErr:  []string{"webhooks[0].rules[0].operations", "should have at least 1 items"},
		},
		{
			name:     "rule without kinds",
			manifest: riwcWithWebhook(webhookWithRule("- {operations: [Retain], apiGroups: [apps], apiVersions: [v1]}")),
			wantErr:  []string{"webhooks[0].rules[0].kinds", "Required value"},
		},
		{
			name:     "rule mixing '*' with other groups",
			manifest: riwcWithWebhook(webhookWithRule("- {operations: [Retain], apiGroups: ['*', apps], apiVersions: [v1], kinds: [Deployment]}")),
			wantErr:  []string{"webhooks[0].rules[0].apiGroups", "'*' must be the only group when present"},
		},
		{
			name:     "rule mixing '*' with other versions",
			manifest: riwcWithWebhook(webhookWithRule("- {operations: [Retain], apiGroups: [apps], apiVersions: ['*', v1], kinds: [Deployment]}")),
			wantErr:  []string{"webhooks[0].rules[0].apiVersions", "'*' must be the only version when present"},
		},
		{
			name:     "rule mixing '*' with other kinds",
			manifest: riwcWithWebhook(webhookWithRule("- {operations: [Retain], apiGroups: [apps], apiVersions: [v1], kinds: ['*', Deployment]}")),
			wantErr:  []string{"webhooks[0].rules[0].kinds", "'*' must be the only kind when present"},
		},
		{
			name:     "rule with an empty kind",
			manifest: riwcWithWebhook(webhookWithRule("- {operations: [Retain], apiGroups: [apps], apiVersions: [v1], kinds: [\"\"]}")),
			wantErr:  []string{"webhooks[0].rules[0].kinds[0]", "should be at least 1 chars long"},
		},
	})
}

func TestWorkloadRebalancerValidation(t *testing.T) {
	runValidationCases(t, []validationCase{
		{
			name: "rebalancer of a Deployment and a ClusterRole",
			manifest: wrWithSpec(`
workloads:
- apiVersion: apps/v1
  kind: Deployment
  namespace: default
  name: nginx
- apiVersion: rbac.authorization.k8s.io/v1
  kind: ClusterRole
  name: "system:foo"
ttlSecondsAfterFinished: 60
`),
		},
		{
			name:     "rebalancer deleted right after finishing",
			manifest: wrWithSpec("workloads:\n- {apiVersion: apps/v1, kind: Deployment, namespace: default, name: nginx}\nttlSecondsAfterFinished: 0\n"),
		},

		{
			name:     "no spec",
			manifest: "apiVersion: apps.karmada.io/v1alpha1\nkind: WorkloadRebalancer\nmetadata:\n  name: r\n",
			wantErr:  []string{"spec", "Required value"},
		},
		{
			name:     "no workloads",
			manifest: wrWithSpec("ttlSecondsAfterFinished: 60\n"),
			wantErr:  []string{"spec.workloads", "Required value"},
		},
		{
			name:     "empty workloads",
			manifest: wrWithSpec("workloads: []\n"),
			wantErr:  []string{"spec.workloads", "should have at least 1 items"},
		},
		{
			name:     "workload without name",
			manifest: wrWithSpec("workloads:\n- {apiVersion: apps/v1, kind: Deployment, namespace: default}\n"),
			wantErr:  []string{"spec.workloads[0].name", "Required value"},
		},
		{
			name:     "workload with an empty name",
			manifest: wrWithSpec("workloads:\n- {apiVersion: apps/v1, kind: Deployment, name: \"\"}\n"),
			wantErr:  []string{"spec.workloads[0].name", "should be at least 1 chars long"},
		},
		{
			name:     "workload without kind",
			manifest: wrWithSpec("workloads:\n- {apiVersion: apps/v1, name: nginx}\n"),
			wantErr:  []string{"spec.workloads[0].kind", "Required value"},
		},
		{
			name:     "workload without apiVersion",
			manifest: wrWithSpec("workloads:\n- {kind: Deployment, name: nginx}\n"),
			wantErr:  []string{"spec.workloads[0].apiVersion", "Required value"},
		},
		{
			name:     "negative ttlSecondsAfterFinished",
			manifest: wrWithSpec("workloads:\n- {apiVersion: apps/v1, kind: Deployment, name: nginx}\nttlSecondsAfterFinished: -1\n"),
			wantErr:  []string{"spec.ttlSecondsAfterFinished", "should be greater than or equal to 0"},
		},
	})
}
