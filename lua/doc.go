// Package lua runs resource interpreter scripts (the luaScript of a
// ResourceInterpreterCustomization) the way Karmada does, so that Karmada's
// scripts run unchanged:
//
//	vm := lua.New()
//	defer vm.Close()
//	r, err := vm.Call(ctx, lua.Script{Name: name, Code: code}, "GetReplicas", 2, obj.Object)
//	replicas, err := r.Int64(0)
//	requires, err := r.Value(1)
//
// A VM keeps a pool of gopher-lua states. Scripts are compiled once and the
// byte code is shared by all states. Every call runs the script's chunk in a
// fresh global environment (reading through to the sandboxed globals, or a
// copy of them for a script that assigns a global named like a built-in, so
// that setting it to nil leaves nil), so nothing a script defines survives
// into the next call.
//
// Sandbox: the base library without dofile, load, loadfile, loadstring,
// rawget, rawset, rawequal, setmetatable, getmetatable, setfenv, getfenv,
// collectgarbage, module and newproxy (calling one raises "function 'name'
// is disabled"); table, string and math; os with clock, date, difftime and
// time only; no io, package, debug or coroutines. require accepts "kube"
// only. print goes to the caller's logger (logr, V(1)). Library tables are
// read-only.
//
// Limits: each call (chunk included) stops after the timeout (1 s) or the
// caller's deadline. A memory guard stops a call once the process heap has
// grown by more than a limit (128 MiB) during it: the timeout alone is not
// enough, because `t[#t+1] = string.rep("x", 1e6)` in a loop allocates
// gigabytes per second and `s = s .. s` doubles memory every few
// instructions. Both checks run from gopher-lua's per-instruction context
// hook, woken by a 1 ms timer, so a call costs one atomic load per
// instruction and calls shorter than 1 ms never read the clock or the heap.
// Measured here, bombs stop at 1 to 2.5 times the limit within 50-400 ms.
// Library functions that could build a huge string in one Go call
// (string.rep, string.format, string.gsub, table.concat) refuse results over
// 16 MiB, and gsub and gmatch are replaced by linear versions that poll the
// guard. Call depth and value stack are bounded by the state's stack limits.
// An interrupted state is discarded, never returned to the pool.
//
// Known gap: gopher-lua's pattern matcher (find, match, gsub, gmatch) cannot
// be interrupted; a pathological pattern with many quantifiers over a long
// string can overrun the timeout.
//
// Conversion (ToLua, FromLua, Results) maps unstructured JSON values to Lua
// and back. Integers stay int64, other numbers float64. Tables made from Go
// maps and slices remember which they were, so an empty one converts back to
// {} or []; an empty table a script built itself is resolved by hints, or
// else becomes nil and is left out of its parent object, as Karmada drops
// it. Results.DropEmpty converts as Karmada does when it has no reference
// object (AggregateStatus, ReflectStatus): every empty {} or [] below the
// top is left out, wherever it came from. Call arguments are converted lazily (see lazy.go), which keeps a call
// on a Deployment-sized object in the tens of microseconds.
//
// The kube library offers resourceAdd, getResourceQuantity,
// accuratePodRequirements and getPodDependencies with Karmada's contract.
package lua
