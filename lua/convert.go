package lua

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	glua "github.com/yuin/gopher-lua"
)

// listMarker and mapMarker are the metatables of tables made by ToLua from Go
// slices and maps. They define no metamethods, so scripts see plain tables;
// FromLua reads them to tell an empty list from an empty object. Nothing
// writes to them after creation (scripts cannot reach metatables:
// getmetatable and setmetatable are disabled), so all states share them.
var (
	listMarker = &glua.LTable{Metatable: glua.LNil}
	mapMarker  = &glua.LTable{Metatable: glua.LNil}
)

// maxDepth bounds nesting in both directions; it turns a cyclic Lua table
// into an error instead of a stack overflow.
const maxDepth = 512

// maxExactInt is the largest integer a Lua number (float64) holds exactly.
const maxExactInt = 1 << 53

// ToLua converts a JSON-like Go value (what decoding JSON into unstructured
// gives: map[string]any, []any, string, bool, int64, float64, nil) into a Lua
// value. Other integer and float types, map[string]string, []string and
// []map[string]any are accepted for convenience, a glua.LValue passes through,
// and anything else goes through encoding/json.
//
// Tables remember whether they came from a map or a slice, so FromLua turns
// them back into {} or [] even when empty. Map keys are inserted in sorted
// order, which makes pairs() deterministic. A nil map value becomes an absent
// key (Lua tables cannot hold nil); a nil list element leaves a hole that
// FromLua restores as nil. Integers beyond ±2^53 lose precision, as in any
// Lua 5.1.
func ToLua(L *glua.LState, v any) (glua.LValue, error) {
	lv, err := toLua(L, v, 0)
	if err != nil {
		return glua.LNil, err.toError()
	}
	return lv, nil
}

func toLua(L *glua.LState, v any, depth int) (glua.LValue, *convErr) {
	if depth > maxDepth {
		return glua.LNil, newConvErr("nested deeper than %d levels", maxDepth)
	}
	switch x := v.(type) {
	case nil:
		return glua.LNil, nil
	case glua.LValue:
		return x, nil
	case string:
		return glua.LString(x), nil
	case bool:
		return glua.LBool(x), nil
	case int64:
		return glua.LNumber(x), nil
	case float64:
		return glua.LNumber(x), nil
	case map[string]any:
		tb := L.CreateTable(0, len(x))
		tb.Metatable = mapMarker
		for _, k := range sortedKeys(x) {
			e := x[k]
			if e == nil {
				continue
			}
			lv, err := toLua(L, e, depth+1)
			if err != nil {
				return glua.LNil, err.at(k)
			}
			tb.RawSetString(k, lv)
		}
		return tb, nil
	case []any:
		tb := L.CreateTable(len(x), 0)
		tb.Metatable = listMarker
		for i, e := range x {
			lv, err := toLua(L, e, depth+1)
			if err != nil {
				return glua.LNil, err.atIndex(i)
			}
			// RawSetInt, not Append: Append skips nil and would shift the
			// elements after a null.
			tb.RawSetInt(i+1, lv)
		}
		return tb, nil
	}
	if n, ok, err := otherNumber(v); ok {
		return n, err
	}
	if lv, ok, err := convenienceToLua(L, v, depth); ok {
		return lv, err
	}
	// Typed structs (e.g. status items) take the slow road through JSON.
	generic, err := jsonValue(v)
	if err != nil {
		return glua.LNil, err
	}
	return toLua(L, generic, depth)
}

// otherNumber converts the numeric types unstructured does not use.
func otherNumber(v any) (glua.LValue, bool, *convErr) {
	switch x := v.(type) {
	case int:
		return glua.LNumber(x), true, nil
	case int32:
		return glua.LNumber(x), true, nil
	case int16:
		return glua.LNumber(x), true, nil
	case int8:
		return glua.LNumber(x), true, nil
	case uint:
		return glua.LNumber(x), true, nil
	case uint64:
		return glua.LNumber(x), true, nil
	case uint32:
		return glua.LNumber(x), true, nil
	case uint16:
		return glua.LNumber(x), true, nil
	case uint8:
		return glua.LNumber(x), true, nil
	case float32:
		return glua.LNumber(x), true, nil
	case json.Number:
		f, err := x.Float64()
		if err != nil {
			return glua.LNil, true, newConvErr("invalid number %q", string(x))
		}
		return glua.LNumber(f), true, nil
	}
	return glua.LNil, false, nil
}

// convenienceToLua converts the typed collections callers commonly hold.
func convenienceToLua(L *glua.LState, v any, depth int) (glua.LValue, bool, *convErr) {
	switch x := v.(type) {
	case map[string]string:
		tb := L.CreateTable(0, len(x))
		tb.Metatable = mapMarker
		for _, k := range sortedKeys(x) {
			tb.RawSetString(k, glua.LString(x[k]))
		}
		return tb, true, nil
	case []string:
		tb := L.CreateTable(len(x), 0)
		tb.Metatable = listMarker
		for i, e := range x {
			tb.RawSetInt(i+1, glua.LString(e))
		}
		return tb, true, nil
	case []map[string]any:
		list := make([]any, len(x))
		for i, e := range x {
			list[i] = e
		}
		lv, err := toLua(L, list, depth)
		return lv, true, err
	}
	return glua.LNil, false, nil
}

// jsonValue turns any value into its JSON-like form via encoding/json, with
// integers as int64 like unstructured.
func jsonValue(v any) (any, *convErr) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, newConvErr("cannot convert %T: %v", v, err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var generic any
	if err := dec.Decode(&generic); err != nil {
		return nil, newConvErr("cannot convert %T: %v", v, err)
	}
	return numbersToGo(generic), nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// numbersToGo replaces json.Number with int64 or float64, as unstructured does.
func numbersToGo(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		f, _ := x.Float64()
		return f
	case map[string]any:
		for k, e := range x {
			x[k] = numbersToGo(e)
		}
	case []any:
		for i, e := range x {
			x[i] = numbersToGo(e)
		}
	}
	return v
}

// convErr collects the path of a conversion failure while the recursion
// unwinds; the path is only built when something fails.
type convErr struct {
	msg  string
	path []string // innermost first
}

func newConvErr(format string, args ...any) *convErr {
	return &convErr{msg: fmt.Sprintf(format, args...)}
}

func (e *convErr) at(key string) *convErr {
	e.path = append(e.path, key)
	return e
}

func (e *convErr) atIndex(i int) *convErr {
	e.path = append(e.path, "["+strconv.Itoa(i)+"]")
	return e
}

func (e *convErr) toError() error {
	var b strings.Builder
	for i := len(e.path) - 1; i >= 0; i-- {
		seg := e.path[i]
		if b.Len() > 0 && !strings.HasPrefix(seg, "[") {
			b.WriteByte('.')
		}
		b.WriteString(seg)
	}
	return conversionError(b.String(), "%s", e.msg)
}
