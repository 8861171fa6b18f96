package execution

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	ctrl "sigs.k8s.io/controller-runtime"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/membercluster"
)

// ConflictError is a member object of a manifest's name that the Work may
// not take over.
type ConflictError struct {
	Target Target
}

// Error does not name the object: callers prefix every manifest's error
// with it.
func (e *ConflictError) Error() string {
	return fmt.Sprintf("already exists in the member and is not managed by this Work; "+
		"set the %s annotation to %s to take it over", workv1alpha1.ConflictResolutionAnnotation, workv1alpha1.ConflictResolutionOverwrite)
}

// errTerminating: the member object is being deleted; it is recreated once
// gone.
var errTerminating = errors.New("being deleted in the member")

// manifestResult is what happened to one manifest.
type manifestResult struct {
	target  *Target // nil when the manifest could not be resolved
	written bool
	// object is the member object as the reconcile left it, when known:
	// what the member returned from the write, or the object found in sync.
	object *unstructured.Unstructured
	err    error
}

// apply writes every manifest of work to the member and records the
// outcome in the Applied condition and in events.
func (r *Reconciler) apply(ctx context.Context, cluster *clusterv1alpha1.Cluster, work *workv1alpha1.Work) (ctrl.Result, error) {
	clients, err := r.Members.ForCluster(ctx, cluster)
	if err != nil {
		results := []manifestResult{{err: fmt.Errorf("reaching member %s: %w", cluster.Name, err)}}
		return r.record(ctx, work, results)
	}
	targets, errs := Targets(work, clients.Client.RESTMapper())
	results := make([]manifestResult, 0, len(targets)+len(errs))
	for _, err := range errs {
		results = append(results, manifestResult{err: err})
	}
	for i := range targets {
		t := &targets[i]
		object, written, err := r.applyTarget(ctx, clients, work, t)
		if err != nil {
			err = fmt.Errorf("%s: %w", t, err)
		}
		results = append(results, manifestResult{target: t, written: written, object: object, err: err})
	}
	return r.record(ctx, work, results)
}

// applyTarget makes the member object of one manifest as desired and
// returns it (read only: it may come from a cache), reporting whether it
// wrote to the member.
func (r *Reconciler) applyTarget(ctx context.Context, clients *membercluster.Clients, work *workv1alpha1.Work, t *Target) (*unstructured.Unstructured, bool, error) {
	ctx, cancel := context.WithTimeout(ctx, r.MemberTimeout)
	defer cancel()
	resource := resourceFor(clients, t)
	observed, err := r.observe(ctx, clients, resource, t)
	if err != nil {
		return nil, false, err
	}
	obs := observation{exists: observed != nil}
	if observed != nil {
		obs.terminating = observed.GetDeletionTimestamp() != nil
		obs.managed = ManagedBy(observed, work)
		if obs.managed && !obs.terminating {
			if obs.inSync, err = InSync(ctx, r.Interpreter, *t, observed); err != nil {
				return nil, false, err
			}
		}
	}
	switch decide(obs, ConflictResolution(t.Desired)) {
	case actionNone:
		return observed, false, nil
	case actionConflict:
		return nil, false, &ConflictError{Target: *t}
	case actionWait:
		return nil, false, errTerminating
	}
	desired, err := Retained(ctx, r.Interpreter, t.Desired, observed)
	if err != nil {
		return nil, false, err
	}
	// Force: the control plane's values win over other field managers', as
	// Karmada's updates do.
	applied, err := resource.Apply(ctx, t.Desired.GetName(), desired, metav1.ApplyOptions{FieldManager: FieldManager, Force: true})
	if err != nil {
		return nil, false, fmt.Errorf("applying: %w", err)
	}
	verb := "Updated"
	if observed == nil {
		verb = "Created"
	}
	ctrl.LoggerFrom(ctx).V(1).Info(verb+" member object", "object", t.String())
	return applied, true, nil
}

// resourceFor is the dynamic client of the target's resource, each request
// bounded by memberRequestTimeout.
func resourceFor(clients *membercluster.Clients, t *Target) dynamic.ResourceInterface {
	res := clients.Dynamic.Resource(t.Mapping.Resource)
	if ns := t.Desired.GetNamespace(); ns != "" {
		return timedResource{res.Namespace(ns)}
	}
	return timedResource{res}
}

// memberRequestTimeout bounds one request to a member. A member that drops
// packets, rather than refusing connections, would otherwise hold a worker
// for as long as TCP takes to give up (minutes), and with it a share of the
// workers every member's Works need.
const memberRequestTimeout = 30 * time.Second

// timedResource bounds the requests the execution controller makes.
type timedResource struct {
	dynamic.ResourceInterface
}

func (t timedResource) Get(ctx context.Context, name string, opts metav1.GetOptions, sub ...string) (*unstructured.Unstructured, error) {
	ctx, cancel := context.WithTimeout(ctx, memberRequestTimeout)
	defer cancel()
	return t.ResourceInterface.Get(ctx, name, opts, sub...)
}

func (t timedResource) Apply(ctx context.Context, name string, obj *unstructured.Unstructured, opts metav1.ApplyOptions, sub ...string) (*unstructured.Unstructured, error) {
	ctx, cancel := context.WithTimeout(ctx, memberRequestTimeout)
	defer cancel()
	return t.ResourceInterface.Apply(ctx, name, obj, opts, sub...)
}

func (t timedResource) Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, sub ...string) (*unstructured.Unstructured, error) {
	ctx, cancel := context.WithTimeout(ctx, memberRequestTimeout)
	defer cancel()
	return t.ResourceInterface.Patch(ctx, name, pt, data, opts, sub...)
}

func (t timedResource) Delete(ctx context.Context, name string, opts metav1.DeleteOptions, sub ...string) error {
	ctx, cancel := context.WithTimeout(ctx, memberRequestTimeout)
	defer cancel()
	return t.ResourceInterface.Delete(ctx, name, opts, sub...)
}

// observe returns the member object of the target, or nil if there is none.
// A managed object is read from the informers when they have synced; an
// object missing from them may still exist unmanaged (a conflict), so it is
// read from the member.
func (r *Reconciler) observe(ctx context.Context, clients *membercluster.Clients, resource dynamic.ResourceInterface, t *Target) (*unstructured.Unstructured, error) {
	if r.objects != nil {
		cached, found, synced, err := r.objects.Get(ctx, clients.ClusterName, t.Mapping.Resource, t.Key())
		if err != nil {
			ctrl.LoggerFrom(ctx).V(1).Info("Reading the member object without cache", "error", err.Error())
		} else if synced && found {
			return cached, nil
		}
	}
	observed, err := resource.Get(ctx, t.Desired.GetName(), metav1.GetOptions{})
	if err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("reading: %w", err)
	}
	return observed, nil
}
