package overrides

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	utiljson "k8s.io/apimachinery/pkg/util/json"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
)

// plaintextOp is a PlaintextOverrider with its pointer parsed and its value
// decoded once, so rendering many clusters does not re-parse them.
type plaintextOp struct {
	raw   string
	path  pointer
	op    policyv1alpha1.OverriderOperator
	value any
}

// compilePlaintext returns the index of the first bad overrider with its error.
func compilePlaintext(list []policyv1alpha1.PlaintextOverrider) ([]plaintextOp, int, error) {
	ops := make([]plaintextOp, len(list))
	for i := range list {
		o := &list[i]
		p, err := parsePointer(o.Path)
		if err != nil {
			return nil, i, err
		}
		op := plaintextOp{raw: o.Path, path: p, op: o.Operator}
		switch o.Operator {
		case policyv1alpha1.OverriderOpAdd, policyv1alpha1.OverriderOpReplace:
			// An absent value is JSON null, which is what Karmada sends.
			if len(o.Value.Raw) > 0 {
				if err := utiljson.Unmarshal(o.Value.Raw, &op.value); err != nil {
					return nil, i, fmt.Errorf("value is not JSON: %w", err)
				}
			}
		case policyv1alpha1.OverriderOpRemove:
		default:
			return nil, i, fmt.Errorf("unknown operator %q", o.Operator)
		}
		ops[i] = op
	}
	return ops, 0, nil
}

// apply runs one operation. Each cluster's object gets its own copy of the
// value, since later overriders may change what was inserted.
func (o *plaintextOp) apply(obj map[string]any) error {
	if err := o.path.patch(obj, o.op, runtime.DeepCopyJSONValue(o.value)); err != nil {
		return &pathError{path: o.raw, err: err}
	}
	return nil
}
