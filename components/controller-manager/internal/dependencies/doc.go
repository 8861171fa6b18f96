// Package dependencies is the dependencies distributor: it makes the objects a
// workload references (ConfigMaps, Secrets, claims, service accounts, or
// whatever the resource interpreter's GetDependencies names) follow the
// workload to the member clusters it is scheduled to, as Karmada's
// propagateDeps does.
//
// For every ResourceBinding or ClusterResourceBinding with
// spec.propagateDeps (the dependent binding) it reads the template, asks the interpreter for its dependencies, records
// them as JSON in the binding's resourcebinding.karmada.io/dependencies
// annotation and, for every dependency that exists, makes sure of an
// attached ResourceBinding named <name>-<kind> in the dependency's namespace
// whose spec.requiredBy holds a snapshot of the dependent binding and its
// spec.clusters. The binding controller renders Works for the union of an
// attached binding's own clusters and those of its requiredBy, so the
// dependency lands wherever its dependents are.
//
// An attached binding the distributor creates carries
// binding.karmada.io/managed-by, is owned by the dependency object (the
// garbage collector removes it with the dependency) and has no placement,
// so the scheduler leaves it alone. Every attached binding, created here or
// not, is labelled resourcebinding.karmada.io/depended-by-<hash> with the
// permanent id of each dependent binding, <hash> being
// SafeEncodeString(decimal(fnv32a("<namespace>/<name>"))) of the dependent
// binding, so a dependent finds its attached bindings through an index.
//
// A dependency that already has its own binding (a policy claims it) only
// gets the requiredBy entry and the label: its placement and settings stay
// the policy's. The conflictResolution and preserveResourcesOnDeletion of a
// binding the distributor owns are resolved over its dependents as Karmada
// does (any Overwrite wins, any true wins), and a DependencyPolicyConflict
// event on it says which fields they disagree on, or disagree with the
// dependency's own policy, in Karmada's words ("ConflictResolution
// conflicted (Overwrite vs Abort)"). A dependent whose policy was deleted
// (released: it keeps its spec and its place in requiredBy) has no say
// while a claimed dependent has one, so deleting a policy can end a
// conflict.
//
// The controller is level-based: each reconcile recomputes the attached
// bindings of one dependent from the current objects and writes only what
// differs. Dependents are requeued when their dependencies (ConfigMaps,
// Secrets, PersistentVolumeClaims, ServiceAccounts, Services and
// EndpointSlices of the control plane)
// appear, change or go, through an index of the dependencies annotation, and
// when an attached binding is deleted. When a dependent binding is deleted,
// or propagateDeps is turned off, or the workload no longer references a
// dependency, its requiredBy entry goes; an attached binding the
// distributor owns is deleted once no entry remains. The finalizer
// karmada.io/binding-dependencies-distributor keeps the dependent binding
// until that cleanup is done; the binding controller's finalizer is its
// own, so each controller releases the binding independently.
//
// A ClusterResourceBinding is a dependent like a ResourceBinding (its
// requiredBy entries have no namespace): the built-in rules name no
// dependencies of cluster-scoped templates, but a user's customization
// may, each naming its dependency's namespace; a namespaced dependency
// without one is skipped.
package dependencies
