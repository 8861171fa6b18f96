package binding

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/components/webhook/internal/verdict"
)

// +kubebuilder:webhook:path=/validate-resourcebinding,mutating=false,failurePolicy=fail,sideEffects=None,groups=work.karmada.io,resources=resourcebindings,verbs=create;update,versions=v1alpha2,name=resourcebinding.karmada.io,admissionReviewVersions=v1,serviceName=karmada-webhook,serviceNamespace=karmada-system,servicePort=443,timeoutSeconds=3

// QuotaValidator refuses a ResourceBinding whose scheduled replicas would
// take its namespace over a FederatedResourceQuota's overall limit, as
// Karmada's FederatedQuotaEnforcement feature does. Usage is what the
// quota's status.overallUsed says plus what the binding adds by this
// change; a binding that adds nothing is always allowed, so scale-down and
// status updates pass even over quota.
type QuotaValidator struct {
	decoder admission.Decoder
	reader  client.Reader
	enforce bool
}

// NewQuotaValidator serves /validate-resourcebinding. With enforce false it
// allows every request.
func NewQuotaValidator(decoder admission.Decoder, reader client.Reader, enforce bool) *QuotaValidator {
	return &QuotaValidator{decoder: decoder, reader: reader, enforce: enforce}
}

// Handle checks the binding's added usage against the namespace's quotas.
func (h *QuotaValidator) Handle(ctx context.Context, req admission.Request) admission.Response {
	if !h.enforce {
		return admission.Allowed("")
	}
	rb := &workv1alpha2.ResourceBinding{}
	if err := h.decoder.Decode(req, rb); err != nil {
		return verdict.BadRequest(err)
	}
	added := Usage(&rb.Spec)
	if req.Operation == admissionv1.Update && len(req.OldObject.Raw) > 0 {
		old := &workv1alpha2.ResourceBinding{}
		if err := h.decoder.DecodeRaw(req.OldObject, old); err != nil {
			return verdict.BadRequest(err)
		}
		for name, q := range Usage(&old.Spec) {
			v := added[name]
			v.Sub(q)
			added[name] = v
		}
	}
	if !anyPositive(added) {
		return admission.Allowed("")
	}
	var quotas policyv1alpha1.FederatedResourceQuotaList
	if err := h.reader.List(ctx, &quotas, client.InNamespace(req.Namespace)); err != nil {
		return admission.Errored(http.StatusInternalServerError, fmt.Errorf("listing FederatedResourceQuotas: %w", err))
	}
	var errs field.ErrorList
	for i := range quotas.Items {
		errs = append(errs, exceeds(&quotas.Items[i], added, field.NewPath("spec", "clusters"))...)
	}
	return verdict.Invalid(workv1alpha2.GroupVersion.WithKind("ResourceBinding").GroupKind(), rb.Name, errs)
}

// Usage is what a binding's scheduled replicas request in all clusters
// together: replicas times the per-replica request, per component for
// multi-component workloads.
func Usage(spec *workv1alpha2.ResourceBindingSpec) corev1.ResourceList {
	usage := corev1.ResourceList{}
	add := func(requests corev1.ResourceList, replicas int32) {
		for name, q := range requests {
			total := usage[name]
			for range replicas {
				total.Add(q)
			}
			usage[name] = total
		}
	}
	requirements := map[string]corev1.ResourceList{}
	for _, c := range spec.Components {
		if c.ReplicaRequirements != nil {
			requirements[c.Name] = c.ReplicaRequirements.ResourceRequest
		}
	}
	for _, target := range spec.Clusters {
		if len(target.Components) > 0 {
			for _, c := range target.Components {
				add(requirements[c.Name], c.Replicas)
			}
			continue
		}
		if spec.ReplicaRequirements != nil {
			add(spec.ReplicaRequirements.ResourceRequest, target.Replicas)
		}
	}
	return usage
}

func anyPositive(l corev1.ResourceList) bool {
	for _, q := range l {
		if q.Sign() > 0 {
			return true
		}
	}
	return false
}

// exceeds names each limit of quota that added would break. A limit on
// "requests.cpu" counts the same as one on "cpu".
func exceeds(quota *policyv1alpha1.FederatedResourceQuota, added corev1.ResourceList, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for name, limit := range quota.Spec.Overall {
		requested := corev1.ResourceName(strings.TrimPrefix(string(name), "requests."))
		more, ok := added[requested]
		if !ok || more.Sign() <= 0 {
			continue
		}
		total := resource.Quantity{}
		if used, ok := quota.Status.OverallUsed[name]; ok {
			total.Add(used)
		}
		total.Add(more)
		if total.Cmp(limit) > 0 {
			errs = append(errs, field.Forbidden(path, fmt.Sprintf(
				"exceeds FederatedResourceQuota %s: %s would be %s, the limit is %s",
				quota.Name, name, total.String(), limit.String())))
		}
	}
	return errs
}
