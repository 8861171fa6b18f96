package lua

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"time"

	glua "github.com/yuin/gopher-lua"
)

// MultRet as nret asks Call for every value the function returns.
const MultRet = glua.MultRet

type config struct {
	poolSize      int
	timeout       time.Duration
	memoryLimit   uint64
	callStackSize int
	registrySize  int
	cacheSize     int
}

// Option configures a VM.
type Option func(*config)

// WithPoolSize sets how many idle interpreter states are kept for reuse
// (default: GOMAXPROCS, at least 4). More concurrent calls than that still
// run; their extra states are closed afterwards.
func WithPoolSize(n int) Option {
	return func(c *config) {
		if n > 0 {
			c.poolSize = n
		}
	}
}

// WithTimeout bounds each call, chunk included (default 1s, as in Karmada).
// A shorter deadline on the call's context wins.
func WithTimeout(d time.Duration) Option {
	return func(c *config) {
		if d > 0 {
			c.timeout = d
		}
	}
}

// WithMemoryLimit stops a call once the process heap exceeds by more than
// bytes the lowest heap seen during the call, measured every millisecond
// (default 128 MiB); 0 turns the check off. It is a guard against runaway
// scripts, not an accounting of one call: heap growth from other goroutines
// counts too, which is why the default is generous and calls shorter than a
// millisecond are never measured.
func WithMemoryLimit(bytes uint64) Option {
	return func(c *config) { c.memoryLimit = bytes }
}

// WithStackLimits sets the Lua call depth (default 256) and the number of
// value-stack slots (default 5120) of each state. Deeper recursion fails with
// "stack overflow", more live values with "registry overflow". The defaults
// are gopher-lua's and Karmada's.
func WithStackLimits(callDepth, stackSlots int) Option {
	return func(c *config) {
		if callDepth > 0 {
			c.callStackSize = callDepth
		}
		if stackSlots > 0 {
			c.registrySize = stackSlots
		}
	}
}

// WithScriptCacheSize bounds the number of compiled scripts kept (default 1024).
func WithScriptCacheSize(n int) Option {
	return func(c *config) {
		if n > 0 {
			c.cacheSize = n
		}
	}
}

// VM runs resource interpreter scripts in sandboxed, pooled gopher-lua
// states. It is safe for concurrent use.
type VM struct {
	cfg      config
	pool     *pool
	programs *programCache
}

// New returns a VM. Close it to release the idle states.
func New(opts ...Option) *VM {
	cfg := config{
		poolSize:      max(4, runtime.GOMAXPROCS(0)),
		timeout:       time.Second,
		memoryLimit:   128 << 20,
		callStackSize: glua.CallStackSize,
		registrySize:  glua.RegistrySize,
		cacheSize:     1024,
	}
	for _, opt := range opts {
		opt(&cfg)
	}
	vm := &VM{cfg: cfg, programs: newProgramCache(cfg.cacheSize)}
	vm.pool = newPool(&vm.cfg)
	return vm
}

// Close releases the idle states. Calls made afterwards still work but no
// longer reuse states.
func (vm *VM) Close() { vm.pool.close() }

// Call runs the script's chunk in a fresh global environment, then calls
// the global function it defined with args, and returns nret results
// (MultRet for all of them). Args are JSON-like Go values as for ToLua
// (typically an unstructured object's Object map); maps among them are
// converted on demand as the script reads them, and are never modified. The
// results are handed back as the script produced them; Results converts and
// checks them.
//
// Errors are *Error wrapping ErrSyntax, ErrRuntime, ErrNotDefined,
// ErrConversion, ErrTimeout, ErrMemoryLimit or the context's error.
func (vm *VM) Call(ctx context.Context, script Script, function string, nret int, args ...any) (Results, error) {
	var values []glua.LValue
	err := vm.with(ctx, script, function, func(st *state, env *glua.LTable) error {
		var err error
		values, err = st.call(env, script.chunkName(), function, nret, args)
		return err
	})
	if err != nil {
		return Results{}, err
	}
	return Results{script: script.chunkName(), function: function, values: values}, nil
}

// Check compiles the script, runs its chunk in the sandbox and verifies
// that it defines each named global function. It reports syntax errors with
// their line, and runtime errors of the chunk itself.
func (vm *VM) Check(ctx context.Context, script Script, functions ...string) error {
	return vm.with(ctx, script, "", func(_ *state, env *glua.LTable) error {
		errs := make([]error, 0, len(functions))
		for _, fn := range functions {
			if _, ok := env.RawGetString(fn).(*glua.LFunction); !ok {
				errs = append(errs, notDefined(script.chunkName(), fn, env.RawGetString(fn)))
			}
		}
		return errors.Join(errs...)
	})
}

// with compiles the script, takes a state, loads the chunk under the guard
// and runs body. The state goes back to the pool unless the call was
// interrupted or Go code panicked inside it.
func (vm *VM) with(ctx context.Context, script Script, function string, body func(*state, *glua.LTable) error) error {
	prog := vm.programs.get(script)
	if prog.err != nil {
		return prog.err
	}
	st, err := vm.pool.get()
	if err != nil {
		return err
	}
	name := script.chunkName()
	if err := st.guard.begin(ctx); err != nil {
		vm.pool.put(st)
		return &Error{Script: name, Function: function, Message: err.Error(), Err: err}
	}
	st.script = name
	st.L.SetContext(st.guard)

	env, err := st.load(prog, name)
	if err == nil {
		err = body(st, env)
	}

	st.L.RemoveContext()
	stopped := st.guard.end()
	st.script = ""
	st.L.SetTop(0)
	if stopped != nil {
		// The call may have been interrupted anywhere; do not trust the state.
		vm.pool.drop(st)
		return stoppedError(name, function, stopped, err)
	}
	if err != nil && panicked(err) {
		vm.pool.drop(st)
	} else {
		vm.pool.put(st)
	}
	return err
}

// load runs the compiled chunk with a fresh environment and returns it.
func (st *state) load(prog *program, name string) (*glua.LTable, error) {
	L := st.L
	env := st.newEnv(prog)
	chunk := L.NewFunctionFromProto(prog.proto)
	chunk.Env = env
	L.Push(chunk)
	if err := L.PCall(0, 0, nil); err != nil {
		return nil, runtimeError(name, "", err)
	}
	return env, nil
}

// call invokes the global function the chunk defined.
func (st *state) call(env *glua.LTable, name, function string, nret int, args []any) ([]glua.LValue, error) {
	L := st.L
	fn, ok := env.RawGetString(function).(*glua.LFunction)
	if !ok {
		return nil, notDefined(name, function, env.RawGetString(function))
	}
	base := L.GetTop()
	L.Push(fn)
	for i, arg := range args {
		lv, cerr := argValue(L, arg, 0)
		if cerr != nil {
			L.SetTop(base)
			err := cerr.toError()
			return nil, &Error{Script: name, Function: function,
				Message: fmt.Sprintf("argument #%d: %v", i+1, err), Err: err}
		}
		L.Push(lv)
	}
	if err := L.PCall(len(args), nret, nil); err != nil {
		return nil, runtimeError(name, function, err)
	}
	n := L.GetTop() - base
	values := make([]glua.LValue, n)
	for i := range values {
		values[i] = L.Get(base + 1 + i)
	}
	L.SetTop(base)
	return values, nil
}

// panicked tells whether Go code panicked during the call; such a state is
// dropped since the panic may have left it inconsistent.
func panicked(err error) bool {
	var se *Error
	return errors.As(err, &se) && se.panicked
}

func notDefined(name, function string, got glua.LValue) error {
	msg := "global function " + function + " is not defined"
	if got != glua.LNil {
		msg = fmt.Sprintf("global %s is a %s, not a function", function, got.Type())
	}
	return &Error{Script: name, Message: msg, Err: ErrNotDefined}
}

// runtimeError turns a gopher-lua error into an *Error with the line taken
// from the "chunk:line:" prefix gopher-lua puts on messages.
func runtimeError(name, function string, err error) error {
	e := &Error{Script: name, Function: function, Err: ErrRuntime}
	msg := err.Error()
	var ae *glua.ApiError
	if errors.As(err, &ae) {
		if ae.Object != nil {
			msg = ae.Object.String()
		}
		e.Traceback = ae.StackTrace
		e.panicked = ae.Type == glua.ApiErrorPanic
	}
	e.Line, e.Message = splitPosition(name, msg)
	return e
}

// stoppedError reports a call the guard stopped, keeping the line where the
// script was interrupted when gopher-lua recorded it.
func stoppedError(name, function string, reason, err error) error {
	e := &Error{Script: name, Function: function, Message: reason.Error(), Err: reason}
	var se *Error
	if errors.As(err, &se) {
		e.Function, e.Line, e.Traceback = se.Function, se.Line, se.Traceback
	}
	return e
}
