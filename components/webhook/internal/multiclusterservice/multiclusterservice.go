// Package multiclusterservice defaults and validates MultiClusterServices
// (/mutate-multiclusterservice, /validate-multiclusterservice): the
// permanent id, and exposure types, ports and cluster names.
package multiclusterservice

import (
	"context"
	"slices"

	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/uuid"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	networkingv1alpha1 "github.com/flotilla-io/flotilla/api/networking/v1alpha1"
	"github.com/flotilla-io/flotilla/components/webhook/internal/validation"
	"github.com/flotilla-io/flotilla/components/webhook/internal/verdict"
)

// +kubebuilder:webhook:path=/mutate-multiclusterservice,mutating=true,failurePolicy=fail,sideEffects=None,groups=networking.karmada.io,resources=multiclusterservices,verbs=create;update,versions=*,name=multiclusterservice.karmada.io,admissionReviewVersions=v1,serviceName=karmada-webhook,serviceNamespace=karmada-system,servicePort=443,timeoutSeconds=3
// +kubebuilder:webhook:path=/validate-multiclusterservice,mutating=false,failurePolicy=fail,sideEffects=None,groups=networking.karmada.io,resources=multiclusterservices,verbs=create;update,versions=*,name=multiclusterservice.karmada.io,admissionReviewVersions=v1,serviceName=karmada-webhook,serviceNamespace=karmada-system,servicePort=443,timeoutSeconds=3

var exposureTypes = []networkingv1alpha1.ExposureType{networkingv1alpha1.ExposureTypeCrossCluster, networkingv1alpha1.ExposureTypeLoadBalancer}

// Defaulter serves /mutate-multiclusterservice.
type Defaulter struct {
	decoder admission.Decoder
}

// NewDefaulter returns the MultiClusterService defaulting handler.
func NewDefaulter(decoder admission.Decoder) *Defaulter { return &Defaulter{decoder: decoder} }

// Handle answers with the patch that gives the MultiClusterService its
// permanent id. Karmada defaults nothing else: no ports means every port of
// the Service, no clusters means every cluster, and types are required.
func (h *Defaulter) Handle(_ context.Context, req admission.Request) admission.Response {
	mcs := &networkingv1alpha1.MultiClusterService{}
	if err := h.decoder.Decode(req, mcs); err != nil {
		return verdict.BadRequest(err)
	}
	previous := ""
	if req.Operation == admissionv1.Update && len(req.OldObject.Raw) > 0 {
		old := &networkingv1alpha1.MultiClusterService{}
		if err := h.decoder.DecodeRaw(req.OldObject, old); err != nil {
			return verdict.BadRequest(err)
		}
		previous = old.Labels[networkingv1alpha1.MultiClusterServicePermanentIDLabel]
	}
	if mcs.Labels[networkingv1alpha1.MultiClusterServicePermanentIDLabel] == "" {
		if previous == "" {
			previous = string(uuid.NewUUID())
		}
		if mcs.Labels == nil {
			mcs.Labels = map[string]string{}
		}
		mcs.Labels[networkingv1alpha1.MultiClusterServicePermanentIDLabel] = previous
	}
	// Only metadata changes; spec.range and status are structs that the
	// Go types write even when the request left them out.
	return verdict.PatchFields(req, mcs, "metadata")
}

// Validator serves /validate-multiclusterservice.
type Validator struct {
	decoder admission.Decoder
}

// NewValidator returns the MultiClusterService validating handler.
func NewValidator(decoder admission.Decoder) *Validator { return &Validator{decoder: decoder} }

// Handle refuses an invalid MultiClusterService, naming each field at
// fault; on update its types may not change.
func (h *Validator) Handle(_ context.Context, req admission.Request) admission.Response {
	mcs := &networkingv1alpha1.MultiClusterService{}
	if err := h.decoder.Decode(req, mcs); err != nil {
		return verdict.BadRequest(err)
	}
	var errs field.ErrorList
	// The name is the Service's, so it must be a valid Service name.
	for _, msg := range utilvalidation.IsDNS1035Label(mcs.Name) {
		errs = append(errs, field.Invalid(field.NewPath("metadata", "name"), mcs.Name, msg))
	}
	errs = append(errs, Validate(&mcs.Spec, field.NewPath("spec"))...)
	if req.Operation == admissionv1.Update && len(req.OldObject.Raw) > 0 {
		old := &networkingv1alpha1.MultiClusterService{}
		if err := h.decoder.DecodeRaw(req.OldObject, old); err != nil {
			return verdict.BadRequest(err)
		}
		if !slices.Equal(old.Spec.Types, mcs.Spec.Types) {
			errs = append(errs, field.Invalid(field.NewPath("spec", "types"), mcs.Spec.Types, "field is immutable"))
		}
	}
	return verdict.Invalid(networkingv1alpha1.GroupVersion.WithKind("MultiClusterService").GroupKind(), mcs.Name, errs)
}

// Validate checks a MultiClusterService's spec: one exposure type, ports
// with unique valid names and valid numbers, valid cluster names.
func Validate(spec *networkingv1alpha1.MultiClusterServiceSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	typesPath := path.Child("types")
	if len(spec.Types) == 0 {
		errs = append(errs, field.Required(typesPath, "one of CrossCluster or LoadBalancer is required"))
	}
	for i, t := range spec.Types {
		if !slices.Contains(exposureTypes, t) {
			errs = append(errs, field.NotSupported(typesPath.Index(i), t, exposureTypes))
		}
	}
	if len(sets.New(spec.Types...)) > 1 {
		errs = append(errs, field.Invalid(typesPath, spec.Types, "must not contain more than one type"))
	}
	portNames := sets.New[string]()
	for i, port := range spec.Ports {
		p := path.Child("ports").Index(i)
		if port.Name != "" {
			for _, msg := range utilvalidation.IsDNS1123Label(port.Name) {
				errs = append(errs, field.Invalid(p.Child("name"), port.Name, msg))
			}
			if portNames.Has(port.Name) {
				errs = append(errs, field.Duplicate(p.Child("name"), port.Name))
			}
			portNames.Insert(port.Name)
		}
		for _, msg := range utilvalidation.IsValidPortNum(int(port.Port)) {
			errs = append(errs, field.Invalid(p.Child("port"), port.Port, msg))
		}
	}
	for i, c := range spec.ProviderClusters {
		errs = append(errs, validation.ClusterName(c.Name, path.Child("providerClusters").Index(i).Child("name"))...)
	}
	for i, c := range spec.ConsumerClusters {
		errs = append(errs, validation.ClusterName(c.Name, path.Child("consumerClusters").Index(i).Child("name"))...)
	}
	for i, name := range spec.ServiceProvisionClusters {
		errs = append(errs, validation.ClusterName(name, path.Child("serviceProvisionClusters").Index(i))...)
	}
	for i, name := range spec.ServiceConsumptionClusters {
		errs = append(errs, validation.ClusterName(name, path.Child("serviceConsumptionClusters").Index(i))...)
	}
	for i, name := range spec.Range.ClusterNames {
		errs = append(errs, validation.ClusterName(name, path.Child("range", "clusterNames").Index(i))...)
	}
	return errs
}
