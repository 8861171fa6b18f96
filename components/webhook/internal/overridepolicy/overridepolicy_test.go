package overridepolicy

import (
	"testing"

	"gomodules.xyz/jsonpatch/v2"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	"github.com/flotilla-io/flotilla/components/webhook/internal/admissiontest"
)

func policy(mutate ...func(*policyv1alpha1.OverridePolicy)) *policyv1alpha1.OverridePolicy {
	p := &policyv1alpha1.OverridePolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "images", Namespace: "apps"},
		Spec: policyv1alpha1.OverrideSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "apps"}},
			OverrideRules: []policyv1alpha1.RuleWithCluster{{
				TargetCluster: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1"}},
				Overriders: policyv1alpha1.Overriders{
					ImageOverrider: []policyv1alpha1.ImageOverrider{{Component: policyv1alpha1.Registry, Operator: policyv1alpha1.OverriderOpReplace, Value: "mirror.io"}},
				},
			}},
		},
	}
	for _, m := range mutate {
		m(p)
	}
	return p
}

func TestDefault(t *testing.T) {
	h := NewDefaulter(admissiontest.Decoder())
	admissiontest.Check(t, h, admissiontest.Create(policy()), admissiontest.Want{})
	admissiontest.Check(t, h, admissiontest.Create(policy(func(p *policyv1alpha1.OverridePolicy) {
		p.Spec.ResourceSelectors[0].Namespace = ""
	})), admissiontest.Want{Patch: []jsonpatch.Operation{
		{Operation: "add", Path: "/spec/resourceSelectors/0/namespace", Value: "apps"},
	}})
}

func rule(p *policyv1alpha1.OverridePolicy) *policyv1alpha1.Overriders {
	return &p.Spec.OverrideRules[0].Overriders
}

func TestValidate(t *testing.T) {
	h := NewValidator(admissiontest.Decoder())
	value := apiextensionsv1.JSON{Raw: []byte(`"x"`)}
	tests := []struct {
		name string
		obj  *policyv1alpha1.OverridePolicy
		want []string
	}{
		{name: "valid", obj: policy()},
		{
			name: "rules with the deprecated targetCluster and overriders",
			obj: policy(func(p *policyv1alpha1.OverridePolicy) {
				p.Spec.TargetCluster = &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1"}}
				p.Spec.Overriders.Plaintext = []policyv1alpha1.PlaintextOverrider{{Path: "/spec/replicas", Operator: policyv1alpha1.OverriderOpRemove}}
			}),
			want: []string{"spec.targetCluster", "spec.overriders"},
		},
		{
			name: "labels, annotations and pointers",
			obj: policy(func(p *policyv1alpha1.OverridePolicy) {
				o := rule(p)
				o.LabelsOverrider = []policyv1alpha1.LabelAnnotationOverrider{{Operator: policyv1alpha1.OverriderOpAdd, Value: map[string]string{"bad key!": "v"}}}
				o.AnnotationsOverrider = []policyv1alpha1.LabelAnnotationOverrider{{Operator: policyv1alpha1.OverriderOpAdd, Value: map[string]string{"/x": "v"}}}
				o.ImageOverrider[0].Predicate = &policyv1alpha1.ImagePredicate{Path: "/spec/~2"}
				o.Plaintext = []policyv1alpha1.PlaintextOverrider{{Path: "spec", Operator: policyv1alpha1.OverriderOpRemove}}
			}),
			want: []string{
				"spec.overrideRules[0].overriders.labelsOverrider[0].value",
				"spec.overrideRules[0].overriders.annotationsOverrider[0].value",
				"spec.overrideRules[0].overriders.imageOverrider[0].predicate.path",
				"spec.overrideRules[0].overriders.plaintext[0].path",
			},
		},
		{
			name: "field overrider",
			obj: policy(func(p *policyv1alpha1.OverridePolicy) {
				rule(p).FieldOverrider = []policyv1alpha1.FieldOverrider{{
					FieldPath: "/data/config.yaml",
					JSON:      []policyv1alpha1.JSONPatchOperation{{SubPath: "/a", Operator: policyv1alpha1.OverriderOpAdd}},
					YAML:      []policyv1alpha1.YAMLPatchOperation{{SubPath: "/b", Operator: policyv1alpha1.OverriderOpRemove, Value: value}},
				}}
			}),
			want: []string{
				"spec.overrideRules[0].overriders.fieldOverrider[0].yaml",
				"spec.overrideRules[0].overriders.fieldOverrider[0].json[0].value",
				"spec.overrideRules[0].overriders.fieldOverrider[0].yaml[0].value",
			},
		},
		{
			name: "target cluster",
			obj: policy(func(p *policyv1alpha1.OverridePolicy) {
				p.Spec.OverrideRules[0].TargetCluster.LabelSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "a", Operator: "Near"}}}
			}),
			want: []string{"spec.overrideRules[0].targetCluster.labelSelector.matchExpressions[0].operator"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			admissiontest.Check(t, h, admissiontest.Create(tc.obj), admissiontest.Want{Denied: tc.want})
		})
	}
}

func TestValidateCluster(t *testing.T) {
	h := NewClusterValidator(admissiontest.Decoder())
	p := &policyv1alpha1.ClusterOverridePolicy{ObjectMeta: metav1.ObjectMeta{Name: "all"}, Spec: policy().Spec}
	admissiontest.Check(t, h, admissiontest.Create(p), admissiontest.Want{})
	p.Spec.ResourceSelectors[0].Kind = ""
	admissiontest.Check(t, h, admissiontest.Create(p), admissiontest.Want{Denied: []string{"spec.resourceSelectors[0].kind"}})
}
