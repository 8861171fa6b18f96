// Package detector is the resource detector, the first step of
// propagation: it watches every resource type the control plane serves,
// finds the PropagationPolicy or ClusterPropagationPolicy that propagates
// each resource template, claims the template for it and writes the
// template's ResourceBinding (namespaced template) or ClusterResourceBinding
// (cluster-scoped template), which the scheduler then places.
//
// Resource types come from discovery (preferred versions), refreshed
// periodically and whenever a CustomResourceDefinition changes; each gets a
// dynamic informer, started and stopped as types come and go. Exactly what
// Karmada leaves out is left out: Karmada's own API groups (cluster, policy,
// work, config, networking, autoscaling, remedy and apps .karmada.io, not
// other groups that end in .karmada.io), events and coordination.k8s.io/v1
// Leases; so are types that cannot be listed, watched and patched, the
// --skipped-propagating-apis list, and objects in reserved or skipped
// namespaces. Informer events and
// policy changes put template keys on one work queue served by several
// workers.
//
// Each reconcile is level-based: it recomputes, from the template and the
// policies in the caches, which policy claims the template
// (policymatch.Decide: explicit priority, then implicit priority, then name;
// a PropagationPolicy before a ClusterPropagationPolicy; a claim kept unless
// a policy with preemption Always outranks it), then makes the claim labels
// and annotations and the binding say so. A template whose policy is gone or
// no longer selects it is released: its claim metadata and its binding's are
// removed and the binding is kept, as in Karmada, until the template goes or
// another policy claims it. Bindings are owned by their templates, so the
// control plane's garbage collector removes them with the template.
//
// A binding already holding what the detector would write is not written
// again, and templates are never copied whole: at thousands of templates the
// detector's cost is its API writes and its caches.
package detector
