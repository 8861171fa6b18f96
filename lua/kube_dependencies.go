package lua

import (
	"slices"

	glua "github.com/yuin/gopher-lua"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// kubeGetPodDependencies lists the ConfigMaps, Secrets, ServiceAccount and
// PersistentVolumeClaims a pod template refers to, as
// {apiVersion="v1", kind=..., namespace=..., name=...}, grouped by kind in
// that order and sorted by name. The namespace defaults to "default".
func kubeGetPodDependencies(L *glua.LState) int {
	const fn = "kube.getPodDependencies"
	if n := L.GetTop(); n < 1 || n > 2 {
		L.RaiseError("%s: expected 2 arguments (a pod template and a namespace), got %d", fn, n)
	}
	tpl := L.CheckTable(1)
	namespace := "default"
	switch v := L.Get(2).(type) {
	case *glua.LNilType:
	case glua.LString, glua.LNumber:
		namespace = v.String()
	default:
		L.RaiseError("%s: argument #2: expected a namespace string, got %s", fn, v.Type())
	}
	spec := &corev1.PodSpec{}
	if raw := templateSpec(L, fn, tpl); raw != nil {
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, spec); err != nil {
			L.RaiseError("%s: pod template spec: %v", fn, err)
		}
	}
	deps := podDependencies(spec, namespace)
	lv, err := ToLua(L, deps)
	if err != nil {
		L.RaiseError("%s: %v", fn, err)
	}
	L.Push(lv)
	return 1
}

// Kinds of pod dependencies; dependencyKinds fixes their order in
// getPodDependencies' result.
const (
	kindConfigMap      = "ConfigMap"
	kindSecret         = "Secret"
	kindServiceAccount = "ServiceAccount"
	kindPVC            = "PersistentVolumeClaim"
)

var dependencyKinds = []string{kindConfigMap, kindSecret, kindServiceAccount, kindPVC}

func podDependencies(spec *corev1.PodSpec, namespace string) []any {
	names := make(map[string]map[string]struct{}, len(dependencyKinds))
	add := func(kind, name string) {
		if name == "" {
			return
		}
		if names[kind] == nil {
			names[kind] = map[string]struct{}{}
		}
		names[kind][name] = struct{}{}
	}
	for _, s := range spec.ImagePullSecrets {
		add(kindSecret, s.Name)
	}
	visitEnv := func(env []corev1.EnvVar, from []corev1.EnvFromSource) {
		for _, e := range from {
			if e.ConfigMapRef != nil {
				add(kindConfigMap, e.ConfigMapRef.Name)
			}
			if e.SecretRef != nil {
				add(kindSecret, e.SecretRef.Name)
			}
		}
		for _, e := range env {
			if e.ValueFrom == nil {
				continue
			}
			if e.ValueFrom.ConfigMapKeyRef != nil {
				add(kindConfigMap, e.ValueFrom.ConfigMapKeyRef.Name)
			}
			if e.ValueFrom.SecretKeyRef != nil {
				add(kindSecret, e.ValueFrom.SecretKeyRef.Name)
			}
		}
	}
	for _, c := range spec.InitContainers {
		visitEnv(c.Env, c.EnvFrom)
	}
	for _, c := range spec.Containers {
		visitEnv(c.Env, c.EnvFrom)
	}
	for _, c := range spec.EphemeralContainers {
		visitEnv(c.Env, c.EnvFrom)
	}
	for i := range spec.Volumes {
		visitVolume(&spec.Volumes[i].VolumeSource, add)
	}
	sa := spec.ServiceAccountName
	if sa == "" {
		sa = spec.DeprecatedServiceAccount
	}
	if sa != "default" {
		add(kindServiceAccount, sa)
	}

	deps := []any{}
	for _, kind := range dependencyKinds {
		sorted := make([]string, 0, len(names[kind]))
		for name := range names[kind] {
			sorted = append(sorted, name)
		}
		slices.Sort(sorted)
		for _, name := range sorted {
			deps = append(deps, map[string]any{
				"apiVersion": "v1", "kind": kind, "namespace": namespace, "name": name,
			})
		}
	}
	return deps
}

// visitVolume reports the ConfigMaps, Secrets and claims a volume uses,
// including the secrets of storage plugins that authenticate with one.
func visitVolume(v *corev1.VolumeSource, add func(kind, name string)) {
	secretRef := func(ref *corev1.LocalObjectReference) {
		if ref != nil {
			add(kindSecret, ref.Name)
		}
	}
	if v.ConfigMap != nil {
		add(kindConfigMap, v.ConfigMap.Name)
	}
	if v.Secret != nil {
		add(kindSecret, v.Secret.SecretName)
	}
	if v.PersistentVolumeClaim != nil {
		add(kindPVC, v.PersistentVolumeClaim.ClaimName)
	}
	if v.Projected != nil {
		for _, src := range v.Projected.Sources {
			if src.ConfigMap != nil {
				add(kindConfigMap, src.ConfigMap.Name)
			}
			if src.Secret != nil {
				add(kindSecret, src.Secret.Name)
			}
		}
	}
	if v.AzureFile != nil {
		add(kindSecret, v.AzureFile.SecretName)
	}
	if v.CephFS != nil {
		secretRef(v.CephFS.SecretRef)
	}
	if v.Cinder != nil {
		secretRef(v.Cinder.SecretRef)
	}
	if v.FlexVolume != nil {
		secretRef(v.FlexVolume.SecretRef)
	}
	if v.RBD != nil {
		secretRef(v.RBD.SecretRef)
	}
	if v.ScaleIO != nil {
		secretRef(v.ScaleIO.SecretRef)
	}
	if v.ISCSI != nil {
		secretRef(v.ISCSI.SecretRef)
	}
	if v.StorageOS != nil {
		secretRef(v.StorageOS.SecretRef)
	}
	if v.CSI != nil {
		secretRef(v.CSI.NodePublishSecretRef)
	}
}
