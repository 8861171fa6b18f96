package conversion

import (
	"encoding/json"
	"fmt"

	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
)

// PreservedAnnotation carries, on a binding read as v1alpha1, the v1alpha2
// fields that v1alpha1 cannot express (placement, components, uid, ...), so
// that a v1alpha1 client that reads, changes and writes back a binding
// loses none of them. It never appears on a v1alpha2 object.
const PreservedAnnotation = "work.flotilla.io/v1alpha2-binding"

// preserved is what PreservedAnnotation holds.
type preserved struct {
	Spec   workv1alpha2.ResourceBindingSpec   `json:"spec"`
	Status workv1alpha2.ResourceBindingStatus `json:"status,omitempty"`
}

// Down converts the spec and status of a v1alpha2 binding to v1alpha1, and
// returns the annotation value that keeps the rest.
func Down(spec *workv1alpha2.ResourceBindingSpec, status *workv1alpha2.ResourceBindingStatus) (workv1alpha1.ResourceBindingSpec, workv1alpha1.ResourceBindingStatus, string, error) {
	out := workv1alpha1.ResourceBindingSpec{
		Resource: workv1alpha1.ObjectReference{
			APIVersion:      spec.Resource.APIVersion,
			Kind:            spec.Resource.Kind,
			Namespace:       spec.Resource.Namespace,
			Name:            spec.Resource.Name,
			ResourceVersion: spec.Resource.ResourceVersion,
			Replicas:        spec.Replicas,
		},
	}
	if spec.ReplicaRequirements != nil && len(spec.ReplicaRequirements.ResourceRequest) > 0 {
		out.Resource.ReplicaResourceRequirements = spec.ReplicaRequirements.ResourceRequest.DeepCopy()
	}
	for _, c := range spec.Clusters {
		out.Clusters = append(out.Clusters, workv1alpha1.TargetCluster{Name: c.Name, Replicas: c.Replicas})
	}
	outStatus := workv1alpha1.ResourceBindingStatus{}
	for _, c := range status.Conditions {
		outStatus.Conditions = append(outStatus.Conditions, *c.DeepCopy())
	}
	for _, item := range status.AggregatedStatus {
		outStatus.AggregatedStatus = append(outStatus.AggregatedStatus, workv1alpha1.AggregatedStatusItem{
			ClusterName:    item.ClusterName,
			Status:         item.Status.DeepCopy(),
			Applied:        item.Applied,
			AppliedMessage: item.AppliedMessage,
		})
	}
	kept, err := json.Marshal(preserved{Spec: *spec, Status: *status})
	if err != nil {
		return out, outStatus, "", fmt.Errorf("keeping the v1alpha2 fields: %w", err)
	}
	return out, outStatus, string(kept), nil
}

// Up converts the spec and status of a v1alpha1 binding to v1alpha2. kept
// is the PreservedAnnotation it carried, if any: the fields v1alpha1 does
// not have come from it, the fields it has from the v1alpha1 object.
func Up(spec *workv1alpha1.ResourceBindingSpec, status *workv1alpha1.ResourceBindingStatus, kept string) (workv1alpha2.ResourceBindingSpec, workv1alpha2.ResourceBindingStatus, error) {
	var base preserved
	if kept != "" {
		if err := json.Unmarshal([]byte(kept), &base); err != nil {
			return base.Spec, base.Status, fmt.Errorf("annotation %s: %w", PreservedAnnotation, err)
		}
	}
	out := base.Spec
	out.Resource.APIVersion = spec.Resource.APIVersion
	out.Resource.Kind = spec.Resource.Kind
	out.Resource.Namespace = spec.Resource.Namespace
	out.Resource.Name = spec.Resource.Name
	out.Resource.ResourceVersion = spec.Resource.ResourceVersion
	out.Replicas = spec.Resource.Replicas
	switch {
	case len(spec.Resource.ReplicaResourceRequirements) > 0:
		if out.ReplicaRequirements == nil {
			out.ReplicaRequirements = &workv1alpha2.ReplicaRequirements{}
		}
		out.ReplicaRequirements.ResourceRequest = spec.Resource.ReplicaResourceRequirements.DeepCopy()
	case out.ReplicaRequirements != nil:
		out.ReplicaRequirements.ResourceRequest = nil
		if out.ReplicaRequirements.NodeClaim == nil && out.ReplicaRequirements.PriorityClassName == "" && out.ReplicaRequirements.Namespace == "" {
			out.ReplicaRequirements = nil
		}
	}
	components := map[string][]workv1alpha2.ComponentReplicas{}
	for _, c := range base.Spec.Clusters {
		components[c.Name] = c.Components
	}
	out.Clusters = nil
	for _, c := range spec.Clusters {
		out.Clusters = append(out.Clusters, workv1alpha2.TargetCluster{Name: c.Name, Replicas: c.Replicas, Components: components[c.Name]})
	}

	outStatus := base.Status
	outStatus.Conditions = nil
	for _, c := range status.Conditions {
		outStatus.Conditions = append(outStatus.Conditions, *c.DeepCopy())
	}
	health := map[string]workv1alpha2.ResourceHealth{}
	for _, item := range base.Status.AggregatedStatus {
		health[item.ClusterName] = item.Health
	}
	outStatus.AggregatedStatus = nil
	for _, item := range status.AggregatedStatus {
		outStatus.AggregatedStatus = append(outStatus.AggregatedStatus, workv1alpha2.AggregatedStatusItem{
			ClusterName:    item.ClusterName,
			Status:         item.Status.DeepCopy(),
			Applied:        item.Applied,
			AppliedMessage: item.AppliedMessage,
			Health:         health[item.ClusterName],
		})
	}
	return out, outStatus, nil
}
