package overrides

import (
	"fmt"
	"strconv"
	"strings"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
)

// pointer is a parsed JSON pointer (RFC 6901): its reference tokens, with ~1
// and ~0 already decoded.
type pointer []string

func parsePointer(s string) (pointer, error) {
	if s == "" {
		return pointer{}, nil
	}
	if s[0] != '/' {
		return nil, fmt.Errorf("JSON pointer %q must start with /", s)
	}
	toks := strings.Split(s[1:], "/")
	for i, t := range toks {
		if strings.IndexByte(t, '~') < 0 {
			continue
		}
		u, err := unescapeToken(t)
		if err != nil {
			return nil, fmt.Errorf("JSON pointer %q: %w", s, err)
		}
		toks[i] = u
	}
	return toks, nil
}

// unescapeToken decodes ~1 and ~0. Any other use of ~ is an error, as
// RFC 6901 requires, so a typo is reported rather than matching nothing.
func unescapeToken(t string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(t); i++ {
		if t[i] != '~' {
			b.WriteByte(t[i])
			continue
		}
		if i+1 == len(t) || (t[i+1] != '0' && t[i+1] != '1') {
			return "", fmt.Errorf("token %q: ~ must be followed by 0 or 1", t)
		}
		if t[i+1] == '0' {
			b.WriteByte('~')
		} else {
			b.WriteByte('/')
		}
		i++
	}
	return b.String(), nil
}

// prefix re-encodes the first n tokens, for error messages.
func (p pointer) prefix(n int) string {
	if n == 0 {
		return "the document root"
	}
	var b strings.Builder
	for _, t := range p[:n] {
		b.WriteByte('/')
		b.WriteString(strings.NewReplacer("~", "~0", "/", "~1").Replace(t))
	}
	return b.String()
}

// get returns the value p points at inside doc.
func (p pointer) get(doc any) (any, error) {
	cur := doc
	for i, tok := range p {
		switch n := cur.(type) {
		case map[string]any:
			v, ok := n[tok]
			if !ok {
				return nil, fmt.Errorf("no key %q at %s", tok, p.prefix(i))
			}
			cur = v
		case []any:
			idx, err := arrayIndex(tok, len(n), false)
			if err != nil {
				return nil, fmt.Errorf("at %s: %w", p.prefix(i), err)
			}
			cur = n[idx]
		default:
			return nil, fmt.Errorf("%s is %s, not an object or array", p.prefix(i), typeName(cur))
		}
	}
	return cur, nil
}

// patch applies one RFC 6902 add, remove or replace to obj, in place. The
// root cannot be replaced: it is the object being rendered.
func (p pointer) patch(obj map[string]any, op policyv1alpha1.OverriderOperator, value any) error {
	if len(p) == 0 {
		return fmt.Errorf("%s the whole object is not allowed", op)
	}
	_, err := p.patchAt(obj, 0, op, value)
	return err
}

// patchAt applies the operation below node, which sits at p[:i], and returns
// the node to store back in its parent: inserting into or removing from an
// array makes a new slice.
func (p pointer) patchAt(node any, i int, op policyv1alpha1.OverriderOperator, value any) (any, error) {
	tok := p[i]
	last := i == len(p)-1
	switch n := node.(type) {
	case map[string]any:
		cur, ok := n[tok]
		if last {
			switch op {
			case policyv1alpha1.OverriderOpAdd:
				n[tok] = value
			case policyv1alpha1.OverriderOpReplace:
				if !ok {
					return nil, fmt.Errorf("replace: no key %q at %s", tok, p.prefix(i))
				}
				n[tok] = value
			case policyv1alpha1.OverriderOpRemove:
				if !ok {
					return nil, fmt.Errorf("remove: no key %q at %s", tok, p.prefix(i))
				}
				delete(n, tok)
			default:
				return nil, fmt.Errorf("unknown operator %q", op)
			}
			return n, nil
		}
		if !ok {
			return nil, fmt.Errorf("%s: no key %q at %s", op, tok, p.prefix(i))
		}
		child, err := p.patchAt(cur, i+1, op, value)
		if err != nil {
			return nil, err
		}
		n[tok] = child
		return n, nil
	case []any:
		if last {
			return p.patchArray(n, i, op, value)
		}
		idx, err := arrayIndex(tok, len(n), false)
		if err != nil {
			return nil, fmt.Errorf("%s: at %s: %w", op, p.prefix(i), err)
		}
		child, err := p.patchAt(n[idx], i+1, op, value)
		if err != nil {
			return nil, err
		}
		n[idx] = child
		return n, nil
	default:
		return nil, fmt.Errorf("%s: %s is %s, not an object or array", op, p.prefix(i), typeName(node))
	}
}

func (p pointer) patchArray(n []any, i int, op policyv1alpha1.OverriderOperator, value any) (any, error) {
	tok := p[i]
	switch op {
	case policyv1alpha1.OverriderOpAdd:
		if tok == "-" {
			return append(n, value), nil
		}
		idx, err := arrayIndex(tok, len(n), true)
		if err != nil {
			return nil, fmt.Errorf("add: at %s: %w", p.prefix(i), err)
		}
		out := make([]any, 0, len(n)+1)
		out = append(out, n[:idx]...)
		out = append(out, value)
		return append(out, n[idx:]...), nil
	case policyv1alpha1.OverriderOpReplace:
		idx, err := arrayIndex(tok, len(n), false)
		if err != nil {
			return nil, fmt.Errorf("replace: at %s: %w", p.prefix(i), err)
		}
		n[idx] = value
		return n, nil
	case policyv1alpha1.OverriderOpRemove:
		idx, err := arrayIndex(tok, len(n), false)
		if err != nil {
			return nil, fmt.Errorf("remove: at %s: %w", p.prefix(i), err)
		}
		out := make([]any, 0, len(n)-1)
		out = append(out, n[:idx]...)
		return append(out, n[idx+1:]...), nil
	default:
		return nil, fmt.Errorf("unknown operator %q", op)
	}
}

// arrayIndex resolves an array token against an array of length n. Negative
// indices count from the end, as in evanphx/json-patch (which Karmada uses),
// so policies written for Karmada keep working. forAdd allows the index one
// past the end.
func arrayIndex(tok string, n int, forAdd bool) (int, error) {
	idx, err := strconv.Atoi(tok)
	if err != nil {
		return 0, fmt.Errorf("%q is not an array index", tok)
	}
	size := n
	if forAdd {
		size = n + 1
	}
	if idx < 0 {
		idx += size
	}
	if idx < 0 || idx >= size {
		return 0, fmt.Errorf("index %s out of range for an array of %d", tok, n)
	}
	return idx, nil
}

// typeName names a JSON value's type with its article, for messages.
func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case int64, float64:
		return "a number"
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	default:
		return fmt.Sprintf("a %T", v)
	}
}
