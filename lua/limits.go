package lua

import (
	"strings"

	glua "github.com/yuin/gopher-lua"
)

// maxStringBytes caps the strings that one call of a library function may
// build. The memory guard only runs between Lua instructions, so a single
// string.rep("x", 1e12) must be refused before it allocates. Kubernetes
// objects are at most a few MiB, so legitimate scripts never come close.
const maxStringBytes = 16 << 20

func raiseTooLong(L *glua.LState, fn string, n int) {
	L.RaiseError("%s: result of %d bytes exceeds the %d MiB string limit", fn, n, maxStringBytes>>20)
}

// limitStringLibrary wraps the string functions whose output can be far
// larger than their input, and replaces gsub and gmatch (see patterns.go).
func limitStringLibrary(L *glua.LState, strlib *glua.LTable) {
	wrap := func(name string, check func(L *glua.LState)) {
		orig, ok := strlib.RawGetString(name).(*glua.LFunction)
		if !ok || !orig.IsG {
			return
		}
		next := orig.GFunction
		strlib.RawSetString(name, L.NewFunction(func(L *glua.LState) int {
			check(L)
			return next(L)
		}))
	}
	wrap("rep", checkRep)
	wrap("format", checkFormat)
	strlib.RawSetString("gsub", L.NewFunction(strGsub))
	strlib.RawSetString("gmatch", L.NewFunction(strGmatch))
	strlib.RawSetString("gfind", L.NewFunction(strGmatch))
	strlib.RawSetString("dump", L.NewFunction(disabled("string.dump")))
}

func checkRep(L *glua.LState) {
	s := L.CheckString(1)
	n := L.CheckInt(2)
	if n > 0 && len(s) > 0 && n > maxStringBytes/len(s) {
		raiseTooLong(L, "string.rep", len(s)*min(n, 1<<40/len(s)))
	}
}

// checkFormat bounds the output by the format string, the arguments and the
// widths and precisions of its conversions.
func checkFormat(L *glua.LState) {
	f := L.CheckString(1)
	size := len(f)
	for i := 2; i <= L.GetTop(); i++ {
		if s, ok := L.Get(i).(glua.LString); ok {
			size += len(s)
		} else {
			size += 32
		}
	}
	for i := 0; i < len(f); i++ {
		if f[i] != '%' {
			continue
		}
		i++
		for i < len(f) && strings.IndexByte("-+ #0", f[i]) >= 0 {
			i++
		}
		var width, precision int
		width, i = leadingNumber(f, i)
		if i < len(f) && f[i] == '.' {
			precision, i = leadingNumber(f, i+1)
		}
		size += width + precision
	}
	if size > maxStringBytes {
		raiseTooLong(L, "string.format", size)
	}
}

// leadingNumber reads the decimal number starting at f[i], capped, and
// returns it with the index after it.
func leadingNumber(f string, i int) (int, int) {
	n := 0
	for ; i < len(f) && f[i] >= '0' && f[i] <= '9'; i++ {
		n = min(n*10+int(f[i]-'0'), 1<<30)
	}
	return n, i
}

// limitConcat refuses table.concat results over the string limit; it sums
// the lengths before the original allocates anything.
func limitConcat(next glua.LGFunction) glua.LGFunction {
	return func(L *glua.LState) int {
		tb := L.CheckTable(1)
		sep := len(L.OptString(2, ""))
		size := 0
		for i, n := 1, tb.Len(); i <= n; i++ {
			switch v := tb.RawGetInt(i).(type) {
			case glua.LString:
				size += len(v)
			default:
				size += 24
			}
			size += sep
			if size > maxStringBytes {
				raiseTooLong(L, "table.concat", size)
			}
		}
		return next(L)
	}
}
