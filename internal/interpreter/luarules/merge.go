package luarules

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	configv1alpha1 "github.com/flotilla-io/flotilla/api/config/v1alpha1"
	"github.com/flotilla-io/flotilla/lua"
)

// Kind is the merged Lua rules of one target kind.
type Kind struct {
	GVK     schema.GroupVersionKind
	scripts [numRules]lua.Script
	// moreDependencies are the dependencyInterpretation scripts of the
	// customizations after the first (by name) that defines one: Karmada
	// runs every one and takes the union of what they return.
	moreDependencies []lua.Script
}

// Script returns the script answering op and whether there is one. Its
// name, "<customization>/<rule>", labels every error it causes.
func (k *Kind) Script(op configv1alpha1.InterpreterOperation) (lua.Script, bool) {
	r, ok := ruleOf(op)
	if !ok || k.scripts[r].Code == "" {
		return lua.Script{}, false
	}
	return k.scripts[r], true
}

// dependencyScripts returns every dependencyInterpretation script, in
// the order of their customizations' names.
func (k *Kind) dependencyScripts() []lua.Script {
	first, ok := k.Script(configv1alpha1.InterpreterOperationInterpretDependency)
	if !ok {
		return nil
	}
	return append([]lua.Script{first}, k.moreDependencies...)
}

// Origin returns the customization that defines the rule for op, "" when
// none does.
func (k *Kind) Origin(op configv1alpha1.InterpreterOperation) string {
	s, ok := k.Script(op)
	if !ok {
		return ""
	}
	return customizationOf(s.Name)
}

// customizationOf returns the customization part of a script name
// "<customization>/<rule>": all before the last slash, all of it without one.
func customizationOf(scriptName string) string {
	if i := strings.LastIndexByte(scriptName, '/'); i >= 0 {
		return scriptName[:i]
	}
	return scriptName
}

// TargetGVK parses a customization's target.
func TargetGVK(c *configv1alpha1.ResourceInterpreterCustomization) (schema.GroupVersionKind, error) {
	t := c.Spec.Target
	gv, err := schema.ParseGroupVersion(t.APIVersion)
	if err != nil {
		return schema.GroupVersionKind{}, fmt.Errorf("customization %s: target apiVersion %q: %w", c.Name, t.APIVersion, err)
	}
	if t.Kind == "" {
		return schema.GroupVersionKind{}, fmt.Errorf("customization %s: target has no kind", c.Name)
	}
	return gv.WithKind(t.Kind), nil
}

// Conflict reports a rule defined by several customizations of one kind;
// Used is the one that counts (the first by name), Ignored the others.
type Conflict struct {
	GVK     schema.GroupVersionKind
	Rule    string
	Used    string
	Ignored []string
}

func (c Conflict) String() string {
	return fmt.Sprintf("%s: rule %s is defined by %s and also by %v; using %s", c.GVK, c.Rule, c.Used, c.Ignored, c.Used)
}

// Merge groups customizations by target kind and merges those of one kind:
// each rule comes from whichever customization defines it, from the first
// by name when several do (reported as conflicts), except
// dependencyInterpretation, which every customization defining it answers
// together. Customizations with an invalid target are reported as errors
// and left out.
func Merge(customizations []*configv1alpha1.ResourceInterpreterCustomization) (map[schema.GroupVersionKind]*Kind, []Conflict, []error) {
	sorted := slices.Clone(customizations)
	slices.SortFunc(sorted, func(a, b *configv1alpha1.ResourceInterpreterCustomization) int {
		return cmp.Compare(a.Name, b.Name)
	})
	kinds := map[schema.GroupVersionKind]*Kind{}
	var conflicts []Conflict
	var errs []error
	conflictAt := map[[2]any]int{}
	rules := Rules()
	for _, c := range sorted {
		gvk, err := TargetGVK(c)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		k := kinds[gvk]
		if k == nil {
			k = &Kind{GVK: gvk}
			kinds[gvk] = k
		}
		for r := range numRules {
			code := scriptOf(&c.Spec.Customizations, r)
			if code == "" {
				continue
			}
			script := lua.Script{Name: c.Name + "/" + rules[r].Field, Code: code}
			existing := k.scripts[r]
			if existing.Code != "" && r == ruleDependencyInterpretation {
				k.moreDependencies = append(k.moreDependencies, script)
				continue
			}
			if existing.Code != "" {
				key := [2]any{gvk, r}
				i, ok := conflictAt[key]
				if !ok {
					conflicts = append(conflicts, Conflict{GVK: gvk, Rule: rules[r].Field, Used: customizationOf(existing.Name)})
					i = len(conflicts) - 1
					conflictAt[key] = i
				}
				conflicts[i].Ignored = append(conflicts[i].Ignored, c.Name)
				continue
			}
			k.scripts[r] = script
		}
	}
	return kinds, conflicts, errs
}
