package lua

import (
	"strconv"
	"strings"
	"unsafe"

	glua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/pm"
)

// gopher-lua's gsub copies the whole string once per match (quadratic, in
// one uninterruptible Go call) and its gmatch collects every match up front.
// These replacements take matches in batches from the same pattern matcher
// (pm), build the result in linear time and poll the guard between matches,
// while returning what gopher-lua returns, so Karmada scripts see no
// difference. One quirk is not kept: a count of 0 replaces nothing, as in Lua.

func bytesOf(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// matcher hands out the matches of a pattern one at a time, asking pm for
// them in growing batches: one pm.Find per match would parse the pattern
// again each time, one for all matches would hold them all in memory.
type matcher struct {
	L        *glua.LState
	pat      string
	src      []byte
	offset   int // where the next batch starts
	batch    []*pm.MatchData
	next     int // index in batch
	size     int
	anchored bool // "^" patterns match at the start only
	done     bool
}

func newMatcher(L *glua.LState, pat string, src []byte) *matcher {
	return &matcher{L: L, pat: pat, src: src, size: 8, anchored: strings.HasPrefix(pat, "^")}
}

// match returns the next match, or nil.
func (m *matcher) match() *pm.MatchData {
	if m.next == len(m.batch) {
		if m.done || m.offset > len(m.src) {
			return nil
		}
		mds, err := pm.Find(m.pat, m.src, m.offset, m.size)
		if err != nil {
			m.L.RaiseError("%s", err.Error())
		}
		m.batch, m.next = mds, 0
		m.done = m.anchored || len(mds) < m.size
		m.size = min(2*m.size, 1024)
		if len(mds) == 0 {
			return nil
		}
		last := mds[len(mds)-1]
		m.offset = max(last.Capture(0)+1, last.Capture(1))
	}
	md := m.batch[m.next]
	m.batch[m.next] = nil
	m.next++
	return md
}

// pollGuard lets long Go loops stop at the timeout like Lua code does.
func pollGuard(L *glua.LState) {
	if ctx := L.Context(); ctx != nil {
		select {
		case <-ctx.Done():
			L.RaiseError("%s", ctx.Err().Error())
		default:
		}
	}
}

func strGsub(L *glua.LState) int {
	str := L.CheckString(1)
	pat := L.CheckString(2)
	L.CheckTypes(3, glua.LTString, glua.LTTable, glua.LTFunction)
	repl := L.Get(3)
	limit := L.OptInt(4, -1)
	m := newMatcher(L, pat, bytesOf(str))

	var b strings.Builder
	count, prev := 0, 0
	for limit < 0 || count < limit {
		md := m.match()
		if md == nil {
			break
		}
		start, end := md.Capture(0), md.Capture(1)
		count++
		b.WriteString(str[prev:start])
		if r, ok := gsubReplacement(L, str, md, repl); ok {
			b.WriteString(r)
		} else {
			b.WriteString(str[start:end])
		}
		prev = end
		if b.Len() > maxStringBytes {
			raiseTooLong(L, "string.gsub", b.Len())
		}
		if count%256 == 0 {
			pollGuard(L)
		}
	}
	if count == 0 {
		L.SetTop(1)
		L.Push(glua.LNumber(0))
		return 2
	}
	b.WriteString(str[prev:])
	if b.Len() > maxStringBytes {
		raiseTooLong(L, "string.gsub", b.Len())
	}
	L.Push(glua.LString(b.String()))
	L.Push(glua.LNumber(count))
	return 2
}

// gsubReplacement returns the replacement for one match, or false to keep
// the matched text.
func gsubReplacement(L *glua.LState, str string, md *pm.MatchData, repl glua.LValue) (string, bool) {
	switch r := repl.(type) {
	case glua.LString:
		return expandReplacement(L, string(r), str, md), true
	case *glua.LTable:
		idx := 0
		if md.CaptureLength() > 2 {
			idx = 2
		}
		var v glua.LValue
		if md.IsPosCapture(idx) {
			v = L.GetTable(r, glua.LNumber(md.Capture(idx)))
		} else {
			v = L.GetField(r, str[md.Capture(idx):md.Capture(idx+1)])
		}
		if glua.LVIsFalse(v) {
			return "", false
		}
		return glua.LVAsString(v), true
	case *glua.LFunction:
		L.Push(r)
		nargs := 1
		if md.CaptureLength() > 2 {
			nargs = 0
			for i := 2; i < md.CaptureLength(); i += 2 {
				if md.IsPosCapture(i) {
					L.Push(glua.LNumber(md.Capture(i)))
				} else {
					L.Push(glua.LString(capture(L, md, str, i)))
				}
				nargs++
			}
		} else {
			L.Push(glua.LString(capture(L, md, str, 0)))
		}
		L.Call(nargs, 1)
		v := L.Get(-1)
		L.Pop(1)
		if glua.LVIsFalse(v) {
			return "", false
		}
		return glua.LVAsString(v), true
	}
	return "", false
}

// expandReplacement substitutes %0-%9 and %% in a gsub replacement string;
// like gopher-lua, any other %x stays as written.
func expandReplacement(L *glua.LState, repl, str string, md *pm.MatchData) string {
	if strings.IndexByte(repl, '%') < 0 {
		return repl
	}
	var b strings.Builder
	for i := 0; i < len(repl); i++ {
		c := repl[i]
		if c != '%' || i == len(repl)-1 {
			b.WriteByte(c)
			continue
		}
		i++
		switch d := repl[i]; {
		case d == '%':
			b.WriteByte('%')
		case d >= '0' && d <= '9':
			b.WriteString(capture(L, md, str, 2*int(d-'0')))
		default:
			b.WriteByte('%')
			b.WriteByte(d)
		}
	}
	return b.String()
}

// capture returns capture slot idx (2 × capture number) as text; %1 without
// captures is the whole match.
func capture(L *glua.LState, md *pm.MatchData, str string, idx int) string {
	if idx > 2 && idx >= md.CaptureLength() {
		L.RaiseError("invalid capture index")
	}
	if idx >= md.CaptureLength() && idx == 2 {
		idx = 0
	}
	if md.IsPosCapture(idx) {
		return strconv.Itoa(md.Capture(idx))
	}
	return str[md.Capture(idx):md.Capture(idx+1)]
}

func strGmatch(L *glua.LState) int {
	str := L.CheckString(1)
	pat := L.CheckString(2)
	// Report a malformed pattern at the call, as gopher-lua does.
	if _, err := pm.Find(pat, nil, 0, 1); err != nil {
		L.RaiseError("%s", err.Error())
	}
	m := newMatcher(L, pat, bytesOf(str))
	L.Push(L.NewFunction(func(L *glua.LState) int {
		md := m.match()
		if md == nil {
			return 0
		}
		start, end := md.Capture(0), md.Capture(1)
		if md.CaptureLength() == 2 {
			L.Push(glua.LString(str[start:end]))
			return 1
		}
		for i := 2; i < md.CaptureLength(); i += 2 {
			if md.IsPosCapture(i) {
				L.Push(glua.LNumber(md.Capture(i)))
			} else {
				L.Push(glua.LString(str[md.Capture(i):md.Capture(i+1)]))
			}
		}
		return md.CaptureLength()/2 - 1
	}))
	return 1
}
