package nodeagent

import (
	"cmp"
	"path"
	"slices"
	"strings"
)

// expand replaces each $(NAME) in s by lookup(NAME), as Kubernetes does in a
// container's env values, command and args: $$ stands for a literal $, and a
// reference to an undefined name, or one left open, stays as written. The
// kubelet's own function (k8s.io/kubernetes/third_party/forked/golang/expansion)
// cannot be imported from this module, hence this one.
func expand(s string, lookup func(name string) (string, bool)) string {
	if !strings.Contains(s, "$") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		switch next := s[i+1]; next {
		case '$':
			b.WriteByte('$')
			i++
		case '(':
			end := strings.IndexByte(s[i+2:], ')')
			if end < 0 {
				// Unterminated: the "$(" is literal and the rest is read on.
				b.WriteString("$(")
				i++
				continue
			}
			name := s[i+2 : i+2+end]
			if value, ok := lookup(name); ok {
				b.WriteString(value)
			} else {
				b.WriteString("$(" + name + ")")
			}
			i += 2 + end
		default:
			b.WriteByte('$')
			b.WriteByte(next)
			i++
		}
	}
	return b.String()
}

// pathMapping maps a container path (a volumeMount's mountPath) to the
// directory or file on this machine that holds the volume, subPath included.
type pathMapping struct {
	container string
	host      string
}

// pathRewriter rewrites container paths in strings to where the volumes
// really are. The processes of every pod share this machine's filesystem, so
// a flag like --cert-file=/etc/pki/tls.crt must name the file under the
// pod's volume directory instead.
type pathRewriter []pathMapping

// newPathRewriter orders mappings longest container path first, so that a
// mount nested inside another one wins. A mount at "/" is left out: it would
// rewrite every absolute path.
func newPathRewriter(mappings []pathMapping) pathRewriter {
	var r pathRewriter
	for _, m := range mappings {
		m.container = path.Clean(m.container)
		if m.container == "/" || !path.IsAbs(m.container) {
			continue
		}
		r = append(r, m)
	}
	slices.SortStableFunc(r, func(a, b pathMapping) int { return cmp.Compare(len(b.container), len(a.container)) })
	return r
}

// rewrite replaces every occurrence of a mapped container path in s, or of a
// path below one, by the host path. An occurrence counts only where a path can
// start (the start of s or after a character that cannot be part of a path,
// such as '=', ',', ':' or a space) and where the path's component ends (end
// of s, '/', or such a character): /etc/app does not match /etc/apps or
// /opt/etc/app.
func (r pathRewriter) rewrite(s string) string {
	if len(r) == 0 || !strings.Contains(s, "/") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		if s[i] == '/' && (i == 0 || !isPathByte(s[i-1])) {
			if m, ok := r.match(s[i:]); ok {
				b.WriteString(m.host)
				i += len(m.container)
				continue
			}
		}
		b.WriteByte(s[i])
		i++
	}
	return b.String()
}

func (r pathRewriter) match(s string) (pathMapping, bool) {
	for _, m := range r {
		rest, ok := strings.CutPrefix(s, m.container)
		if ok && (rest == "" || rest[0] == '/' || !isPathByte(rest[0])) {
			return m, true
		}
	}
	return pathMapping{}, false
}

// isPathByte reports whether c may be part of a path component or separate
// components.
func isPathByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '.' || c == '-' || c == '_' || c == '/' || c == '~' || c == '+'
}
