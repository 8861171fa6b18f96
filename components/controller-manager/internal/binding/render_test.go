package binding

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/overrides"
)

func member(name string) *clusterv1alpha1.Cluster {
	return &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name}}
}

// registryOverride replaces the image registry in member2.
func registryOverride() policyv1alpha1.OverridePolicy {
	return policyv1alpha1.OverridePolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "mirror"},
		Spec: policyv1alpha1.OverrideSpec{OverrideRules: []policyv1alpha1.RuleWithCluster{{
			TargetCluster: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member2"}},
			Overriders: policyv1alpha1.Overriders{ImageOverrider: []policyv1alpha1.ImageOverrider{{
				Component: policyv1alpha1.Registry, Operator: policyv1alpha1.OverriderOpReplace, Value: "mirror.example.com",
			}}},
		}}},
	}
}

// brokenOverride removes a path that does not exist, in every cluster.
func brokenOverride() policyv1alpha1.ClusterOverridePolicy {
	return policyv1alpha1.ClusterOverridePolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "broken"},
		Spec: policyv1alpha1.OverrideSpec{OverrideRules: []policyv1alpha1.RuleWithCluster{{
			Overriders: policyv1alpha1.Overriders{Plaintext: []policyv1alpha1.PlaintextOverrider{{
				Path: "/spec/nothing", Operator: policyv1alpha1.OverriderOpRemove,
			}}},
		}}},
	}
}

func rbIdentity() identity {
	return identity{
		bindingIDLabel: "resourcebinding.karmada.io/permanent-id",
		bindingID:      "rb-id",
		bindingAnnotations: map[string]string{
			"resourcebinding.karmada.io/namespace": "apps",
			"resourcebinding.karmada.io/name":      "nginx-deployment",
		},
		templateUID:        "5b1f6b6e-0000-4000-8000-000000000001",
		templateGeneration: 3,
	}
}

func TestRender(t *testing.T) {
	interp := staticInterpreter(t)
	tests := []struct {
		name      string
		template  string
		target    target
		cluster   string
		ops       []policyv1alpha1.OverridePolicy
		cops      []policyv1alpha1.ClusterOverridePolicy
		id        identity
		want      string
		wantCR    string
		overrides int
		overErr   bool
	}{
		{
			name:     "deployment: replicas revised, wire labels and annotations added",
			template: deploymentYAML,
			target:   target{cluster: "member1", replicas: ptr.To[int64](4)},
			cluster:  "member1",
			ops:      []policyv1alpha1.OverridePolicy{registryOverride()},
			id:       rbIdentity(),
			wantCR:   "abort",
			want: `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: nginx
  namespace: apps
  labels:
    app: nginx
    karmada.io/managed: "true"
    propagationpolicy.karmada.io/permanent-id: pp-id
    resourcebinding.karmada.io/permanent-id: rb-id
    work.karmada.io/permanent-id: work-id
  annotations:
    propagationpolicy.karmada.io/name: nginx-pp
    propagationpolicy.karmada.io/namespace: apps
    resourcebinding.karmada.io/name: nginx-deployment
    resourcebinding.karmada.io/namespace: apps
    resourcetemplate.karmada.io/generation: "3"
    resourcetemplate.karmada.io/uid: 5b1f6b6e-0000-4000-8000-000000000001
    work.karmada.io/conflict-resolution: abort
    work.karmada.io/name: nginx-687f7fb96f
    work.karmada.io/namespace: karmada-es-member1
    resourcetemplate.karmada.io/managed-annotations: propagationpolicy.karmada.io/name,propagationpolicy.karmada.io/namespace,resourcebinding.karmada.io/name,resourcebinding.karmada.io/namespace,resourcetemplate.karmada.io/generation,resourcetemplate.karmada.io/managed-annotations,resourcetemplate.karmada.io/managed-labels,resourcetemplate.karmada.io/uid,work.karmada.io/conflict-resolution,work.karmada.io/name,work.karmada.io/namespace
    resourcetemplate.karmada.io/managed-labels: app,karmada.io/managed,propagationpolicy.karmada.io/permanent-id,resourcebinding.karmada.io/permanent-id,work.karmada.io/permanent-id
spec:
  replicas: 4
  selector:
    matchLabels: {app: nginx}
  template:
    metadata:
      labels: {app: nginx}
    spec:
      containers:
      - name: nginx
        image: nginx:1.27
`,
		},
		{
			name:     "deployment in the overridden cluster: override applied and recorded",
			template: deploymentYAML,
			target:   target{cluster: "member2", replicas: ptr.To[int64](2)},
			cluster:  "member2",
			ops:      []policyv1alpha1.OverridePolicy{registryOverride()},
			id: identity{
				bindingIDLabel:     "clusterresourcebinding.karmada.io/permanent-id",
				bindingID:          "crb-id",
				bindingAnnotations: map[string]string{"clusterresourcebinding.karmada.io/name": "nginx-deployment"},
				conflictResolution: policyv1alpha1.ConflictOverwrite,
			},
			wantCR:    "overwrite",
			overrides: 1,
			want: `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: nginx
  namespace: apps
  labels:
    app: nginx
    clusterresourcebinding.karmada.io/permanent-id: crb-id
    karmada.io/managed: "true"
    propagationpolicy.karmada.io/permanent-id: pp-id
    work.karmada.io/permanent-id: work-id
  annotations:
    clusterresourcebinding.karmada.io/name: nginx-deployment
    policy.karmada.io/applied-overrides: '[{"policyName":"mirror","overriders":{"imageOverrider":[{"component":"Registry","operator":"replace","value":"mirror.example.com"}]}}]'
    propagationpolicy.karmada.io/name: nginx-pp
    propagationpolicy.karmada.io/namespace: apps
    work.karmada.io/conflict-resolution: overwrite
    work.karmada.io/name: nginx-687f7fb96f
    work.karmada.io/namespace: karmada-es-member2
    resourcetemplate.karmada.io/managed-annotations: clusterresourcebinding.karmada.io/name,policy.karmada.io/applied-overrides,propagationpolicy.karmada.io/name,propagationpolicy.karmada.io/namespace,resourcetemplate.karmada.io/managed-annotations,resourcetemplate.karmada.io/managed-labels,work.karmada.io/conflict-resolution,work.karmada.io/name,work.karmada.io/namespace
    resourcetemplate.karmada.io/managed-labels: app,clusterresourcebinding.karmada.io/permanent-id,karmada.io/managed,propagationpolicy.karmada.io/permanent-id,work.karmada.io/permanent-id
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
        image: mirror.example.com/nginx:1.27
`,
		},
		{
			name: "the template's own conflict resolution wins",
			template: `
apiVersion: v1
kind: ConfigMap
metadata:
  name: c
  namespace: apps
  annotations: {work.karmada.io/conflict-resolution: overwrite}
data: {k: v}
`,
			target:  target{cluster: "member1"},
			cluster: "member1",
			id:      identity{bindingIDLabel: "resourcebinding.karmada.io/permanent-id", bindingID: "rb-id", conflictResolution: policyv1alpha1.ConflictAbort},
			wantCR:  "overwrite",
			want: `
apiVersion: v1
kind: ConfigMap
metadata:
  name: c
  namespace: apps
  labels:
    karmada.io/managed: "true"
    resourcebinding.karmada.io/permanent-id: rb-id
    work.karmada.io/permanent-id: work-id
  annotations:
    work.karmada.io/conflict-resolution: overwrite
    work.karmada.io/name: nginx-687f7fb96f
    work.karmada.io/namespace: karmada-es-member1
    resourcetemplate.karmada.io/managed-annotations: resourcetemplate.karmada.io/managed-annotations,resourcetemplate.karmada.io/managed-labels,work.karmada.io/conflict-resolution,work.karmada.io/name,work.karmada.io/namespace
    resourcetemplate.karmada.io/managed-labels: karmada.io/managed,resourcebinding.karmada.io/permanent-id,work.karmada.io/permanent-id
data: {k: v}
`,
		},
		{
			name: "divided job: parallelism revised, completions split",
			template: `
apiVersion: batch/v1
kind: Job
metadata: {name: pi, namespace: apps}
spec:
  parallelism: 6
  completions: 10
  template: {spec: {restartPolicy: Never}}
`,
			target:  target{cluster: "member1", replicas: ptr.To[int64](4), completions: ptr.To[int64](7)},
			cluster: "member1",
			id:      identity{},
			wantCR:  "abort",
			want: `
apiVersion: batch/v1
kind: Job
metadata:
  name: pi
  namespace: apps
  labels:
    karmada.io/managed: "true"
    work.karmada.io/permanent-id: work-id
  annotations:
    work.karmada.io/conflict-resolution: abort
    work.karmada.io/name: nginx-687f7fb96f
    work.karmada.io/namespace: karmada-es-member1
    resourcetemplate.karmada.io/managed-annotations: resourcetemplate.karmada.io/managed-annotations,resourcetemplate.karmada.io/managed-labels,work.karmada.io/conflict-resolution,work.karmada.io/name,work.karmada.io/namespace
    resourcetemplate.karmada.io/managed-labels: karmada.io/managed,work.karmada.io/permanent-id
spec:
  parallelism: 4
  completions: 7
  template: {spec: {restartPolicy: Never}}
`,
		},
		{
			name:     "an override that fails renders nothing",
			template: deploymentYAML,
			target:   target{cluster: "member1", replicas: ptr.To[int64](4)},
			cluster:  "member1",
			cops:     []policyv1alpha1.ClusterOverridePolicy{brokenOverride()},
			id:       rbIdentity(),
			overErr:  true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := obj(t, tt.template)
			prune(base)
			before := base.DeepCopy()
			work := workIdentity{namespace: "karmada-es-" + tt.cluster, name: "nginx-687f7fb96f", id: "work-id"}
			got, err := render(t.Context(), interp, overrides.NewRenderer(tt.ops, tt.cops), base, tt.target, member(tt.cluster), tt.id, work)
			if diff := cmp.Diff(before.Object, base.Object); diff != "" {
				t.Errorf("render changed the base (-before +after):\n%s", diff)
			}
			if tt.overErr {
				var oe *overrideError
				if !errorsAs(err, &oe) {
					t.Fatalf("render error = %v, want an override error", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(obj(t, tt.want).Object, got.manifest.Object); diff != "" {
				t.Errorf("manifest (-want +got):\n%s", diff)
			}
			if got.conflictResolution != tt.wantCR {
				t.Errorf("conflict resolution = %q, want %q", got.conflictResolution, tt.wantCR)
			}
			if len(got.matches) != tt.overrides {
				t.Errorf("%d override rules applied, want %d", len(got.matches), tt.overrides)
			}
		})
	}
}
