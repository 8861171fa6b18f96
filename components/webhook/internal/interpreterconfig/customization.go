// Package interpreterconfig validates the resource interpreter's
// configuration: ResourceInterpreterCustomizations, whose Lua scripts must
// load in Flotilla's VM and define their functions, and which must not
// customize an operation of a kind another one already customizes
// (/validate-resourceinterpretercustomization); and
// ResourceInterpreterWebhookConfigurations
// (/validate-resourceinterpreterwebhookconfiguration).
package interpreterconfig

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	configv1alpha1 "github.com/flotilla-io/flotilla/api/config/v1alpha1"
	"github.com/flotilla-io/flotilla/components/webhook/internal/verdict"
	"github.com/flotilla-io/flotilla/internal/interpreter/luarules"
	"github.com/flotilla-io/flotilla/lua"
)

// +kubebuilder:webhook:path=/validate-resourceinterpretercustomization,mutating=false,failurePolicy=fail,sideEffects=None,groups=config.karmada.io,resources=resourceinterpretercustomizations,verbs=create;update,versions=*,name=resourceinterpretercustomization.karmada.io,admissionReviewVersions=v1,serviceName=karmada-webhook,serviceNamespace=karmada-system,servicePort=443,timeoutSeconds=3

// CustomizationValidator serves /validate-resourceinterpretercustomization.
type CustomizationValidator struct {
	decoder admission.Decoder
	reader  client.Reader
	vm      *lua.VM
}

// NewCustomizationValidator returns the handler; scripts are loaded in vm
// (sandboxed and time-bounded), other customizations read through reader.
func NewCustomizationValidator(decoder admission.Decoder, reader client.Reader, vm *lua.VM) *CustomizationValidator {
	return &CustomizationValidator{decoder: decoder, reader: reader, vm: vm}
}

// Handle refuses a customization whose scripts do not load or define their
// function, or that takes an operation of its kind another customization
// already has.
func (h *CustomizationValidator) Handle(ctx context.Context, req admission.Request) admission.Response {
	c := &configv1alpha1.ResourceInterpreterCustomization{}
	if err := h.decoder.Decode(req, c); err != nil {
		return verdict.BadRequest(err)
	}
	errs := h.scripts(ctx, c)
	var others configv1alpha1.ResourceInterpreterCustomizationList
	if err := h.reader.List(ctx, &others); err != nil {
		return admission.Errored(http.StatusInternalServerError, fmt.Errorf("listing ResourceInterpreterCustomizations: %w", err))
	}
	errs = append(errs, conflicts(c, others.Items)...)
	return verdict.Invalid(configv1alpha1.GroupVersion.WithKind("ResourceInterpreterCustomization").GroupKind(), c.Name, errs)
}

var customizationsPath = field.NewPath("spec", "customizations")

// scripts loads every script in the VM, as the interpreter will, and names
// the luaScript field of each that fails.
func (h *CustomizationValidator) scripts(ctx context.Context, c *configv1alpha1.ResourceInterpreterCustomization) field.ErrorList {
	var errs field.ErrorList
	for _, err := range luarules.Check(ctx, h.vm, c) {
		var scriptErr *lua.Error
		if !errors.As(err, &scriptErr) {
			errs = append(errs, field.Invalid(field.NewPath("spec", "target", "apiVersion"), c.Spec.Target.APIVersion, err.Error()))
			continue
		}
		// Scripts are named <customization>/<rule field>.
		rule := scriptErr.Script[strings.LastIndexByte(scriptErr.Script, '/')+1:]
		errs = append(errs, field.Invalid(customizationsPath.Child(rule, "luaScript"), "<script>", err.Error()))
	}
	return errs
}

// conflicts names each rule of c that another customization of the same
// target already defines. dependencyInterpretation may come from several,
// as in Karmada.
func conflicts(c *configv1alpha1.ResourceInterpreterCustomization, others []configv1alpha1.ResourceInterpreterCustomization) field.ErrorList {
	var errs field.ErrorList
	dependencies, _ := luarules.RuleFor(configv1alpha1.InterpreterOperationInterpretDependency)
	for i := range others {
		other := &others[i]
		if other.Name == c.Name || other.Spec.Target != c.Spec.Target {
			continue
		}
		_, found, _ := luarules.Merge([]*configv1alpha1.ResourceInterpreterCustomization{c, other})
		for _, conflict := range found {
			if conflict.Rule == dependencies.Field {
				continue
			}
			errs = append(errs, field.Invalid(customizationsPath.Child(conflict.Rule), "<script>", fmt.Sprintf(
				"%s of %s is already customized by ResourceInterpreterCustomization %s", conflict.Rule, conflict.GVK.Kind, other.Name)))
		}
	}
	return errs
}
