// Package eviction is what the failover controllers share: taking a
// cluster out of a binding's placement with a graceful eviction task, and
// deciding when such a task is done.
package eviction

import (
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
)

// DefaultTimeout is how long an evicted copy is kept at most when neither
// the task nor the policy says (karmada-controller-manager's
// --graceful-eviction-timeout).
const DefaultTimeout = 10 * time.Minute

// ConflictRetry is how soon a controller comes back to a binding whose
// write lost a race: bindings change all the time (their status), so soon.
const ConflictRetry = 100 * time.Millisecond

// Task is what a producer says about one eviction.
type Task struct {
	Producer  string
	Reason    string
	Message   string
	PurgeMode policyv1alpha1.PurgeMode
	// GracePeriodSeconds overrides the controller's timeout.
	GracePeriodSeconds *int32
	// SuppressDeletion true keeps the evicted copy until a user sets it
	// false (purge mode Never).
	SuppressDeletion *bool
	// PreservedLabelState is carried to the replacement's labels.
	PreservedLabelState map[string]string
}

// Evict takes cluster out of spec.clusters and, unless the cluster is
// already being evicted, records a graceful eviction task for it with the
// replicas it had (and, with a preserved state, the clusters the workload
// was on). It reports whether
// spec changed; a cluster not in spec.clusters changes nothing.
func Evict(spec *workv1alpha2.ResourceBindingSpec, cluster string, t Task, now metav1.Time) bool {
	i := slices.IndexFunc(spec.Clusters, func(c workv1alpha2.TargetCluster) bool { return c.Name == cluster })
	if i < 0 {
		return false
	}
	// The clusters before the failover say where the preserved state is
	// not injected; as in Karmada, they are recorded only with a state.
	var before []string
	if len(t.PreservedLabelState) > 0 {
		before = make([]string, len(spec.Clusters))
		for j, c := range spec.Clusters {
			before[j] = c.Name
		}
	}
	evicted := spec.Clusters[i]
	spec.Clusters = slices.Delete(slices.Clone(spec.Clusters), i, i+1)
	if Evicting(spec, cluster) {
		return true
	}
	task := workv1alpha2.GracefulEvictionTask{
		FromCluster:            cluster,
		PurgeMode:              t.PurgeMode,
		Reason:                 t.Reason,
		Message:                t.Message,
		Producer:               t.Producer,
		GracePeriodSeconds:     t.GracePeriodSeconds,
		SuppressDeletion:       t.SuppressDeletion,
		PreservedLabelState:    t.PreservedLabelState,
		ClustersBeforeFailover: before,
		CreationTimestamp:      &now,
	}
	if evicted.Replicas > 0 {
		task.Replicas = &evicted.Replicas
	}
	spec.GracefulEvictionTasks = append(spec.GracefulEvictionTasks, task)
	return true
}

// Remove takes cluster out of spec.clusters without a task: the copy there
// goes at once (the GracefulEviction gate off). It reports whether spec
// changed.
func Remove(spec *workv1alpha2.ResourceBindingSpec, cluster string) bool {
	n := len(spec.Clusters)
	spec.Clusters = slices.DeleteFunc(slices.Clone(spec.Clusters), func(c workv1alpha2.TargetCluster) bool { return c.Name == cluster })
	return len(spec.Clusters) != n
}

// Evicting reports whether spec has an eviction task for cluster.
func Evicting(spec *workv1alpha2.ResourceBindingSpec, cluster string) bool {
	return slices.ContainsFunc(spec.GracefulEvictionTasks, func(t workv1alpha2.GracefulEvictionTask) bool { return t.FromCluster == cluster })
}

// Template stands for the binding's resource template in events, built
// from spec.resource without reading the template.
func Template(spec *workv1alpha2.ResourceBindingSpec) *unstructured.Unstructured {
	ref := spec.Resource
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(ref.APIVersion)
	u.SetKind(ref.Kind)
	u.SetNamespace(ref.Namespace)
	u.SetName(ref.Name)
	u.SetUID(ref.UID)
	return u
}
