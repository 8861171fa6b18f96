package propagationpolicy

import (
	"context"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	"github.com/flotilla-io/flotilla/components/webhook/internal/verdict"
)

// +kubebuilder:webhook:path=/mutate-propagationpolicy,mutating=true,failurePolicy=fail,sideEffects=None,groups=policy.karmada.io,resources=propagationpolicies,verbs=create;update,versions=*,name=propagationpolicy.karmada.io,admissionReviewVersions=v1,serviceName=karmada-webhook,serviceNamespace=karmada-system,servicePort=443,timeoutSeconds=3
// +kubebuilder:webhook:path=/mutate-clusterpropagationpolicy,mutating=true,failurePolicy=fail,sideEffects=None,groups=policy.karmada.io,resources=clusterpropagationpolicies,verbs=create;update,versions=*,name=clusterpropagationpolicy.karmada.io,admissionReviewVersions=v1,serviceName=karmada-webhook,serviceNamespace=karmada-system,servicePort=443,timeoutSeconds=3

// DefaultTolerationSeconds is how long, by default, a policy's workloads
// stay on a member that became not ready or unreachable before failover may
// move them (Karmada's --default-not-ready-toleration-seconds and
// --default-unreachable-toleration-seconds).
const DefaultTolerationSeconds int64 = 300

// DefaultGracePeriodSeconds is the grace period of a Gracefully purged
// application failover that sets none.
const DefaultGracePeriodSeconds int32 = 600

// Defaults are the values the defaulting handlers fill in.
type Defaults struct {
	// NotReadyTolerationSeconds and UnreachableTolerationSeconds are the
	// tolerationSeconds of the NoExecute tolerations added for the
	// cluster.karmada.io/not-ready and cluster.karmada.io/unreachable
	// taints. Negative means no such toleration is added.
	NotReadyTolerationSeconds    int64
	UnreachableTolerationSeconds int64
}

// Defaulter is the defaulting handler of one policy kind.
type Defaulter struct {
	kind     kind
	decoder  admission.Decoder
	defaults Defaults
}

// NewPropagationPolicyDefaulter serves /mutate-propagationpolicy.
func NewPropagationPolicyDefaulter(decoder admission.Decoder, d Defaults) *Defaulter {
	return &Defaulter{kind: propagationPolicy, decoder: decoder, defaults: d}
}

// NewClusterPropagationPolicyDefaulter serves
// /mutate-clusterpropagationpolicy.
func NewClusterPropagationPolicyDefaulter(decoder admission.Decoder, d Defaults) *Defaulter {
	return &Defaulter{kind: clusterPropagationPolicy, decoder: decoder, defaults: d}
}

// Handle answers with the patch that defaults the policy.
func (h *Defaulter) Handle(_ context.Context, req admission.Request) admission.Response {
	obj, spec := h.kind.newObj()
	if err := h.decoder.Decode(req, obj); err != nil {
		return verdict.BadRequest(err)
	}
	oldID := ""
	if req.Operation == admissionv1.Update && len(req.OldObject.Raw) > 0 {
		old, _ := h.kind.newObj()
		if err := h.decoder.DecodeRaw(req.OldObject, old); err != nil {
			return verdict.BadRequest(err)
		}
		oldID = old.GetLabels()[h.kind.idLabel]
	}
	namespace := ""
	if h.kind.namespaced {
		// On create the object may not carry its namespace yet; the
		// request always does.
		namespace = req.Namespace
	}
	h.defaults.apply(spec, namespace)
	ensureID(obj, h.kind.idLabel, oldID)
	return verdict.Patch(req, obj)
}

// ensureID gives the policy its permanent id: the one it had before an
// update that dropped it, or a new one.
func ensureID(obj client.Object, label, previous string) {
	labels := obj.GetLabels()
	if labels[label] != "" {
		return
	}
	if labels == nil {
		labels = map[string]string{}
	}
	if previous == "" {
		previous = string(uuid.NewUUID())
	}
	labels[label] = previous
	obj.SetLabels(labels)
}

// apply fills in Karmada's defaults of a propagation spec. namespace, when
// set, is given to resource selectors that name none.
func (d Defaults) apply(spec *policyv1alpha1.PropagationSpec, namespace string) {
	for i := range spec.ResourceSelectors {
		if namespace != "" && spec.ResourceSelectors[i].Namespace == "" {
			spec.ResourceSelectors[i].Namespace = namespace
		}
		if isServiceImport(spec.ResourceSelectors[i]) {
			// An imported service is useless without the EndpointSlices
			// and derived Service that follow it as dependencies.
			spec.PropagateDeps = true
		}
	}
	for i := range spec.Placement.SpreadConstraints {
		c := &spec.Placement.SpreadConstraints[i]
		if c.SpreadByField == "" && c.SpreadByLabel == "" {
			c.SpreadByField = policyv1alpha1.SpreadByFieldCluster
		}
		if c.MinGroups == 0 {
			c.MinGroups = 1
		}
	}
	if d.NotReadyTolerationSeconds >= 0 {
		addToleration(&spec.Placement, noExecuteToleration(clusterv1alpha1.TaintClusterNotReady, d.NotReadyTolerationSeconds))
	}
	if d.UnreachableTolerationSeconds >= 0 {
		addToleration(&spec.Placement, noExecuteToleration(clusterv1alpha1.TaintClusterUnreachable, d.UnreachableTolerationSeconds))
	}
	if rs := spec.Placement.ReplicaScheduling; rs != nil &&
		rs.ReplicaSchedulingType == policyv1alpha1.ReplicaSchedulingTypeDivided && rs.ReplicaDivisionPreference == "" {
		rs.ReplicaDivisionPreference = policyv1alpha1.ReplicaDivisionPreferenceWeighted
	}
	if spec.Failover != nil && spec.Failover.Application != nil {
		a := spec.Failover.Application
		if (a.PurgeMode == "" || a.PurgeMode == policyv1alpha1.PurgeModeGracefully) && a.GracePeriodSeconds == nil {
			a.GracePeriodSeconds = ptr.To(DefaultGracePeriodSeconds)
		}
	}
}

func isServiceImport(s policyv1alpha1.ResourceSelector) bool {
	return s.APIVersion == "multicluster.x-k8s.io/v1alpha1" && s.Kind == "ServiceImport"
}

func noExecuteToleration(key string, seconds int64) corev1.Toleration {
	return corev1.Toleration{
		Key:               key,
		Operator:          corev1.TolerationOpExists,
		Effect:            corev1.TaintEffectNoExecute,
		TolerationSeconds: ptr.To(seconds),
	}
}

// addToleration appends t unless the placement already tolerates its taint
// the same way (same key, operator, value and effect), whatever the seconds.
func addToleration(p *policyv1alpha1.Placement, t corev1.Toleration) {
	for _, have := range p.ClusterTolerations {
		if have.Key == t.Key && have.Operator == t.Operator && have.Value == t.Value && have.Effect == t.Effect {
			return
		}
	}
	p.ClusterTolerations = append(p.ClusterTolerations, t)
}
