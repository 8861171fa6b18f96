// Package validation holds Karmada's validation rules for the policy types
// as pure functions returning field.ErrorList, so that every refusal names
// the field at fault. The handlers of the webhook call them; rules that the
// CRDs already express in CEL are checked here again, so that the message a
// user gets names the field whichever of the two refuses first.
package validation
