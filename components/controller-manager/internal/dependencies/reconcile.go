package dependencies

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/uuid"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	configv1alpha1 "github.com/flotilla-io/flotilla/api/config/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/components/controller-manager/internal/binding"
	flotillaevents "github.com/flotilla-io/flotilla/internal/events"
	"github.com/flotilla-io/flotilla/internal/interpreter"
)

// Event actions (events.k8s.io/v1 requires one).
const (
	actionGetDependencies  = "GetDependencies"
	actionSyncDependencies = "SyncScheduleResultToDependencies"
)

const (
	// conflictRetry requeues after a write lost a race; the next attempt
	// starts from the newer object.
	conflictRetry = 200 * time.Millisecond
	// pendingRetry requeues while an attached binding is being deleted, or
	// still belongs to a dependency deleted and recreated under its name.
	pendingRetry = 2 * time.Second
)

// Reconcile syncs the attached bindings of one dependent binding: a
// ResourceBinding, or a ClusterResourceBinding when the request has no
// namespace.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	obj := newDependent(req.Namespace)
	if err := r.Client.Get(ctx, req.NamespacedName, obj); err != nil {
		if !apierrors.IsNotFound(err) {
			return ctrl.Result{}, err
		}
		// Gone without the finalizer's cleanup: entries are found by name.
		return r.release(ctx, req.Namespace, req.Name, nil)
	}
	objMeta, spec := bindingParts(obj)
	if !objMeta.DeletionTimestamp.IsZero() || !spec.PropagateDeps {
		return r.release(ctx, objMeta.Namespace, objMeta.Name, obj)
	}
	return r.sync(ctx, obj)
}

// syncState collects what one reconcile did.
type syncState struct {
	written  int
	failures []error
	raced    bool
	pending  bool
}

func (s *syncState) writeFailed(err error) {
	if apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err) {
		s.raced = true
		return
	}
	s.failures = append(s.failures, err)
}

func (s *syncState) err() error { return errors.Join(s.failures...) }

// result retries failures with backoff, lost races soon, and waits for
// bindings being deleted.
func (s *syncState) result(ctx context.Context) (ctrl.Result, error) {
	switch {
	case len(s.failures) > 0:
		return ctrl.Result{}, s.err()
	case s.raced:
		ctrl.LoggerFrom(ctx).V(1).Info("Lost a race writing an attached binding; retrying")
		return ctrl.Result{RequeueAfter: conflictRetry}, nil
	case s.pending:
		return ctrl.Result{RequeueAfter: pendingRetry}, nil
	}
	return ctrl.Result{}, nil
}

// sync makes the attached bindings of obj's dependencies follow it.
func (r *Reconciler) sync(ctx context.Context, obj client.Object) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	objMeta, spec := bindingParts(obj)
	d := dependentOf(objMeta, spec)
	if d.id == "" {
		// The detector or the binding controller labels it; the label's
		// update event brings it back.
		log.V(1).Info("Waiting for the binding's permanent id")
		return ctrl.Result{}, nil
	}
	if err := r.ensureFinalizer(ctx, obj); err != nil {
		return requeueOnConflict(ctx, err)
	}
	template, err := r.Templates.Live(ctx, spec.Resource)
	if errors.Is(err, binding.ErrTemplateGone) {
		log.V(1).Info("Template is gone; waiting for the binding to go", "template", spec.Resource)
		return ctrl.Result{}, nil
	}
	if err != nil {
		return ctrl.Result{}, err
	}
	refs, err := r.interpret(ctx, template)
	if err != nil {
		return ctrl.Result{}, err
	}
	if err := r.recordDependencies(ctx, obj, template, refs); err != nil {
		return requeueOnConflict(ctx, err)
	}

	s := &syncState{}
	deps, err := r.resolve(ctx, refs, objMeta.Namespace)
	if err != nil {
		s.failures = append(s.failures, err)
	} else {
		r.syncAttached(ctx, d, deps, s)
	}
	r.report(ctx, obj, s)
	return s.result(ctx)
}

// interpret asks the interpreter for the template's dependencies; a kind
// without a dependency rule has none.
func (r *Reconciler) interpret(ctx context.Context, template *unstructured.Unstructured) ([]configv1alpha1.DependentObjectReference, error) {
	if !r.Interpreter.HookEnabled(template.GroupVersionKind(), configv1alpha1.InterpreterOperationInterpretDependency) {
		return nil, nil
	}
	refs, err := r.Interpreter.GetDependencies(ctx, template)
	if err == nil {
		err = validate(refs)
	}
	if err != nil {
		if !errors.Is(err, interpreter.ErrNotReady) {
			r.Recorder.Eventf(template, nil, corev1.EventTypeWarning, flotillaevents.ReasonGetDependenciesFailed, actionGetDependencies,
				"Failed to get the dependencies: %v", err)
		}
		return nil, fmt.Errorf("getting the dependencies of %s %s: %w", template.GetKind(), template.GetName(), err)
	}
	return refs, nil
}

// validate rejects dependencies that name nothing: the interpreter (a
// user's Lua, a webhook) is input.
func validate(refs []configv1alpha1.DependentObjectReference) error {
	var errs []error
	for i, ref := range refs {
		switch {
		case ref.APIVersion == "":
			errs = append(errs, fmt.Errorf("dependencies[%d].apiVersion: required", i))
		case ref.Kind == "":
			errs = append(errs, fmt.Errorf("dependencies[%d].kind: required", i))
		case ref.Name == "" && ref.LabelSelector == nil:
			errs = append(errs, fmt.Errorf("dependencies[%d]: one of name or labelSelector is required", i))
		}
		if ref.Name == "" && ref.LabelSelector != nil {
			if _, err := metav1.LabelSelectorAsSelector(ref.LabelSelector); err != nil {
				errs = append(errs, fmt.Errorf("dependencies[%d].labelSelector: %w", i, err))
			}
		}
		if _, err := schema.ParseGroupVersion(ref.APIVersion); err != nil {
			errs = append(errs, fmt.Errorf("dependencies[%d].apiVersion: %w", i, err))
		}
	}
	return errors.Join(errs...)
}

// recordDependencies writes the dependencies annotation when it differs,
// with a GetDependenciesSucceed event on the template: a reconcile that
// finds them unchanged says nothing.
func (r *Reconciler) recordDependencies(ctx context.Context, obj client.Object, template *unstructured.Unstructured, refs []configv1alpha1.DependentObjectReference) error {
	if refs == nil {
		refs = []configv1alpha1.DependentObjectReference{}
	}
	raw, err := json.Marshal(refs)
	if err != nil {
		return fmt.Errorf("encoding the dependencies: %w", err)
	}
	if v, ok := obj.GetAnnotations()[workv1alpha2.BindingDependenciesAnnotationKey]; ok && v == string(raw) {
		return nil
	}
	base := obj.DeepCopyObject().(client.Object)
	objMeta, _ := bindingParts(obj)
	if objMeta.Annotations == nil {
		objMeta.Annotations = map[string]string{}
	}
	objMeta.Annotations[workv1alpha2.BindingDependenciesAnnotationKey] = string(raw)
	if err := r.Client.Patch(ctx, obj, client.MergeFrom(base)); err != nil {
		return fmt.Errorf("recording the dependencies: %w", err)
	}
	r.Recorder.Eventf(template, nil, corev1.EventTypeNormal, flotillaevents.ReasonGetDependenciesSucceed, actionGetDependencies,
		"Got %d dependencies: %s", len(refs), describeRefs(refs))
	return nil
}

func describeRefs(refs []configv1alpha1.DependentObjectReference) string {
	if len(refs) == 0 {
		return "none"
	}
	out := make([]string, len(refs))
	for i, ref := range refs {
		what := ref.Name
		if what == "" {
			what = metav1.FormatLabelSelector(ref.LabelSelector)
		}
		out[i] = ref.Kind + " " + what
	}
	return strings.Join(out, ", ")
}

// resolve finds the objects refs name (by name or label selector, in
// namespace unless they say otherwise), as metadata from the cache.
// Dependencies that do not exist are skipped: their creation requeues the
// binding. Cluster-scoped kinds, which an attached ResourceBinding cannot
// carry, are skipped too, and so are namespaced ones without a namespace
// when the binding is a ClusterResourceBinding (namespace empty).
func (r *Reconciler) resolve(ctx context.Context, refs []configv1alpha1.DependentObjectReference, namespace string) ([]dependency, error) {
	log := ctrl.LoggerFrom(ctx)
	var out []dependency
	seen := map[schema.GroupKind]map[client.ObjectKey]bool{}
	add := func(gvk schema.GroupVersionKind, o *metav1.PartialObjectMetadata) {
		if !o.DeletionTimestamp.IsZero() {
			return
		}
		key := client.ObjectKeyFromObject(o)
		if seen[gvk.GroupKind()] == nil {
			seen[gvk.GroupKind()] = map[client.ObjectKey]bool{}
		}
		if seen[gvk.GroupKind()][key] {
			return
		}
		seen[gvk.GroupKind()][key] = true
		out = append(out, dependency{ref: workv1alpha2.ObjectReference{
			APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Namespace: o.Namespace, Name: o.Name,
			UID: o.UID, ResourceVersion: o.ResourceVersion,
		}})
	}
	for _, ref := range refs {
		gvk := schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind)
		mapping, err := r.Client.RESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version)
		if meta.IsNoMatchError(err) {
			log.V(1).Info("Skipping a dependency of an unknown kind", "kind", gvk.String())
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("mapping %s: %w", gvk, err)
		}
		if mapping.Scope.Name() != meta.RESTScopeNameNamespace {
			log.V(1).Info("Skipping a cluster-scoped dependency", "kind", gvk.String(), "name", ref.Name)
			continue
		}
		ns := ref.Namespace
		if ns == "" {
			ns = namespace
		}
		if ns == "" {
			log.V(1).Info("Skipping a namespaced dependency of a cluster-scoped template that names no namespace", "kind", gvk.String(), "name", ref.Name)
			continue
		}
		if ref.Name != "" {
			o := &metav1.PartialObjectMetadata{}
			o.SetGroupVersionKind(gvk)
			if err := r.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: ref.Name}, o); err != nil {
				if apierrors.IsNotFound(err) {
					continue
				}
				return nil, fmt.Errorf("reading %s %s/%s: %w", gvk.Kind, ns, ref.Name, err)
			}
			add(gvk, o)
			continue
		}
		sel, err := metav1.LabelSelectorAsSelector(ref.LabelSelector)
		if err != nil {
			return nil, fmt.Errorf("labelSelector of a %s dependency: %w", gvk.Kind, err)
		}
		list := &metav1.PartialObjectMetadataList{}
		list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		if err := r.Client.List(ctx, list, client.InNamespace(ns), client.MatchingLabelsSelector{Selector: sel}); err != nil {
			return nil, fmt.Errorf("listing %s in %s: %w", gvk.Kind, ns, err)
		}
		for i := range list.Items {
			add(gvk, &list.Items[i])
		}
	}
	return out, nil
}

// attachedOf lists the attached bindings of the dependent namespace/name
// with permanent id (empty when unknown).
func (r *Reconciler) attachedOf(ctx context.Context, namespace, name, id string) ([]workv1alpha2.ResourceBinding, error) {
	var list workv1alpha2.ResourceBindingList
	if err := r.Client.List(ctx, &list, client.MatchingFields{DependedByIndex: DependedByLabel(namespace, name)}); err != nil {
		return nil, fmt.Errorf("listing attached bindings: %w", err)
	}
	// A label key shared through a hash collision does not make another
	// dependent's binding ours.
	return slices.DeleteFunc(list.Items, func(rb workv1alpha2.ResourceBinding) bool {
		return !attachedTo(&rb, namespace, name, id)
	}), nil
}

// syncAttached attaches d to the binding of every dependency in deps and
// detaches it from the bindings of the others.
func (r *Reconciler) syncAttached(ctx context.Context, d dependent, deps []dependency, s *syncState) {
	existing, err := r.attachedOf(ctx, d.namespace, d.name, d.id)
	if err != nil {
		s.failures = append(s.failures, err)
		return
	}
	want := make(map[client.ObjectKey]bool, len(deps))
	for _, dep := range deps {
		want[client.ObjectKey{Namespace: dep.ref.Namespace, Name: dep.bindingName()}] = true
		r.attachOne(ctx, d, dep, s)
	}
	for i := range existing {
		if !want[client.ObjectKeyFromObject(&existing[i])] {
			r.detachOne(ctx, &existing[i], d.namespace, d.name, s)
		}
	}
}

// attachOne makes the binding of dep required by d, creating it if needed.
func (r *Reconciler) attachOne(ctx context.Context, d dependent, dep dependency, s *syncState) {
	log := ctrl.LoggerFrom(ctx)
	key := client.ObjectKey{Namespace: dep.ref.Namespace, Name: dep.bindingName()}
	cur := &workv1alpha2.ResourceBinding{}
	if err := r.Client.Get(ctx, key, cur); err != nil {
		if !apierrors.IsNotFound(err) {
			s.failures = append(s.failures, fmt.Errorf("reading binding %s: %w", key, err))
			return
		}
		if err := r.Client.Create(ctx, newAttached(d, dep, string(uuid.NewUUID()))); err != nil {
			s.writeFailed(fmt.Errorf("creating attached binding %s: %w", key, err))
			return
		}
		s.written++
		log.V(1).Info("Created attached binding", "binding", key)
		return
	}
	if !cur.DeletionTimestamp.IsZero() {
		log.V(1).Info("Waiting for a binding being deleted", "binding", key)
		s.pending = true
		return
	}
	if owner := metav1.GetControllerOfNoCopy(cur); owner != nil && owner.UID != dep.ref.UID {
		// The dependency was deleted and recreated: the old binding goes
		// with the old object first.
		log.V(1).Info("Waiting for the binding of an earlier object to go", "binding", key, "owner", owner.UID)
		s.pending = true
		return
	}
	if cur.Spec.Resource.Kind != dep.ref.Kind || cur.Spec.Resource.Name != dep.ref.Name {
		s.failures = append(s.failures, fmt.Errorf("binding %s is the binding of %s %s, not of %s %s",
			key, cur.Spec.Resource.Kind, cur.Spec.Resource.Name, dep.ref.Kind, dep.ref.Name))
		return
	}
	others, err := r.voicesOf(ctx, cur.Spec.RequiredBy, d.namespace, d.name)
	if err != nil {
		s.failures = append(s.failures, err)
		return
	}
	changed, conflicts := attach(cur, d, dep, others)
	if changed {
		if err := r.Client.Update(ctx, cur); err != nil {
			s.writeFailed(fmt.Errorf("updating attached binding %s: %w", key, err))
			return
		}
		s.written++
		log.V(1).Info("Updated attached binding", "binding", key)
	}
	// Also when nothing changed: a dependent that now disagrees may leave
	// the resolved values as they were. Dependents are synced when they or
	// their dependencies change, not periodically, and the recorder
	// aggregates repeats.
	if len(conflicts) > 0 {
		r.Recorder.Eventf(cur, nil, corev1.EventTypeWarning, flotillaevents.ReasonDependencyPolicyConflict, actionSyncDependencies,
			"Dependency policy conflict detected: %s.", strings.Join(conflicts, "; "))
	}
}

// detachOne removes the dependent namespace/name from an attached binding
// and deletes the binding when the distributor owns it and nothing else
// requires it.
func (r *Reconciler) detachOne(ctx context.Context, rb *workv1alpha2.ResourceBinding, namespace, name string, s *syncState) {
	if !rb.DeletionTimestamp.IsZero() {
		return
	}
	key := client.ObjectKeyFromObject(rb)
	remaining, err := r.voicesOf(ctx, rb.Spec.RequiredBy, namespace, name)
	if err != nil {
		s.failures = append(s.failures, err)
		return
	}
	uid, version := rb.UID, rb.ResourceVersion
	changed, deleteIt := detach(rb, namespace, name, remaining)
	switch {
	case deleteIt:
		// Preconditions: a dependent that attached itself meanwhile keeps
		// the binding.
		err := r.Client.Delete(ctx, rb, client.Preconditions{UID: &uid, ResourceVersion: &version})
		if err != nil && !apierrors.IsNotFound(err) {
			s.writeFailed(fmt.Errorf("deleting attached binding %s: %w", key, err))
			return
		}
		ctrl.LoggerFrom(ctx).V(1).Info("Deleted attached binding", "binding", key)
	case changed:
		if err := r.Client.Update(ctx, rb); err != nil {
			s.writeFailed(fmt.Errorf("updating attached binding %s: %w", key, err))
			return
		}
		ctrl.LoggerFrom(ctx).V(1).Info("Detached from binding", "binding", key)
	default:
		return
	}
	s.written++
}

// voicesOf reads what the bindings in requiredBy other than namespace/name
// say of the settings. A binding already gone takes no part.
func (r *Reconciler) voicesOf(ctx context.Context, requiredBy []workv1alpha2.BindingSnapshot, namespace, name string) ([]voice, error) {
	var out []voice
	for _, snap := range requiredBy {
		if snap.Namespace == namespace && snap.Name == name {
			continue
		}
		other := newDependent(snap.Namespace)
		if err := r.Client.Get(ctx, client.ObjectKey{Namespace: snap.Namespace, Name: snap.Name}, other); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return nil, fmt.Errorf("reading binding %s/%s: %w", snap.Namespace, snap.Name, err)
		}
		out = append(out, voiceOf(bindingParts(other)))
	}
	return out, nil
}

// release detaches the dependent namespace/name from all its attached
// bindings; then, when obj (the dependent) is given, drops the
// dependencies annotation (propagateDeps off) and the finalizer.
func (r *Reconciler) release(ctx context.Context, namespace, name string, obj client.Object) (ctrl.Result, error) {
	s := &syncState{}
	id := ""
	if obj != nil {
		id = dependentOf(bindingParts(obj)).id
	}
	existing, err := r.attachedOf(ctx, namespace, name, id)
	if err != nil {
		s.failures = append(s.failures, err)
	}
	for i := range existing {
		r.detachOne(ctx, &existing[i], namespace, name, s)
	}
	if obj == nil {
		return s.result(ctx)
	}
	r.report(ctx, obj, s)
	if len(s.failures) > 0 || s.raced {
		return s.result(ctx)
	}
	objMeta, _ := bindingParts(obj)
	if objMeta.DeletionTimestamp.IsZero() {
		if _, ok := objMeta.Annotations[workv1alpha2.BindingDependenciesAnnotationKey]; ok {
			base := obj.DeepCopyObject().(client.Object)
			delete(objMeta.Annotations, workv1alpha2.BindingDependenciesAnnotationKey)
			if err := r.Client.Patch(ctx, obj, client.MergeFrom(base)); err != nil {
				return requeueOnConflict(ctx, fmt.Errorf("removing the dependencies annotation: %w", err))
			}
		}
	}
	if controllerutil.ContainsFinalizer(obj, workv1alpha2.BindingDependenciesDistributorFinalizer) {
		base := obj.DeepCopyObject().(client.Object)
		controllerutil.RemoveFinalizer(obj, workv1alpha2.BindingDependenciesDistributorFinalizer)
		// The lock keeps the finalizers others wrote meanwhile: a merge
		// patch replaces the whole list.
		if err := r.Client.Patch(ctx, obj, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil && !apierrors.IsNotFound(err) {
			return requeueOnConflict(ctx, fmt.Errorf("removing the finalizer: %w", err))
		}
	}
	return ctrl.Result{}, nil
}

// ensureFinalizer keeps the binding until its entries are removed from
// its attached bindings.
func (r *Reconciler) ensureFinalizer(ctx context.Context, obj client.Object) error {
	if controllerutil.ContainsFinalizer(obj, workv1alpha2.BindingDependenciesDistributorFinalizer) {
		return nil
	}
	base := obj.DeepCopyObject().(client.Object)
	controllerutil.AddFinalizer(obj, workv1alpha2.BindingDependenciesDistributorFinalizer)
	if err := r.Client.Patch(ctx, obj, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("adding the finalizer: %w", err)
	}
	return nil
}

// report records the outcome on the dependent binding: a failure every
// time, a success only when attached bindings were written.
func (r *Reconciler) report(ctx context.Context, obj client.Object, s *syncState) {
	if err := s.err(); err != nil {
		msg := strings.ReplaceAll(err.Error(), "\n", "; ")
		ctrl.LoggerFrom(ctx).Info("Failed to sync the schedule to dependencies", "errors", msg)
		r.Recorder.Eventf(obj, nil, corev1.EventTypeWarning, flotillaevents.ReasonSyncDependenciesFailed, actionSyncDependencies,
			"Failed to sync the schedule result to dependencies: %s", msg)
		return
	}
	if s.written > 0 {
		r.Recorder.Eventf(obj, nil, corev1.EventTypeNormal, flotillaevents.ReasonSyncDependenciesSucceed, actionSyncDependencies,
			"Synced the schedule result to %d attached bindings", s.written)
	}
}

// requeueOnConflict retries soon, without an error in the log, after a
// write lost a race.
func requeueOnConflict(ctx context.Context, err error) (ctrl.Result, error) {
	if apierrors.IsConflict(err) {
		ctrl.LoggerFrom(ctx).V(1).Info("Lost a race writing; retrying", "error", err.Error())
		return ctrl.Result{RequeueAfter: conflictRetry}, nil
	}
	return ctrl.Result{}, err
}
