// Package interpreter answers the questions the control plane asks about a
// resource it does not otherwise understand: how many replicas it has and
// what each needs, how to give a member its share, which member-owned fields
// to keep, how to reflect, aggregate and judge status, and what it depends on.
//
// A Chain asks its layers in order and takes the first that has a rule for
// the object's kind and the operation:
//
//  1. ResourceInterpreterCustomizations (user Lua, watched live; package
//     customization),
//  2. interpreter webhooks (package webhook),
//  3. bundled Lua customizations for third-party kinds (package bundled),
//  4. native Go rules for built-in kinds (package native).
//
// Callers ask HookEnabled first and interpret only when it is true.
//
// Objects given to ReviseReplica, Retain (desired) and AggregateStatus are
// handed over: the result may be that object changed in place or share parts
// with it, so callers pass a DeepCopy when they keep the original. Observed
// objects and status items are only read and never shared with a result.
package interpreter
