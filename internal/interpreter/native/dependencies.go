package native

import (
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	configv1alpha1 "github.com/flotilla-io/flotilla/api/config/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/names"
)

// Dependencies are the objects a template needs in every cluster it goes
// to: the ConfigMaps, Secrets (image pull secrets included), claims and
// service account its pods use; for an Ingress its TLS secrets and backend
// Services; for a ServiceImport the derived Service and its EndpointSlices.
func dependencyRules() map[schema.GroupVersionKind]depsFunc {
	template := podTemplateDependencies("spec", "template", "spec")
	return map[schema.GroupVersionKind]depsFunc{
		podGVK:         podTemplateDependencies("spec"),
		deploymentGVK:  template,
		replicaSetGVK:  template,
		statefulSetGVK: template,
		daemonSetGVK:   template,
		jobGVK:         template,
		cronJobGVK:     podTemplateDependencies("spec", "jobTemplate", "spec", "template", "spec"),
		ingressGVK:     ingressDependencies,
		svcImportGVK:   serviceImportDependencies,
	}
}

func podTemplateDependencies(fields ...string) depsFunc {
	return func(obj *unstructured.Unstructured) ([]configv1alpha1.DependentObjectReference, error) {
		raw, err := nestedMap(obj.Object, fields...)
		if err != nil || raw == nil {
			return nil, err
		}
		var spec corev1.PodSpec
		if err := fromUnstructured(raw, &spec, "pod spec"); err != nil {
			return nil, err
		}
		return podDependencies(&spec, obj.GetNamespace()), nil
	}
}

// dependencySet collects references without duplicates, in the order
// found (the chain sorts them).
type dependencySet struct {
	namespace string
	seen      map[[2]string]bool
	refs      []configv1alpha1.DependentObjectReference
}

func (s *dependencySet) add(kind, name string) {
	if name == "" {
		return
	}
	key := [2]string{kind, name}
	if s.seen[key] {
		return
	}
	if s.seen == nil {
		s.seen = map[[2]string]bool{}
	}
	s.seen[key] = true
	s.refs = append(s.refs, configv1alpha1.DependentObjectReference{
		APIVersion: "v1", Kind: kind, Namespace: s.namespace, Name: name,
	})
}

func (s *dependencySet) secret(ref *corev1.LocalObjectReference) {
	if ref != nil {
		s.add("Secret", ref.Name)
	}
}

func podDependencies(spec *corev1.PodSpec, namespace string) []configv1alpha1.DependentObjectReference {
	s := &dependencySet{namespace: namespace}
	for i := range spec.ImagePullSecrets {
		s.secret(&spec.ImagePullSecrets[i])
	}
	env := func(vars []corev1.EnvVar, from []corev1.EnvFromSource) {
		for _, f := range from {
			if f.ConfigMapRef != nil {
				s.add("ConfigMap", f.ConfigMapRef.Name)
			}
			if f.SecretRef != nil {
				s.add("Secret", f.SecretRef.Name)
			}
		}
		for _, v := range vars {
			if v.ValueFrom == nil {
				continue
			}
			if r := v.ValueFrom.ConfigMapKeyRef; r != nil {
				s.add("ConfigMap", r.Name)
			}
			if r := v.ValueFrom.SecretKeyRef; r != nil {
				s.add("Secret", r.Name)
			}
		}
	}
	for _, c := range spec.InitContainers {
		env(c.Env, c.EnvFrom)
	}
	for _, c := range spec.Containers {
		env(c.Env, c.EnvFrom)
	}
	for _, c := range spec.EphemeralContainers {
		env(c.Env, c.EnvFrom)
	}
	for i := range spec.Volumes {
		volumeDependencies(s, &spec.Volumes[i].VolumeSource)
	}
	sa := spec.ServiceAccountName
	if sa == "" {
		sa = spec.DeprecatedServiceAccount
	}
	if sa != "default" {
		s.add("ServiceAccount", sa)
	}
	return s.refs
}

func volumeDependencies(s *dependencySet, v *corev1.VolumeSource) {
	switch {
	case v.ConfigMap != nil:
		s.add("ConfigMap", v.ConfigMap.Name)
	case v.Secret != nil:
		s.add("Secret", v.Secret.SecretName)
	case v.PersistentVolumeClaim != nil:
		s.add("PersistentVolumeClaim", v.PersistentVolumeClaim.ClaimName)
	case v.Projected != nil:
		for _, src := range v.Projected.Sources {
			if src.ConfigMap != nil {
				s.add("ConfigMap", src.ConfigMap.Name)
			}
			if src.Secret != nil {
				s.add("Secret", src.Secret.Name)
			}
		}
	case v.AzureFile != nil:
		s.add("Secret", v.AzureFile.SecretName)
	case v.CephFS != nil:
		s.secret(v.CephFS.SecretRef)
	case v.Cinder != nil:
		s.secret(v.Cinder.SecretRef)
	case v.FlexVolume != nil:
		s.secret(v.FlexVolume.SecretRef)
	case v.RBD != nil:
		s.secret(v.RBD.SecretRef)
	case v.ScaleIO != nil:
		s.secret(v.ScaleIO.SecretRef)
	case v.ISCSI != nil:
		s.secret(v.ISCSI.SecretRef)
	case v.StorageOS != nil:
		s.secret(v.StorageOS.SecretRef)
	case v.CSI != nil:
		s.secret(v.CSI.NodePublishSecretRef)
	}
}

// ingressDependencies lists the TLS secrets and the Services the rules and
// the default backend route to.
func ingressDependencies(obj *unstructured.Unstructured) ([]configv1alpha1.DependentObjectReference, error) {
	raw, err := nestedMap(obj.Object, "spec")
	if err != nil || raw == nil {
		return nil, err
	}
	var spec networkingv1.IngressSpec
	if err := fromUnstructured(raw, &spec, "spec"); err != nil {
		return nil, err
	}
	s := &dependencySet{namespace: obj.GetNamespace()}
	for _, tls := range spec.TLS {
		s.add("Secret", tls.SecretName)
	}
	backend := func(b *networkingv1.IngressBackend) {
		if b != nil && b.Service != nil {
			s.add("Service", b.Service.Name)
		}
	}
	backend(spec.DefaultBackend)
	for _, rule := range spec.Rules {
		if rule.HTTP == nil {
			continue
		}
		for i := range rule.HTTP.Paths {
			backend(&rule.HTTP.Paths[i].Backend)
		}
	}
	return s.refs, nil
}

// serviceImportDependencies names what makes an imported service usable in
// the clusters its ServiceImport goes to: the Service derived-<name> that
// the service-import controller derives in the control plane, and the
// EndpointSlices collected from the exporting clusters, which carry
// kubernetes.io/service-name: derived-<name>.
func serviceImportDependencies(obj *unstructured.Unstructured) ([]configv1alpha1.DependentObjectReference, error) {
	derived := names.DerivedService(obj.GetName())
	return []configv1alpha1.DependentObjectReference{
		{APIVersion: "v1", Kind: "Service", Namespace: obj.GetNamespace(), Name: derived},
		{APIVersion: "discovery.k8s.io/v1", Kind: "EndpointSlice", Namespace: obj.GetNamespace(),
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{discoveryv1.LabelServiceName: derived}}},
	}, nil
}
