package execution

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/membercluster"
)

// reconcileDelete removes the Work's objects from the member, or releases
// them when the Work preserves them, then the finalizer. A member that
// cannot be reached is retried with backoff, unless its Cluster is gone or
// leaving while not Ready: then there is no member to clean up any more,
// and holding the Work would block the cluster's removal.
func (r *Reconciler) reconcileDelete(ctx context.Context, work *workv1alpha1.Work, cluster *clusterv1alpha1.Cluster) error {
	if !controllerutil.ContainsFinalizer(work, workv1alpha1.ExecutionControllerFinalizer) {
		return nil
	}
	log := ctrl.LoggerFrom(ctx)
	leaving := cluster == nil || (!cluster.DeletionTimestamp.IsZero() && !IsReady(cluster))
	if leaving {
		log.Info("Cluster gone or leaving; releasing the Work without cleaning up the member")
		return r.releaseFinalizer(ctx, work)
	}
	if err := r.cleanUp(ctx, cluster, work); err != nil {
		return fmt.Errorf("cleaning up after Work %s/%s: %w", work.Namespace, work.Name, err)
	}
	return r.releaseFinalizer(ctx, work)
}

// cleanUp deletes or releases, in the member, every object of the Work.
func (r *Reconciler) cleanUp(ctx context.Context, cluster *clusterv1alpha1.Cluster, work *workv1alpha1.Work) error {
	clients, err := r.Members.ForCluster(ctx, cluster)
	if err != nil {
		return err
	}
	targets, manifestErrs := Targets(work, clients.Client.RESTMapper())
	var errs []error
	for _, err := range manifestErrs {
		// A manifest that never decoded, or whose kind the member does not
		// serve, left nothing there.
		if !NothingApplied(err) {
			errs = append(errs, err)
		}
	}
	preserve := ptr.Deref(work.Spec.PreserveResourcesOnDeletion, false)
	for i := range targets {
		t := &targets[i]
		if err := r.removeTarget(ctx, clients, work, t, preserve); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", t, err))
		}
	}
	return errors.Join(errs...)
}

// removeTarget deletes the member object of one manifest, or strips the
// control plane's labels and annotations from it when preserved. Objects
// the Work does not manage (a conflict it never took over) are left alone.
func (r *Reconciler) removeTarget(ctx context.Context, clients *membercluster.Clients, work *workv1alpha1.Work, t *Target, preserve bool) error {
	ctx, cancel := context.WithTimeout(ctx, r.MemberTimeout)
	defer cancel()
	resource := resourceFor(clients, t)
	observed, err := r.observe(ctx, clients, resource, t)
	if err != nil || observed == nil || !ManagedBy(observed, work) {
		return err
	}
	log := ctrl.LoggerFrom(ctx).WithValues("object", t.String())
	if preserve {
		patch, err := releasePatch(observed)
		if err != nil || patch == nil {
			return err
		}
		if _, err := resource.Patch(ctx, observed.GetName(), types.MergePatchType, patch, metav1.PatchOptions{FieldManager: FieldManager}); err != nil {
			if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
				// Gone, or replaced by another object (the uid check).
				return nil
			}
			return fmt.Errorf("releasing: %w", err)
		}
		log.Info("Released preserved member object")
		return nil
	}
	if observed.GetDeletionTimestamp() != nil {
		return nil
	}
	uid := observed.GetUID()
	err = resource.Delete(ctx, observed.GetName(), metav1.DeleteOptions{
		// The uid keeps an object recreated meanwhile.
		Preconditions:     &metav1.Preconditions{UID: &uid},
		PropagationPolicy: ptr.To(metav1.DeletePropagationBackground),
	})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("deleting: %w", err)
	}
	log.V(1).Info("Deleted member object")
	return nil
}

// releasePatch is the merge patch that removes the control plane's labels
// and annotations from a member object, guarded by its uid; nil when there
// are none.
func releasePatch(observed *unstructured.Unstructured) ([]byte, error) {
	labels := nullKeys(observed.GetLabels(), flotillaLabels)
	annotations := nullKeys(observed.GetAnnotations(), flotillaAnnotations)
	if len(labels) == 0 && len(annotations) == 0 {
		return nil, nil
	}
	metadata := map[string]any{"uid": observed.GetUID()}
	if len(labels) > 0 {
		metadata["labels"] = labels
	}
	if len(annotations) > 0 {
		metadata["annotations"] = annotations
	}
	patch, err := json.Marshal(map[string]any{"metadata": metadata})
	if err != nil {
		return nil, fmt.Errorf("encoding release patch: %w", err)
	}
	return patch, nil
}

// nullKeys maps each of keys present in m to null, which a merge patch
// reads as removal.
func nullKeys(m map[string]string, keys []string) map[string]any {
	out := map[string]any{}
	for _, k := range keys {
		if _, ok := m[k]; ok {
			out[k] = nil
		}
	}
	return out
}

// releaseFinalizer lets the Work go.
func (r *Reconciler) releaseFinalizer(ctx context.Context, work *workv1alpha1.Work) error {
	base := work.DeepCopy()
	controllerutil.RemoveFinalizer(work, workv1alpha1.ExecutionControllerFinalizer)
	if err := r.Client.Patch(ctx, work, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("removing finalizer: %w", err)
	}
	return nil
}
