package nodeagent

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
)

// serviceAccountMountPath is where client-go's in-cluster config reads the
// token, CA and namespace; the agent bind-mounts the pod's token volume
// there in each process's mount namespace.
const serviceAccountMountPath = "/var/run/secrets/kubernetes.io/serviceaccount"

// processSpec prepares a process of container c: binary with args (after
// $(VAR) expansion when expandVars, as for command and args; exec probes'
// commands are not expanded), the container's env, its volumes' paths
// rewritten in both, a working directory, /etc/hosts and the ServiceAccount
// token bound, and output appended to logPath.
func (w *podWorker) processSpec(c *corev1.Container, binary string, args []string, expandVars bool, logPath string) (launchSpec, error) {
	pod := w.current()
	w.mu.Lock()
	dirs := w.volumeDirs
	w.mu.Unlock()

	env, err := w.containerEnv(pod, c)
	if err != nil {
		return launchSpec{}, err
	}
	lookup := func(name string) (string, bool) {
		v, ok := env.values[name]
		return v, ok
	}
	var mappings []pathMapping
	var binds []bindMount
	for _, m := range c.VolumeMounts {
		dir, ok := dirs[m.Name]
		if !ok {
			return launchSpec{}, fmt.Errorf("volumeMount %s: no volume %q", m.MountPath, m.Name)
		}
		sub := m.SubPath
		if m.SubPathExpr != "" {
			sub = expand(m.SubPathExpr, lookup)
		}
		host := filepath.Join(dir, sub)
		if sub != "" && !strings.HasPrefix(host, dir+string(filepath.Separator)) {
			return launchSpec{}, fmt.Errorf("volumeMount %s: subPath %q leaves the volume", m.MountPath, sub)
		}
		mappings = append(mappings, pathMapping{container: m.MountPath, host: host})
		if filepath.Clean(m.MountPath) == serviceAccountMountPath {
			if err := w.a.saMountDir(); err != nil {
				return launchSpec{}, fmt.Errorf("creating the mount point %s: %w", serviceAccountMountPath, err)
			}
			binds = append(binds, bindMount{source: host, target: serviceAccountMountPath})
		}
	}
	paths := newPathRewriter(mappings)

	argv := []string{binary}
	for _, a := range args {
		if expandVars {
			a = expand(a, lookup)
		}
		argv = append(argv, paths.rewrite(a))
	}
	environ := make([]string, 0, len(env.order))
	for _, name := range env.order {
		environ = append(environ, name+"="+paths.rewrite(env.values[name]))
	}

	workDir := filepath.Join(w.dir, "work", c.Name)
	if c.WorkingDir != "" {
		if mapped := paths.rewrite(c.WorkingDir); mapped != c.WorkingDir {
			workDir = mapped
		} else {
			workDir = filepath.Join(workDir, c.WorkingDir)
		}
	}
	if err := os.MkdirAll(workDir, 0o755); err != nil {
		return launchSpec{}, err
	}
	out, err := openLog(logPath)
	if err != nil {
		return launchSpec{}, err
	}
	return launchSpec{
		argv:     argv,
		env:      environ,
		dir:      workDir,
		output:   out,
		hostname: podHostname(pod),
		binds:    append([]bindMount{{source: w.a.network.hostsPath, target: "/etc/hosts"}}, binds...),
	}, nil
}

// podHostname is the pod's hostname: spec.hostname, else its name cut to
// a DNS label.
func podHostname(pod *corev1.Pod) string {
	hostname := pod.Spec.Hostname
	if hostname == "" {
		hostname = pod.Name
	}
	if len(hostname) > validation.DNS1123LabelMaxLength {
		hostname = strings.TrimRight(hostname[:validation.DNS1123LabelMaxLength], "-.")
	}
	return hostname
}

// envVars is a process environment in the order names were first set.
type envVars struct {
	order  []string
	values map[string]string
}

func (e *envVars) set(name, value string) {
	if e.values == nil {
		e.values = map[string]string{}
	}
	if _, ok := e.values[name]; !ok {
		e.order = append(e.order, name)
	}
	e.values[name] = value
}

// containerEnv is the environment the kubelet gives a container: a base
// (PATH, HOSTNAME, HOME), KUBERNETES_SERVICE_HOST/PORT of the host's API
// server, envFrom, then env in order, each value expanded with what came
// before it.
func (w *podWorker) containerEnv(pod *corev1.Pod, c *corev1.Container) (envVars, error) {
	var env envVars
	env.set("PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin")
	env.set("HOSTNAME", podHostname(pod))
	env.set("HOME", filepath.Join(w.dir, "work", c.Name))
	apiHost, apiPort, _ := net.SplitHostPort(w.a.apiAddress)
	env.set("KUBERNETES_SERVICE_HOST", apiHost)
	env.set("KUBERNETES_SERVICE_PORT", apiPort)
	env.set("KUBERNETES_SERVICE_PORT_HTTPS", apiPort)

	for _, from := range c.EnvFrom {
		data, err := w.envSource(pod.Namespace, from)
		if err != nil {
			return env, err
		}
		for _, key := range slices.Sorted(maps.Keys(data)) {
			name := from.Prefix + key
			if len(validation.IsEnvVarName(name)) == 0 {
				env.set(name, data[key])
			}
		}
	}
	lookup := func(name string) (string, bool) {
		v, ok := env.values[name]
		return v, ok
	}
	for _, e := range c.Env {
		if e.ValueFrom == nil {
			env.set(e.Name, expand(e.Value, lookup))
			continue
		}
		value, ok, err := w.envValueFrom(pod, c, e.ValueFrom)
		if err != nil {
			return env, fmt.Errorf("env %s: %w", e.Name, err)
		}
		if ok {
			env.set(e.Name, value)
		}
	}
	return env, nil
}

// envSource reads the keys of an envFrom ConfigMap or Secret.
func (w *podWorker) envSource(namespace string, from corev1.EnvFromSource) (map[string]string, error) {
	switch {
	case from.ConfigMapRef != nil:
		cm, err := w.a.configMaps.ConfigMaps(namespace).Get(from.ConfigMapRef.Name)
		if apierrors.IsNotFound(err) && ptrTrue(from.ConfigMapRef.Optional) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("envFrom configmap %q: %w", from.ConfigMapRef.Name, err)
		}
		return cm.Data, nil
	case from.SecretRef != nil:
		secret, err := w.a.secrets.Secrets(namespace).Get(from.SecretRef.Name)
		if apierrors.IsNotFound(err) && ptrTrue(from.SecretRef.Optional) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("envFrom secret %q: %w", from.SecretRef.Name, err)
		}
		data := map[string]string{}
		for k, v := range secret.Data {
			data[k] = string(v)
		}
		return data, nil
	}
	return nil, nil
}

// envValueFrom resolves a valueFrom; ok is false for an optional reference
// to something missing, which leaves the variable unset.
func (w *podWorker) envValueFrom(pod *corev1.Pod, c *corev1.Container, from *corev1.EnvVarSource) (string, bool, error) {
	switch {
	case from.FieldRef != nil:
		v, err := w.fieldValue(pod, from.FieldRef.FieldPath)
		return v, err == nil, err
	case from.ResourceFieldRef != nil:
		v, err := resourceValue(pod, c, from.ResourceFieldRef)
		return v, err == nil, err
	case from.ConfigMapKeyRef != nil:
		ref := from.ConfigMapKeyRef
		data := map[string][]byte{}
		cm, err := w.a.configMaps.ConfigMaps(pod.Namespace).Get(ref.Name)
		if err == nil {
			for k, v := range cm.Data {
				data[k] = []byte(v)
			}
			maps.Copy(data, cm.BinaryData)
		}
		return keyValue("configmap", ref.Name, ref.Key, data, err, ptrTrue(ref.Optional))
	case from.SecretKeyRef != nil:
		ref := from.SecretKeyRef
		var data map[string][]byte
		secret, err := w.a.secrets.Secrets(pod.Namespace).Get(ref.Name)
		if err == nil {
			data = secret.Data
		}
		return keyValue("secret", ref.Name, ref.Key, data, err, ptrTrue(ref.Optional))
	}
	return "", false, errors.New("valueFrom names no source")
}

// keyValue is the value of key in a ConfigMap's or Secret's data, read
// with getErr; an optional reference to a missing object or key is unset.
func keyValue(kind, name, key string, data map[string][]byte, getErr error, optional bool) (string, bool, error) {
	if v, ok := data[key]; ok && getErr == nil {
		return string(v), true, nil
	}
	switch {
	case optional:
		return "", false, nil
	case getErr != nil:
		return "", false, fmt.Errorf("%s %q: %w", kind, name, getErr)
	}
	return "", false, fmt.Errorf("%s %q has no key %q", kind, name, key)
}

func ptrTrue(b *bool) bool { return b != nil && *b }

// fieldValue resolves a downward API field path of the pod.
func (w *podWorker) fieldValue(pod *corev1.Pod, path string) (string, error) {
	w.mu.Lock()
	podIP := w.ip
	w.mu.Unlock()
	if key, ok := subscript(path, "metadata.labels"); ok {
		return pod.Labels[key], nil
	}
	if key, ok := subscript(path, "metadata.annotations"); ok {
		return pod.Annotations[key], nil
	}
	switch path {
	case "metadata.name":
		return pod.Name, nil
	case "metadata.namespace":
		return pod.Namespace, nil
	case "metadata.uid":
		return string(pod.UID), nil
	case "metadata.labels":
		return formatMap(pod.Labels), nil
	case "metadata.annotations":
		return formatMap(pod.Annotations), nil
	case "spec.nodeName":
		return w.a.opts.NodeName, nil
	case "spec.serviceAccountName":
		return pod.Spec.ServiceAccountName, nil
	case "status.podIP", "status.podIPs":
		return podIP, nil
	case "status.hostIP", "status.hostIPs":
		return hostIP, nil
	}
	return "", fmt.Errorf("field path %q is not supported", path)
}

// subscript parses prefix['key'].
func subscript(path, prefix string) (string, bool) {
	rest, ok := strings.CutPrefix(path, prefix+"['")
	if !ok {
		return "", false
	}
	return strings.CutSuffix(rest, "']")
}

// formatMap renders labels or annotations as the downward API does: one
// key="value" per line, sorted, values quoted.
func formatMap(m map[string]string) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(m)) {
		fmt.Fprintf(&b, "%s=%q\n", k, m[k])
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// nodeAllocatable stands in for a limit a container does not set, as the
// kubelet uses the node's allocatable.
var nodeAllocatable = corev1.ResourceList{
	corev1.ResourceCPU:              resource.MustParse("16"),
	corev1.ResourceMemory:           resource.MustParse("64Gi"),
	corev1.ResourceEphemeralStorage: resource.MustParse("100Gi"),
	corev1.ResourcePods:             resource.MustParse("110"),
}

// resourceValue resolves a resourceFieldRef: a container's request or limit
// divided by divisor and rounded up.
func resourceValue(pod *corev1.Pod, c *corev1.Container, ref *corev1.ResourceFieldSelector) (string, error) {
	if ref.ContainerName != "" {
		c = nil
		for _, spec := range slices.Concat(pod.Spec.InitContainers, pod.Spec.Containers) {
			if spec.Name == ref.ContainerName {
				c = &spec
			}
		}
		if c == nil {
			return "", fmt.Errorf("resourceFieldRef names no container %q", ref.ContainerName)
		}
	}
	if c == nil {
		return "", errors.New("resourceFieldRef needs containerName in a volume")
	}
	kind, name, _ := strings.Cut(ref.Resource, ".")
	resName := corev1.ResourceName(name)
	var q resource.Quantity
	var ok bool
	switch kind {
	case "limits":
		if q, ok = c.Resources.Limits[resName]; !ok {
			q = nodeAllocatable[resName]
		}
	case "requests":
		if q, ok = c.Resources.Requests[resName]; !ok {
			// An unset request is the limit if there is one, else zero.
			q = c.Resources.Limits[resName]
		}
	default:
		return "", fmt.Errorf("resource %q is not supported", ref.Resource)
	}
	divisor := ref.Divisor
	if divisor.IsZero() {
		divisor = resource.MustParse("1")
	}
	if resName == corev1.ResourceCPU {
		return fmt.Sprint(int64(math.Ceil(float64(q.MilliValue()) / float64(divisor.MilliValue())))), nil
	}
	return fmt.Sprint(int64(math.Ceil(float64(q.Value()) / float64(divisor.Value())))), nil
}
