// Package overrides renders a resource template for one member cluster
// through OverridePolicies and ClusterOverridePolicies, as the binding
// controller does before wrapping the result in a Work. It is pure: the
// caller passes the template, the Cluster and the policies, and gets back a
// new object (the template is never changed) or an *Error naming the policy,
// rule, overrider and path that failed, with no partial result.
//
// The binding controller builds a Renderer per binding and calls Apply for
// each scheduled cluster; Matching lists the rules that would apply, for
// status and events; an *Error carries the failing policy for the
// ApplyOverridePolicyFailed event.
//
// # Which rules apply
//
// A policy selects a template when one of its resourceSelectors matches
// (apiVersion, kind, namespace if set, then name if set, else labelSelector
// if set) or when it has none. An OverridePolicy only ever sees templates of
// its own namespace, and cluster-scoped templates get none. A rule applies
// to a cluster when its targetCluster is absent or matches: exclude wins;
// labelSelector, fieldSelector (provider, region, zone with In/NotIn) and
// clusterNames must all hold. A policy without overrideRules acts as one
// rule made of the deprecated spec.targetCluster and spec.overriders.
//
// # Order, which decides who wins when two rules touch the same field
//
// This is Karmada's order (pkg/util/overridemanager):
//
//  1. Every ClusterOverridePolicy before every OverridePolicy, so the
//     namespace's own policies have the last word.
//  2. Within each kind, by implicit priority, least precise first, so the
//     most precise policy is applied last and wins: no resourceSelectors,
//     then a selector matching by apiVersion/kind only, then by
//     labelSelector, then by name. A policy's priority is that of its best
//     matching selector.
//  3. Equal priority: by policy name, ascending.
//  4. Within a policy, overrideRules in order.
//  5. Within a rule, by overrider kind: imageOverrider, commandOverrider,
//     argsOverrider, labelsOverrider, annotationsOverrider, fieldOverrider,
//     plaintext; each list in its own order. plaintext, the most general,
//     comes last, so it sees, and can correct, what the others did.
//
// # Overriders
//
// plaintext is RFC 6902 add/remove/replace on the object (remove and replace
// need the path to exist; add needs its parent), with evanphx/json-patch's
// negative array indices, which Karmada accepts.
//
// imageOverrider splits an image as [registry/]repository[:tag][@digest]
// with no implicit docker.io, and for add appends its value to the
// component, for replace sets it, for remove clears it (Karmada's
// semantics): adding registry "r.io" to "nginx" gives "r.io/nginx". The Tag
// component is the tag, or the digest when there is no tag; setting it
// leaves a single tag or digest, since a kept digest would pin the old
// image. Removing the Repository is an error rather than Karmada's
// unpullable result. Without a predicate it changes every container and init
// container of Pod, ReplicaSet, Deployment, DaemonSet, StatefulSet, Job and
// CronJob (matched by kind alone, like Karmada), and nothing in other kinds.
//
// commandOverrider and argsOverrider append to, or drop every occurrence of
// the given values from, the command or args of the containers (not init
// containers) with the given name, in the same kinds. A missing container is
// not an error.
//
// labelsOverrider and annotationsOverrider: add sets keys, replace changes
// only keys that exist, remove deletes keys; missing keys are not errors.
//
// fieldOverrider patches the JSON or YAML document held in a string field.
// JSON comes out exactly as Karmada writes it: the whole document
// re-marshalled compactly by evanphx/json-patch (keys in their order, no
// indentation or trailing newline, "<", ">" and "&" escaped), so that strings
// compared with Karmada's match. YAML differs from Karmada on purpose:
// Karmada converts the document to JSON and back, which sorts the keys and
// drops comments; here it is edited as a node tree, so key order and
// comments survive while the values are Karmada's.
//
// # Record
//
// The rendered object carries policy.karmada.io/applied-cluster-overrides
// and policy.karmada.io/applied-overrides, each a JSON list of
// {"policyName", "overriders"} with one entry per applied rule in the order
// applied, present only when something of that kind applied.
package overrides
