// Package crd holds Flotilla's generated CustomResourceDefinitions, embedded so
// that the local federation, the operator and tests install exactly what
// `make manifests` produced.
package crd

import "embed"

// Bases holds bases/*.yaml, one CRD per file: the API a federation's API
// server serves.
//
//go:embed bases/*.yaml
var Bases embed.FS

// Operator holds the CRDs of operator/ (<group>_<plural>.yaml, not the
// kustomization.yaml beside them): the operator's own API (Karmada), served
// by the host cluster the operator runs on, never by a federation.
//
//go:embed operator/*_*.yaml
var Operator embed.FS
