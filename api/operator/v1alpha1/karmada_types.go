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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Karmada is one federation control plane: etcd, an API server serving the
// Karmada API, a kube-controller-manager, and Flotilla's controller-manager,
// scheduler and webhook (and its descheduler when
// spec.components.karmadaDescheduler is set), all running in this resource's
// namespace on the host cluster. The operator installs and upgrades each of them from charts built
// into it, and writes the admin kubeconfig to the Secret named in
// status.secretRef.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=karmadas,scope=Namespaced
// +kubebuilder:printcolumn:name="READY",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="VERSION",type=string,JSONPath=`.status.karmadaVersion`
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`
type Karmada struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec describes the control plane wanted. Defaults are applied when the
	// operator renders it and are never written back, so that a newer operator
	// is free to change them.
	// +optional
	Spec KarmadaSpec `json:"spec,omitempty"`

	// status is what the operator last observed and rolled out.
	// +optional
	Status KarmadaStatus `json:"status,omitempty"`
}

// KarmadaSpec is the desired control plane.
type KarmadaSpec struct {
	// hostCluster describes the cluster the control plane runs on. Unset: the
	// operator's own cluster.
	// +optional
	HostCluster *HostCluster `json:"hostCluster,omitempty"`

	// privateRegistry, when set, replaces the registry of every image the
	// operator chooses itself (images named explicitly in components are kept).
	// +optional
	PrivateRegistry *ImageRegistry `json:"privateRegistry,omitempty"`

	// components configures each component of the control plane. Unset
	// components run with defaults; etcd is local unless external is given.
	// +optional
	Components *KarmadaComponents `json:"components,omitempty"`

	// featureGates are passed to every Flotilla component that has the gate.
	// +optional
	FeatureGates map[string]bool `json:"featureGates,omitempty"`

	// crdTarball is accepted for compatibility with Karmada's operator and
	// ignored: Flotilla's CRDs are built into the operator and match its
	// version, so they are never downloaded. A condition reports it.
	// +optional
	CRDTarball *CRDTarball `json:"crdTarball,omitempty"`

	// customCertificate adjusts the certificates the operator issues.
	// +optional
	CustomCertificate *CustomCertificate `json:"customCertificate,omitempty"`

	// suspend stops reconciliation of this instance: nothing is created,
	// changed, repaired or upgraded until it is false again. Deletion still
	// cleans up.
	// +optional
	Suspend *bool `json:"suspend,omitempty"`

	// version pins the Flotilla release this instance runs, from the
	// operator's version table (e.g. "v0.2.0"). Unset: the operator's own
	// release, so upgrading the operator upgrades the instance. A version
	// older than the one running is refused (no downgrades). Flotilla
	// addition.
	// +kubebuilder:validation:Pattern=`^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$`
	// +optional
	Version string `json:"version,omitempty"`

	// certificateIssuer, when set, has cert-manager issue every certificate
	// (Certificate objects referring to this issuer produce the same Secrets
	// the operator would write) instead of the operator's own CA. Flotilla
	// addition.
	// +optional
	CertificateIssuer *CertificateIssuerReference `json:"certificateIssuer,omitempty"`

	// preserveDataOnDeletion keeps etcd's data (its PersistentVolumeClaims)
	// and the certificate Secrets when this resource is deleted, so that a
	// Karmada of the same name created later finds them again. Default false:
	// deletion removes everything the operator made. Flotilla addition.
	// +optional
	PreserveDataOnDeletion bool `json:"preserveDataOnDeletion,omitempty"`
}

// CertificateIssuerReference names a cert-manager issuer.
type CertificateIssuerReference struct {
	// name of the issuer.
	// +kubebuilder:validation:MinLength=1
	// +required
	Name string `json:"name"`

	// kind of the issuer: Issuer (in this resource's namespace) or
	// ClusterIssuer. Default Issuer.
	// +kubebuilder:validation:Enum=Issuer;ClusterIssuer
	// +optional
	Kind string `json:"kind,omitempty"`

	// group of the issuer. Default cert-manager.io.
	// +optional
	Group string `json:"group,omitempty"`
}

// CustomCertificate adjusts the certificates of the control plane.
type CustomCertificate struct {
	// apiServerCACert names a Secret (keys tls.crt and tls.key) holding a CA
	// that signs the API server's certificates instead of one the operator
	// generates.
	// +optional
	APIServerCACert *LocalSecretReference `json:"apiServerCACert,omitempty"`

	// leafCertValidityDays is the validity of every leaf certificate, in days.
	// Default 365. Certificates are renewed once two thirds of it passed.
	// +kubebuilder:validation:Minimum=1
	// +optional
	LeafCertValidityDays *int32 `json:"leafCertValidityDays,omitempty"`
}

// CRDTarball says where Karmada's operator downloads CRDs from.
type CRDTarball struct {
	// httpSource is the URL of the tarball.
	// +optional
	HTTPSource *HTTPSource `json:"httpSource,omitempty"`

	// crdDownloadPolicy says when to download it.
	// +optional
	CRDDownloadPolicy *CRDDownloadPolicy `json:"crdDownloadPolicy,omitempty"`
}

// HTTPSource is a URL to download from.
type HTTPSource struct {
	// url of the file.
	// +required
	URL string `json:"url"`

	// proxy to download through.
	// +optional
	Proxy *ProxyConfig `json:"proxy,omitempty"`
}

// ProxyConfig is an HTTP proxy.
type ProxyConfig struct {
	// proxyURL of the proxy.
	// +required
	ProxyURL string `json:"proxyURL"`
}

// CRDDownloadPolicy says when CRDs are downloaded.
// +kubebuilder:validation:Enum=Always;IfNotPresent
type CRDDownloadPolicy string

// Download policies of Karmada's operator.
const (
	DownloadAlways       CRDDownloadPolicy = "Always"
	DownloadIfNotPresent CRDDownloadPolicy = "IfNotPresent"
)

// ImageRegistry is a registry that images are pulled from.
type ImageRegistry struct {
	// registry host, optionally with a path, e.g. "registry.example.com/mirror".
	// +required
	Registry string `json:"registry"`
}

// HostCluster is the cluster the control plane runs on.
type HostCluster struct {
	// secretRef names a Secret with a kubeconfig (key "kubeconfig") of a
	// remote host cluster. Not supported yet by Flotilla: the control plane
	// always runs on the operator's cluster, and a condition says so.
	// +optional
	SecretRef *LocalSecretReference `json:"secretRef,omitempty"`

	// apiEndpoint of the host cluster, written into the admin kubeconfig when
	// the API server's Service is a NodePort (the node's address).
	// +optional
	APIEndpoint string `json:"apiEndpoint,omitempty"`

	// networking of the host cluster.
	// +optional
	Networking *Networking `json:"networking,omitempty"`
}

// Networking of the host cluster.
type Networking struct {
	// dnsDomain is the host cluster's DNS domain. Default "cluster.local".
	// +optional
	DNSDomain *string `json:"dnsDomain,omitempty"`
}

// LocalSecretReference names a Secret.
type LocalSecretReference struct {
	// name of the Secret.
	// +optional
	Name string `json:"name,omitempty"`

	// namespace of the Secret. Default: the Karmada resource's namespace.
	// +optional
	Namespace string `json:"namespace,omitempty"`
}

// KarmadaComponents configures each component.
type KarmadaComponents struct {
	// etcd is the control plane's storage.
	// +required
	Etcd *Etcd `json:"etcd"`

	// karmadaAPIServer is the API server serving the Karmada API.
	// +optional
	KarmadaAPIServer *KarmadaAPIServer `json:"karmadaAPIServer,omitempty"`

	// karmadaAggregatedAPIServer is accepted and not run: Flotilla serves
	// clusters as a custom resource. A condition reports it.
	// +optional
	KarmadaAggregatedAPIServer *KarmadaAggregatedAPIServer `json:"karmadaAggregatedAPIServer,omitempty"`

	// kubeControllerManager runs the Kubernetes controllers the control plane
	// needs (namespace deletion, garbage collection, service accounts).
	// +optional
	KubeControllerManager *KubeControllerManager `json:"kubeControllerManager,omitempty"`

	// karmadaControllerManager is Flotilla's controller-manager.
	// +optional
	KarmadaControllerManager *KarmadaControllerManager `json:"karmadaControllerManager,omitempty"`

	// karmadaScheduler is Flotilla's scheduler.
	// +optional
	KarmadaScheduler *KarmadaScheduler `json:"karmadaScheduler,omitempty"`

	// karmadaWebhook is Flotilla's admission webhook.
	// +optional
	KarmadaWebhook *KarmadaWebhook `json:"karmadaWebhook,omitempty"`

	// karmadaDescheduler is Flotilla's descheduler. It runs only when this
	// field is set, and is uninstalled when the field is removed, as in
	// Karmada's operator.
	// +optional
	KarmadaDescheduler *KarmadaDescheduler `json:"karmadaDescheduler,omitempty"`

	// karmadaSearch is accepted and not run. A condition reports it.
	// +optional
	KarmadaSearch *KarmadaSearch `json:"karmadaSearch,omitempty"`

	// karmadaMetricsAdapter is accepted and not run yet. A condition reports
	// it.
	// +optional
	KarmadaMetricsAdapter *KarmadaMetricsAdapter `json:"karmadaMetricsAdapter,omitempty"`
}

// Etcd is either run by the operator (local) or provided (external).
// +kubebuilder:validation:XValidation:rule="!(has(self.local) && has(self.external))",message="etcd: set local or external, not both"
type Etcd struct {
	// local etcd, run by the operator as a StatefulSet.
	// +optional
	Local *LocalEtcd `json:"local,omitempty"`

	// external etcd, run by someone else.
	// +optional
	External *ExternalEtcd `json:"external,omitempty"`
}

// LocalEtcd is an etcd cluster the operator runs.
// +kubebuilder:validation:XValidation:rule="!has(self.replicas) || self.replicas == 1 || self.replicas == 3",message="etcd.local.replicas must be 1 or 3"
type LocalEtcd struct {
	CommonSettings `json:",inline"`

	// volumeData is where etcd keeps its data: a PersistentVolumeClaim per
	// member (volumeClaim), a host directory (hostPath) or an emptyDir.
	// Default: emptyDir, which loses the data when a pod goes.
	// +optional
	VolumeData *VolumeData `json:"volumeData,omitempty"`

	// serverCertSANs are added to etcd's serving certificate.
	// +optional
	ServerCertSANs []string `json:"serverCertSANs,omitempty"`

	// peerCertSANs are added to etcd's peer certificate.
	// +optional
	PeerCertSANs []string `json:"peerCertSANs,omitempty"`
}

// VolumeData is one of the three kinds of storage for etcd's data.
// +kubebuilder:validation:XValidation:rule="(has(self.volumeClaim) ? 1 : 0) + (has(self.hostPath) ? 1 : 0) + (has(self.emptyDir) ? 1 : 0) <= 1",message="volumeData: set at most one of volumeClaim, hostPath and emptyDir"
type VolumeData struct {
	// volumeClaim is the template of each member's PersistentVolumeClaim.
	// +optional
	VolumeClaim *corev1.PersistentVolumeClaimTemplate `json:"volumeClaim,omitempty"`

	// hostPath is a directory on the node.
	// +optional
	HostPath *corev1.HostPathVolumeSource `json:"hostPath,omitempty"`

	// emptyDir lives as long as the pod.
	// +optional
	EmptyDir *corev1.EmptyDirVolumeSource `json:"emptyDir,omitempty"`
}

// ExternalEtcd is an etcd cluster run by someone else.
type ExternalEtcd struct {
	// endpoints of the etcd members, e.g. "https://etcd-0.example:2379".
	// +kubebuilder:validation:MinItems=1
	// +required
	Endpoints []string `json:"endpoints"`

	// secretRef names a Secret with the client certificate for etcd: keys
	// ca.crt, tls.crt and tls.key.
	// +required
	SecretRef LocalSecretReference `json:"secretRef"`
}

// Image names a container image by repository and tag.
type Image struct {
	// imageRepository, e.g. "registry.k8s.io/kube-apiserver". Default: the
	// version table's image, from privateRegistry when set.
	// +optional
	ImageRepository string `json:"imageRepository,omitempty"`

	// imageTag, e.g. "v1.37.2". Default: the version table's tag.
	// +optional
	ImageTag string `json:"imageTag,omitempty"`
}

// CommonSettings are the pod settings every component has.
type CommonSettings struct {
	Image `json:",inline"`

	// imagePullPolicy of the component's containers.
	// +optional
	ImagePullPolicy corev1.PullPolicy `json:"imagePullPolicy,omitempty"`

	// replicas of the component. Default 1.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`

	// labels added to the component's pods.
	// +optional
	Labels map[string]string `json:"labels,omitempty"`

	// annotations added to the component's pods.
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`

	// resources of the component's main container.
	// +optional
	Resources corev1.ResourceRequirements `json:"resources,omitempty"`

	// priorityClassName of the component's pods.
	// +optional
	PriorityClassName string `json:"priorityClassName,omitempty"`

	// affinity of the component's pods.
	// +optional
	Affinity *corev1.Affinity `json:"affinity,omitempty"`

	// tolerations of the component's pods.
	// +optional
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`

	// podDisruptionBudgetConfig, when set, gives the component a
	// PodDisruptionBudget.
	// +optional
	PodDisruptionBudgetConfig *PodDisruptionBudgetConfig `json:"podDisruptionBudgetConfig,omitempty"`
}

// PodDisruptionBudgetConfig is the budget of a component's pods.
// +kubebuilder:validation:XValidation:rule="!(has(self.minAvailable) && has(self.maxUnavailable))",message="podDisruptionBudgetConfig: set minAvailable or maxUnavailable, not both"
type PodDisruptionBudgetConfig struct {
	// minAvailable pods, a number or a percentage.
	// +optional
	MinAvailable *intstr.IntOrString `json:"minAvailable,omitempty"`

	// maxUnavailable pods, a number or a percentage.
	// +optional
	MaxUnavailable *intstr.IntOrString `json:"maxUnavailable,omitempty"`
}

// KarmadaAPIServer configures the API server.
type KarmadaAPIServer struct {
	CommonSettings `json:",inline"`

	// serviceSubnet is the range of ClusterIPs of Services in the control
	// plane. Default "10.96.0.0/12".
	// +optional
	ServiceSubnet *string `json:"serviceSubnet,omitempty"`

	// serviceType of the API server's Service on the host. Default ClusterIP.
	// +kubebuilder:validation:Enum=ClusterIP;NodePort;LoadBalancer
	// +optional
	ServiceType corev1.ServiceType `json:"serviceType,omitempty"`

	// loadBalancerClass of the Service when it is a LoadBalancer.
	// +optional
	LoadBalancerClass *string `json:"loadBalancerClass,omitempty"`

	// serviceAnnotations are added to the API server's Service.
	// +optional
	ServiceAnnotations map[string]string `json:"serviceAnnotations,omitempty"`

	// extraArgs are extra flags of kube-apiserver, without leading dashes; one
	// named like a flag the operator sets replaces it.
	// +optional
	ExtraArgs map[string]string `json:"extraArgs,omitempty"`

	// extraVolumes are added to the API server's pods.
	// +optional
	ExtraVolumes []corev1.Volume `json:"extraVolumes,omitempty"`

	// extraVolumeMounts are added to the API server's container.
	// +optional
	ExtraVolumeMounts []corev1.VolumeMount `json:"extraVolumeMounts,omitempty"`

	// certSANs are added to the API server's serving certificate.
	// +optional
	CertSANs []string `json:"certSANs,omitempty"`

	// featureGates of kube-apiserver.
	// +optional
	FeatureGates map[string]bool `json:"featureGates,omitempty"`

	// sidecarContainers run beside the API server in its pods.
	// +optional
	SidecarContainers []corev1.Container `json:"sidecarContainers,omitempty"`
}

// KarmadaAggregatedAPIServer is Karmada's aggregated API server; Flotilla
// accepts its settings and does not run it.
type KarmadaAggregatedAPIServer struct {
	CommonSettings `json:",inline"`

	// extraArgs of the component.
	// +optional
	ExtraArgs map[string]string `json:"extraArgs,omitempty"`

	// certSANs of its serving certificate.
	// +optional
	CertSANs []string `json:"certSANs,omitempty"`

	// featureGates of the component.
	// +optional
	FeatureGates map[string]bool `json:"featureGates,omitempty"`
}

// KubeControllerManager configures the kube-controller-manager.
type KubeControllerManager struct {
	CommonSettings `json:",inline"`

	// controllers to enable, kube-controller-manager's --controllers syntax
	// ("*", "foo", "-foo"). Default: namespace, garbagecollector,
	// serviceaccount-token, serviceaccount and clusterrole-aggregation, the
	// ones a federation control plane needs.
	// +optional
	Controllers []string `json:"controllers,omitempty"`

	// extraArgs are extra flags, without leading dashes; one named like a
	// flag the operator sets replaces it.
	// +optional
	ExtraArgs map[string]string `json:"extraArgs,omitempty"`

	// featureGates of kube-controller-manager.
	// +optional
	FeatureGates map[string]bool `json:"featureGates,omitempty"`
}

// KarmadaControllerManager configures Flotilla's controller-manager.
type KarmadaControllerManager struct {
	CommonSettings `json:",inline"`

	// controllers to enable, Karmada's --controllers syntax. Accepted for
	// compatibility; Flotilla's controller-manager runs all its controllers.
	// +optional
	Controllers []string `json:"controllers,omitempty"`

	// extraArgs are extra flags, without leading dashes; one named like a
	// flag the operator sets replaces it.
	// +optional
	ExtraArgs map[string]string `json:"extraArgs,omitempty"`

	// featureGates of the controller-manager, on top of spec.featureGates.
	// +optional
	FeatureGates map[string]bool `json:"featureGates,omitempty"`
}

// KarmadaScheduler configures Flotilla's scheduler.
type KarmadaScheduler struct {
	CommonSettings `json:",inline"`

	// extraArgs are extra flags, without leading dashes; one named like a
	// flag the operator sets replaces it.
	// +optional
	ExtraArgs map[string]string `json:"extraArgs,omitempty"`

	// featureGates of the scheduler, on top of spec.featureGates.
	// +optional
	FeatureGates map[string]bool `json:"featureGates,omitempty"`
}

// KarmadaWebhook configures Flotilla's admission webhook.
type KarmadaWebhook struct {
	CommonSettings `json:",inline"`

	// extraArgs are extra flags, without leading dashes; one named like a
	// flag the operator sets replaces it.
	// +optional
	ExtraArgs map[string]string `json:"extraArgs,omitempty"`
}

// KarmadaDescheduler configures Flotilla's descheduler.
type KarmadaDescheduler struct {
	CommonSettings `json:",inline"`

	// extraArgs are extra flags, without leading dashes; one named like a
	// flag the operator sets replaces it.
	// +optional
	ExtraArgs map[string]string `json:"extraArgs,omitempty"`
}

// KarmadaSearch is Karmada's search component; accepted, not run.
type KarmadaSearch struct {
	CommonSettings `json:",inline"`

	// extraArgs of the component.
	// +optional
	ExtraArgs map[string]string `json:"extraArgs,omitempty"`
}

// KarmadaMetricsAdapter is Karmada's metrics adapter; accepted, not run yet.
type KarmadaMetricsAdapter struct {
	CommonSettings `json:",inline"`

	// extraArgs of the component.
	// +optional
	ExtraArgs map[string]string `json:"extraArgs,omitempty"`
}

// KarmadaStatus is what the operator observed and rolled out.
type KarmadaStatus struct {
	// observedGeneration is the generation of spec the conditions describe.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// secretRef names the Secret holding the admin kubeconfig (key
	// "kubeconfig") of the control plane's API server.
	// +optional
	SecretRef *LocalSecretReference `json:"secretRef,omitempty"`

	// karmadaVersion is the Flotilla release rolled out.
	// +optional
	KarmadaVersion string `json:"karmadaVersion,omitempty"`

	// kubernetesVersion is the version of the control plane's API server.
	// +optional
	KubernetesVersion string `json:"kubernetesVersion,omitempty"`

	// apiServerService is the API server's Service on the host cluster.
	// +optional
	APIServerService *APIServerService `json:"apiServerService,omitempty"`

	// conditions: Ready, Progressing, Degraded and UnsupportedFields.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// APIServerService names the API server's Service.
type APIServerService struct {
	// name of the Service.
	// +required
	Name string `json:"name"`
}

// +kubebuilder:object:root=true

// KarmadaList is a list of Karmada.
type KarmadaList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Karmada `json:"items"`
}
