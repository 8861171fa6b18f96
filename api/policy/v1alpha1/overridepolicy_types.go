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
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=overridepolicies,scope=Namespaced,shortName=op,categories=karmada

// OverridePolicy changes resource templates of its namespace per member
// cluster while they are rendered for that cluster.
type OverridePolicy struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired overrides.
	// +required
	Spec OverrideSpec `json:"spec"`
}

// +kubebuilder:object:root=true

// OverridePolicyList is a list of OverridePolicy.
type OverridePolicyList struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	// items are the OverridePolicy objects.
	Items []OverridePolicy `json:"items"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=clusteroverridepolicies,scope=Cluster,shortName=cop,categories=karmada

// ClusterOverridePolicy is the cluster-scoped OverridePolicy. It applies to
// templates in any namespace and before any OverridePolicy.
type ClusterOverridePolicy struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired overrides.
	// +required
	Spec OverrideSpec `json:"spec"`
}

// +kubebuilder:object:root=true

// ClusterOverridePolicyList is a list of ClusterOverridePolicy.
type ClusterOverridePolicyList struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	// items are the ClusterOverridePolicy objects.
	Items []ClusterOverridePolicy `json:"items"`
}

// OverrideSpec is shared by OverridePolicy and ClusterOverridePolicy.
// +kubebuilder:validation:XValidation:rule="!has(self.overrideRules) || size(self.overrideRules) == 0 || (!has(self.targetCluster) && !(has(self.overriders) && (has(self.overriders.plaintext) || has(self.overriders.imageOverrider) || has(self.overriders.commandOverrider) || has(self.overriders.argsOverrider) || has(self.overriders.labelsOverrider) || has(self.overriders.annotationsOverrider) || has(self.overriders.fieldOverrider))))",message="overrideRules is exclusive with the deprecated targetCluster and overriders"
type OverrideSpec struct {
	// resourceSelectors picks the templates to override. Empty selects every
	// template (in the policy's namespace for OverridePolicy).
	// +optional
	ResourceSelectors []ResourceSelector `json:"resourceSelectors,omitempty"`

	// overrideRules are applied in order; each applies its overriders to the
	// clusters it targets.
	// +kubebuilder:validation:MaxItems=1000
	// +optional
	OverrideRules []RuleWithCluster `json:"overrideRules,omitempty"`

	// targetCluster is deprecated: use overrideRules. It limits overriders to
	// these clusters.
	// +optional
	TargetCluster *ClusterAffinity `json:"targetCluster,omitempty"`

	// overriders is deprecated: use overrideRules. It is applied to the
	// clusters of targetCluster.
	// +optional
	Overriders Overriders `json:"overriders,omitempty"`
}

// RuleWithCluster applies overriders to a set of clusters.
type RuleWithCluster struct {
	// targetCluster picks the clusters the rule applies to. Absent means all.
	// +optional
	TargetCluster *ClusterAffinity `json:"targetCluster,omitempty"`

	// overriders are the changes to make. Kinds of overriders run in a fixed
	// order: imageOverrider, commandOverrider, argsOverrider, labelsOverrider,
	// annotationsOverrider, fieldOverrider, then plaintext.
	// +required
	Overriders Overriders `json:"overriders"`
}

// Overriders are the changes made to a template for a cluster.
type Overriders struct {
	// plaintext are JSON patch operations on the whole object.
	// +optional
	Plaintext []PlaintextOverrider `json:"plaintext,omitempty"`

	// imageOverrider rewrites container images.
	// +optional
	ImageOverrider []ImageOverrider `json:"imageOverrider,omitempty"`

	// commandOverrider changes container commands.
	// +optional
	CommandOverrider []CommandArgsOverrider `json:"commandOverrider,omitempty"`

	// argsOverrider changes container args.
	// +optional
	ArgsOverrider []CommandArgsOverrider `json:"argsOverrider,omitempty"`

	// labelsOverrider changes the object's labels.
	// +optional
	LabelsOverrider []LabelAnnotationOverrider `json:"labelsOverrider,omitempty"`

	// annotationsOverrider changes the object's annotations.
	// +optional
	AnnotationsOverrider []LabelAnnotationOverrider `json:"annotationsOverrider,omitempty"`

	// fieldOverrider patches a JSON or YAML document stored in a string field,
	// such as a ConfigMap data key.
	// +kubebuilder:validation:MaxItems=100
	// +optional
	FieldOverrider []FieldOverrider `json:"fieldOverrider,omitempty"`
}

// OverriderOperator is the operation of an overrider.
type OverriderOperator string

// Overrider operators.
const (
	OverriderOpAdd     OverriderOperator = "add"
	OverriderOpRemove  OverriderOperator = "remove"
	OverriderOpReplace OverriderOperator = "replace"
)

// PlaintextOverrider is one JSON patch operation.
type PlaintextOverrider struct {
	// path is the JSON pointer of the field, e.g. /spec/replicas.
	// +kubebuilder:validation:Pattern=`^/`
	// +required
	Path string `json:"path"`

	// operator is add, remove or replace.
	// +kubebuilder:validation:Enum=add;remove;replace
	// +required
	Operator OverriderOperator `json:"operator"`

	// value is the new value for add and replace; ignored for remove.
	// +optional
	Value apiextensionsv1.JSON `json:"value,omitempty"`
}

// ImageComponent is a part of a container image reference.
type ImageComponent string

// Image components, for an image like docker.io/library/nginx:1.25.
const (
	// Registry is docker.io.
	Registry ImageComponent = "Registry"
	// Repository is library/nginx.
	Repository ImageComponent = "Repository"
	// Tag is 1.25.
	Tag ImageComponent = "Tag"
)

// ImageOverrider rewrites one part of container images.
type ImageOverrider struct {
	// predicate limits the overrider to the image at this path. Absent means
	// every container and init container image of a known workload kind.
	// +optional
	Predicate *ImagePredicate `json:"predicate,omitempty"`

	// component is the part of the image to change: Registry, Repository or
	// Tag.
	// +kubebuilder:validation:Enum=Registry;Repository;Tag
	// +required
	Component ImageComponent `json:"component"`

	// operator is add, remove or replace.
	// +kubebuilder:validation:Enum=add;remove;replace
	// +required
	Operator OverriderOperator `json:"operator"`

	// value is the new part for add and replace.
	// +optional
	Value string `json:"value,omitempty"`
}

// ImagePredicate locates one image field.
type ImagePredicate struct {
	// path is the JSON pointer of the image field, e.g.
	// /spec/template/spec/containers/0/image.
	// +kubebuilder:validation:Pattern=`^/`
	// +required
	Path string `json:"path"`
}

// CommandArgsOverrider adds or removes command or args entries of one
// container.
type CommandArgsOverrider struct {
	// containerName is the container to change.
	// +kubebuilder:validation:MinLength=1
	// +required
	ContainerName string `json:"containerName"`

	// operator is add (append) or remove.
	// +kubebuilder:validation:Enum=add;remove
	// +required
	Operator OverriderOperator `json:"operator"`

	// value are the entries to add or remove.
	// +optional
	Value []string `json:"value,omitempty"`
}

// LabelAnnotationOverrider changes labels or annotations.
type LabelAnnotationOverrider struct {
	// operator is add, remove or replace.
	// +kubebuilder:validation:Enum=add;remove;replace
	// +required
	Operator OverriderOperator `json:"operator"`

	// value are the keys and values to add, remove or replace.
	// +required
	Value map[string]string `json:"value"`
}

// FieldOverrider patches a structured document held in a string field.
// +kubebuilder:validation:XValidation:rule="!(has(self.json) && size(self.json) > 0 && has(self.yaml) && size(self.yaml) > 0)",message="json and yaml are exclusive"
type FieldOverrider struct {
	// fieldPath is the JSON pointer of the string field, e.g.
	// /data/config.yaml.
	// +kubebuilder:validation:Pattern=`^/`
	// +required
	FieldPath string `json:"fieldPath"`

	// json are patch operations when the field holds JSON.
	// +optional
	JSON []JSONPatchOperation `json:"json,omitempty"`

	// yaml are patch operations when the field holds YAML.
	// +optional
	YAML []YAMLPatchOperation `json:"yaml,omitempty"`
}

// JSONPatchOperation is one patch operation inside a JSON document.
type JSONPatchOperation struct {
	// subPath is the JSON pointer inside the document.
	// +kubebuilder:validation:Pattern=`^/`
	// +required
	SubPath string `json:"subPath"`

	// operator is add, remove or replace.
	// +kubebuilder:validation:Enum=add;remove;replace
	// +required
	Operator OverriderOperator `json:"operator"`

	// value is the new value for add and replace.
	// +optional
	Value apiextensionsv1.JSON `json:"value,omitempty"`
}

// YAMLPatchOperation is one patch operation inside a YAML document.
type YAMLPatchOperation struct {
	// subPath is the JSON pointer inside the document.
	// +kubebuilder:validation:Pattern=`^/`
	// +required
	SubPath string `json:"subPath"`

	// operator is add, remove or replace.
	// +kubebuilder:validation:Enum=add;remove;replace
	// +required
	Operator OverriderOperator `json:"operator"`

	// value is the new value for add and replace.
	// +optional
	Value apiextensionsv1.JSON `json:"value,omitempty"`
}
