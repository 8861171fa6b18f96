package lua

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Sentinel errors wrapped by *Error; test them with errors.Is.
var (
	// ErrSyntax: the script does not parse or compile.
	ErrSyntax = errors.New("syntax error")
	// ErrRuntime: the script raised a Lua error while running.
	ErrRuntime = errors.New("runtime error")
	// ErrTimeout: the call ran past its time limit. Errors carrying it also
	// match context.DeadlineExceeded.
	ErrTimeout = errors.New("execution timed out")
	// ErrMemoryLimit: the heap grew past the per-call memory limit.
	ErrMemoryLimit = errors.New("memory limit exceeded")
	// ErrNotDefined: the script does not define the requested global function.
	ErrNotDefined = errors.New("function not defined")
	// ErrConversion: an argument or result has no Lua or JSON equivalent, or
	// a result is not of the type the caller asked for.
	ErrConversion = errors.New("value conversion failed")
)

// Error describes a failure of one script: where it happened and why.
type Error struct {
	// Script is the script's name.
	Script string
	// Function is the global function that was called; empty when the error
	// happened while compiling or running the chunk itself.
	Function string
	// Line is the 1-based source line, 0 when unknown.
	Line int
	// Column is set for syntax errors only.
	Column int
	// Message is the bare message, without script name and line.
	Message string
	// Traceback is the Lua stack traceback of runtime errors, for debugging.
	Traceback string
	// Err is one of the sentinel errors above or the context's error.
	Err error

	// panicked marks Go code panicking inside the call; the state is dropped.
	panicked bool
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("lua script ")
	b.WriteString(strconv.Quote(e.Script))
	if e.Function != "" {
		b.WriteString(": ")
		b.WriteString(e.Function)
	}
	if e.Line > 0 {
		b.WriteString(": line ")
		b.WriteString(strconv.Itoa(e.Line))
		if e.Column > 0 {
			b.WriteString(", column ")
			b.WriteString(strconv.Itoa(e.Column))
		}
	}
	b.WriteString(": ")
	b.WriteString(e.Message)
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// splitPosition takes "chunk:12: message" apart; gopher-lua prefixes runtime
// errors raised in Lua code with the chunk name and line.
func splitPosition(chunk, msg string) (int, string) {
	rest, ok := strings.CutPrefix(msg, chunk+":")
	if !ok {
		return 0, msg
	}
	digits, text, ok := strings.Cut(rest, ": ")
	if !ok {
		return 0, msg
	}
	line, err := strconv.Atoi(digits)
	if err != nil {
		return 0, msg
	}
	return line, text
}

// conversionError builds the error for a value that cannot cross the Go/Lua
// boundary; path is a dotted field path, empty at the root.
func conversionError(path, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if path != "" {
		msg = path + ": " + msg
	}
	return &convError{msg: msg}
}

// convError matches ErrConversion without repeating its text, so callers can
// embed the message in their own.
type convError struct{ msg string }

func (e *convError) Error() string { return e.msg }

func (e *convError) Is(target error) bool { return target == ErrConversion }
