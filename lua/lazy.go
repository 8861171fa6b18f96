package lua

import (
	"slices"
	"unsafe"

	glua "github.com/yuin/gopher-lua"
)

// Building a gopher-lua table costs several allocations per key, and a
// script usually reads a handful of fields out of an object with hundreds.
// So call arguments are converted on demand: a Go map becomes an empty table
// whose __index converts a field the first time it is read and whose
// __newindex records that the script overwrote or deleted one. A Go slice
// becomes a filled table (#, ipairs and the table library read the array
// part directly) whose map elements are lazy in turn.
//
// The base and table functions that read tables raw (pairs, next, ipairs,
// unpack, table.*) fill their argument completely first, so a script cannot
// tell a lazy table from a converted one; pairs visits the fields the script
// already read first, then the others in sorted order, the same way for the
// same script and input. The argument itself is never modified. When
// results are converted, the fields a script never read are copied from the
// Go value, and the Go value serves as the hint for those it did.

// lazyTable is a table made from a call argument. The LTable must stay the
// first field: gopher-lua hands back *LTable, and asLazy turns it into the
// enclosing lazyTable. That is sound because only tables allocated as
// lazyTable ever get one of the lazy metatables, and scripts cannot change
// metatables (setmetatable is disabled).
type lazyTable struct {
	glua.LTable
	src   any      // map[string]any, or []any for lists
	keys  []string // sorted keys of a map with non-nil values; nil until first touched
	done  []uint64 // bit i: keys[i] was converted, or overwritten by the script
	left  int      // keys not done yet
	small [1]uint64
}

// Metatables of argument tables. They are never modified after creation, so
// all states share them.
var (
	// lazyMapMeta: a map with fields not converted yet. Its metamethods are
	// set in init (they refer back to it).
	lazyMapMeta = &glua.LTable{Metatable: glua.LNil}
	// doneMapMeta: a map whose fields are all converted or overwritten.
	doneMapMeta = &glua.LTable{Metatable: glua.LNil}
	// argListMeta: a list (always fully converted).
	argListMeta = &glua.LTable{Metatable: glua.LNil}
)

func init() {
	env := &glua.LTable{Metatable: glua.LNil}
	lazyMapMeta.RawSetString("__index", &glua.LFunction{IsG: true, Env: env, GFunction: lazyIndex})
	lazyMapMeta.RawSetString("__newindex", &glua.LFunction{IsG: true, Env: env, GFunction: lazyNewIndex})
}

func asLazy(tb *glua.LTable) *lazyTable {
	switch tb.Metatable {
	case lazyMapMeta, doneMapMeta, argListMeta:
		return (*lazyTable)(unsafe.Pointer(tb))
	}
	return nil
}

// argValue converts a call argument, or part of one.
func argValue(L *glua.LState, v any, depth int) (glua.LValue, *convErr) {
	switch x := v.(type) {
	case map[string]any:
		lz := &lazyTable{src: x}
		lz.Metatable = lazyMapMeta
		return &lz.LTable, nil
	case []any:
		if depth > maxDepth {
			return glua.LNil, newConvErr("nested deeper than %d levels", maxDepth)
		}
		lz := &lazyTable{src: x}
		lz.LTable = *L.CreateTable(len(x), 0)
		lz.Metatable = argListMeta
		for i, e := range x {
			lv, err := argValue(L, e, depth+1)
			if err != nil {
				return glua.LNil, err.atIndex(i)
			}
			lz.RawSetInt(i+1, lv)
		}
		return &lz.LTable, nil
	}
	return toLua(L, v, depth)
}

// prepare runs on the first touch: it lists the keys and gives the table
// storage sized for all of them (an LTable that starts empty would get
// gopher-lua's default 32-entry hash, the most expensive part of a table).
func (lz *lazyTable) prepare(L *glua.LState) {
	if lz.keys != nil {
		return
	}
	m := lz.src.(map[string]any)
	keys := make([]string, 0, len(m))
	for k, v := range m {
		if v != nil {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	lz.keys, lz.left = keys, len(keys)
	if n := (len(keys) + 63) / 64; n <= len(lz.small) {
		lz.done = lz.small[:n]
	} else {
		lz.done = make([]uint64, n)
	}
	lz.LTable = *L.CreateTable(0, len(keys))
	lz.markDone(-1)
}

// markDone records key i (if i >= 0) as no longer owed by the Go value.
func (lz *lazyTable) markDone(i int) {
	if i >= 0 && lz.done[i/64]&(1<<(i%64)) == 0 {
		lz.done[i/64] |= 1 << (i % 64)
		lz.left--
	}
	if lz.left == 0 {
		lz.Metatable = doneMapMeta
	} else {
		lz.Metatable = lazyMapMeta
	}
}

func (lz *lazyTable) isDone(i int) bool { return lz.done[i/64]&(1<<(i%64)) != 0 }

// field returns the index of key in keys, or -1.
func (lz *lazyTable) field(key glua.LValue) int {
	s, ok := key.(glua.LString)
	if !ok {
		return -1
	}
	if i, found := slices.BinarySearch(lz.keys, string(s)); found {
		return i
	}
	return -1
}

// convert turns field i into a Lua value and stores it.
func (lz *lazyTable) convert(L *glua.LState, i int) glua.LValue {
	k := lz.keys[i]
	lv, err := argValue(L, lz.src.(map[string]any)[k], 0)
	if err != nil {
		L.RaiseError("argument field %s", err.at(k).toError())
	}
	lz.RawSetString(k, lv)
	lz.markDone(i)
	return lv
}

// fill converts every field still owed, in key order.
func (lz *lazyTable) fill(L *glua.LState) {
	lz.prepare(L)
	for i := range lz.keys {
		if !lz.isDone(i) {
			lz.convert(L, i)
		}
	}
}

// lazyIndex is __index of lazy maps; gopher-lua calls it only for keys the
// table does not hold yet.
func lazyIndex(L *glua.LState) int {
	lz := asLazy(L.CheckTable(1))
	if lz == nil {
		return 0
	}
	lz.prepare(L)
	if i := lz.field(L.Get(2)); i >= 0 && !lz.isDone(i) {
		L.Push(lz.convert(L, i))
		return 1
	}
	L.Push(glua.LNil)
	return 1
}

// lazyNewIndex is __newindex of lazy maps: the script's value (nil included)
// replaces the Go one.
func lazyNewIndex(L *glua.LState) int {
	tb := L.CheckTable(1)
	lz := asLazy(tb)
	if lz == nil {
		return 0
	}
	lz.prepare(L)
	key := L.Get(2)
	L.RawSet(tb, key, L.Get(3))
	if i := lz.field(key); i >= 0 {
		lz.markDone(i)
	}
	return 0
}

// fillArg fills the first argument if it is a lazy map; wrappers of
// functions that read tables raw call it first.
func fillArg(L *glua.LState) {
	if tb, ok := L.Get(1).(*glua.LTable); ok && tb.Metatable == lazyMapMeta {
		asLazy(tb).fill(L)
	}
}
