package overrides

import (
	"encoding/json"
	"sync"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
)

// policy is an OverridePolicy or ClusterOverridePolicy reduced to what
// rendering needs.
type policy struct {
	ref       PolicyRef
	selectors []policyv1alpha1.ResourceSelector
	rules     []*rule
}

// rule is one entry of spec.overrideRules, or the deprecated top-level pair.
type rule struct {
	policy     *policy
	index      int
	target     *policyv1alpha1.ClusterAffinity
	overriders *policyv1alpha1.Overriders

	// compiled is filled on first use: a Renderer serves many clusters, and
	// usually most of its rules never apply.
	once     sync.Once
	compiled compiledRule
}

type compiledRule struct {
	plaintext []plaintextOp
	// record is this rule's entry in the applied-overrides annotation.
	record []byte
	err    error
}

func newPolicy(ref PolicyRef, spec *policyv1alpha1.OverrideSpec) *policy {
	p := &policy{ref: ref, selectors: spec.ResourceSelectors}
	if len(spec.OverrideRules) == 0 {
		// The deprecated form is one rule; the CRD keeps it exclusive with
		// overrideRules.
		p.rules = []*rule{{policy: p, index: DeprecatedRule, target: spec.TargetCluster, overriders: &spec.Overriders}}
		return p
	}
	p.rules = make([]*rule, len(spec.OverrideRules))
	for i := range spec.OverrideRules {
		r := &spec.OverrideRules[i]
		p.rules[i] = &rule{policy: p, index: i, target: r.TargetCluster, overriders: &r.Overriders}
	}
	return p
}

// appliedOverride is Karmada's OverridePolicyShadow: one entry of the
// applied-overrides annotations.
type appliedOverride struct {
	PolicyName string                     `json:"policyName"`
	Overriders *policyv1alpha1.Overriders `json:"overriders"`
}

func (r *rule) compile() *compiledRule {
	r.once.Do(func() {
		ops, i, err := compilePlaintext(r.overriders.Plaintext)
		if err != nil {
			r.compiled.err = r.fail("plaintext", i, &pathError{path: r.overriders.Plaintext[i].Path, err: err})
			return
		}
		r.compiled.plaintext = ops
		rec, err := json.Marshal(appliedOverride{PolicyName: r.policy.ref.Name, Overriders: r.overriders})
		if err != nil {
			r.compiled.err = r.fail("", 0, err)
			return
		}
		r.compiled.record = rec
	})
	return &r.compiled
}

// apply runs the rule's overriders on obj in Karmada's fixed order of kinds,
// each list in its own order.
func (r *rule) apply(obj map[string]any, kind string) error {
	c := r.compile()
	if c.err != nil {
		return c.err
	}
	o := r.overriders
	for i := range o.ImageOverrider {
		if err := applyImageOverrider(obj, kind, &o.ImageOverrider[i]); err != nil {
			return r.fail("imageOverrider", i, err)
		}
	}
	for i := range o.CommandOverrider {
		if err := applyCommandArgsOverrider(obj, kind, "command", &o.CommandOverrider[i]); err != nil {
			return r.fail("commandOverrider", i, err)
		}
	}
	for i := range o.ArgsOverrider {
		if err := applyCommandArgsOverrider(obj, kind, "args", &o.ArgsOverrider[i]); err != nil {
			return r.fail("argsOverrider", i, err)
		}
	}
	for i := range o.LabelsOverrider {
		if err := applyLabelAnnotationOverrider(obj, "labels", &o.LabelsOverrider[i]); err != nil {
			return r.fail("labelsOverrider", i, err)
		}
	}
	for i := range o.AnnotationsOverrider {
		if err := applyLabelAnnotationOverrider(obj, "annotations", &o.AnnotationsOverrider[i]); err != nil {
			return r.fail("annotationsOverrider", i, err)
		}
	}
	for i := range o.FieldOverrider {
		if err := applyFieldOverrider(obj, &o.FieldOverrider[i]); err != nil {
			return r.fail("fieldOverrider", i, err)
		}
	}
	for i := range c.plaintext {
		if err := c.plaintext[i].apply(obj); err != nil {
			return r.fail("plaintext", i, err)
		}
	}
	return nil
}

func (r *rule) fail(overrider string, i int, err error) *Error {
	path, err := splitPathError(err)
	return &Error{Policy: r.policy.ref, Rule: r.index, Overrider: overrider, Index: i, Path: path, Err: err}
}
