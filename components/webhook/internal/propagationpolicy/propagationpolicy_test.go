package propagationpolicy

import (
	"testing"

	"gomodules.xyz/jsonpatch/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	"github.com/flotilla-io/flotilla/components/webhook/internal/admissiontest"
)

const idLabelPath = "/metadata/labels/propagationpolicy.karmada.io~1permanent-id"

// policy builds a valid, defaulted PropagationPolicy in namespace "apps".
func policy(mutate ...func(*policyv1alpha1.PropagationPolicy)) *policyv1alpha1.PropagationPolicy {
	p := &policyv1alpha1.PropagationPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "nginx", Namespace: "apps",
			Labels: map[string]string{policyv1alpha1.PropagationPolicyPermanentIDLabel: "id-1"}},
		Spec: policyv1alpha1.PropagationSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Name: "nginx", Namespace: "apps"}},
			Placement: policyv1alpha1.Placement{
				ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1"}},
				ClusterTolerations: []corev1.Toleration{
					noExecuteToleration("cluster.karmada.io/not-ready", 300),
					noExecuteToleration("cluster.karmada.io/unreachable", 300),
				},
			},
			SchedulerName: "default-scheduler",
		},
	}
	for _, m := range mutate {
		m(p)
	}
	return p
}

func clusterPolicy(mutate ...func(*policyv1alpha1.ClusterPropagationPolicy)) *policyv1alpha1.ClusterPropagationPolicy {
	p := &policyv1alpha1.ClusterPropagationPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "roles",
			Labels: map[string]string{policyv1alpha1.ClusterPropagationPolicyPermanentIDLabel: "id-2"}},
		Spec: *policy().Spec.DeepCopy(),
	}
	p.Spec.ResourceSelectors = []policyv1alpha1.ResourceSelector{{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole"}}
	for _, m := range mutate {
		m(p)
	}
	return p
}

var defaults = Defaults{NotReadyTolerationSeconds: 300, UnreachableTolerationSeconds: 300}

func TestDefaultPropagationPolicy(t *testing.T) {
	h := NewPropagationPolicyDefaulter(admissiontest.Decoder(), defaults)
	tests := []struct {
		name string
		obj  *policyv1alpha1.PropagationPolicy
		old  *policyv1alpha1.PropagationPolicy
		want admissiontest.Want
	}{
		{name: "defaulted policy is left alone", obj: policy()},
		{
			name: "new policy gets its id, selector namespace and tolerations",
			obj: policy(func(p *policyv1alpha1.PropagationPolicy) {
				p.Labels = nil
				p.Spec.ResourceSelectors[0].Namespace = ""
				p.Spec.Placement.ClusterTolerations = nil
			}),
			want: admissiontest.Want{
				Patch: []jsonpatch.Operation{
					{Operation: "add", Path: "/metadata/labels", Value: nil},
					{Operation: "add", Path: "/spec/resourceSelectors/0/namespace", Value: "apps"},
					{Operation: "add", Path: "/spec/placement/clusterTolerations", Value: admissiontest.JSON(`[
						{"key":"cluster.karmada.io/not-ready","operator":"Exists","effect":"NoExecute","tolerationSeconds":300},
						{"key":"cluster.karmada.io/unreachable","operator":"Exists","effect":"NoExecute","tolerationSeconds":300}]`)},
				},
				IgnorePatchValues: []string{"/metadata/labels"},
			},
		},
		{
			name: "a toleration of the taint with other seconds is kept",
			obj: policy(func(p *policyv1alpha1.PropagationPolicy) {
				p.Spec.Placement.ClusterTolerations = []corev1.Toleration{noExecuteToleration("cluster.karmada.io/not-ready", 30)}
			}),
			want: admissiontest.Want{Patch: []jsonpatch.Operation{
				{Operation: "add", Path: "/spec/placement/clusterTolerations/1", Value: admissiontest.JSON(
					`{"key":"cluster.karmada.io/unreachable","operator":"Exists","effect":"NoExecute","tolerationSeconds":300}`)},
			}},
		},
		{
			name: "update keeps the id the old object had",
			obj:  policy(func(p *policyv1alpha1.PropagationPolicy) { p.Labels = map[string]string{"team": "a"} }),
			old:  policy(),
			want: admissiontest.Want{Patch: []jsonpatch.Operation{
				{Operation: "add", Path: idLabelPath, Value: "id-1"},
			}},
		},
		{
			name: "spread constraints, division preference and grace period",
			obj: policy(func(p *policyv1alpha1.PropagationPolicy) {
				p.Spec.PropagateDeps = true
				p.Spec.Placement.SpreadConstraints = []policyv1alpha1.SpreadConstraint{{MaxGroups: 2}, {SpreadByLabel: "zone", MinGroups: 2}}
				p.Spec.Placement.ReplicaScheduling = &policyv1alpha1.ReplicaSchedulingStrategy{ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingTypeDivided}
				p.Spec.Failover = &policyv1alpha1.FailoverBehavior{Application: &policyv1alpha1.ApplicationFailoverBehavior{PurgeMode: policyv1alpha1.PurgeModeGracefully}}
			}),
			want: admissiontest.Want{Patch: []jsonpatch.Operation{
				{Operation: "add", Path: "/spec/placement/spreadConstraints/0/spreadByField", Value: "cluster"},
				{Operation: "add", Path: "/spec/placement/spreadConstraints/0/minGroups", Value: float64(1)},
				{Operation: "add", Path: "/spec/placement/replicaScheduling/replicaDivisionPreference", Value: "Weighted"},
				{Operation: "add", Path: "/spec/failover/application/gracePeriodSeconds", Value: float64(600)},
			}},
		},
		{
			name: "a ServiceImport brings its dependencies",
			obj: policy(func(p *policyv1alpha1.PropagationPolicy) {
				p.Spec.ResourceSelectors = append(p.Spec.ResourceSelectors, policyv1alpha1.ResourceSelector{
					APIVersion: "multicluster.x-k8s.io/v1alpha1", Kind: "ServiceImport", Name: "web", Namespace: "apps"})
			}),
			want: admissiontest.Want{Patch: []jsonpatch.Operation{{Operation: "add", Path: "/spec/propagateDeps", Value: true}}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := admissiontest.Create(tc.obj)
			if tc.old != nil {
				req = admissiontest.Update(tc.obj, tc.old)
			}
			admissiontest.Check(t, h, req, tc.want)
		})
	}
}

func TestDefaultClusterPropagationPolicy(t *testing.T) {
	h := NewClusterPropagationPolicyDefaulter(admissiontest.Decoder(), Defaults{NotReadyTolerationSeconds: 60, UnreachableTolerationSeconds: -1})
	obj := clusterPolicy(func(p *policyv1alpha1.ClusterPropagationPolicy) {
		p.Spec.Placement.ClusterTolerations = nil
		delete(p.Labels, policyv1alpha1.ClusterPropagationPolicyPermanentIDLabel)
	})
	admissiontest.Check(t, h, admissiontest.Create(obj), admissiontest.Want{
		Patch: []jsonpatch.Operation{
			// Cluster-scoped: selectors keep no namespace.
			{Operation: "add", Path: "/metadata/labels", Value: nil},
			{Operation: "add", Path: "/spec/placement/clusterTolerations", Value: admissiontest.JSON(
				`[{"key":"cluster.karmada.io/not-ready","operator":"Exists","effect":"NoExecute","tolerationSeconds":60}]`)},
		},
		IgnorePatchValues: []string{"/metadata/labels"},
	})
}

func TestValidatePropagationPolicy(t *testing.T) {
	h := NewPropagationPolicyValidator(admissiontest.Decoder())
	tests := []struct {
		name string
		obj  *policyv1alpha1.PropagationPolicy
		old  *policyv1alpha1.PropagationPolicy
		want []string
	}{
		{name: "valid", obj: policy()},
		{
			name: "no permanent id",
			obj:  policy(func(p *policyv1alpha1.PropagationPolicy) { p.Labels = nil }),
			want: []string{"metadata.labels[propagationpolicy.karmada.io/permanent-id]"},
		},
		{
			name: "name too long for a label value",
			obj: policy(func(p *policyv1alpha1.PropagationPolicy) {
				p.Name = "a-policy-name-that-is-much-longer-than-sixty-three-characters-long"
			}),
			want: []string{"metadata.name"},
		},
		{
			name: "clusterAffinity and clusterAffinities",
			obj: policy(func(p *policyv1alpha1.PropagationPolicy) {
				p.Spec.Placement.ClusterAffinities = []policyv1alpha1.ClusterAffinityTerm{{AffinityName: "primary"}}
			}),
			want: []string{"spec.placement.clusterAffinities"},
		},
		{
			name: "duplicate and malformed affinity names",
			obj: policy(func(p *policyv1alpha1.PropagationPolicy) {
				p.Spec.Placement.ClusterAffinity = nil
				p.Spec.Placement.ClusterAffinities = []policyv1alpha1.ClusterAffinityTerm{
					{AffinityName: "primary"}, {AffinityName: "primary"}, {AffinityName: "not valid!"}}
			}),
			want: []string{"spec.placement.clusterAffinities[1].affinityName", "spec.placement.clusterAffinities[2].affinityName"},
		},
		{
			name: "field selector key and operator",
			obj: policy(func(p *policyv1alpha1.PropagationPolicy) {
				p.Spec.Placement.ClusterAffinity.FieldSelector = &policyv1alpha1.FieldSelector{MatchExpressions: []corev1.NodeSelectorRequirement{
					{Key: "provider", Operator: corev1.NodeSelectorOpIn, Values: []string{"aws"}},
					{Key: "cloud", Operator: corev1.NodeSelectorOpExists},
				}}
			}),
			want: []string{"spec.placement.clusterAffinity.fieldSelector.matchExpressions[1].key",
				"spec.placement.clusterAffinity.fieldSelector.matchExpressions[1].operator"},
		},
		{
			name: "label selector",
			obj: policy(func(p *policyv1alpha1.PropagationPolicy) {
				p.Spec.Placement.ClusterAffinity.LabelSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"bad key!": "x"}}
			}),
			want: []string{"spec.placement.clusterAffinity.labelSelector.matchLabels"},
		},
		{
			name: "spread constraints",
			obj: policy(func(p *policyv1alpha1.PropagationPolicy) {
				p.Spec.Placement.SpreadConstraints = []policyv1alpha1.SpreadConstraint{
					{SpreadByField: "region", SpreadByLabel: "zone", MinGroups: 3, MaxGroups: 2},
					{SpreadByField: "region", MinGroups: 1},
				}
			}),
			want: []string{"spec.placement.spreadConstraints[0].spreadByLabel", "spec.placement.spreadConstraints[0].maxGroups",
				"spec.placement.spreadConstraints[1].spreadByField", "spec.placement.spreadConstraints"},
		},
		{
			name: "tolerations",
			obj: policy(func(p *policyv1alpha1.PropagationPolicy) {
				p.Spec.Placement.ClusterTolerations = append(p.Spec.Placement.ClusterTolerations,
					corev1.Toleration{Key: "k", Operator: corev1.TolerationOpExists, Value: "v"},
					corev1.Toleration{Key: "k", Effect: corev1.TaintEffectNoSchedule, TolerationSeconds: ptr.To[int64](1)})
			}),
			want: []string{"spec.placement.clusterTolerations[2].value", "spec.placement.clusterTolerations[3].effect"},
		},
		{
			name: "static weights",
			obj: policy(func(p *policyv1alpha1.PropagationPolicy) {
				p.Spec.Placement.ReplicaScheduling = &policyv1alpha1.ReplicaSchedulingStrategy{
					ReplicaSchedulingType:     policyv1alpha1.ReplicaSchedulingTypeDivided,
					ReplicaDivisionPreference: policyv1alpha1.ReplicaDivisionPreferenceWeighted,
					WeightPreference: &policyv1alpha1.ClusterPreferences{
						StaticWeightList: []policyv1alpha1.StaticClusterWeight{{Weight: 0}},
						DynamicWeight:    policyv1alpha1.DynamicWeightByAvailableReplicas,
					},
				}
			}),
			want: []string{"spec.placement.replicaScheduling.weightPreference.dynamicWeight",
				"spec.placement.replicaScheduling.weightPreference.staticWeightList[0].weight"},
		},
		{
			name: "preemption Always needs named selectors",
			obj: policy(func(p *policyv1alpha1.PropagationPolicy) {
				p.Spec.Preemption = policyv1alpha1.PreemptAlways
				p.Spec.ResourceSelectors[0].Name = ""
			}),
			want: []string{"spec.resourceSelectors[0].name"},
		},
		{
			name: "selectors",
			obj: policy(func(p *policyv1alpha1.PropagationPolicy) {
				p.Spec.ResourceSelectors = append(p.Spec.ResourceSelectors, policyv1alpha1.ResourceSelector{APIVersion: "a/b/c", Kind: "X"})
			}),
			want: []string{"spec.resourceSelectors[1].apiVersion"},
		},
		{
			name: "application failover",
			obj: policy(func(p *policyv1alpha1.PropagationPolicy) {
				p.Spec.Failover = &policyv1alpha1.FailoverBehavior{Application: &policyv1alpha1.ApplicationFailoverBehavior{
					DecisionConditions: policyv1alpha1.DecisionConditions{TolerationSeconds: ptr.To[int32](-1)},
					PurgeMode:          policyv1alpha1.PurgeModeNever,
					GracePeriodSeconds: ptr.To[int32](10),
					StatePreservation: &policyv1alpha1.StatePreservation{Rules: []policyv1alpha1.StatePreservationRule{
						{AliasLabelName: "app.io/replicas", JSONPath: "{.replicas"}}},
				}}
			}),
			want: []string{"spec.propagateDeps", "spec.failover.application.decisionConditions.tolerationSeconds",
				"spec.failover.application.gracePeriodSeconds", "spec.failover.application.statePreservation.rules[0].jsonPath"},
		},
		{
			name: "suspension of all and some clusters",
			obj: policy(func(p *policyv1alpha1.PropagationPolicy) {
				p.Spec.Suspension = &policyv1alpha1.Suspension{Dispatching: ptr.To(true),
					DispatchingOnClusters: &policyv1alpha1.SuspendClusters{ClusterNames: []string{"member1"}}}
			}),
			want: []string{"spec.suspension.dispatchingOnClusters"},
		},
		{
			name: "schedulerName and id are immutable",
			obj: policy(func(p *policyv1alpha1.PropagationPolicy) {
				p.Spec.SchedulerName = "other"
				p.Labels[policyv1alpha1.PropagationPolicyPermanentIDLabel] = "id-2"
			}),
			old:  policy(),
			want: []string{"spec.schedulerName", "metadata.labels[propagationpolicy.karmada.io/permanent-id]"},
		},
		{
			name: "an id may be given to a policy that had none",
			obj:  policy(),
			old:  policy(func(p *policyv1alpha1.PropagationPolicy) { p.Labels = nil }),
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := admissiontest.Create(tc.obj)
			if tc.old != nil {
				req = admissiontest.Update(tc.obj, tc.old)
			}
			admissiontest.Check(t, h, req, admissiontest.Want{Denied: tc.want})
		})
	}
}

func TestValidateClusterPropagationPolicy(t *testing.T) {
	h := NewClusterPropagationPolicyValidator(admissiontest.Decoder())
	admissiontest.Check(t, h, admissiontest.Create(clusterPolicy()), admissiontest.Want{})
	bad := clusterPolicy(func(p *policyv1alpha1.ClusterPropagationPolicy) {
		p.Spec.Placement.SpreadConstraints = []policyv1alpha1.SpreadConstraint{{SpreadByField: "zone", MinGroups: 1}}
	})
	resp := admissiontest.Check(t, h, admissiontest.Create(bad), admissiontest.Want{Denied: []string{"spec.placement.spreadConstraints"}})
	if resp.Result.Code != 422 || resp.Result.Details.Kind != "ClusterPropagationPolicy" {
		t.Errorf("status = %+v, want 422 Invalid of a ClusterPropagationPolicy", resp.Result)
	}
}
