// Package webhook holds the admission webhook's configurations, generated
// from the markers in components/webhook, and the conversion stanzas of the
// binding CRDs, embedded so that the local federation and tests register
// exactly what `make manifests` produced.
package webhook

import "embed"

// Manifests holds manifests.yaml: MutatingWebhookConfiguration
// mutating-config and ValidatingWebhookConfiguration validating-config,
// pointing at service karmada-webhook in karmada-system, port 443.
//
//go:embed manifests.yaml
var Manifests []byte

// Conversion holds conversion/*.yaml: the conversion stanza of each CRD
// whose versions the webhook's /convert converts, as a CRD patch.
//
//go:embed conversion/*.yaml
var Conversion embed.FS
