package binding

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
)

func TestOwns(t *testing.T) {
	rb := ViewOf(testRB())
	crb := ClusterViewOf(&workv1alpha2.ClusterResourceBinding{ObjectMeta: metav1.ObjectMeta{
		Name: "nginx-deployment", Labels: map[string]string{workv1alpha2.ClusterResourceBindingPermanentIDLabel: "crb-id"},
	}})
	rbAnnotations := map[string]string{"resourcebinding.karmada.io/namespace": "apps", "resourcebinding.karmada.io/name": "nginx-deployment"}
	tests := []struct {
		name        string
		v           View
		labels      map[string]string
		annotations map[string]string
		want        bool
	}{
		{"same id", rb, map[string]string{"resourcebinding.karmada.io/permanent-id": "rb-id"}, nil, true},
		{"other id, same name", rb, map[string]string{"resourcebinding.karmada.io/permanent-id": "old"}, rbAnnotations, false},
		{"no id, same name", rb, nil, rbAnnotations, true},
		{"no id, other name", rb, nil, map[string]string{"resourcebinding.karmada.io/namespace": "apps", "resourcebinding.karmada.io/name": "x"}, false},
		{"a cluster binding's", rb, map[string]string{"clusterresourcebinding.karmada.io/permanent-id": "crb-id"}, rbAnnotations, false},
		{"cluster binding, same id", crb, map[string]string{"clusterresourcebinding.karmada.io/permanent-id": "crb-id"}, nil, true},
		{"cluster binding, no id, same name", crb, nil, map[string]string{"clusterresourcebinding.karmada.io/name": "nginx-deployment"}, true},
		{"cluster binding, a namespaced binding's", crb, map[string]string{"resourcebinding.karmada.io/permanent-id": "rb-id"}, nil, false},
	}
	for _, tt := range tests {
		if got := tt.v.Owns(tt.labels, tt.annotations); got != tt.want {
			t.Errorf("%s: Owns = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestExistingClusters(t *testing.T) {
	spec := &workv1alpha2.ResourceBindingSpec{
		Clusters:   clusters("m1", 1),
		RequiredBy: []workv1alpha2.BindingSnapshot{{Name: "a", Clusters: clusters("m2", 1)}},
		GracefulEvictionTasks: []workv1alpha2.GracefulEvictionTask{
			{FromCluster: "m3", Reason: "TaintUntolerated", Producer: "TaintManager"},
			// Purged Directly: its copy goes at once.
			{FromCluster: "m4", Reason: "ApplicationFailure", Producer: "resource-binding-application-failover-controller", PurgeMode: "Directly"},
		},
	}
	want := map[string]bool{"m1": true, "m2": true, "m3": true}
	if diff := cmp.Diff(want, ExistingClusters(spec)); diff != "" {
		t.Errorf("ExistingClusters (-want +got):\n%s", diff)
	}
}

func TestOrphan(t *testing.T) {
	keep := map[string]bool{"m1": true}
	tests := []struct {
		namespace string
		deleting  bool
		want      bool
	}{
		{"karmada-es-m1", false, false},
		{"karmada-es-m2", false, true},
		{"karmada-es-m2", true, false},
		{"apps", false, false},
	}
	for _, tt := range tests {
		w := newTestWork(tt.namespace, tt.deleting)
		if got := orphan(w, keep); got != tt.want {
			t.Errorf("orphan(%s, deleting=%v) = %v, want %v", tt.namespace, tt.deleting, got, tt.want)
		}
	}
}

func TestMayOverride(t *testing.T) {
	ref := workv1alpha2.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "apps", Name: "nginx"}
	sel := func(apiVersion, kind, namespace, name string) policyv1alpha1.ResourceSelector {
		return policyv1alpha1.ResourceSelector{APIVersion: apiVersion, Kind: kind, Namespace: namespace, Name: name}
	}
	withLabels := sel("apps/v1", "Deployment", "", "")
	withLabels.LabelSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "other"}}
	tests := []struct {
		name      string
		namespace string
		selectors []policyv1alpha1.ResourceSelector
		want      bool
	}{
		{"cluster policy without selectors", "", nil, true},
		{"policy of another namespace", "other", nil, false},
		{"policy of the namespace without selectors", "apps", nil, true},
		{"kind matches", "", []policyv1alpha1.ResourceSelector{sel("apps/v1", "Deployment", "", "")}, true},
		{"other kind", "", []policyv1alpha1.ResourceSelector{sel("apps/v1", "StatefulSet", "", "")}, false},
		{"other version", "", []policyv1alpha1.ResourceSelector{sel("apps/v1beta1", "Deployment", "", "")}, false},
		{"name matches", "apps", []policyv1alpha1.ResourceSelector{sel("apps/v1", "Deployment", "", "nginx")}, true},
		{"other name", "apps", []policyv1alpha1.ResourceSelector{sel("apps/v1", "Deployment", "", "web")}, false},
		{"other selector namespace", "", []policyv1alpha1.ResourceSelector{sel("apps/v1", "Deployment", "team", "")}, false},
		{"label selector: may match", "", []policyv1alpha1.ResourceSelector{withLabels}, true},
		{"second selector matches", "", []policyv1alpha1.ResourceSelector{sel("v1", "Service", "", ""), sel("apps/v1", "Deployment", "", "")}, true},
	}
	for _, tt := range tests {
		if got := mayOverride(tt.namespace, tt.selectors, ref); got != tt.want {
			t.Errorf("%s: mayOverride = %v, want %v", tt.name, got, tt.want)
		}
	}
}
