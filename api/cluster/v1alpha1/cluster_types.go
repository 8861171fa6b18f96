/*
Copyright 2026 The Flotilla Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Cluster is a member cluster joined to the control plane: how to reach it
// (spec) and what it last reported (status). Cluster-scoped; its Works live in
// the execution namespace karmada-es-<name>.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,path=clusters,categories=karmada
// +kubebuilder:printcolumn:name="VERSION",type=string,JSONPath=`.status.kubernetesVersion`
// +kubebuilder:printcolumn:name="MODE",type=string,JSONPath=`.spec.syncMode`
// +kubebuilder:printcolumn:name="READY",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`
type Cluster struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired connection and scheduling attributes of the member.
	// +required
	Spec ClusterSpec `json:"spec"`

	// status is what the cluster-status controller (push) or the agent (pull)
	// last observed in the member.
	// +optional
	Status ClusterStatus `json:"status,omitempty"`
}

// ClusterSyncMode says who moves Works into the member: the control plane
// (Push) or an agent running inside the member (Pull).
// +kubebuilder:validation:Enum=Push;Pull
type ClusterSyncMode string

const (
	// Push: the control plane reaches the member's API server through
	// spec.apiEndpoint with the credentials in spec.secretRef.
	Push ClusterSyncMode = "Push"
	// Pull: an agent in the member watches its execution namespace and
	// applies Works itself; the control plane never dials the member.
	Pull ClusterSyncMode = "Pull"
)

// ClusterSpec describes how to reach a member cluster and how the scheduler
// should see it. A Push cluster needs apiEndpoint (the control plane dials it;
// in Pull mode the agent does the talking). id is write-once: changing it would
// silently re-point the object at another physical cluster.
//
// +kubebuilder:validation:XValidation:rule="self.syncMode != 'Push' || (has(self.apiEndpoint) && self.apiEndpoint.size() > 0)",message="spec.apiEndpoint is required when spec.syncMode is Push"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.id) || oldSelf.id.size() == 0 || (has(self.id) && self.id == oldSelf.id)",message="spec.id is immutable once set"
type ClusterSpec struct {
	// id uniquely identifies the member cluster, independent of this object's
	// name and uid. It is collected at registration: the ClusterProperty
	// "cluster.clusterset.k8s.io" when the member defines one, else the uid of
	// its kube-system namespace. Write-once.
	// +kubebuilder:validation:MaxLength=128000
	// +optional
	ID string `json:"id,omitempty"`

	// syncMode says how Works reach the member: Push (the control plane
	// applies them) or Pull (an agent in the member does).
	// +required
	SyncMode ClusterSyncMode `json:"syncMode"`

	// apiEndpoint is the URL of the member's API server, for example
	// https://10.0.0.1:6443. Required for Push.
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:XValidation:rule="self.size() == 0 || (isURL(self) && url(self).getScheme() in ['https', 'http'] && url(self).getHost().size() > 0)",message="spec.apiEndpoint must be an http(s) URL with a host"
	// +optional
	APIEndpoint string `json:"apiEndpoint,omitempty"`

	// secretRef names the Secret holding the credentials used to reach the
	// member: data key "token" (bearer token) and "caBundle" (the member's CA).
	// +optional
	SecretRef *LocalSecretReference `json:"secretRef,omitempty"`

	// impersonatorSecretRef names the Secret holding the token of the
	// impersonating service account in the member, used by the unified proxy
	// to act on behalf of control-plane users.
	// +optional
	ImpersonatorSecretRef *LocalSecretReference `json:"impersonatorSecretRef,omitempty"`

	// insecureSkipTLSVerification skips verifying the member's serving
	// certificate. For test clusters only.
	// +optional
	InsecureSkipTLSVerification bool `json:"insecureSkipTLSVerification,omitempty"`

	// proxyURL is the proxy (http, https or socks5) used to reach the member.
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:XValidation:rule="self.size() == 0 || (isURL(self) && url(self).getScheme() in ['http', 'https', 'socks5'])",message="spec.proxyURL must be an http, https or socks5 URL"
	// +optional
	ProxyURL string `json:"proxyURL,omitempty"`

	// proxyHeader holds extra HTTP headers sent to the proxy with each request
	// (for example Proxy-Authorization). A value may hold several
	// comma-separated values.
	// +optional
	ProxyHeader map[string]string `json:"proxyHeader,omitempty"`

	// provider is the cloud provider of the member, free-form (for example
	// "aws"); placement can select on it.
	// +optional
	Provider string `json:"provider,omitempty"`

	// region is the region of the member; placement can select and spread on it.
	// +optional
	Region string `json:"region,omitempty"`

	// zone is the single zone of the member.
	// Deprecated: use zones, which also covers clusters spanning several zones.
	// +optional
	Zone string `json:"zone,omitempty"`

	// zones lists the zones the member spans; placement can select and spread
	// on them.
	// +optional
	Zones []string `json:"zones,omitempty"`

	// taints repel workloads whose policies do not tolerate them. The control
	// plane sets cluster.karmada.io/not-ready, .../unreachable and
	// .../unschedulable itself. A key/effect pair appears at most once.
	// +listType=map
	// +listMapKey=key
	// +listMapKey=effect
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:XValidation:rule="self.all(t, t.effect in ['NoSchedule', 'PreferNoSchedule', 'NoExecute'])",message="spec.taints[].effect must be one of NoSchedule, PreferNoSchedule, NoExecute"
	// +optional
	Taints []corev1.Taint `json:"taints,omitempty"`

	// resourceModels splits the member's nodes into grades by capacity, so
	// the scheduler can estimate how many replicas of a given size fit.
	// Grades are unique and ascend; every model lists the same resources in
	// the same order. Each resource's ranges should start at 0 in the first
	// model and be contiguous ([min, max) of one grade ends where the next
	// begins). Those two, and min < max, are left to the validating webhook:
	// CEL prices every int-or-string quantity as a 3 MB string, so comparing
	// them here would exceed the CRD's cost budget.
	// +listType=map
	// +listMapKey=grade
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:XValidation:rule="self.map(m, m.grade).isSorted()",message="spec.resourceModels must be sorted by ascending grade"
	// +kubebuilder:validation:XValidation:rule="self.all(m, m.ranges.map(r, r.name) == self[0].ranges.map(r, r.name))",message="spec.resourceModels[].ranges must name the same resources in the same order in every model"
	// +optional
	ResourceModels []ResourceModel `json:"resourceModels,omitempty"`
}

// LocalSecretReference names a Secret in the control plane.
type LocalSecretReference struct {
	// namespace of the Secret.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +required
	Namespace string `json:"namespace"`

	// name of the Secret.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +required
	Name string `json:"name"`
}

// ResourceModel is one grade of node capacity: a node belongs to the grade
// when each listed resource falls in that resource's [min, max) range.
type ResourceModel struct {
	// grade is the index of this model; higher grades hold larger nodes.
	// +required
	Grade uint `json:"grade"`

	// ranges gives, per resource, the [min, max) interval of this grade.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=32
	// +required
	Ranges []ResourceModelRange `json:"ranges"`
}

// ResourceModelRange is the half-open interval [min, max) of one resource
// within a grade; min < max (checked by the webhook, see resourceModels).
type ResourceModelRange struct {
	// name of the resource, for example cpu or memory.
	// A qualified name: up to 253 characters of prefix, '/', up to 63 of name.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=317
	// +required
	Name corev1.ResourceName `json:"name"`

	// min is the inclusive lower bound.
	// +required
	Min resource.Quantity `json:"min"`

	// max is the exclusive upper bound.
	// +required
	Max resource.Quantity `json:"max"`
}

// ClusterStatus is what was last observed in the member cluster.
type ClusterStatus struct {
	// kubernetesVersion is the member's Kubernetes version (gitVersion).
	// +optional
	KubernetesVersion string `json:"kubernetesVersion,omitempty"`

	// apiEnablements lists the group-versions and resources the member serves,
	// so placement never sends a resource to a member that cannot hold it.
	// +optional
	APIEnablements []APIEnablement `json:"apiEnablements,omitempty"`

	// conditions: Ready (the member answers its health check) and
	// CompleteAPIEnablements (apiEnablements is the full list, not a partial
	// one after discovery errors).
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// nodeSummary counts the member's nodes.
	// +optional
	NodeSummary *NodeSummary `json:"nodeSummary,omitempty"`

	// resourceSummary sums the member's node capacity and pod requests.
	// +optional
	ResourceSummary *ResourceSummary `json:"resourceSummary,omitempty"`

	// remedyActions lists the actions Remedies ask for on this cluster
	// (for example TrafficControl).
	// +optional
	RemedyActions []string `json:"remedyActions,omitempty"`
}

// APIEnablement is one group-version served by the member and its resources.
type APIEnablement struct {
	// groupVersion is the group and version, for example "apps/v1" or "v1".
	// +required
	GroupVersion string `json:"groupVersion"`

	// resources served in this group-version.
	// +optional
	Resources []APIResource `json:"resources,omitempty"`
}

// APIResource is one resource of a served group-version.
type APIResource struct {
	// name is the plural resource name, for example "deployments".
	// +required
	Name string `json:"name"`

	// kind is the resource's kind, for example "Deployment".
	// +required
	Kind string `json:"kind"`
}

// NodeSummary counts the member's nodes.
type NodeSummary struct {
	// totalNum is the number of nodes.
	// +optional
	TotalNum int32 `json:"totalNum,omitempty"`

	// readyNum is the number of Ready nodes.
	// +optional
	ReadyNum int32 `json:"readyNum,omitempty"`
}

// ResourceSummary sums capacity and requests over the member's nodes.
type ResourceSummary struct {
	// allocatable is the sum of the nodes' allocatable resources.
	// +optional
	Allocatable corev1.ResourceList `json:"allocatable,omitempty"`

	// allocating is the sum of the requests of pods not yet scheduled.
	// +optional
	Allocating corev1.ResourceList `json:"allocating,omitempty"`

	// allocated is the sum of the requests of scheduled pods.
	// +optional
	Allocated corev1.ResourceList `json:"allocated,omitempty"`

	// allocatableModelings counts, per grade of spec.resourceModels, the nodes
	// whose free capacity falls in that grade.
	// +optional
	AllocatableModelings []AllocatableModeling `json:"allocatableModelings,omitempty"`
}

// AllocatableModeling is the number of nodes in one resource-model grade.
type AllocatableModeling struct {
	// grade refers to spec.resourceModels[].grade.
	// +required
	Grade uint `json:"grade"`

	// count is the number of nodes in the grade.
	// +required
	Count int `json:"count"`
}

// ClusterList is a list of Clusters.
//
// +kubebuilder:object:root=true
type ClusterList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// items are the Clusters.
	Items []Cluster `json:"items"`
}
