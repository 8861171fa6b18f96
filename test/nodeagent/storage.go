package nodeagent

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"
)

// The host cluster has no storage, so claims (a StatefulSet's
// volumeClaimTemplates, say) would stay Pending and the scheduler would
// never place their pods. The agent is a minimal provisioner: it installs a
// default StorageClass, flotilla-test, whose provisioner it plays. For each
// Pending claim of that class it creates a hostPath PersistentVolume
// pre-bound to the claim, pointing at the claim's directory under
// Dir/claims, and kube-controller-manager's binder completes the binding.
// When a claim is deleted the volume is Released; the agent then deletes it
// and its directory, as its reclaim policy Delete says.
const (
	StorageClassName = "flotilla-test"
	provisionerName  = "nodeagent.flotilla.io/hostpath"
	// provisionedByAnnotation marks the volumes a provisioner made, as the
	// external provisioners' library does.
	provisionedByAnnotation = "pv.kubernetes.io/provisioned-by"
	defaultClassAnnotation  = "storageclass.kubernetes.io/is-default-class"
)

// ensureStorageClass installs the flotilla-test StorageClass.
func (a *Agent) ensureStorageClass(ctx context.Context) error {
	sc := &storagev1.StorageClass{
		ObjectMeta: metav1.ObjectMeta{
			Name:        StorageClassName,
			Annotations: map[string]string{defaultClassAnnotation: "true"},
		},
		Provisioner:       provisionerName,
		ReclaimPolicy:     ptr.To(corev1.PersistentVolumeReclaimDelete),
		VolumeBindingMode: ptr.To(storagev1.VolumeBindingImmediate),
	}
	_, err := a.client.StorageV1().StorageClasses().Create(ctx, sc, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating StorageClass %s: %w", StorageClassName, err)
	}
	return nil
}

// provision provisions and reclaims on every change of a claim or volume,
// and every few seconds, until ctx ends.
func (a *Agent) provision(ctx context.Context) {
	ticker := time.NewTicker(5 * time.Second)
	defer ticker.Stop()
	for {
		a.provisionClaims(ctx)
		a.reclaimVolumes(ctx)
		select {
		case <-ctx.Done():
			return
		case <-a.storageKick:
		case <-ticker.C:
		}
	}
}

func (a *Agent) provisionClaims(ctx context.Context) {
	claims, err := a.claims.List(labels.Everything())
	if err != nil {
		return
	}
	for _, claim := range claims {
		if claim.Status.Phase != corev1.ClaimPending || claim.Spec.VolumeName != "" ||
			ptr.Deref(claim.Spec.StorageClassName, "") != StorageClassName || claim.DeletionTimestamp != nil {
			continue
		}
		name := "pvc-" + string(claim.UID)
		if _, err := a.volumes.Get(name); err == nil {
			continue // made already; the binder is on it
		}
		size := claim.Spec.Resources.Requests[corev1.ResourceStorage]
		if size.IsZero() {
			size = resource.MustParse("1Gi")
		}
		pv := &corev1.PersistentVolume{
			ObjectMeta: metav1.ObjectMeta{
				Name:        name,
				Annotations: map[string]string{provisionedByAnnotation: provisionerName},
			},
			Spec: corev1.PersistentVolumeSpec{
				Capacity:                      corev1.ResourceList{corev1.ResourceStorage: size},
				AccessModes:                   claim.Spec.AccessModes,
				VolumeMode:                    claim.Spec.VolumeMode,
				PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimDelete,
				StorageClassName:              StorageClassName,
				ClaimRef: &corev1.ObjectReference{
					APIVersion: "v1", Kind: "PersistentVolumeClaim",
					Namespace: claim.Namespace, Name: claim.Name, UID: claim.UID,
				},
				PersistentVolumeSource: corev1.PersistentVolumeSource{
					HostPath: &corev1.HostPathVolumeSource{Path: a.claimDir(claim)},
				},
			},
		}
		if err := os.MkdirAll(a.claimDir(claim), 0o777); err != nil {
			a.log.Error(err, "Provisioning", "claim", claim.Namespace+"/"+claim.Name)
			continue
		}
		_, err := a.client.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			a.log.Error(err, "Provisioning", "claim", claim.Namespace+"/"+claim.Name)
			continue
		}
		a.log.Info("Provisioned a volume", "claim", claim.Namespace+"/"+claim.Name, "volume", pv.Name, "path", a.claimDir(claim))
	}
}

// reclaimVolumes deletes the Released volumes this agent made, and their
// directories.
func (a *Agent) reclaimVolumes(ctx context.Context) {
	volumes, err := a.volumes.List(labels.Everything())
	if err != nil {
		return
	}
	for _, pv := range volumes {
		if pv.Annotations[provisionedByAnnotation] != provisionerName || pv.Status.Phase != corev1.VolumeReleased ||
			pv.Spec.HostPath == nil {
			continue
		}
		dir := pv.Spec.HostPath.Path
		if !strings.HasPrefix(dir, filepath.Join(a.opts.Dir, "claims")+string(filepath.Separator)) {
			continue // another agent's
		}
		if err := os.RemoveAll(dir); err != nil {
			a.log.Error(err, "Reclaiming", "volume", pv.Name)
			continue
		}
		err := a.client.CoreV1().PersistentVolumes().Delete(ctx, pv.Name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			a.log.Error(err, "Reclaiming", "volume", pv.Name)
		}
	}
}
