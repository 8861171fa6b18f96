package luarules

import (
	"context"

	configv1alpha1 "github.com/flotilla-io/flotilla/api/config/v1alpha1"
	"github.com/flotilla-io/flotilla/lua"
)

// Check compiles and loads every script of a customization in the sandbox
// and verifies that each defines its function. It returns one error per
// broken rule; each names the customization, the rule and the line.
func Check(ctx context.Context, vm *lua.VM, c *configv1alpha1.ResourceInterpreterCustomization) []error {
	var errs []error
	if _, err := TargetGVK(c); err != nil {
		errs = append(errs, err)
	}
	for i, r := range Rules() {
		code := scriptOf(&c.Spec.Customizations, rule(i))
		if code == "" {
			continue
		}
		script := lua.Script{Name: c.Name + "/" + r.Field, Code: code}
		if err := vm.Check(ctx, script, r.Function); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// Compile compiles every script of a customization without running it and
// returns one error per rule that does not compile (with its line).
func Compile(c *configv1alpha1.ResourceInterpreterCustomization) []error {
	var errs []error
	for i, r := range Rules() {
		code := scriptOf(&c.Spec.Customizations, rule(i))
		if code == "" {
			continue
		}
		if err := lua.Compile(lua.Script{Name: c.Name + "/" + r.Field, Code: code}); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}
