package overrides

import (
	"fmt"
	"strings"
)

// imageRef is a container image reference split the way Karmada's image
// parser splits it: [registry/]repository[:tag][@digest]. There is no
// implicit docker.io: "nginx" has an empty registry, so adding a registry
// prepends one.
type imageRef struct {
	registry   string
	repository string
	tag        string
	digest     string
}

func parseImage(s string) (imageRef, error) {
	var r imageRef
	if s == "" {
		return r, fmt.Errorf("empty image")
	}
	name := s
	if i := strings.IndexByte(name, '@'); i >= 0 {
		r.digest = name[i+1:]
		name = name[:i]
		if !validDigest(r.digest) {
			return r, fmt.Errorf("image %q: invalid digest %q", s, r.digest)
		}
	}
	// A colon after the last slash starts the tag; one before it is a
	// registry port (localhost:5000/nginx).
	if i := strings.LastIndexByte(name, ':'); i > strings.LastIndexByte(name, '/') {
		r.tag = name[i+1:]
		name = name[:i]
		if !validTag(r.tag) {
			return r, fmt.Errorf("image %q: invalid tag %q", s, r.tag)
		}
	}
	// The first segment is a registry only if it looks like a host, the rule
	// of the distribution reference library.
	if i := strings.IndexByte(name, '/'); i >= 0 {
		if first := name[:i]; strings.ContainsAny(first, ".:") || first == "localhost" {
			r.registry = first
			name = name[i+1:]
		}
	}
	r.repository = name
	if !validRepository(r.repository) {
		return r, fmt.Errorf("image %q: invalid repository %q", s, r.repository)
	}
	return r, nil
}

func (r imageRef) String() string {
	n := len(r.registry) + len(r.repository) + len(r.tag) + len(r.digest) + 3
	var b strings.Builder
	b.Grow(n)
	if r.registry != "" {
		b.WriteString(r.registry)
		b.WriteByte('/')
	}
	b.WriteString(r.repository)
	if r.tag != "" {
		b.WriteByte(':')
		b.WriteString(r.tag)
	}
	if r.digest != "" {
		b.WriteByte('@')
		b.WriteString(r.digest)
	}
	return b.String()
}

// tagOrDigest is what the Tag component means: the tag when there is one,
// else the digest (Karmada gives the tag priority the same way).
func (r imageRef) tagOrDigest() string {
	if r.tag != "" {
		return r.tag
	}
	return r.digest
}

// setTagOrDigest makes v the image's only tag or digest. A digest would pin
// the old image and silently defeat a new tag, so setting one drops the other.
// "@sha256:..." and "sha256:..." are digests; anything else must be a tag.
func (r *imageRef) setTagOrDigest(v string) error {
	v = strings.TrimPrefix(v, "@")
	switch {
	case strings.IndexByte(v, ':') >= 0:
		if !validDigest(v) {
			return fmt.Errorf("invalid digest %q", v)
		}
		r.tag, r.digest = "", v
	default:
		if !validTag(v) {
			return fmt.Errorf("invalid tag %q", v)
		}
		r.tag, r.digest = v, ""
	}
	return nil
}

// removeTagOrDigest removes the tag, or the digest when there is no tag, as
// Karmada does.
func (r *imageRef) removeTagOrDigest() {
	if r.tag != "" {
		r.tag = ""
		return
	}
	r.digest = ""
}

// validTag follows the distribution grammar: [\w][\w.-]{0,127}.
func validTag(t string) bool {
	if t == "" || len(t) > 128 {
		return false
	}
	for i := 0; i < len(t); i++ {
		c := t[i]
		if isAlnum(c) || c == '_' || (i > 0 && (c == '.' || c == '-')) {
			continue
		}
		return false
	}
	return true
}

// validDigest checks algorithm:encoded loosely: a lower-case algorithm and
// at least a few hex-ish characters, enough to reject typos like "sha256".
func validDigest(d string) bool {
	alg, enc, ok := strings.Cut(d, ":")
	if !ok || alg == "" || len(enc) < 32 {
		return false
	}
	return allBytes(alg, isDigestAlgorithmByte) && allBytes(enc, isDigestEncodedByte)
}

// validRepository accepts slash-separated path components of lower-case
// letters, digits and the separators . _ -, which is what registries accept.
func validRepository(r string) bool {
	if r == "" {
		return false
	}
	for rest := r; ; {
		comp, after, more := strings.Cut(rest, "/")
		if comp == "" || !isLowerAlnum(comp[0]) || !isLowerAlnum(comp[len(comp)-1]) {
			return false
		}
		if !allBytes(comp, isRepositoryByte) {
			return false
		}
		if !more {
			return true
		}
		rest = after
	}
}

// allBytes reports whether every byte of s satisfies ok.
func allBytes(s string, ok func(byte) bool) bool {
	for i := 0; i < len(s); i++ {
		if !ok(s[i]) {
			return false
		}
	}
	return true
}

func isDigestAlgorithmByte(c byte) bool {
	return isLowerAlnum(c) || c == '+' || c == '.' || c == '_' || c == '-'
}

func isDigestEncodedByte(c byte) bool { return isAlnum(c) || c == '=' || c == '_' || c == '-' }

func isRepositoryByte(c byte) bool { return isLowerAlnum(c) || c == '.' || c == '_' || c == '-' }

func isLowerAlnum(c byte) bool { return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' }

func isAlnum(c byte) bool { return isLowerAlnum(c) || c >= 'A' && c <= 'Z' }
