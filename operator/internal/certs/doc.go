// Package certs is the certificate authority of the Flotilla operator. It
// decides which certificates one control-plane instance needs (Plan), issues
// them (NewCA, LoadCA, CA.Issue, NewServiceAccountKey), and decides when a
// stored certificate must be replaced (Due, NeedsReissue).
//
// Everything here computes bytes and answers; nothing reads or writes the API.
// The controller keeps the PEM material in Secrets, and calls this package to
// learn what to write:
//
//	for _, spec := range certs.Plan(params) {
//		stored := keyPairFromSecret(spec.ID)
//		if ok, reason := certs.NeedsReissue(stored, spec, cas[spec.Signer], now, 0); ok {
//			// issue: certs.NewCA(spec.CAOptions()) for a CA, cas[spec.Signer].Issue(spec.Request) otherwise
//		}
//	}
//
// Plan lists CAs before the certificates they sign, so one pass in order
// leaves every signer ready before it is needed.
package certs
