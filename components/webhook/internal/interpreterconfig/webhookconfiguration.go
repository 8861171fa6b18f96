package interpreterconfig

import (
	"context"
	"net/url"
	"path"
	"slices"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	configv1alpha1 "github.com/flotilla-io/flotilla/api/config/v1alpha1"
	"github.com/flotilla-io/flotilla/components/webhook/internal/verdict"
)

// +kubebuilder:webhook:path=/validate-resourceinterpreterwebhookconfiguration,mutating=false,failurePolicy=fail,sideEffects=None,groups=config.karmada.io,resources=resourceinterpreterwebhookconfigurations,verbs=create;update,versions=*,name=resourceinterpreterwebhookconfiguration.karmada.io,admissionReviewVersions=v1,serviceName=karmada-webhook,serviceNamespace=karmada-system,servicePort=443,timeoutSeconds=3

// operations a webhook rule may name.
var operations = []configv1alpha1.InterpreterOperation{
	configv1alpha1.InterpreterOperationAll,
	configv1alpha1.InterpreterOperationInterpretReplica,
	configv1alpha1.InterpreterOperationReviseReplica,
	configv1alpha1.InterpreterOperationInterpretComponent,
	configv1alpha1.InterpreterOperationInterpretStatus,
	configv1alpha1.InterpreterOperationPrune,
	configv1alpha1.InterpreterOperationRetain,
	configv1alpha1.InterpreterOperationAggregateStatus,
	configv1alpha1.InterpreterOperationInterpretHealth,
	configv1alpha1.InterpreterOperationInterpretDependency,
}

// WebhookConfigurationValidator serves
// /validate-resourceinterpreterwebhookconfiguration.
type WebhookConfigurationValidator struct {
	decoder admission.Decoder
}

// NewWebhookConfigurationValidator returns the handler.
func NewWebhookConfigurationValidator(decoder admission.Decoder) *WebhookConfigurationValidator {
	return &WebhookConfigurationValidator{decoder: decoder}
}

// Handle refuses an invalid configuration, naming each field at fault.
func (h *WebhookConfigurationValidator) Handle(_ context.Context, req admission.Request) admission.Response {
	c := &configv1alpha1.ResourceInterpreterWebhookConfiguration{}
	if err := h.decoder.Decode(req, c); err != nil {
		return verdict.BadRequest(err)
	}
	var errs field.ErrorList
	names := map[string]bool{}
	for i := range c.Webhooks {
		p := field.NewPath("webhooks").Index(i)
		errs = append(errs, interpreterWebhook(&c.Webhooks[i], p)...)
		if names[c.Webhooks[i].Name] {
			errs = append(errs, field.Duplicate(p.Child("name"), c.Webhooks[i].Name))
		}
		names[c.Webhooks[i].Name] = true
	}
	return verdict.Invalid(configv1alpha1.GroupVersion.WithKind("ResourceInterpreterWebhookConfiguration").GroupKind(), c.Name, errs)
}

func interpreterWebhook(w *configv1alpha1.ResourceInterpreterWebhook, p *field.Path) field.ErrorList {
	errs := validation.IsFullyQualifiedDomainName(p.Child("name"), w.Name)
	for i := range w.Rules {
		errs = append(errs, rule(&w.Rules[i], p.Child("rules").Index(i))...)
	}
	if t := w.TimeoutSeconds; t != nil && (*t < 1 || *t > 30) {
		errs = append(errs, field.Invalid(p.Child("timeoutSeconds"), *t, "must be between 1 and 30 seconds"))
	}
	errs = append(errs, clientConfig(w, p.Child("clientConfig"))...)
	errs = append(errs, contextVersions(w.InterpreterContextVersions, p.Child("interpreterContextVersions"))...)
	return errs
}

func rule(r *configv1alpha1.RuleWithOperations, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(r.Operations) == 0 {
		errs = append(errs, field.Required(p.Child("operations"), ""))
	}
	if len(r.Operations) > 1 && slices.Contains(r.Operations, configv1alpha1.InterpreterOperationAll) {
		errs = append(errs, field.Invalid(p.Child("operations"), r.Operations, "'*' must be the only operation when present"))
	}
	for i, op := range r.Operations {
		if !slices.Contains(operations, op) {
			errs = append(errs, field.NotSupported(p.Child("operations").Index(i), op, operations))
		}
	}
	for _, list := range []struct {
		name   string
		values []string
	}{{"apiGroups", r.APIGroups}, {"apiVersions", r.APIVersions}, {"kinds", r.Kinds}} {
		lp := p.Child(list.name)
		if len(list.values) == 0 {
			errs = append(errs, field.Required(lp, ""))
		}
		if len(list.values) > 1 && slices.Contains(list.values, "*") {
			errs = append(errs, field.Invalid(lp, list.values, "'*' must be the only value when present"))
		}
	}
	return errs
}

func clientConfig(w *configv1alpha1.ResourceInterpreterWebhook, p *field.Path) field.ErrorList {
	cc := w.ClientConfig
	switch {
	case (cc.URL == nil) == (cc.Service == nil):
		return field.ErrorList{field.Required(p, "exactly one of url or service is required")}
	case cc.URL != nil:
		return webhookURL(*cc.URL, p.Child("url"))
	default:
		var errs field.ErrorList
		s, sp := cc.Service, p.Child("service")
		for _, msg := range validation.IsDNS1123Label(s.Name) {
			errs = append(errs, field.Invalid(sp.Child("name"), s.Name, msg))
		}
		for _, msg := range validation.IsDNS1123Label(s.Namespace) {
			errs = append(errs, field.Invalid(sp.Child("namespace"), s.Namespace, msg))
		}
		if s.Path != nil && (len(*s.Path) == 0 || (*s.Path)[0] != '/' || path.Clean(*s.Path) != *s.Path) {
			errs = append(errs, field.Invalid(sp.Child("path"), *s.Path, "must be a clean absolute path"))
		}
		if s.Port != nil && (*s.Port < 1 || *s.Port > 65535) {
			errs = append(errs, field.Invalid(sp.Child("port"), *s.Port, "must be between 1 and 65535"))
		}
		return errs
	}
}

// webhookURL: an https URL with a host, no user, query or fragment, as
// Kubernetes requires of admission webhooks.
func webhookURL(raw string, p *field.Path) field.ErrorList {
	u, err := url.Parse(raw)
	if err != nil {
		return field.ErrorList{field.Invalid(p, raw, err.Error())}
	}
	var msgs []string
	if u.Scheme != "https" {
		msgs = append(msgs, "must use https")
	}
	if u.Host == "" {
		msgs = append(msgs, "must have a host")
	}
	if u.User != nil {
		msgs = append(msgs, "must not carry a user")
	}
	if u.RawQuery != "" {
		msgs = append(msgs, "must not have a query")
	}
	if u.Fragment != "" {
		msgs = append(msgs, "must not have a fragment")
	}
	var errs field.ErrorList
	for _, m := range msgs {
		errs = append(errs, field.Invalid(p, raw, m))
	}
	return errs
}

func contextVersions(versions []string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := map[string]bool{}
	for i, v := range versions {
		if seen[v] {
			errs = append(errs, field.Duplicate(p.Index(i), v))
			continue
		}
		seen[v] = true
		for _, msg := range validation.IsDNS1035Label(v) {
			errs = append(errs, field.Invalid(p.Index(i), v, msg))
		}
	}
	if !seen[configv1alpha1.InterpreterContextVersion] {
		errs = append(errs, field.Invalid(p, versions, "must include "+configv1alpha1.InterpreterContextVersion))
	}
	return errs
}
