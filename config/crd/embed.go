// Package crd holds Flotilla's generated CustomResourceDefinitions, embedded so
// that the local federation, the operator and tests install exactly what
// `make manifests` produced.
package crd

import "embed"

// Bases holds bases/*.yaml, one CRD per file.
//
//go:embed bases/*.yaml
var Bases embed.FS
