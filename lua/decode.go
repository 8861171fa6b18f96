package lua

import (
	"math"
	"strconv"

	glua "github.com/yuin/gopher-lua"
)

// FromLua converts a Lua value into a JSON-like Go value: tables become
// map[string]any or []any, numbers int64 (no fraction) or float64, and nil
// stays nil. A table whose keys are exactly 1..n is a list; any other table is
// a map, its number and boolean keys written as strings. Functions, userdata
// and other non-JSON values are errors, and so are NaN and infinities.
//
// An empty table is ambiguous, so it is resolved in this order:
//  1. a table made by ToLua, or from a call argument, keeps the kind of the
//     Go value it came from;
//  2. otherwise the first hint holding a map or a slice at the same path
//     decides. Hints are Go values shaped like the expected result: the
//     objects passed to the script (as Karmada uses desired and observed) or
//     a schema-like example such as []any{} for a list result. Within a list,
//     an index beyond the hint's length takes the hint's first element;
//  3. otherwise it becomes nil, and a nil map value is left out. This is what
//     Karmada does with empty tables it cannot place (it drops the field).
//
// Hints also keep a whole-number float a float64 where the hint at the same
// path is a float64. The Go value a call argument table was made from is
// always the first hint for it, and parts the script never read are copied
// from it as they were.
func FromLua(v glua.LValue, hints ...any) (any, error) {
	out, _, err := decoder{}.from(v, hints, 0)
	if err != nil {
		return nil, err.toError()
	}
	return out, nil
}

// decoder converts Lua values to Go. share returns the Go values behind
// untouched argument tables as they are instead of copies, for Go code that
// only reads them. dropEmpty converts as Karmada does when it has no
// reference object (see Results.DropEmpty).
type decoder struct {
	share     bool
	dropEmpty bool
}

type tableKind int

const (
	kindUnknown tableKind = iota
	kindList
	kindMap
)

// from returns the Go value and whether it is an undecided empty table
// (which the caller leaves out of maps).
func (d decoder) from(v glua.LValue, hints []any, depth int) (any, bool, *convErr) {
	switch x := v.(type) {
	case *glua.LNilType:
		return nil, false, nil
	case glua.LBool:
		return bool(x), false, nil
	case glua.LString:
		return string(x), false, nil
	case glua.LNumber:
		n, err := numberFromLua(x, hints)
		return n, false, err
	case *glua.LTable:
		if depth > maxDepth {
			return nil, false, newConvErr("nested deeper than %d levels (cyclic table?)", maxDepth)
		}
		kind := kindUnknown
		switch x.Metatable {
		case glua.LNil:
		case listMarker:
			kind = kindList
		case mapMarker:
			kind = kindMap
		case lazyMapMeta, doneMapMeta:
			return d.argMap(asLazy(x), hints, depth)
		case argListMeta:
			kind = kindList
			// The argument this table was made from is the best hint.
			hints = append([]any{asLazy(x).src}, hints...)
		}
		return d.table(x, kind, hints, depth)
	}
	return nil, false, newConvErr("a %s has no JSON equivalent", v.Type())
}

// argMap converts a map made from an argument: fields the script never
// read come from the Go value (copied unless shared), the others from the
// table with the Go value as hint. It reports, like from, whether the
// value is to be left out.
func (d decoder) argMap(lz *lazyTable, hints []any, depth int) (any, bool, *convErr) {
	src := lz.src.(map[string]any)
	if lz.keys == nil {
		if d.dropEmpty {
			if depth > 0 && emptyAsLua(src) {
				return nil, true, nil
			}
			v, _, err := d.dropEmpties(src, depth)
			return v, false, err
		}
		if d.share {
			return src, false, nil
		}
		v, err := copyValue(src, depth)
		return v, false, err
	}
	hints = append([]any{src}, hints...)
	if lz.left == 0 {
		return d.table(&lz.LTable, kindMap, hints, depth)
	}
	out, err := d.object(&lz.LTable, hints, depth)
	if err != nil {
		return nil, false, err
	}
	for i, k := range lz.keys {
		if lz.isDone(i) {
			continue
		}
		if d.dropEmpty {
			c, omit, err := d.dropEmpties(src[k], depth+1)
			if err != nil {
				return nil, false, err.at(k)
			}
			if !omit {
				out[k] = c
			}
			continue
		}
		if d.share {
			out[k] = src[k]
			continue
		}
		c, err := copyValue(src[k], depth+1)
		if err != nil {
			return nil, false, err.at(k)
		}
		out[k] = c
	}
	return out, false, nil
}

func numberFromLua(n glua.LNumber, hints []any) (any, *convErr) {
	f := float64(n)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, newConvErr("%v has no JSON equivalent", f)
	}
	if floatHinted(hints) {
		return f, nil
	}
	if f == math.Trunc(f) && f >= math.MinInt64 && f < math.MaxInt64 {
		return int64(f), nil
	}
	return f, nil
}

// floatHinted tells whether the first numeric hint is a float.
func floatHinted(hints []any) bool {
	for _, h := range hints {
		switch h.(type) {
		case float64, float32:
			return true
		case int64, int, int32:
			return false
		}
	}
	return false
}

func (d decoder) table(tb *glua.LTable, kind tableKind, hints []any, depth int) (any, bool, *convErr) {
	n := tb.MaxN()
	// Next from the end of the array part yields the first hash key, if any.
	var hashKey glua.LValue
	if n > 0 {
		hashKey, _ = tb.Next(glua.LNumber(n))
	} else {
		hashKey, _ = tb.Next(glua.LNil)
	}
	if hashKey == glua.LNil {
		if n == 0 {
			if d.dropEmpty && depth > 0 {
				return nil, true, nil
			}
			v, omit := emptyTable(kind, hints)
			return v, omit, nil
		}
		if kind == kindList || !hasHoles(tb, n) {
			v, err := d.list(tb, n, hints, depth)
			return v, false, err
		}
	}
	v, err := d.object(tb, hints, depth)
	return v, false, err
}

func hasHoles(tb *glua.LTable, n int) bool {
	for i := 1; i <= n; i++ {
		if tb.RawGetInt(i) == glua.LNil {
			return true
		}
	}
	return false
}

// emptyTable resolves an empty table; true means undecided (nil, left out
// of maps).
func emptyTable(kind tableKind, hints []any) (any, bool) {
	switch kind {
	case kindList:
		return []any{}, false
	case kindMap:
		return map[string]any{}, false
	}
	for _, h := range hints {
		switch h.(type) {
		case []any, []string, []map[string]any:
			return []any{}, false
		case map[string]any, map[string]string:
			return map[string]any{}, false
		}
	}
	return nil, true
}

func (d decoder) list(tb *glua.LTable, n int, hints []any, depth int) (any, *convErr) {
	out := make([]any, 0, n)
	var child []any
	for i := range n {
		if len(hints) > 0 {
			child = elementHints(hints, i, child[:0])
		}
		v, omit, err := d.from(tb.RawGetInt(i+1), child, depth+1)
		if err != nil {
			return nil, err.atIndex(i)
		}
		if omit && d.dropEmpty {
			continue
		}
		out = append(out, v)
	}
	return out, nil
}

func elementHints(hints []any, i int, buf []any) []any {
	for _, h := range hints {
		if l, ok := h.([]any); ok && len(l) > 0 {
			if i < len(l) {
				buf = append(buf, l[i])
			} else {
				buf = append(buf, l[0])
			}
		}
	}
	return buf
}

func fieldHints(hints []any, key string, buf []any) []any {
	for _, h := range hints {
		if m, ok := h.(map[string]any); ok {
			if v, ok := m[key]; ok {
				buf = append(buf, v)
			}
		}
	}
	return buf
}

func (d decoder) object(tb *glua.LTable, hints []any, depth int) (map[string]any, *convErr) {
	out := make(map[string]any)
	var child []any
	var failed *convErr
	tb.ForEach(func(k, v glua.LValue) {
		if failed != nil {
			return
		}
		key, err := mapKey(k)
		if err != nil {
			failed = err
			return
		}
		if len(hints) > 0 {
			child = fieldHints(hints, key, child[:0])
		}
		gv, omit, err := d.from(v, child, depth+1)
		if err != nil {
			failed = err.at(key)
			return
		}
		if !omit {
			out[key] = gv
		}
	})
	if failed != nil {
		return nil, failed
	}
	return out, nil
}

// copyValue deep-copies the Go value behind an untouched argument table,
// normalized as a round trip through Lua would: integers as int64, nil map
// values dropped. Integers keep full precision since they never became
// floats.
func copyValue(v any, depth int) (any, *convErr) {
	if depth > maxDepth {
		return nil, newConvErr("nested deeper than %d levels", maxDepth)
	}
	switch x := v.(type) {
	case nil, string, bool, int64:
		return x, nil
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, newConvErr("%v has no JSON equivalent", x)
		}
		return x, nil
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			if e == nil {
				continue
			}
			c, err := copyValue(e, depth+1)
			if err != nil {
				return nil, err.at(k)
			}
			out[k] = c
		}
		return out, nil
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			c, err := copyValue(e, depth+1)
			if err != nil {
				return nil, err.atIndex(i)
			}
			out[i] = c
		}
		return out, nil
	case int:
		return int64(x), nil
	case int32:
		return int64(x), nil
	case map[string]string:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = e
		}
		return out, nil
	case []string:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = e
		}
		return out, nil
	case glua.LValue:
		c, _, err := decoder{}.from(x, nil, depth)
		return c, err
	}
	generic, err := jsonValue(v)
	if err != nil {
		return nil, err
	}
	return copyValue(generic, depth)
}

// Empty values in results without a reference object.
//
// Karmada turns a result table into JSON with gopher-json, which writes
// every empty table as [], and then mends the empty lists by the reference
// objects it is given: a path that held {} in one becomes {} again, a path
// that held [] stays, and any other empty list is deleted. AggregateStatus
// and ReflectStatus (InterpretStatus) are given no reference, so in their
// results every empty {} or [] below the top is deleted, whether the
// script built it or it came from an argument (the arguments reached the
// script as Lua tables, where {} and [] are alike). An empty element of a
// list goes too, and a nil map value or list element, which a Lua table
// cannot hold. Only values that are empty as given are deleted: a table
// whose members were all deleted stays, as {} (Karmada inspects the JSON
// once, before deleting). The top value itself is never deleted: an empty
// result is the empty object.

// copyDroppingEmpty is copyValue under those rules; omit reports a value
// to leave out of its parent.
func copyDroppingEmpty(v any, depth int) (out any, omit bool, err *convErr) {
	if depth > maxDepth {
		return nil, false, newConvErr("nested deeper than %d levels", maxDepth)
	}
	switch x := v.(type) {
	case nil:
		return nil, true, nil
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			c, omit, err := copyDroppingEmpty(e, depth+1)
			if err != nil {
				return nil, false, err.at(k)
			}
			if !omit {
				m[k] = c
			}
		}
		return m, depth > 0 && emptyAsLua(x), nil
	case []any:
		l := make([]any, 0, len(x))
		for i, e := range x {
			c, omit, err := copyDroppingEmpty(e, depth+1)
			if err != nil {
				return nil, false, err.atIndex(i)
			}
			if !omit {
				l = append(l, c)
			}
		}
		return l, depth > 0 && emptyAsLua(x), nil
	}
	c, err := copyValue(v, depth)
	if err != nil {
		return nil, false, err
	}
	switch c.(type) {
	case map[string]any, []any:
		// A typed collection, normalized above; apply the rules to it.
		return copyDroppingEmpty(c, depth)
	}
	return c, false, nil
}

// dropEmpties applies the rules to an untouched part of an argument:
// copied, or when shared, handed back as it is except for the maps and
// lists on the way to a value to leave out, which are copied.
func (d decoder) dropEmpties(v any, depth int) (any, bool, *convErr) {
	if d.share {
		return shareDroppingEmpty(v, depth)
	}
	return copyDroppingEmpty(v, depth)
}

// shareDroppingEmpty is copyDroppingEmpty sharing every part that holds
// nothing to leave out.
func shareDroppingEmpty(v any, depth int) (out any, omit bool, err *convErr) {
	if v == nil {
		return nil, true, nil
	}
	if !holdsEmpty(v, depth) {
		return v, false, nil
	}
	switch x := v.(type) {
	case map[string]any:
		if depth > 0 && emptyAsLua(x) {
			return nil, true, nil
		}
		m := make(map[string]any, len(x))
		for k, e := range x {
			c, omit, err := shareDroppingEmpty(e, depth+1)
			if err != nil {
				return nil, false, err.at(k)
			}
			if !omit {
				m[k] = c
			}
		}
		return m, false, nil
	case []any:
		if depth > 0 && emptyAsLua(x) {
			return nil, true, nil
		}
		l := make([]any, 0, len(x))
		for i, e := range x {
			c, omit, err := shareDroppingEmpty(e, depth+1)
			if err != nil {
				return nil, false, err.atIndex(i)
			}
			if !omit {
				l = append(l, c)
			}
		}
		return l, false, nil
	}
	return copyDroppingEmpty(v, depth)
}

// emptyAsLua tells whether a map or list would be an empty Lua table: no
// members, or only nil ones.
func emptyAsLua(v any) bool {
	switch x := v.(type) {
	case map[string]any:
		for _, e := range x {
			if e != nil {
				return false
			}
		}
	case []any:
		for _, e := range x {
			if e != nil {
				return false
			}
		}
	}
	return true
}

// holdsEmpty tells whether v, at depth, holds something copyDroppingEmpty
// would leave out or normalize, so that it cannot be shared as it is.
func holdsEmpty(v any, depth int) bool {
	switch x := v.(type) {
	case nil, string, bool, int64, float64:
		return false
	case map[string]any:
		if depth > 0 && len(x) == 0 {
			return true
		}
		for _, e := range x {
			if e == nil || holdsEmpty(e, depth+1) {
				return true
			}
		}
		return false
	case []any:
		if depth > 0 && len(x) == 0 {
			return true
		}
		for _, e := range x {
			if e == nil || holdsEmpty(e, depth+1) {
				return true
			}
		}
		return false
	}
	return true
}

func mapKey(k glua.LValue) (string, *convErr) {
	switch x := k.(type) {
	case glua.LString:
		return string(x), nil
	case glua.LNumber:
		f := float64(x)
		if f == math.Trunc(f) && math.Abs(f) < maxExactInt {
			return strconv.FormatInt(int64(f), 10), nil
		}
		return strconv.FormatFloat(f, 'g', -1, 64), nil
	case glua.LBool:
		return strconv.FormatBool(bool(x)), nil
	}
	return "", newConvErr("a %s cannot be an object key", k.Type())
}
