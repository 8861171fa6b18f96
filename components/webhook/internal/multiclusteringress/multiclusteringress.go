// Package multiclusteringress validates MultiClusterIngresses
// (/validate-multiclusteringress) with the rules Kubernetes applies to an
// Ingress's spec, as Karmada does: hosts, paths and their types, backends,
// TLS hosts and secrets, the ingress class name.
package multiclusteringress

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/validate/content"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	netutils "k8s.io/utils/net"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	networkingv1alpha1 "github.com/flotilla-io/flotilla/api/networking/v1alpha1"
	"github.com/flotilla-io/flotilla/components/webhook/internal/verdict"
)

// +kubebuilder:webhook:path=/validate-multiclusteringress,mutating=false,failurePolicy=fail,sideEffects=None,groups=networking.karmada.io,resources=multiclusteringresses,verbs=create;update,versions=*,name=multiclusteringress.karmada.io,admissionReviewVersions=v1,serviceName=karmada-webhook,serviceNamespace=karmada-system,servicePort=443,timeoutSeconds=3

var (
	pathTypes = []networkingv1.PathType{
		networkingv1.PathTypeExact, networkingv1.PathTypeImplementationSpecific, networkingv1.PathTypePrefix,
	}
	// Sequences an Exact or Prefix path may not contain or end with.
	invalidPathSequences = []string{"//", "/./", "/../", "%2f", "%2F"}
	invalidPathSuffixes  = []string{"/..", "/."}
)

// Validator serves /validate-multiclusteringress.
type Validator struct {
	decoder admission.Decoder
}

// NewValidator returns the MultiClusterIngress validating handler.
func NewValidator(decoder admission.Decoder) *Validator { return &Validator{decoder: decoder} }

// Handle refuses an invalid MultiClusterIngress, naming each field at fault.
func (h *Validator) Handle(_ context.Context, req admission.Request) admission.Response {
	mci := &networkingv1alpha1.MultiClusterIngress{}
	if err := h.decoder.Decode(req, mci); err != nil {
		return verdict.BadRequest(err)
	}
	return verdict.Invalid(networkingv1alpha1.GroupVersion.WithKind("MultiClusterIngress").GroupKind(), mci.Name,
		Validate(&mci.Spec, field.NewPath("spec")))
}

// Validate checks an Ingress spec as Kubernetes does for networking/v1
// Ingresses, with wildcard hosts' rules and TLS secret names held to the
// strict rules of new objects.
func Validate(spec *networkingv1.IngressSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(spec.Rules) == 0 && spec.DefaultBackend == nil {
		errs = append(errs, field.Invalid(path, spec.Rules, "either `defaultBackend` or `rules` must be specified"))
	}
	if spec.DefaultBackend != nil {
		errs = append(errs, backend(spec.DefaultBackend, path.Child("defaultBackend"))...)
	}
	for i := range spec.Rules {
		errs = append(errs, rule(&spec.Rules[i], path.Child("rules").Index(i))...)
	}
	for i, tls := range spec.TLS {
		p := path.Child("tls").Index(i)
		for j, host := range tls.Hosts {
			errs = append(errs, hostName(host, p.Child("hosts").Index(j))...)
		}
		if tls.SecretName != "" {
			for _, msg := range utilvalidation.IsDNS1123Subdomain(tls.SecretName) {
				errs = append(errs, field.Invalid(p.Child("secretName"), tls.SecretName, msg))
			}
		}
	}
	if spec.IngressClassName != nil {
		for _, msg := range utilvalidation.IsDNS1123Subdomain(*spec.IngressClassName) {
			errs = append(errs, field.Invalid(path.Child("ingressClassName"), *spec.IngressClassName, msg))
		}
	}
	return errs
}

// hostName accepts a DNS subdomain, or a wildcard one (*.example.com).
func hostName(host string, path *field.Path) field.ErrorList {
	check := utilvalidation.IsDNS1123Subdomain
	if strings.Contains(host, "*") {
		check = utilvalidation.IsWildcardDNS1123Subdomain
	}
	msgs := check(host)
	errs := make(field.ErrorList, 0, len(msgs))
	for _, msg := range msgs {
		errs = append(errs, field.Invalid(path, host, msg))
	}
	return errs
}

func rule(r *networkingv1.IngressRule, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if r.Host != "" {
		if netutils.ParseIPSloppy(r.Host) != nil {
			errs = append(errs, field.Invalid(path.Child("host"), r.Host, "must be a DNS name, not an IP address"))
		}
		errs = append(errs, hostName(r.Host, path.Child("host"))...)
	}
	if r.HTTP == nil {
		return errs
	}
	httpPath := path.Child("http")
	if len(r.HTTP.Paths) == 0 {
		errs = append(errs, field.Required(httpPath.Child("paths"), ""))
	}
	for i := range r.HTTP.Paths {
		errs = append(errs, httpIngressPath(&r.HTTP.Paths[i], httpPath.Child("paths").Index(i))...)
	}
	return errs
}

func httpIngressPath(p *networkingv1.HTTPIngressPath, path *field.Path) field.ErrorList {
	if p.PathType == nil {
		return field.ErrorList{field.Required(path.Child("pathType"), "pathType must be specified")}
	}
	var errs field.ErrorList
	switch *p.PathType {
	case networkingv1.PathTypeExact, networkingv1.PathTypePrefix:
		if !strings.HasPrefix(p.Path, "/") {
			errs = append(errs, field.Invalid(path.Child("path"), p.Path, "must be an absolute path"))
		}
		for _, seq := range invalidPathSequences {
			if strings.Contains(p.Path, seq) {
				errs = append(errs, field.Invalid(path.Child("path"), p.Path, fmt.Sprintf("must not contain '%s'", seq)))
			}
		}
		for _, suffix := range invalidPathSuffixes {
			if strings.HasSuffix(p.Path, suffix) {
				errs = append(errs, field.Invalid(path.Child("path"), p.Path, fmt.Sprintf("cannot end with '%s'", suffix)))
			}
		}
	case networkingv1.PathTypeImplementationSpecific:
		if p.Path != "" && !strings.HasPrefix(p.Path, "/") {
			errs = append(errs, field.Invalid(path.Child("path"), p.Path, "must be an absolute path"))
		}
	default:
		errs = append(errs, field.NotSupported(path.Child("pathType"), *p.PathType, pathTypes))
	}
	return append(errs, backend(&p.Backend, path.Child("backend"))...)
}

// backend accepts exactly one of a Service (name and port name or number)
// and a resource reference.
func backend(b *networkingv1.IngressBackend, path *field.Path) field.ErrorList {
	switch {
	case b.Resource != nil && b.Service != nil:
		return field.ErrorList{field.Invalid(path, "", "cannot set both resource and service backends")}
	case b.Resource != nil:
		return resourceBackend(b.Resource, path.Child("resource"))
	case b.Service == nil:
		return field.ErrorList{field.Invalid(path, "", "resource or service backend is required")}
	}
	var errs field.ErrorList
	svc := b.Service
	if svc.Name == "" {
		errs = append(errs, field.Required(path.Child("service", "name"), ""))
	} else {
		for _, msg := range utilvalidation.IsDNS1035Label(svc.Name) {
			errs = append(errs, field.Invalid(path.Child("service", "name"), svc.Name, msg))
		}
	}
	port := path.Child("service", "port")
	switch {
	case svc.Port.Name != "" && svc.Port.Number != 0:
		errs = append(errs, field.Invalid(path, "", "cannot set both port name & port number"))
	case svc.Port.Name != "":
		for _, msg := range utilvalidation.IsValidPortName(svc.Port.Name) {
			errs = append(errs, field.Invalid(port.Child("name"), svc.Port.Name, msg))
		}
	case svc.Port.Number != 0:
		for _, msg := range utilvalidation.IsValidPortNum(int(svc.Port.Number)) {
			errs = append(errs, field.Invalid(port.Child("number"), svc.Port.Number, msg))
		}
	default:
		errs = append(errs, field.Required(path, "port name or number is required"))
	}
	return errs
}

func resourceBackend(ref *corev1.TypedLocalObjectReference, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if ref.APIGroup != nil {
		for _, msg := range utilvalidation.IsDNS1123Subdomain(*ref.APIGroup) {
			errs = append(errs, field.Invalid(path.Child("apiGroup"), *ref.APIGroup, msg))
		}
	}
	for _, f := range []struct{ name, value string }{{"kind", ref.Kind}, {"name", ref.Name}} {
		if f.value == "" {
			errs = append(errs, field.Required(path.Child(f.name), f.name+" is required"))
			continue
		}
		for _, msg := range content.IsPathSegmentName(f.value) {
			errs = append(errs, field.Invalid(path.Child(f.name), f.value, msg))
		}
	}
	return errs
}
