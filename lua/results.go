package lua

import (
	"fmt"
	"math"

	glua "github.com/yuin/gopher-lua"
)

// Results are the values a Lua function returned, exactly as it returned
// them; the accessors convert one value and say which one was wrong.
// Indexes are 0-based; messages count from 1 like Lua.
type Results struct {
	script, function string
	values           []glua.LValue
	share            bool
	dropEmpty        bool
}

// Shared returns Results whose conversions hand back the caller's own maps
// and slices for the parts of arguments the script did not touch, instead
// of copies. It saves a deep copy when the caller owns the arguments and
// will not modify both them and the results.
func (r Results) Shared() Results {
	r.share = true
	return r
}

// DropEmpty returns Results whose conversions delete every empty object
// or list below the top value, as Karmada's conversion does for results it
// has no reference object for (AggregateStatus, ReflectStatus); the rule
// is documented beside copyDroppingEmpty.
func (r Results) DropEmpty() Results {
	r.dropEmpty = true
	return r
}

// Len is the number of values.
func (r Results) Len() int { return len(r.values) }

// Type is the Lua type of value i ("nil", "number", "table", ...).
func (r Results) Type(i int) string { return r.value(i).Type().String() }

// value returns value i as gopher-lua has it, LNil when out of range. It is
// not exported: tables made from arguments may be partly unconverted, which
// only the conversions here (and FromLua) know how to read.
func (r Results) value(i int) glua.LValue {
	if i < 0 || i >= len(r.values) {
		return glua.LNil
	}
	return r.values[i]
}

// IsNil tells whether value i is nil or missing.
func (r Results) IsNil(i int) bool { return r.value(i) == glua.LNil }

// Value converts value i like FromLua. Tables made from the call's
// arguments keep the kinds and number types of the Go values they came from,
// and parts the script never touched are copied from the arguments.
func (r Results) Value(i int, hints ...any) (any, error) {
	v, _, err := decoder{share: r.share, dropEmpty: r.dropEmpty}.from(r.value(i), hints, 0)
	if err != nil {
		return nil, r.errorf(i, ErrConversion, "%v", err.toError())
	}
	return v, nil
}

// Object converts value i, which must be a table, into a map. An empty
// table counts as an empty object. hints are passed to FromLua.
func (r Results) Object(i int, hints ...any) (map[string]any, error) {
	if _, ok := r.value(i).(*glua.LTable); !ok {
		return nil, r.wrongType(i, "a table")
	}
	v, err := r.Value(i, append(hints[:len(hints):len(hints)], map[string]any{})...)
	if err != nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, r.errorf(i, ErrConversion, "expected an object, got a list")
	}
	return m, nil
}

// List converts value i, which must be a table, into a list. An empty table
// counts as an empty list. hints are passed to FromLua.
func (r Results) List(i int, hints ...any) ([]any, error) {
	if _, ok := r.value(i).(*glua.LTable); !ok {
		return nil, r.wrongType(i, "a table")
	}
	v, err := r.Value(i, append(hints[:len(hints):len(hints)], []any{})...)
	if err != nil {
		return nil, err
	}
	l, ok := v.([]any)
	if !ok {
		return nil, r.errorf(i, ErrConversion, "expected a list, got an object")
	}
	return l, nil
}

// Number returns value i, which must be a number.
func (r Results) Number(i int) (float64, error) {
	n, ok := r.value(i).(glua.LNumber)
	if !ok {
		return 0, r.wrongType(i, "a number")
	}
	return float64(n), nil
}

// Int64 returns value i, which must be a whole number.
func (r Results) Int64(i int) (int64, error) {
	f, err := r.Number(i)
	if err != nil {
		return 0, err
	}
	if f != math.Trunc(f) || f < math.MinInt64 || f >= math.MaxInt64 {
		return 0, r.errorf(i, ErrConversion, "expected a whole number, got %v", f)
	}
	return int64(f), nil
}

// Bool returns value i, which must be a boolean.
func (r Results) Bool(i int) (bool, error) {
	b, ok := r.value(i).(glua.LBool)
	if !ok {
		return false, r.wrongType(i, "a boolean")
	}
	return bool(b), nil
}

func (r Results) wrongType(i int, want string) error {
	return r.errorf(i, ErrConversion, "expected %s, got %s", want, r.value(i).Type())
}

func (r Results) errorf(i int, sentinel error, format string, args ...any) error {
	return &Error{
		Script:   r.script,
		Function: r.function,
		Message:  fmt.Sprintf("return value #%d: ", i+1) + fmt.Sprintf(format, args...),
		Err:      sentinel,
	}
}
