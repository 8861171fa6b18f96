package karmada

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	operatorv1alpha1 "github.com/flotilla-io/flotilla/api/operator/v1alpha1"
)

// finalize removes everything the operator made for a deleted Karmada:
// every release (controllers first, etcd last), then its own Secrets and
// etcd's volumes — the last two kept when spec.preserveDataOnDeletion asks
// for it, so a Karmada of the same name finds its data and CA again.
func (r *Reconciler) finalize(ctx context.Context, k *operatorv1alpha1.Karmada) (reconcile.Result, error) {
	if !controllerutil.ContainsFinalizer(k, operatorv1alpha1.Finalizer) {
		return reconcile.Result{}, nil
	}
	// Every release an instance can have, whatever its spec says now: a
	// descheduler turned off a moment ago may still be installed.
	all := allComponents()
	slices.Reverse(all)
	for _, c := range all {
		if err := r.Helm.Uninstall(ctx, k.Namespace, releaseName(k.Name, c)); err != nil {
			return reconcile.Result{}, err
		}
	}
	if !k.Spec.PreserveDataOnDeletion {
		if err := r.deleteOwnSecrets(ctx, k); err != nil {
			return reconcile.Result{}, err
		}
		if err := r.deleteEtcdVolumes(ctx, k); err != nil {
			return reconcile.Result{}, err
		}
	}
	r.ControlPlanes.Forget(k.UID)
	r.Recorder.Eventf(k, nil, corev1.EventTypeNormal, EventUninstalled, "Delete", "removed the control plane's releases%s",
		map[bool]string{true: "; kept its Secrets and etcd volumes (spec.preserveDataOnDeletion)", false: ", Secrets and etcd volumes"}[k.Spec.PreserveDataOnDeletion])
	controllerutil.RemoveFinalizer(k, operatorv1alpha1.Finalizer)
	if err := r.Update(ctx, k); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(fmt.Errorf("removing finalizer: %w", err))
	}
	return reconcile.Result{}, nil
}

func (r *Reconciler) deleteOwnSecrets(ctx context.Context, k *operatorv1alpha1.Karmada) error {
	err := r.DeleteAllOf(ctx, &corev1.Secret{}, client.InNamespace(k.Namespace), client.MatchingLabels{
		operatorv1alpha1.LabelKarmadaName: k.Name,
		operatorv1alpha1.LabelManagedBy:   operatorv1alpha1.ManagedByOperator,
	})
	if err != nil {
		return fmt.Errorf("deleting the instance's Secrets: %w", err)
	}
	return nil
}

// deleteEtcdVolumes deletes the claims the etcd StatefulSet made from its
// claim template (<template>-<instance>-etcd-<ordinal>): a StatefulSet
// leaves them behind by design.
func (r *Reconciler) deleteEtcdVolumes(ctx context.Context, k *operatorv1alpha1.Karmada) error {
	claims := &corev1.PersistentVolumeClaimList{}
	if err := r.APIReader.List(ctx, claims, client.InNamespace(k.Namespace)); err != nil {
		return fmt.Errorf("listing etcd's volumes: %w", err)
	}
	sts := releaseName(k.Name, Etcd)
	for i := range claims.Items {
		pvc := &claims.Items[i]
		// The claim carries the StatefulSet's selector labels, which tell it
		// from a claim of an instance whose name ends like this one's.
		if !etcdClaim(pvc.Name, sts) || pvc.Labels["app.kubernetes.io/instance"] != sts {
			continue
		}
		if err := r.Delete(ctx, pvc); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("deleting etcd volume %s: %w", pvc.Name, err)
		}
	}
	return nil
}

// etcdClaim reports whether a claim name is <template>-<statefulset>-<n>.
func etcdClaim(name, statefulSet string) bool {
	i := strings.LastIndex(name, "-"+statefulSet+"-")
	if i <= 0 {
		return false
	}
	ordinal := name[i+len(statefulSet)+2:]
	if ordinal == "" {
		return false
	}
	for _, c := range ordinal {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
