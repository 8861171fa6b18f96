package detector

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
)

func TestConflictResolution(t *testing.T) {
	annotated := func(v string) *unstructured.Unstructured {
		return obj("apps/v1", "Deployment", "team", "web", func(u *unstructured.Unstructured) {
			u.SetAnnotations(map[string]string{"work.karmada.io/conflict-resolution": v})
		})
	}
	tests := []struct {
		name   string
		tmpl   *unstructured.Unstructured
		policy policyv1alpha1.ConflictResolution
		want   policyv1alpha1.ConflictResolution
	}{
		{"the policy's", obj("apps/v1", "Deployment", "team", "web"), policyv1alpha1.ConflictOverwrite, policyv1alpha1.ConflictOverwrite},
		{"unset means Abort", obj("apps/v1", "Deployment", "team", "web"), "", policyv1alpha1.ConflictAbort},
		{"the annotation overrides", annotated("overwrite"), policyv1alpha1.ConflictAbort, policyv1alpha1.ConflictOverwrite},
		{"the annotation is case-insensitive", annotated("Abort"), policyv1alpha1.ConflictOverwrite, policyv1alpha1.ConflictAbort},
		{"an unknown annotation value is ignored", annotated("maybe"), policyv1alpha1.ConflictOverwrite, policyv1alpha1.ConflictOverwrite},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := conflictResolution(tt.tmpl, tt.policy); got != tt.want {
				t.Errorf("conflictResolution = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestAffinityGroups(t *testing.T) {
	tmpl := obj("apps/v1", "Deployment", "team", "web", withLabels(map[string]string{"app": "shop", "zone": "a"}))
	tests := []struct {
		name string
		wa   *policyv1alpha1.WorkloadAffinity
		want *workv1alpha2.WorkloadAffinityGroups
	}{
		{"none", nil, nil},
		{"affinity", &policyv1alpha1.WorkloadAffinity{Affinity: &policyv1alpha1.WorkloadAffinityTerm{GroupByLabelKey: "app"}},
			&workv1alpha2.WorkloadAffinityGroups{AffinityGroup: "shop"}},
		{"both", &policyv1alpha1.WorkloadAffinity{
			Affinity:     &policyv1alpha1.WorkloadAffinityTerm{GroupByLabelKey: "app"},
			AntiAffinity: &policyv1alpha1.WorkloadAntiAffinityTerm{GroupByLabelKey: "zone"},
		}, &workv1alpha2.WorkloadAffinityGroups{AffinityGroup: "shop", AntiAffinityGroup: "a"}},
		{"the template lacks the label", &policyv1alpha1.WorkloadAffinity{Affinity: &policyv1alpha1.WorkloadAffinityTerm{GroupByLabelKey: "tier"}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, affinityGroups(tmpl, tt.wa)); diff != "" {
				t.Errorf("affinityGroups (-want +got):\n%s", diff)
			}
		})
	}
}
