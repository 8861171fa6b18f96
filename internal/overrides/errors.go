package overrides

import (
	"fmt"
	"strings"
)

// PolicyRef names an OverridePolicy or ClusterOverridePolicy.
type PolicyRef struct {
	// Kind is "OverridePolicy" or "ClusterOverridePolicy".
	Kind string
	// Namespace is empty for a ClusterOverridePolicy.
	Namespace string
	Name      string
}

// String reads like kubectl's kind/name, with the namespace when there is one.
func (p PolicyRef) String() string {
	if p.Namespace == "" {
		return p.Kind + "/" + p.Name
	}
	return p.Kind + "/" + p.Namespace + "/" + p.Name
}

// Kinds of override policy, as they appear in PolicyRef.Kind.
const (
	KindOverridePolicy        = "OverridePolicy"
	KindClusterOverridePolicy = "ClusterOverridePolicy"
)

// DeprecatedRule is the rule index of the deprecated top-level
// targetCluster/overriders pair, which acts as a single rule.
const DeprecatedRule = -1

// Error is why a policy could not be applied. It names the policy, the rule,
// the overrider and the path, so the binding controller can report exactly
// what to fix on the binding and in an event.
type Error struct {
	Policy PolicyRef
	// Rule indexes spec.overrideRules, or is DeprecatedRule.
	Rule int
	// Overrider is the JSON name of the overrider list, e.g. "plaintext".
	Overrider string
	// Index indexes that overrider list.
	Index int
	// Path is the JSON pointer being changed, when the failure has one.
	Path string
	Err  error
}

// Field is the failing overrider's field path inside the policy, e.g.
// spec.overrideRules[1].overriders.plaintext[0].
func (e *Error) Field() string {
	var b strings.Builder
	if e.Rule == DeprecatedRule {
		b.WriteString("spec.overriders")
	} else {
		fmt.Fprintf(&b, "spec.overrideRules[%d].overriders", e.Rule)
	}
	if e.Overrider != "" {
		fmt.Fprintf(&b, ".%s[%d]", e.Overrider, e.Index)
	}
	return b.String()
}

func (e *Error) Error() string {
	msg := e.Policy.String() + ": " + e.Field()
	if e.Path != "" {
		msg += " (path " + e.Path + ")"
	}
	return msg + ": " + e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }
