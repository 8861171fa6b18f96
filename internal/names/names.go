// Package names derives the names Flotilla gives the objects it creates:
// execution namespaces, bindings and Works. They are part of the wire interface,
// since clients and tests look objects up by them, so they match Karmada's.
package names

import (
	"fmt"
	"hash/fnv"
	"strings"

	"k8s.io/apimachinery/pkg/util/rand"
)

// ExecutionSpacePrefix starts the name of every execution namespace.
const ExecutionSpacePrefix = "karmada-es-"

// ExecutionSpace is the namespace holding the Works for a member cluster.
func ExecutionSpace(cluster string) string {
	return ExecutionSpacePrefix + cluster
}

// ClusterOfExecutionSpace returns the member cluster an execution namespace
// belongs to, and false if the namespace is not an execution namespace.
func ClusterOfExecutionSpace(namespace string) (string, bool) {
	cluster, ok := strings.CutPrefix(namespace, ExecutionSpacePrefix)
	if !ok || cluster == "" {
		return "", false
	}
	return cluster, true
}

// IsReserved reports whether a namespace belongs to the control plane itself
// and so is never propagated to members.
func IsReserved(namespace string) bool {
	switch {
	case namespace == "karmada-system", namespace == "karmada-cluster":
		return true
	case strings.HasPrefix(namespace, ExecutionSpacePrefix), strings.HasPrefix(namespace, "kube-"):
		return true
	}
	return false
}

// Binding is the name of the (Cluster)ResourceBinding of a template. Colons,
// common in RBAC names, are not valid in object names, hence the dots.
func Binding(name, kind string) string {
	return strings.ToLower(strings.ReplaceAll(name, ":", ".") + "-" + kind)
}

// Work is the name of the Work carrying a template to a member cluster. The
// hash of namespace, name and kind keeps Works of same-named templates of
// different kinds or namespaces apart inside one execution namespace.
func Work(namespace, name, kind string) string {
	n := strings.ToLower(strings.ReplaceAll(name, ":", "."))
	key := n + "-" + kind
	if namespace != "" {
		key = namespace + "-" + key
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(strings.ToLower(key)))
	return n + "-" + rand.SafeEncodeString(fmt.Sprint(h.Sum32()))
}

// DerivedService is the Service a member gets for an imported Service.
func DerivedService(service string) string {
	return "derived-" + service
}
