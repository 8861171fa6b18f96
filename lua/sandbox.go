package lua

import (
	"fmt"
	"strings"

	"github.com/go-logr/logr"
	glua "github.com/yuin/gopher-lua"
)

// disabledFunctions stay defined but raise an error naming themselves, so a
// script using one fails with a clear message instead of "attempt to call a
// nil value". They could load code, reach other environments or break the
// isolation of pooled states.
var disabledFunctions = []string{
	"collectgarbage", "dofile", "getfenv", "getmetatable", "load", "loadfile",
	"loadstring", "module", "newproxy", "rawequal", "rawget", "rawset",
	"setfenv", "setmetatable",
}

// safeOSFunctions are the os functions that only read the clock.
var safeOSFunctions = []string{"clock", "date", "difftime", "time"}

// kubeModule is the only name require accepts.
const kubeModule = "kube"

// state is one pooled interpreter and its sandbox.
//
// Isolation between calls: the globals table of the LState (base functions
// and read-only library proxies) is never written by scripts. Each call runs
// the script's chunk with a fresh environment table whose metatable points
// __index at those globals, so whatever a script assigns to a global lives in
// that table and is dropped with it. _G inside the script is that table too.
type state struct {
	L        *glua.LState
	guard    *guard
	envMeta  *glua.LTable
	readOnly map[*glua.LTable]string
	// numGlobals sizes the environments that copy the globals.
	numGlobals int
	script     string // running script, for print
}

func newState(cfg *config) (*state, error) {
	L := glua.NewState(glua.Options{
		SkipOpenLibs:  true,
		CallStackSize: cfg.callStackSize,
		RegistrySize:  cfg.registrySize,
	})
	st := &state{
		L:        L,
		guard:    newGuard(cfg.timeout, cfg.memoryLimit),
		readOnly: make(map[*glua.LTable]string),
	}
	if err := st.openLibraries(); err != nil {
		st.close()
		return nil, fmt.Errorf("lua: preparing sandbox: %w", err)
	}
	return st, nil
}

func (st *state) openLibraries() error {
	L := st.L
	for _, lib := range []struct {
		name string
		open glua.LGFunction
	}{
		{glua.BaseLibName, glua.OpenBase},
		{glua.TabLibName, glua.OpenTable},
		{glua.StringLibName, glua.OpenString},
		{glua.MathLibName, glua.OpenMath},
		{glua.OsLibName, glua.OpenOs},
	} {
		err := L.CallByParam(glua.P{Fn: L.NewFunction(lib.open), Protect: true}, glua.LString(lib.name))
		if err != nil {
			return fmt.Errorf("opening %q: %w", lib.name, err)
		}
	}
	globals := L.G.Global
	for _, name := range disabledFunctions {
		globals.RawSetString(name, L.NewFunction(disabled(name)))
	}
	// _G would hand out the shared globals; each call's environment supplies
	// its own _G instead.
	globals.RawSetString("_G", glua.LNil)
	globals.RawSetString("_printregs", glua.LNil)
	globals.RawSetString("print", L.NewFunction(st.print))
	fillFirst(L, globals, "next", "unpack")
	next := globals.RawGetString("next")
	globals.RawSetString("pairs", L.NewFunction(func(L *glua.LState) int {
		tb := L.CheckTable(1)
		fillArg(L)
		L.Push(next)
		L.Push(tb)
		L.Push(glua.LNil)
		return 3
	}))
	ipairsNext := L.NewFunction(ipairsNext)
	globals.RawSetString("ipairs", L.NewFunction(func(L *glua.LState) int {
		tb := L.CheckTable(1)
		fillArg(L)
		L.Push(ipairsNext)
		L.Push(tb)
		L.Push(glua.LNumber(0))
		return 3
	}))

	strlib, ok1 := globals.RawGetString("string").(*glua.LTable)
	tablib, ok2 := globals.RawGetString("table").(*glua.LTable)
	mathlib, ok3 := globals.RawGetString("math").(*glua.LTable)
	oslib, ok4 := globals.RawGetString("os").(*glua.LTable)
	if !ok1 || !ok2 || !ok3 || !ok4 {
		return fmt.Errorf("standard library missing")
	}
	// The string table is also the __index of the string metatable, so the
	// wrapped functions serve s:rep() as well as string.rep().
	limitStringLibrary(L, strlib)
	st.guardTableLibrary(L, tablib)
	fillFirst(L, tablib, "concat", "getn", "maxn")

	safeOS := L.CreateTable(0, len(safeOSFunctions))
	for _, name := range safeOSFunctions {
		safeOS.RawSetString(name, oslib.RawGetString(name))
	}
	globals.RawSetString("os", st.protect("os", safeOS))
	strProxy := st.protect("string", strlib)
	globals.RawSetString("string", strProxy)
	// Strings find their methods through strlib.__index, which pointed at
	// strlib itself: ("").__index would hand out the writable library.
	strlib.RawSetString("__index", strProxy)
	globals.RawSetString("table", st.protect("table", tablib))
	globals.RawSetString("math", st.protect("math", mathlib))

	kube := st.protect(kubeModule, newKubeLibrary(L))
	globals.RawSetString("require", L.NewFunction(func(L *glua.LState) int {
		name := L.CheckString(1)
		if name != kubeModule {
			L.RaiseError("module '%s' not found: only %q can be required", name, kubeModule)
		}
		L.Push(kube)
		return 1
	}))

	st.envMeta = L.CreateTable(0, 1)
	st.envMeta.RawSetString("__index", globals)
	globals.ForEach(func(glua.LValue, glua.LValue) { st.numGlobals++ })
	return nil
}

// fillFirst wraps library functions that read their first argument raw so
// that a lazy argument table is filled before they look at it.
func fillFirst(L *glua.LState, lib *glua.LTable, names ...string) {
	for _, name := range names {
		orig, ok := lib.RawGetString(name).(*glua.LFunction)
		if !ok || !orig.IsG {
			continue
		}
		next := orig.GFunction
		lib.RawSetString(name, L.NewFunction(func(L *glua.LState) int {
			fillArg(L)
			return next(L)
		}))
	}
}

func ipairsNext(L *glua.LState) int {
	tb := L.CheckTable(1)
	i := L.CheckInt(2) + 1
	v := tb.RawGetInt(i)
	if v == glua.LNil {
		return 0
	}
	L.Push(glua.LNumber(i))
	L.Push(v)
	return 2
}

func disabled(name string) glua.LGFunction {
	return func(L *glua.LState) int {
		L.RaiseError("function '%s' is disabled", name)
		return 0
	}
}

// protect returns an empty proxy that reads through to lib and refuses
// writes, so one script cannot change string.format for the next.
func (st *state) protect(name string, lib *glua.LTable) *glua.LTable {
	L := st.L
	mt := L.CreateTable(0, 2)
	mt.RawSetString("__index", lib)
	mt.RawSetString("__newindex", L.NewFunction(func(L *glua.LState) int {
		L.RaiseError("attempt to modify read-only table '%s'", name)
		return 0
	}))
	proxy := L.CreateTable(0, 0)
	proxy.Metatable = mt
	st.readOnly[proxy] = name
	return proxy
}

// guardTableLibrary wraps the table functions that write with raw access, the
// one way around a proxy's __newindex.
func (st *state) guardTableLibrary(L *glua.LState, tablib *glua.LTable) {
	for _, name := range []string{"insert", "remove", "sort"} {
		orig, ok := tablib.RawGetString(name).(*glua.LFunction)
		if !ok || !orig.IsG {
			continue
		}
		next := orig.GFunction
		tablib.RawSetString(name, L.NewFunction(func(L *glua.LState) int {
			if tb, ok := L.Get(1).(*glua.LTable); ok && tb.Metatable != glua.LNil {
				if lib, ro := st.readOnly[tb]; ro {
					L.RaiseError("attempt to modify read-only table '%s'", lib)
				}
				fillArg(L)
			}
			return next(L)
		}))
	}
	if orig, ok := tablib.RawGetString("concat").(*glua.LFunction); ok && orig.IsG {
		tablib.RawSetString("concat", L.NewFunction(limitConcat(orig.GFunction)))
	}
}

// print goes to the caller's logger at V(1) instead of stdout, so scripts
// keeping debug prints from Karmada still run.
func (st *state) print(L *glua.LState) int {
	n := L.GetTop()
	parts := make([]string, n)
	for i := 1; i <= n; i++ {
		parts[i-1] = L.ToStringMeta(L.Get(i)).String()
	}
	if ctx := st.guard.parent; ctx != nil {
		logr.FromContextOrDiscard(ctx).V(1).Info("lua print", "script", st.script, "message", strings.Join(parts, "\t"))
	}
	return 0
}

// newEnv makes the per-call global environment described on state.
//
// Reading through to the shared globals has one flaw: a global the script
// assigned and then set to nil is gone from the environment, so the next
// read finds the built-in of the same name again (a script doing
// `error = ""` then `error = obj.status.error` would get the function
// error back, where Lua gives nil). A script that assigns a global named
// like a built-in, or reaches the environment through _G, gets a full copy
// of the globals instead, without the fall-through; scripts that do
// neither, nearly all, keep the cheap environment.
func (st *state) newEnv(prog *program) *glua.LTable {
	if !st.shadowsGlobals(prog) {
		env := st.L.CreateTable(0, 4)
		env.Metatable = st.envMeta
		env.RawSetString("_G", env)
		return env
	}
	globals := st.L.G.Global
	env := st.L.CreateTable(0, st.numGlobals+4)
	globals.ForEach(func(k, v glua.LValue) { env.RawSet(k, v) })
	env.RawSetString("_G", env)
	return env
}

// shadowsGlobals tells whether prog assigns a global that exists among the
// shared globals, or uses _G.
func (st *state) shadowsGlobals(prog *program) bool {
	if prog.namesG {
		return true
	}
	globals := st.L.G.Global
	for _, name := range prog.assigned {
		if globals.RawGetString(name) != glua.LNil {
			return true
		}
	}
	return false
}

func (st *state) close() {
	st.guard.stop()
	st.L.Close()
}
