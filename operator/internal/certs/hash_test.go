package certs

import (
	"regexp"
	"testing"
)

func TestHash(t *testing.T) {
	cert, key, ca := []byte("-----BEGIN CERTIFICATE-----\nAAAA\n"), []byte("key"), []byte("ca")
	// Pinned: a new operator version computing other digests for the same
	// material would roll every component for nothing.
	const golden = "c3acbe9cd898c7ee"
	if got := Hash(cert, key, ca); got != golden {
		t.Errorf("Hash() = %q, want the pinned %q", got, golden)
	}

	tests := []struct {
		name string
		a, b [][]byte
		same bool
	}{
		{"same material", [][]byte{cert, key}, [][]byte{append([]byte{}, cert...), append([]byte{}, key...)}, true},
		{"one byte changed", [][]byte{cert, key}, [][]byte{cert, []byte("kez")}, false},
		{"order", [][]byte{cert, key}, [][]byte{key, cert}, false},
		{"bytes moved across inputs", [][]byte{[]byte("ab"), []byte("c")}, [][]byte{[]byte("a"), []byte("bc")}, false},
		{"an empty input counts", [][]byte{cert}, [][]byte{cert, nil}, false},
		{"no input and one empty input", nil, [][]byte{nil}, false},
	}
	hexOf16 := regexp.MustCompile(`^[0-9a-f]{16}$`)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := Hash(tt.a...), Hash(tt.b...)
			if (a == b) != tt.same {
				t.Errorf("Hash(a) = %s, Hash(b) = %s; want equal: %v", a, b, tt.same)
			}
			for _, h := range []string{a, b} {
				if !hexOf16.MatchString(h) {
					t.Errorf("Hash() = %q, want 16 hex digits", h)
				}
			}
		})
	}
}
