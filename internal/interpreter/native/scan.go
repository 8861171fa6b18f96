package native

import (
	"errors"
	"strconv"
)

// errScan reports JSON the fast scanner does not take; callers fall back to
// encoding/json, which either decodes it or explains what is wrong.
var errScan = errors.New("not a flat JSON object")

// scanInts reads the top-level fields of a JSON object and calls field
// for each: with the value when it is a whole number that fits int64, with
// isInt false otherwise (the value is skipped). field returning false stops
// the scan with errScan. Reflected statuses are small flat objects, and
// reading them this way costs a fraction of encoding/json.
func scanInts(data []byte, field func(key []byte, n int64, isInt bool) bool) error {
	s := scanner{data: data}
	s.space()
	if !s.eat('{') {
		return errScan
	}
	s.space()
	if s.eat('}') {
		return s.end()
	}
	for {
		s.space()
		key, ok := s.key()
		if !ok {
			return errScan
		}
		s.space()
		if !s.eat(':') {
			return errScan
		}
		s.space()
		n, isInt, ok := s.integer()
		if !ok || (!isInt && !s.skipValue(0)) || !field(key, n, isInt) {
			return errScan
		}
		s.space()
		if s.eat(',') {
			continue
		}
		if s.eat('}') {
			return s.end()
		}
		return errScan
	}
}

type scanner struct {
	data []byte
	pos  int
}

func (s *scanner) space() {
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

func (s *scanner) eat(c byte) bool {
	if s.pos < len(s.data) && s.data[s.pos] == c {
		s.pos++
		return true
	}
	return false
}

func (s *scanner) end() error {
	s.space()
	if s.pos != len(s.data) {
		return errScan
	}
	return nil
}

// key reads a string without escapes (keys with escapes go the slow way).
// The result points into the data.
func (s *scanner) key() ([]byte, bool) {
	if !s.eat('"') {
		return nil, false
	}
	start := s.pos
	for s.pos < len(s.data) {
		switch c := s.data[s.pos]; {
		case c == '"':
			k := s.data[start:s.pos]
			s.pos++
			return k, true
		case c == '\\' || c < 0x20:
			return nil, false
		}
		s.pos++
	}
	return nil, false
}

// integer reads a number if one starts here: isInt for a whole number that
// fits int64, ok false for a malformed number. Non-numbers are left alone.
func (s *scanner) integer() (n int64, isInt, ok bool) {
	start := s.pos
	if s.pos < len(s.data) && s.data[s.pos] == '-' {
		s.pos++
	}
	digits := s.pos
	for s.pos < len(s.data) && s.data[s.pos] >= '0' && s.data[s.pos] <= '9' {
		s.pos++
	}
	if s.pos == digits {
		s.pos = start
		return 0, false, start == digits || s.data[start] != '-'
	}
	if s.pos < len(s.data) {
		if c := s.data[s.pos]; c == '.' || c == 'e' || c == 'E' {
			s.pos = start // a fraction: skipValue reads it
			return 0, false, true
		}
	}
	if s.pos-digits > 18 {
		return 0, false, false // may not fit; such counters do not exist
	}
	for _, c := range s.data[digits:s.pos] {
		n = n*10 + int64(c-'0')
	}
	if s.data[start] == '-' {
		n = -n
	}
	return n, true, true
}

// skipValue steps over a string, literal, list or object.
func (s *scanner) skipValue(depth int) bool {
	if depth > 64 || s.pos >= len(s.data) {
		return false
	}
	switch c := s.data[s.pos]; c {
	case '"':
		return s.skipString()
	case '{', '[':
		return s.skipContainer(c, depth)
	case 't', 'f', 'n':
		return s.skipLiteral()
	default:
		return s.skipNumber()
	}
}

// skipString steps over the string starting here.
func (s *scanner) skipString() bool {
	s.pos++
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case '\\':
			s.pos += 2
			continue
		case '"':
			s.pos++
			return true
		}
		s.pos++
	}
	return false
}

// skipContainer steps over the object or list that open, the byte here,
// starts; depth is the nesting of the container.
func (s *scanner) skipContainer(open byte, depth int) bool {
	closing := byte('}')
	if open == '[' {
		closing = ']'
	}
	s.pos++
	s.space()
	if s.eat(closing) {
		return true
	}
	for {
		s.space()
		if open == '{' {
			if !s.skipValue(depth + 1) {
				return false
			}
			s.space()
			if !s.eat(':') {
				return false
			}
			s.space()
		}
		if !s.skipValue(depth + 1) {
			return false
		}
		s.space()
		if s.eat(',') {
			continue
		}
		return s.eat(closing)
	}
}

// skipLiteral steps over true, false or null.
func (s *scanner) skipLiteral() bool {
	for _, lit := range []string{"true", "false", "null"} {
		if len(s.data)-s.pos >= len(lit) && string(s.data[s.pos:s.pos+len(lit)]) == lit {
			s.pos += len(lit)
			return true
		}
	}
	return false
}

// skipNumber steps over the number starting here.
func (s *scanner) skipNumber() bool {
	start := s.pos
	for s.pos < len(s.data) && isNumberByte(s.data[s.pos]) {
		s.pos++
	}
	if s.pos == start {
		return false
	}
	_, err := strconv.ParseFloat(string(s.data[start:s.pos]), 64)
	return err == nil
}

// isNumberByte reports whether c can be part of a JSON number.
func isNumberByte(c byte) bool {
	return c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E' || (c >= '0' && c <= '9')
}
