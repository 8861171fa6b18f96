package lua

import (
	"errors"
	"strings"
	"sync"

	glua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/parse"
)

// Script is a Lua chunk that defines global functions (GetReplicas,
// ReviseReplica, ...). Name only labels errors, e.g. "my-customization/replicaResource".
type Script struct {
	Name string
	Code string
}

func (s Script) chunkName() string {
	if s.Name == "" {
		return "script"
	}
	return s.Name
}

// Compile parses and compiles a script without running it, for a quick
// syntax check (VM.Check also runs the chunk). Errors are *Error wrapping
// ErrSyntax, with the line (and column when the parser knows it).
func Compile(s Script) error {
	_, err := compile(s)
	return err
}

// compile turns a script into byte code.
func compile(s Script) (*glua.FunctionProto, error) {
	name := s.chunkName()
	chunk, err := parse.Parse(strings.NewReader(s.Code), name)
	if err != nil {
		return nil, syntaxError(name, err)
	}
	proto, err := glua.Compile(chunk, name)
	if err != nil {
		return nil, syntaxError(name, err)
	}
	// The main chunk is vararg, and gopher-lua builds a Lua 5.0 "arg" table
	// for it on every run although no code can name it (it is only a local
	// of nested vararg functions). Skipping it saves a table per call.
	proto.IsVarArg &^= glua.VarArgNeedsArg
	return proto, nil
}

func syntaxError(name string, err error) error {
	e := &Error{Script: name, Message: err.Error(), Err: ErrSyntax}
	var pe *parse.Error
	var ce *glua.CompileError
	switch {
	case errors.As(err, &pe):
		e.Line, e.Column = pe.Pos.Line, pe.Pos.Column
		e.Message = strings.TrimSpace(pe.Message)
		if pe.Token != "" {
			e.Message += " near '" + pe.Token + "'"
		}
		if pe.Pos.Line == parse.EOF {
			e.Line, e.Column = 0, 0
			e.Message += " at end of script"
		}
	case errors.As(err, &ce):
		e.Line, e.Message = ce.Line, ce.Message
	}
	return e
}

// program is a cached compilation result; failures are cached too so a broken
// script costs one parse, not one per call.
type program struct {
	proto *glua.FunctionProto
	// assigned lists the global names the script assigns (see
	// globalWrites), and namesG whether it uses _G; they decide whether
	// its environment may fall through to the shared globals.
	assigned []string
	namesG   bool
	err      error
}

// Instruction layout of gopher-lua's byte code: the opcode in the top 6
// bits, the Bx operand (a constant index for GETGLOBAL and SETGLOBAL) in the
// low 18.
const (
	opcodeShift = 26
	bxMask      = 1<<18 - 1
)

// globalWrites scans the byte code of proto and of every function nested in
// it for global assignments (SETGLOBAL names its global as a constant) and
// reads of _G, through which a script can assign a global under a computed
// name.
func globalWrites(proto *glua.FunctionProto) (assigned []string, namesG bool) {
	seen := map[string]bool{}
	var scan func(*glua.FunctionProto)
	scan = func(p *glua.FunctionProto) {
		for _, inst := range p.Code {
			op := int(inst >> opcodeShift)
			if op != glua.OP_SETGLOBAL && op != glua.OP_GETGLOBAL {
				continue
			}
			bx := int(inst & bxMask)
			if bx >= len(p.Constants) {
				continue
			}
			name, ok := p.Constants[bx].(glua.LString)
			if !ok {
				continue
			}
			switch {
			case op == glua.OP_GETGLOBAL:
				namesG = namesG || name == "_G"
			case !seen[string(name)]:
				seen[string(name)] = true
				assigned = append(assigned, string(name))
			}
		}
		for _, nested := range p.FunctionPrototypes {
			scan(nested)
		}
	}
	scan(proto)
	return assigned, namesG
}

// programCache maps a script (name and code, compared in full, so there are
// no hash collisions) to its byte code. Byte code is read-only and shared by
// all states.
type programCache struct {
	mu  sync.RWMutex
	m   map[Script]*program
	max int
}

func newProgramCache(max int) *programCache {
	return &programCache{m: make(map[Script]*program), max: max}
}

func (c *programCache) get(s Script) *program {
	c.mu.RLock()
	p, ok := c.m[s]
	c.mu.RUnlock()
	if ok {
		return p
	}
	proto, err := compile(s)
	p = &program{proto: proto, err: err}
	if err == nil {
		p.assigned, p.namesG = globalWrites(proto)
	}
	c.mu.Lock()
	if len(c.m) >= c.max {
		// Customizations change rarely; dropping an arbitrary entry keeps the
		// cache bounded without the bookkeeping of an LRU.
		for k := range c.m {
			delete(c.m, k)
			break
		}
	}
	c.m[s] = p
	c.mu.Unlock()
	return p
}
