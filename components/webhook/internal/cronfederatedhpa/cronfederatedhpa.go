// Package cronfederatedhpa validates CronFederatedHPAs
// (/validate-cronfederatedhpa): the scale target, and per rule a unique
// name, a schedule that parses, a time zone that loads and the replica
// values the target's kind needs.
package cronfederatedhpa

import (
	"context"
	"fmt"
	"strings"
	"time"
	_ "time/tzdata" // zones for images without a zoneinfo database

	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	autoscalingv1alpha1 "github.com/flotilla-io/flotilla/api/autoscaling/v1alpha1"
	"github.com/flotilla-io/flotilla/components/webhook/internal/federatedhpa"
	"github.com/flotilla-io/flotilla/components/webhook/internal/verdict"
)

// +kubebuilder:webhook:path=/validate-cronfederatedhpa,mutating=false,failurePolicy=fail,sideEffects=None,groups=autoscaling.karmada.io,resources=cronfederatedhpas,verbs=create;update,versions=*,name=cronfederatedhpa.karmada.io,admissionReviewVersions=v1,serviceName=karmada-webhook,serviceNamespace=karmada-system,servicePort=443,timeoutSeconds=3

// Validator serves /validate-cronfederatedhpa.
type Validator struct {
	decoder admission.Decoder
}

// NewValidator returns the CronFederatedHPA validating handler.
func NewValidator(decoder admission.Decoder) *Validator { return &Validator{decoder: decoder} }

// Handle refuses an invalid CronFederatedHPA, naming each field at fault.
func (h *Validator) Handle(_ context.Context, req admission.Request) admission.Response {
	cron := &autoscalingv1alpha1.CronFederatedHPA{}
	if err := h.decoder.Decode(req, cron); err != nil {
		return verdict.BadRequest(err)
	}
	return verdict.Invalid(autoscalingv1alpha1.GroupVersion.WithKind(autoscalingv1alpha1.CronFederatedHPAKind).GroupKind(), cron.Name,
		Validate(&cron.Spec, field.NewPath("spec")))
}

// Validate checks a CronFederatedHPA's spec. A target of this API group
// must be a FederatedHPA, whose rules set targetMinReplicas and/or
// targetMaxReplicas; any other target is scaled through its scale
// subresource, and its rules set targetReplicas.
func Validate(spec *autoscalingv1alpha1.CronFederatedHPASpec, path *field.Path) field.ErrorList {
	ref := spec.ScaleTargetRef
	refPath := path.Child("scaleTargetRef")
	errs := federatedhpa.ScaleTargetRef(ref, refPath)
	ownGroup := ref.APIVersion == autoscalingv1alpha1.GroupVersion.String()
	if ownGroup && ref.Kind != "" && ref.Kind != autoscalingv1alpha1.FederatedHPAKind {
		errs = append(errs, field.NotSupported(refPath.Child("kind"), ref.Kind, []string{autoscalingv1alpha1.FederatedHPAKind}))
	}
	names := sets.New[string]()
	for i := range spec.Rules {
		rule := &spec.Rules[i]
		p := path.Child("rules").Index(i)
		switch {
		case rule.Name == "":
			errs = append(errs, field.Required(p.Child("name"), ""))
		case names.Has(rule.Name):
			errs = append(errs, field.Duplicate(p.Child("name"), rule.Name))
		}
		names.Insert(rule.Name)
		if _, err := ParseSchedule(rule.Schedule); err != nil {
			errs = append(errs, field.Invalid(p.Child("schedule"), rule.Schedule, err.Error()))
		}
		if rule.TimeZone != nil {
			errs = append(errs, timeZone(*rule.TimeZone, p.Child("timeZone"))...)
		}
		switch {
		case ownGroup && ref.Kind == autoscalingv1alpha1.FederatedHPAKind:
			errs = append(errs, hpaBounds(rule, p)...)
		case !ownGroup:
			if rule.TargetReplicas == nil {
				errs = append(errs, field.Required(p.Child("targetReplicas"), fmt.Sprintf("must be set to scale a %s", kindOrTarget(ref.Kind))))
			} else if *rule.TargetReplicas < 0 {
				errs = append(errs, field.Invalid(p.Child("targetReplicas"), *rule.TargetReplicas, "must be greater than or equal to 0"))
			}
		}
	}
	return errs
}

// hpaBounds checks the bounds a rule sets on a FederatedHPA.
func hpaBounds(rule *autoscalingv1alpha1.CronFederatedHPARule, path *field.Path) field.ErrorList {
	minR, maxR := rule.TargetMinReplicas, rule.TargetMaxReplicas
	if minR == nil && maxR == nil {
		return field.ErrorList{field.Required(path.Child("targetMinReplicas"),
			"targetMinReplicas or targetMaxReplicas must be set to scale a FederatedHPA")}
	}
	var errs field.ErrorList
	if minR != nil && *minR < 1 {
		errs = append(errs, field.Invalid(path.Child("targetMinReplicas"), *minR, "must be greater than or equal to 1"))
	}
	if maxR != nil && *maxR < 1 {
		errs = append(errs, field.Invalid(path.Child("targetMaxReplicas"), *maxR, "must be greater than or equal to 1"))
	}
	if minR != nil && maxR != nil && *maxR < *minR {
		errs = append(errs, field.Invalid(path.Child("targetMaxReplicas"), *maxR, "must be greater than or equal to targetMinReplicas"))
	}
	return errs
}

// timeZone accepts an IANA time zone name, as a CronJob's timeZone does.
func timeZone(tz string, path *field.Path) field.ErrorList {
	if tz == "" || strings.EqualFold(tz, "Local") {
		return field.ErrorList{field.Invalid(path, tz, "must be an IANA time zone name, such as Europe/Paris")}
	}
	if _, err := time.LoadLocation(tz); err != nil {
		return field.ErrorList{field.Invalid(path, tz, fmt.Sprintf("unknown time zone: %v", err))}
	}
	return nil
}

func kindOrTarget(kind string) string {
	if kind == "" {
		return "target"
	}
	return kind
}
