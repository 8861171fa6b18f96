package customizationtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utiljson "k8s.io/apimachinery/pkg/util/json"

	configv1alpha1 "github.com/flotilla-io/flotilla/api/config/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/interpreter"
	"github.com/flotilla-io/flotilla/internal/interpreter/bundled"
	"github.com/flotilla-io/flotilla/internal/interpreter/luarules"
	"github.com/flotilla-io/flotilla/lua"
)

// Run performs the case's operation with interp and returns its results
// under the output keys, as generic JSON values.
func Run(ctx context.Context, interp interpreter.Interpreter, c *Case) (map[string]any, error) {
	desired := object(c.DesiredObj)
	observed := object(c.ObservedObj)
	if observed == nil {
		observed = desired
	}
	if desired == nil {
		desired = observed
	}
	out := map[string]any{}
	var result any
	var err error
	switch c.Operation {
	case configv1alpha1.InterpreterOperationInterpretReplica:
		replica, requires, err := interp.GetReplicas(ctx, desired)
		if err != nil {
			return nil, err
		}
		out["replica"] = int64(replica)
		if requires != nil {
			if out["requires"], err = generic(requires); err != nil {
				return nil, err
			}
		}
		return out, nil
	case configv1alpha1.InterpreterOperationInterpretComponent:
		result, err = interp.GetComponents(ctx, desired)
	case configv1alpha1.InterpreterOperationReviseReplica:
		result, err = objectResult(interp.ReviseReplica(ctx, desired, c.InputReplicas))
	case configv1alpha1.InterpreterOperationRetain:
		result, err = objectResult(interp.Retain(ctx, desired, observed))
	case configv1alpha1.InterpreterOperationAggregateStatus:
		result, err = objectResult(interp.AggregateStatus(ctx, desired, c.StatusItems))
	case configv1alpha1.InterpreterOperationInterpretStatus:
		var raw *runtime.RawExtension
		if raw, err = interp.ReflectStatus(ctx, observed); err == nil && raw != nil {
			var status any
			err = utiljson.Unmarshal(raw.Raw, &status)
			result = status
		}
	case configv1alpha1.InterpreterOperationInterpretHealth:
		result, err = interp.InterpretHealth(ctx, observed)
	case configv1alpha1.InterpreterOperationInterpretDependency:
		result, err = interp.GetDependencies(ctx, desired)
	default:
		return nil, fmt.Errorf("unknown operation %q", c.Operation)
	}
	if err != nil {
		return nil, err
	}
	if result != nil {
		g, err := generic(result)
		if err != nil {
			return nil, err
		}
		out[outputKeys(c.Operation)[0]] = g
	}
	return out, nil
}

// object wraps a deep copy, so that running a case leaves it intact.
func object(m map[string]any) *unstructured.Unstructured {
	if m == nil {
		return nil
	}
	return &unstructured.Unstructured{Object: runtime.DeepCopyJSON(m)}
}

func objectResult(u *unstructured.Unstructured, err error) (any, error) {
	if err != nil || u == nil {
		return nil, err
	}
	return u.Object, nil
}

// generic turns a result into plain JSON values (maps, lists, float64).
func generic(v any) (any, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out any
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// Outcome is the result of one case.
type Outcome struct {
	Case *Case
	// Err is set when the operation failed.
	Err error
	// Diffs describe each output key that differs, and expected keys that
	// the operation did not produce.
	Diffs []string
	// Unchecked lists results the case has no expected output for.
	Unchecked []string
}

// Failed tells whether the case failed.
func (o *Outcome) Failed() bool { return o.Err != nil || len(o.Diffs) > 0 }

// Interpreter builds the interpreter of a customization directory: its
// customizations alone, merged, with the chain's checks. A customization
// that does not compile or load makes it fail, naming the rule and line.
func Interpreter(ctx context.Context, fsys fs.FS, dir string, vm *lua.VM) (interpreter.Interpreter, error) {
	cs, err := bundled.LoadDir(fsys, dir)
	if err != nil {
		return nil, err
	}
	if len(cs) == 0 {
		return nil, fmt.Errorf("%s: no ResourceInterpreterCustomization", dir)
	}
	for _, c := range cs {
		if errs := luarules.Check(ctx, vm, c); len(errs) > 0 {
			return nil, fmt.Errorf("%s: %w", dir, errors.Join(errs...))
		}
	}
	kinds, _, errs := luarules.Merge(cs)
	if len(errs) > 0 {
		return nil, fmt.Errorf("%s: %w", dir, errors.Join(errs...))
	}
	return interpreter.NewChain(luarules.NewSet("customization", vm, kinds)), nil
}

// RunDir runs every golden case of the customization in dir.
func RunDir(ctx context.Context, fsys fs.FS, dir string, vm *lua.VM) ([]*Outcome, error) {
	cases, err := LoadCases(fsys, dir)
	if err != nil {
		return nil, err
	}
	interp, err := Interpreter(ctx, fsys, dir, vm)
	if err != nil {
		return nil, err
	}
	outcomes := make([]*Outcome, 0, len(cases))
	for _, c := range cases {
		outcomes = append(outcomes, RunCase(ctx, interp, c))
	}
	return outcomes, nil
}

// RunCase runs one case and compares its results.
func RunCase(ctx context.Context, interp interpreter.Interpreter, c *Case) *Outcome {
	o := &Outcome{Case: c}
	got, err := Run(ctx, interp, c)
	if err != nil {
		o.Err = err
		return o
	}
	o.Diffs, o.Unchecked = Compare(c, got)
	return o
}
