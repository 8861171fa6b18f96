package nodeagent

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// syncVolumes writes every volume of the pod, or brings its content up to
// date, and returns their paths by name. Secret, ConfigMap, downward API and
// projected volumes are rewritten atomically when their sources changed.
func (w *podWorker) syncVolumes(ctx context.Context, pod *corev1.Pod) (map[string]string, error) {
	w.volMu.Lock()
	defer w.volMu.Unlock()
	dirs := map[string]string{}
	var errs []error
	for _, v := range pod.Spec.Volumes {
		dir, err := w.syncVolume(ctx, pod, v)
		if err != nil {
			errs = append(errs, fmt.Errorf("volume %q: %w", v.Name, err))
			continue
		}
		dirs[v.Name] = dir
	}
	return dirs, errors.Join(errs...)
}

func (w *podWorker) syncVolume(ctx context.Context, pod *corev1.Pod, v corev1.Volume) (string, error) {
	dir := filepath.Join(w.dir, "volumes", v.Name)
	var files map[string]volumeFile
	var err error
	switch src := v.VolumeSource; {
	case src.EmptyDir != nil:
		return dir, os.MkdirAll(dir, 0o777)
	case src.HostPath != nil:
		return w.a.hostPath(src.HostPath)
	case src.PersistentVolumeClaim != nil:
		return w.a.claimPath(pod.Namespace, src.PersistentVolumeClaim.ClaimName)
	case src.Ephemeral != nil:
		// The ephemeral volume controller makes a claim named after both.
		return w.a.claimPath(pod.Namespace, pod.Name+"-"+v.Name)
	case src.Secret != nil:
		files, err = w.secretFiles(pod.Namespace, src.Secret.SecretName, src.Secret.Items, src.Secret.DefaultMode, src.Secret.Optional)
	case src.ConfigMap != nil:
		files, err = w.configMapFiles(pod.Namespace, src.ConfigMap.Name, src.ConfigMap.Items, src.ConfigMap.DefaultMode, src.ConfigMap.Optional)
	case src.DownwardAPI != nil:
		files, err = w.downwardFiles(pod, src.DownwardAPI.Items, src.DownwardAPI.DefaultMode)
	case src.Projected != nil:
		files, err = w.projectedFiles(ctx, pod, src.Projected)
	default:
		return "", errors.New("this kind of volume is not supported by the node agent")
	}
	if err != nil {
		return "", err
	}
	return dir, writeAtomic(dir, files)
}

// hostPath maps a hostPath volume under Dir/hostpath: the real path is never
// touched. Missing directories are created, and missing files for the File
// types.
func (a *Agent) hostPath(src *corev1.HostPathVolumeSource) (string, error) {
	p := filepath.Join(a.opts.Dir, "hostpath", filepath.Clean("/"+src.Path))
	kind := corev1.HostPathUnset
	if src.Type != nil {
		kind = *src.Type
	}
	switch kind {
	case corev1.HostPathFile, corev1.HostPathFileOrCreate:
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return "", err
		}
		f, err := os.OpenFile(p, os.O_CREATE|os.O_RDONLY, 0o644)
		if err != nil {
			return "", err
		}
		return p, f.Close()
	case corev1.HostPathSocket, corev1.HostPathCharDev, corev1.HostPathBlockDev:
		return p, os.MkdirAll(filepath.Dir(p), 0o755)
	}
	return p, os.MkdirAll(p, 0o755)
}

// claimPath is the directory of a PersistentVolumeClaim: one per claim
// (by UID) under Dir/claims, whatever PersistentVolume it is bound to.
func (a *Agent) claimPath(namespace, name string) (string, error) {
	claim, err := a.claims.PersistentVolumeClaims(namespace).Get(name)
	if err != nil {
		return "", fmt.Errorf("persistentvolumeclaim %q: %w", name, err)
	}
	if claim.Status.Phase != corev1.ClaimBound {
		return "", fmt.Errorf("persistentvolumeclaim %q is %s, not Bound", name, claim.Status.Phase)
	}
	dir := a.claimDir(claim)
	return dir, os.MkdirAll(dir, 0o777)
}

func (a *Agent) claimDir(claim *corev1.PersistentVolumeClaim) string {
	return filepath.Join(a.opts.Dir, "claims", claim.Namespace+"_"+claim.Name+"_"+string(claim.UID))
}

func (w *podWorker) secretFiles(namespace, name string, items []corev1.KeyToPath, mode *int32, optional *bool) (map[string]volumeFile, error) {
	secret, err := w.a.secrets.Secrets(namespace).Get(name)
	if apierrors.IsNotFound(err) && ptrTrue(optional) {
		return map[string]volumeFile{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("secret %q: %w", name, err)
	}
	return keyFiles("secret "+name, secret.Data, items, mode, ptrTrue(optional))
}

func (w *podWorker) configMapFiles(namespace, name string, items []corev1.KeyToPath, mode *int32, optional *bool) (map[string]volumeFile, error) {
	cm, err := w.a.configMaps.ConfigMaps(namespace).Get(name)
	if apierrors.IsNotFound(err) && ptrTrue(optional) {
		return map[string]volumeFile{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("configmap %q: %w", name, err)
	}
	data := map[string][]byte{}
	for k, v := range cm.Data {
		data[k] = []byte(v)
	}
	for k, v := range cm.BinaryData {
		data[k] = v
	}
	return keyFiles("configmap "+name, data, items, mode, ptrTrue(optional))
}

// keyFiles lays out a Secret's or ConfigMap's keys: every key as a file of
// its name, or only items at their paths; a missing item key is an error
// unless the source is optional.
func keyFiles(what string, data map[string][]byte, items []corev1.KeyToPath, defaultMode *int32, optional bool) (map[string]volumeFile, error) {
	files := map[string]volumeFile{}
	if len(items) == 0 {
		for k, v := range data {
			files[k] = volumeFile{data: v, mode: fileMode(nil, defaultMode)}
		}
		return files, nil
	}
	for _, item := range items {
		v, ok := data[item.Key]
		if !ok {
			if optional {
				continue
			}
			return nil, fmt.Errorf("%s has no key %q", what, item.Key)
		}
		files[item.Path] = volumeFile{data: v, mode: fileMode(item.Mode, defaultMode)}
	}
	return files, nil
}

// fileMode is an item's mode, else the volume's default, else 0644.
func fileMode(item, volume *int32) fs.FileMode {
	switch {
	case item != nil:
		return fs.FileMode(*item)
	case volume != nil:
		return fs.FileMode(*volume)
	}
	return 0o644
}

func (w *podWorker) downwardFiles(pod *corev1.Pod, items []corev1.DownwardAPIVolumeFile, defaultMode *int32) (map[string]volumeFile, error) {
	files := map[string]volumeFile{}
	for _, item := range items {
		var value string
		var err error
		switch {
		case item.FieldRef != nil:
			value, err = w.fieldValue(pod, item.FieldRef.FieldPath)
		case item.ResourceFieldRef != nil:
			value, err = resourceValue(pod, nil, item.ResourceFieldRef)
		default:
			err = errors.New("downward API item names no field")
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", item.Path, err)
		}
		files[item.Path] = volumeFile{data: []byte(value), mode: fileMode(item.Mode, defaultMode)}
	}
	return files, nil
}

// projectedFiles merges the sources of a projected volume, requesting
// ServiceAccount tokens bound to the pod.
func (w *podWorker) projectedFiles(ctx context.Context, pod *corev1.Pod, p *corev1.ProjectedVolumeSource) (map[string]volumeFile, error) {
	files := map[string]volumeFile{}
	for _, src := range p.Sources {
		var part map[string]volumeFile
		var err error
		switch {
		case src.Secret != nil:
			part, err = w.secretFiles(pod.Namespace, src.Secret.Name, src.Secret.Items, p.DefaultMode, src.Secret.Optional)
		case src.ConfigMap != nil:
			part, err = w.configMapFiles(pod.Namespace, src.ConfigMap.Name, src.ConfigMap.Items, p.DefaultMode, src.ConfigMap.Optional)
		case src.DownwardAPI != nil:
			part, err = w.downwardFiles(pod, src.DownwardAPI.Items, p.DefaultMode)
		case src.ServiceAccountToken != nil:
			var token string
			token, err = w.a.tokens.get(ctx, pod, src.ServiceAccountToken)
			part = map[string]volumeFile{src.ServiceAccountToken.Path: {data: []byte(token), mode: fileMode(nil, p.DefaultMode)}}
		default:
			err = errors.New("this projected source is not supported by the node agent")
		}
		if err != nil {
			return nil, err
		}
		for k, v := range part {
			files[k] = v
		}
	}
	return files, nil
}

// tokenCache holds the pods' ServiceAccount tokens, asking for a new one
// once 80% of a token's life is gone, as the kubelet does.
type tokenCache struct {
	client kubernetes.Interface
	mu     sync.Mutex
	tokens map[string]cachedToken
}

type cachedToken struct {
	pod             types.UID
	token           string
	issued, expires time.Time
}

func newTokenCache(client kubernetes.Interface) *tokenCache {
	return &tokenCache{client: client, tokens: map[string]cachedToken{}}
}

func (t *tokenCache) get(ctx context.Context, pod *corev1.Pod, src *corev1.ServiceAccountTokenProjection) (string, error) {
	seconds := ptr.Deref(src.ExpirationSeconds, 3600)
	key := fmt.Sprintf("%s/%s/%d", pod.UID, src.Audience, seconds)
	t.mu.Lock()
	cached, ok := t.tokens[key]
	t.mu.Unlock()
	if ok && time.Since(cached.issued) < cached.expires.Sub(cached.issued)*8/10 {
		return cached.token, nil
	}
	sa := pod.Spec.ServiceAccountName
	if sa == "" {
		sa = "default"
	}
	req := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
		ExpirationSeconds: &seconds,
		BoundObjectRef:    &authenticationv1.BoundObjectReference{APIVersion: "v1", Kind: "Pod", Name: pod.Name, UID: pod.UID},
	}}
	if src.Audience != "" {
		req.Spec.Audiences = []string{src.Audience}
	}
	issued := time.Now()
	resp, err := t.client.CoreV1().ServiceAccounts(pod.Namespace).CreateToken(ctx, sa, req, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("requesting a token for serviceaccount %q: %w", sa, err)
	}
	t.mu.Lock()
	t.tokens[key] = cachedToken{pod: pod.UID, token: resp.Status.Token, issued: issued, expires: resp.Status.ExpirationTimestamp.Time}
	t.mu.Unlock()
	return resp.Status.Token, nil
}

// forget drops a pod's tokens.
func (t *tokenCache) forget(uid types.UID) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for k, v := range t.tokens {
		if v.pod == uid {
			delete(t.tokens, k)
		}
	}
}
