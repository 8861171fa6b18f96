package conversion

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
)

func v2Binding() *workv1alpha2.ResourceBinding {
	return &workv1alpha2.ResourceBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: "work.karmada.io/v1alpha2", Kind: "ResourceBinding"},
		ObjectMeta: metav1.ObjectMeta{Name: "nginx-deployment", Namespace: "apps", Labels: map[string]string{"a": "b"}},
		Spec: workv1alpha2.ResourceBindingSpec{
			Resource: workv1alpha2.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "apps", Name: "nginx", UID: "uid-1", ResourceVersion: "7"},
			Replicas: 3,
			ReplicaRequirements: &workv1alpha2.ReplicaRequirements{
				ResourceRequest:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")},
				PriorityClassName: "high",
			},
			Clusters:                    []workv1alpha2.TargetCluster{{Name: "member1", Replicas: 2}, {Name: "member2", Replicas: 1}},
			Placement:                   &policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1", "member2"}}},
			SchedulerName:               "default-scheduler",
			Failover:                    &policyv1alpha1.FailoverBehavior{Cluster: &policyv1alpha1.ClusterFailoverBehavior{PurgeMode: policyv1alpha1.PurgeModeGracefully}},
			PreserveResourcesOnDeletion: ptr.To(true),
		},
		Status: workv1alpha2.ResourceBindingStatus{
			SchedulerObservedGeneration: 4,
			Conditions:                  []metav1.Condition{{Type: "Scheduled", Status: metav1.ConditionTrue, Reason: "Success", LastTransitionTime: metav1.Unix(100, 0)}},
			AggregatedStatus: []workv1alpha2.AggregatedStatusItem{{ClusterName: "member1", Applied: true, Health: workv1alpha2.ResourceHealthy,
				Status: &runtime.RawExtension{Raw: []byte(`{"readyReplicas":2}`)}}},
		},
	}
}

func convert(t *testing.T, obj any, desired string, into any) {
	t.Helper()
	raw, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	out, err := Convert(raw, desired)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(out, into); err != nil {
		t.Fatal(err)
	}
}

func TestDownAndBack(t *testing.T) {
	in := v2Binding()
	var v1 workv1alpha1.ResourceBinding
	convert(t, in, "work.karmada.io/v1alpha1", &v1)
	if v1.APIVersion != "work.karmada.io/v1alpha1" || v1.Kind != "ResourceBinding" {
		t.Errorf("type = %v", v1.TypeMeta)
	}
	wantSpec := workv1alpha1.ResourceBindingSpec{
		Resource: workv1alpha1.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "apps", Name: "nginx", ResourceVersion: "7",
			Replicas: 3, ReplicaResourceRequirements: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}},
		Clusters: []workv1alpha1.TargetCluster{{Name: "member1", Replicas: 2}, {Name: "member2", Replicas: 1}},
	}
	if diff := cmp.Diff(wantSpec, v1.Spec); diff != "" {
		t.Errorf("v1alpha1 spec (-want +got):\n%s", diff)
	}
	if v1.Annotations[PreservedAnnotation] == "" || v1.Labels["a"] != "b" {
		t.Errorf("metadata = %+v", v1.ObjectMeta)
	}

	var back workv1alpha2.ResourceBinding
	convert(t, &v1, "work.karmada.io/v1alpha2", &back)
	if diff := cmp.Diff(in, &back); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}

	// A v1alpha1 client changes what v1alpha1 shows; the rest survives.
	v1.Spec.Clusters = []workv1alpha1.TargetCluster{{Name: "member1", Replicas: 3}}
	v1.Spec.Resource.ReplicaResourceRequirements = nil
	var changed workv1alpha2.ResourceBinding
	convert(t, &v1, "work.karmada.io/v1alpha2", &changed)
	want := v2Binding()
	want.Spec.Clusters = []workv1alpha2.TargetCluster{{Name: "member1", Replicas: 3}}
	want.Spec.ReplicaRequirements.ResourceRequest = nil
	if diff := cmp.Diff(want, &changed); diff != "" {
		t.Errorf("after a v1alpha1 change (-want +got):\n%s", diff)
	}
}

func TestUpFromPlainV1alpha1(t *testing.T) {
	in := &workv1alpha1.ClusterResourceBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: "work.karmada.io/v1alpha1", Kind: "ClusterResourceBinding"},
		ObjectMeta: metav1.ObjectMeta{Name: "system.foo-clusterrole"},
		Spec: workv1alpha1.ResourceBindingSpec{
			Resource: workv1alpha1.ObjectReference{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole", Name: "system:foo"},
			Clusters: []workv1alpha1.TargetCluster{{Name: "member1"}},
		},
	}
	var out workv1alpha2.ClusterResourceBinding
	convert(t, in, "work.karmada.io/v1alpha2", &out)
	want := &workv1alpha2.ClusterResourceBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: "work.karmada.io/v1alpha2", Kind: "ClusterResourceBinding"},
		ObjectMeta: metav1.ObjectMeta{Name: "system.foo-clusterrole"},
		Spec: workv1alpha2.ResourceBindingSpec{
			Resource: workv1alpha2.ObjectReference{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole", Name: "system:foo"},
			Clusters: []workv1alpha2.TargetCluster{{Name: "member1"}},
		},
	}
	if diff := cmp.Diff(want, &out); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestReview(t *testing.T) {
	raw, _ := json.Marshal(v2Binding())
	review := apiextensionsv1.ConversionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "apiextensions.k8s.io/v1", Kind: "ConversionReview"},
		Request: &apiextensionsv1.ConversionRequest{UID: "u1", DesiredAPIVersion: "work.karmada.io/v1alpha1",
			Objects: []runtime.RawExtension{{Raw: raw}, {Raw: raw}}},
	}
	body, _ := json.Marshal(review)
	rec := httptest.NewRecorder()
	NewHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodPost, Path, bytes.NewReader(body)))
	var got apiextensionsv1.ConversionReview
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if got.Response == nil || got.Response.UID != "u1" || got.Response.Result.Status != metav1.StatusSuccess || len(got.Response.ConvertedObjects) != 2 {
		t.Fatalf("response = %+v", got.Response)
	}

	review.Request.Objects = append(review.Request.Objects, runtime.RawExtension{Raw: []byte(`{"apiVersion":"v1","kind":"ConfigMap"}`)})
	body, _ = json.Marshal(review)
	rec = httptest.NewRecorder()
	NewHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodPost, Path, bytes.NewReader(body)))
	_ = json.Unmarshal(rec.Body.Bytes(), &got)
	if got.Response.Result.Status != metav1.StatusFailure || len(got.Response.ConvertedObjects) != 0 {
		t.Errorf("a ConfigMap was converted: %+v", got.Response)
	}
}
