package binding

import (
	"context"
	"fmt"
	"net/http"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/components/webhook/internal/verdict"
	"github.com/flotilla-io/flotilla/internal/federatedquota"
)

// +kubebuilder:webhook:path=/validate-resourcebinding,mutating=false,failurePolicy=fail,sideEffects=None,groups=work.karmada.io,resources=resourcebindings,verbs=create;update,versions=v1alpha2,name=resourcebinding.karmada.io,admissionReviewVersions=v1,serviceName=karmada-webhook,serviceNamespace=karmada-system,servicePort=443,timeoutSeconds=3,patch=`{"matchConditions":[{"name":"usage-changed","expression":"has(object.spec.clusters) && size(object.spec.clusters) > 0 && (request.operation != 'UPDATE' || !has(oldObject.spec.clusters) || object.spec.clusters != oldObject.spec.clusters || has(object.spec.components) != has(oldObject.spec.components) || (has(object.spec.components) && object.spec.components != oldObject.spec.components) || has(object.spec.replicaRequirements) != has(oldObject.spec.replicaRequirements) || (has(object.spec.replicaRequirements) && object.spec.replicaRequirements != oldObject.spec.replicaRequirements))"}]}`

// QuotaValidator refuses a ResourceBinding whose scheduled replicas would
// take its namespace over a FederatedResourceQuota's overall limit, as
// Karmada's FederatedQuotaEnforcement feature does. Usage is what the
// quota's status.overallUsed says plus what the binding adds by this
// change; a binding that adds nothing is always allowed, so scale-down and
// status updates pass even over quota. The API server calls it only for a
// binding with clusters whose clusters, components or replica requirements
// this request changes (matchConditions): the others add nothing, and most
// binding writes are of that kind.
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
	added := federatedquota.BindingUsage(&rb.Spec)
	if req.Operation == admissionv1.Update && len(req.OldObject.Raw) > 0 {
		old := &workv1alpha2.ResourceBinding{}
		if err := h.decoder.DecodeRaw(req.OldObject, old); err != nil {
			return verdict.BadRequest(err)
		}
		for name, q := range federatedquota.BindingUsage(&old.Spec) {
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
	return exceeded(rb.Name, errs)
}

// exceeded refuses the binding as Karmada's webhook does, with a 403 of
// reason QuotaExceeded, which the scheduler reports in the binding's
// Scheduled condition; the causes name the field, as for invalid objects.
func exceeded(name string, errs field.ErrorList) admission.Response {
	if len(errs) == 0 {
		return admission.Allowed("")
	}
	status := metav1.Status{
		Status:  metav1.StatusFailure,
		Code:    http.StatusForbidden,
		Reason:  federatedquota.ExceededReason,
		Message: fmt.Sprintf("ResourceBinding %q is forbidden: %s", name, errs.ToAggregate().Error()),
		Details: &metav1.StatusDetails{Name: name, Group: workv1alpha2.GroupVersion.Group, Kind: "resourcebindings"},
	}
	for _, e := range errs {
		status.Details.Causes = append(status.Details.Causes, metav1.StatusCause{
			Type: metav1.CauseType(e.Type), Message: e.ErrorBody(), Field: e.Field})
	}
	return admission.Response{AdmissionResponse: admissionv1.AdmissionResponse{Allowed: false, Result: &status}}
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
		more, ok := added[federatedquota.Requested(name)]
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
