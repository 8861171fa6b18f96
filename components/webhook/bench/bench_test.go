package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	autoscalingv1alpha1 "github.com/flotilla-io/flotilla/api/autoscaling/v1alpha1"
	configv1alpha1 "github.com/flotilla-io/flotilla/api/config/v1alpha1"
	networkingv1alpha1 "github.com/flotilla-io/flotilla/api/networking/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/components/webhook/app"
	"github.com/flotilla-io/flotilla/lua"
)

// concurrency is how many requests are in flight at once, as from an API
// server under a burst of writes.
const concurrency = 200

// BenchmarkAdmission sends b.N requests to each endpoint from 200
// goroutines over keep-alive TLS connections and reports the latency
// percentiles of one request (p50-ms, p99-ms) besides ns/op, which is the
// wall time per request at that concurrency.
//
//	go test ./components/webhook/bench -run '^$' -bench Admission -benchtime 4000x
func BenchmarkAdmission(b *testing.B) {
	scheme, err := app.Scheme()
	if err != nil {
		b.Fatal(err)
	}
	reader := fake.NewClientBuilder().WithScheme(scheme).WithObjects(existing()...).Build()
	vm := lua.New()
	defer vm.Close()
	mux := http.NewServeMux()
	for path, h := range app.Endpoints(app.Handlers{
		Decoder: admission.NewDecoder(scheme), Reader: reader, VM: vm,
		NotReadyTolerationSeconds: 300, UnreachableTolerationSeconds: 300, QuotaEnforcement: true,
	}) {
		mux.Handle(path, h)
	}
	srv := httptest.NewUnstartedServer(mux)
	srv.StartTLS()
	defer srv.Close()
	httpClient := srv.Client()
	httpClient.Transport.(*http.Transport).MaxIdleConnsPerHost = concurrency

	all := cases()
	// Every connection is opened (TLS handshakes) before timing starts, as
	// an API server keeps its connections to a webhook.
	var warm sync.WaitGroup
	for range concurrency {
		warm.Go(func() { _ = post(httpClient, srv.URL+all[0].path, all[0].body, all[0].check) })
	}
	warm.Wait()

	for _, c := range all {
		b.Run(c.path[1:], func(b *testing.B) {
			body := c.body
			latencies := make([]time.Duration, b.N)
			var next atomic.Int64
			var failed atomic.Value
			var wg sync.WaitGroup
			b.ResetTimer()
			for range concurrency {
				wg.Go(func() {
					for {
						i := int(next.Add(1) - 1)
						if i >= len(latencies) {
							return
						}
						start := time.Now()
						if err := post(httpClient, srv.URL+c.path, body, c.check); err != nil {
							failed.Store(err)
						}
						latencies[i] = time.Since(start)
					}
				})
			}
			wg.Wait()
			b.StopTimer()
			if err, _ := failed.Load().(error); err != nil {
				b.Fatal(err)
			}
			slices.Sort(latencies)
			pct := func(p float64) float64 {
				return float64(latencies[int(p*float64(len(latencies)-1))].Microseconds()) / 1000
			}
			b.ReportMetric(pct(0.50), "p50-ms")
			b.ReportMetric(pct(0.99), "p99-ms")
		})
	}
}

func post(c *http.Client, url string, body []byte, check func([]byte) error) error {
	resp, err := c.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s: %s", url, resp.Status, data)
	}
	return check(data)
}

type benchCase struct {
	path  string
	body  []byte
	check func([]byte) error
}

// cases is one representative request per endpoint: a valid object, as
// most requests are.
func cases() []benchCase {
	pp := &policyv1alpha1.PropagationPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: "policy.karmada.io/v1alpha1", Kind: "PropagationPolicy"},
		ObjectMeta: metav1.ObjectMeta{Name: "nginx", Namespace: "apps"},
		Spec: policyv1alpha1.PropagationSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Name: "nginx"}},
			Placement: policyv1alpha1.Placement{
				ClusterAffinity:   &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1", "member2", "member3"}},
				SpreadConstraints: []policyv1alpha1.SpreadConstraint{{SpreadByField: "cluster", MaxGroups: 2, MinGroups: 1}},
				ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{ReplicaSchedulingType: "Divided", ReplicaDivisionPreference: "Weighted"},
			},
			SchedulerName: "default-scheduler",
		},
	}
	labelled := pp.DeepCopy()
	labelled.Labels = map[string]string{policyv1alpha1.PropagationPolicyPermanentIDLabel: "id"}
	cpp := &policyv1alpha1.ClusterPropagationPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: "policy.karmada.io/v1alpha1", Kind: "ClusterPropagationPolicy"},
		ObjectMeta: metav1.ObjectMeta{Name: "roles", Labels: map[string]string{policyv1alpha1.ClusterPropagationPolicyPermanentIDLabel: "id"}},
		Spec:       pp.Spec,
	}
	op := &policyv1alpha1.OverridePolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: "policy.karmada.io/v1alpha1", Kind: "OverridePolicy"},
		ObjectMeta: metav1.ObjectMeta{Name: "images", Namespace: "apps"},
		Spec: policyv1alpha1.OverrideSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment"}},
			OverrideRules: []policyv1alpha1.RuleWithCluster{{
				TargetCluster: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1"}},
				Overriders: policyv1alpha1.Overriders{
					ImageOverrider:  []policyv1alpha1.ImageOverrider{{Component: "Registry", Operator: "replace", Value: "mirror.io"}},
					LabelsOverrider: []policyv1alpha1.LabelAnnotationOverrider{{Operator: "add", Value: map[string]string{"tier": "web"}}},
				},
			}},
		},
	}
	cop := &policyv1alpha1.ClusterOverridePolicy{TypeMeta: metav1.TypeMeta{APIVersion: "policy.karmada.io/v1alpha1", Kind: "ClusterOverridePolicy"},
		ObjectMeta: metav1.ObjectMeta{Name: "images"}, Spec: op.Spec}
	rb := &workv1alpha2.ResourceBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: "work.karmada.io/v1alpha2", Kind: "ResourceBinding"},
		ObjectMeta: metav1.ObjectMeta{Name: "nginx-deployment", Namespace: "apps", Labels: map[string]string{workv1alpha2.ResourceBindingPermanentIDLabel: "id"}},
		Spec: workv1alpha2.ResourceBindingSpec{
			Resource:            workv1alpha2.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "apps", Name: "nginx"},
			Replicas:            3,
			ReplicaRequirements: &workv1alpha2.ReplicaRequirements{ResourceRequest: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}},
			Clusters:            []workv1alpha2.TargetCluster{{Name: "member1", Replicas: 2}, {Name: "member2", Replicas: 1}},
		},
	}
	crb := &workv1alpha2.ClusterResourceBinding{TypeMeta: metav1.TypeMeta{APIVersion: "work.karmada.io/v1alpha2", Kind: "ClusterResourceBinding"},
		ObjectMeta: metav1.ObjectMeta{Name: "view-clusterrole"}, Spec: rb.Spec}
	manifest := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"nginx","namespace":"apps","labels":{"app":"nginx"}},` +
		`"spec":{"replicas":2,"selector":{"matchLabels":{"app":"nginx"}},"template":{"metadata":{"labels":{"app":"nginx"}},` +
		`"spec":{"containers":[{"name":"nginx","image":"nginx:1.27","resources":{"requests":{"cpu":"100m"}}}]}}}}`
	w := &workv1alpha1.Work{
		TypeMeta:   metav1.TypeMeta{APIVersion: "work.karmada.io/v1alpha1", Kind: "Work"},
		ObjectMeta: metav1.ObjectMeta{Name: "nginx-687f7fb96f", Namespace: "karmada-es-member1"},
		Spec:       workv1alpha1.WorkSpec{Workload: workv1alpha1.WorkloadTemplate{Manifests: []workv1alpha1.Manifest{{RawExtension: runtime.RawExtension{Raw: []byte(manifest)}}}}},
	}
	ctp := &policyv1alpha1.ClusterTaintPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: "policy.karmada.io/v1alpha1", Kind: "ClusterTaintPolicy"},
		ObjectMeta: metav1.ObjectMeta{Name: "unhealthy"},
		Spec: policyv1alpha1.ClusterTaintPolicySpec{
			AddOnConditions: []policyv1alpha1.MatchCondition{{ConditionType: "Ready", Operator: "NotIn", StatusValues: []metav1.ConditionStatus{"True"}}},
			Taints:          []policyv1alpha1.Taint{{Key: "example.io/unhealthy", Effect: corev1.TaintEffectNoSchedule}},
		},
	}
	ric := &configv1alpha1.ResourceInterpreterCustomization{
		TypeMeta:   metav1.TypeMeta{APIVersion: "config.karmada.io/v1alpha1", Kind: "ResourceInterpreterCustomization"},
		ObjectMeta: metav1.ObjectMeta{Name: "widgets-health"},
		Spec: configv1alpha1.ResourceInterpreterCustomizationSpec{
			Target: configv1alpha1.CustomizationTarget{APIVersion: "example.io/v1", Kind: "Widget"},
			Customizations: configv1alpha1.CustomizationRules{
				HealthInterpretation: &configv1alpha1.HealthInterpretation{LuaScript: `function InterpretHealth(obj)
  return obj.status ~= nil and obj.status.readyReplicas == obj.spec.replicas
end`},
			},
		},
	}
	url := "https://widgets.example.io/interpret"
	riwc := &configv1alpha1.ResourceInterpreterWebhookConfiguration{
		TypeMeta:   metav1.TypeMeta{APIVersion: "config.karmada.io/v1alpha1", Kind: "ResourceInterpreterWebhookConfiguration"},
		ObjectMeta: metav1.ObjectMeta{Name: "widgets"},
		Webhooks: []configv1alpha1.ResourceInterpreterWebhook{{
			Name: "replicas.widgets.example.io", ClientConfig: admissionregistrationClientConfig(url),
			Rules: []configv1alpha1.RuleWithOperations{{Operations: []configv1alpha1.InterpreterOperation{"InterpretReplica"},
				Rule: configv1alpha1.Rule{APIGroups: []string{"example.io"}, APIVersions: []string{"v1"}, Kinds: []string{"Widget"}}}},
			InterpreterContextVersions: []string{"v1alpha1"},
		}},
	}
	frq := &policyv1alpha1.FederatedResourceQuota{
		TypeMeta:   metav1.TypeMeta{APIVersion: "policy.karmada.io/v1alpha1", Kind: "FederatedResourceQuota"},
		ObjectMeta: metav1.ObjectMeta{Name: "team", Namespace: "apps"},
		Spec: policyv1alpha1.FederatedResourceQuotaSpec{
			Overall:           corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10"), corev1.ResourceMemory: resource.MustParse("20Gi")},
			StaticAssignments: []policyv1alpha1.StaticClusterAssignment{{ClusterName: "member1", Hard: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("5")}}},
		},
	}
	nginx := autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "nginx"}
	fhpa := &autoscalingv1alpha1.FederatedHPA{
		TypeMeta:   metav1.TypeMeta{APIVersion: "autoscaling.karmada.io/v1alpha1", Kind: "FederatedHPA"},
		ObjectMeta: metav1.ObjectMeta{Name: "nginx", Namespace: "apps"},
		Spec: autoscalingv1alpha1.FederatedHPASpec{ScaleTargetRef: nginx, MinReplicas: ptr.To[int32](2), MaxReplicas: 20,
			Metrics: []autoscalingv2.MetricSpec{{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
				Name: corev1.ResourceCPU, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To[int32](70)}}}},
			Behavior: &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleDown: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptr.To[int32](120),
				Policies: []autoscalingv2.HPAScalingPolicy{{Type: autoscalingv2.PercentScalingPolicy, Value: 50, PeriodSeconds: 60}}}},
		},
	}
	cronFHPA := &autoscalingv1alpha1.CronFederatedHPA{
		TypeMeta:   metav1.TypeMeta{APIVersion: "autoscaling.karmada.io/v1alpha1", Kind: "CronFederatedHPA"},
		ObjectMeta: metav1.ObjectMeta{Name: "nginx", Namespace: "apps"},
		Spec: autoscalingv1alpha1.CronFederatedHPASpec{ScaleTargetRef: nginx, Rules: []autoscalingv1alpha1.CronFederatedHPARule{
			{Name: "up", Schedule: "0 8 * * MON-FRI", TargetReplicas: ptr.To[int32](10), TimeZone: ptr.To("Europe/Paris")},
			{Name: "down", Schedule: "0 20 * * *", TargetReplicas: ptr.To[int32](2), TimeZone: ptr.To("Europe/Paris")},
		}},
	}
	mcs := &networkingv1alpha1.MultiClusterService{
		TypeMeta:   metav1.TypeMeta{APIVersion: "networking.karmada.io/v1alpha1", Kind: "MultiClusterService"},
		ObjectMeta: metav1.ObjectMeta{Name: "nginx", Namespace: "apps"},
		Spec: networkingv1alpha1.MultiClusterServiceSpec{
			Types:            []networkingv1alpha1.ExposureType{networkingv1alpha1.ExposureTypeCrossCluster},
			Ports:            []networkingv1alpha1.ExposurePort{{Name: "http", Port: 80}},
			ProviderClusters: []networkingv1alpha1.ClusterSelector{{Name: "member1"}},
			ConsumerClusters: []networkingv1alpha1.ClusterSelector{{Name: "member2"}, {Name: "member3"}},
		},
	}
	mci := &networkingv1alpha1.MultiClusterIngress{
		TypeMeta:   metav1.TypeMeta{APIVersion: "networking.karmada.io/v1alpha1", Kind: "MultiClusterIngress"},
		ObjectMeta: metav1.ObjectMeta{Name: "nginx", Namespace: "apps"},
		Spec: networkingv1.IngressSpec{
			Rules: []networkingv1.IngressRule{{Host: "nginx.example.com", IngressRuleValue: networkingv1.IngressRuleValue{
				HTTP: &networkingv1.HTTPIngressRuleValue{Paths: []networkingv1.HTTPIngressPath{{Path: "/", PathType: ptr.To(networkingv1.PathTypePrefix),
					Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: "nginx", Port: networkingv1.ServiceBackendPort{Number: 80}}}}}},
			}}},
			TLS: []networkingv1.IngressTLS{{Hosts: []string{"nginx.example.com"}, SecretName: "nginx-tls"}},
		},
	}
	protected := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: "cfg", Namespace: "apps", Labels: map[string]string{"resourcetemplate.karmada.io/deletion-protected": "Always"}}}

	return []benchCase{
		admit("/mutate-propagationpolicy", admissionv1.Create, pp, nil, true),
		admit("/validate-propagationpolicy", admissionv1.Create, labelled, nil, true),
		admit("/mutate-clusterpropagationpolicy", admissionv1.Create, cpp, nil, true),
		admit("/validate-clusterpropagationpolicy", admissionv1.Create, cpp, nil, true),
		admit("/mutate-overridepolicy", admissionv1.Create, op, nil, true),
		admit("/validate-overridepolicy", admissionv1.Create, op, nil, true),
		admit("/validate-clusteroverridepolicy", admissionv1.Create, cop, nil, true),
		admit("/mutate-resourcebinding", admissionv1.Update, rb, rb, true),
		admit("/validate-resourcebinding", admissionv1.Create, rb, nil, true),
		admit("/mutate-clusterresourcebinding", admissionv1.Update, crb, crb, true),
		admit("/mutate-work", admissionv1.Create, w, nil, true),
		admit("/validate-clustertaintpolicy", admissionv1.Create, ctp, nil, true),
		admit("/validate-resourceinterpretercustomization", admissionv1.Create, ric, nil, true),
		admit("/validate-resourceinterpreterwebhookconfiguration", admissionv1.Create, riwc, nil, true),
		admit("/validate-federatedresourcequota", admissionv1.Create, frq, nil, true),
		admit("/validate-resourcedeletionprotection", admissionv1.Delete, nil, protected, false),
		admit("/mutate-federatedhpa", admissionv1.Create, fhpa, nil, true),
		admit("/validate-federatedhpa", admissionv1.Create, fhpa, nil, true),
		admit("/validate-cronfederatedhpa", admissionv1.Create, cronFHPA, nil, true),
		admit("/mutate-multiclusterservice", admissionv1.Create, mcs, nil, true),
		admit("/validate-multiclusterservice", admissionv1.Create, mcs, nil, true),
		admit("/validate-multiclusteringress", admissionv1.Create, mci, nil, true),
		convertCase(rb),
	}
}

func admit(path string, op admissionv1.Operation, obj, old client.Object, allowed bool) benchCase {
	some := obj
	if some == nil {
		some = old
	}
	gvk := some.GetObjectKind().GroupVersionKind()
	req := &admissionv1.AdmissionRequest{
		UID: "bench", Operation: op,
		Kind:      metav1.GroupVersionKind{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind},
		Name:      some.GetName(),
		Namespace: some.GetNamespace(),
	}
	if obj != nil {
		req.Object = runtime.RawExtension{Raw: mustJSON(obj)}
	}
	if old != nil {
		req.OldObject = runtime.RawExtension{Raw: mustJSON(old)}
	}
	review := admissionv1.AdmissionReview{TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"}, Request: req}
	return benchCase{path: path, body: mustJSON(&review), check: func(data []byte) error {
		var got admissionv1.AdmissionReview
		if err := json.Unmarshal(data, &got); err != nil {
			return err
		}
		if got.Response == nil || got.Response.Allowed != allowed {
			return fmt.Errorf("%s: unexpected answer %s", path, data)
		}
		return nil
	}}
}

func convertCase(rb *workv1alpha2.ResourceBinding) benchCase {
	objs := make([]runtime.RawExtension, 10)
	for i := range objs {
		objs[i] = runtime.RawExtension{Raw: mustJSON(rb)}
	}
	review := apiextensionsv1.ConversionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "apiextensions.k8s.io/v1", Kind: "ConversionReview"},
		Request:  &apiextensionsv1.ConversionRequest{UID: "bench", DesiredAPIVersion: "work.karmada.io/v1alpha1", Objects: objs},
	}
	return benchCase{path: "/convert", body: mustJSON(&review), check: func(data []byte) error {
		var got apiextensionsv1.ConversionReview
		if err := json.Unmarshal(data, &got); err != nil {
			return err
		}
		if got.Response == nil || got.Response.Result.Status != metav1.StatusSuccess || len(got.Response.ConvertedObjects) != len(objs) {
			return fmt.Errorf("/convert: unexpected answer %s", data)
		}
		return nil
	}}
}

// existing are the objects the validations compare with: a few other
// policies and customizations, a quota.
func existing() []client.Object {
	var objs []client.Object
	for i := range 20 {
		objs = append(objs,
			&policyv1alpha1.ClusterTaintPolicy{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("policy-%d", i)},
				Spec: policyv1alpha1.ClusterTaintPolicySpec{Taints: []policyv1alpha1.Taint{{Key: fmt.Sprintf("example.io/t%d", i), Effect: corev1.TaintEffectNoSchedule}}}},
			&configv1alpha1.ResourceInterpreterCustomization{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("custom-%d", i)},
				Spec: configv1alpha1.ResourceInterpreterCustomizationSpec{Target: configv1alpha1.CustomizationTarget{APIVersion: "example.io/v1", Kind: fmt.Sprintf("Kind%d", i)}}},
		)
	}
	return append(objs, &policyv1alpha1.FederatedResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "team", Namespace: "apps"},
		Spec: policyv1alpha1.FederatedResourceQuotaSpec{Overall: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100")}}})
}

func mustJSON(v any) []byte {
	data, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return data
}

func admissionregistrationClientConfig(url string) admissionregistrationv1.WebhookClientConfig {
	return admissionregistrationv1.WebhookClientConfig{URL: &url}
}
