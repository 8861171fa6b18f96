package certs

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
)

// Hash is a short digest of certificate material, for a pod-template
// annotation: when a component's certificate (or the CA it trusts) is
// replaced the annotation changes and its pods roll onto the new files.
// Order matters, and each input is length-prefixed so that moving bytes
// from one input to the next changes the digest too.
func Hash(pems ...[]byte) string {
	h := sha256.New()
	var n [8]byte
	for _, p := range pems {
		binary.BigEndian.PutUint64(n[:], uint64(len(p)))
		h.Write(n[:])
		h.Write(p)
	}
	// 64 bits tell one certificate from the next of the same component;
	// this is not a security boundary.
	return hex.EncodeToString(h.Sum(nil)[:8])
}
