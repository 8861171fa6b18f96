package bindingstatus

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/retry"

	configv1alpha1 "github.com/flotilla-io/flotilla/api/config/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/components/controller-manager/internal/binding"
)

// templateStatus folds the members' statuses into the template's own
// .status through the interpreter's AggregateStatus, and writes it when it
// changed.
type templateStatus struct {
	r *Reconciler
	// noStatusSubresource remembers the kinds whose status is written with
	// the object itself (custom resources without a status subresource).
	noStatusSubresource sync.Map // schema.GroupVersionKind -> bool
}

// enabled tells whether the template kind of ref has a status aggregation
// rule.
func (ts *templateStatus) enabled(ref workv1alpha2.ObjectReference) bool {
	gvk := schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind)
	return ts.r.Interpreter.HookEnabled(gvk, configv1alpha1.InterpreterOperationAggregateStatus)
}

// update aggregates items into the template of ref and writes the result
// when it differs from the stored status. It returns the template written,
// or nil when nothing was written.
func (ts *templateStatus) update(ctx context.Context, ref workv1alpha2.ObjectReference, items []workv1alpha2.AggregatedStatusItem) (*unstructured.Unstructured, error) {
	var written *unstructured.Unstructured
	first := true
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var tmpl *unstructured.Unstructured
		var err error
		if first {
			tmpl, err = ts.r.Templates.Cached(ctx, ref)
		} else {
			// The cached copy lost the race: read the latest.
			tmpl, err = ts.r.Templates.Live(ctx, ref)
		}
		first = false
		if err != nil {
			return err
		}
		aggregated, err := ts.r.Interpreter.AggregateStatus(ctx, tmpl.DeepCopy(), items)
		if err != nil {
			return fmt.Errorf("aggregating status: %w", err)
		}
		if sameValue(tmpl.Object["status"], aggregated.Object["status"]) {
			return nil
		}
		if err := ts.write(ctx, tmpl, aggregated); err != nil {
			return err
		}
		written = aggregated
		return nil
	})
	return written, err
}

// write stores aggregated's status, through the status subresource when the
// kind has one.
func (ts *templateStatus) write(ctx context.Context, stored, aggregated *unstructured.Unstructured) error {
	gvk := stored.GroupVersionKind()
	if _, ok := ts.noStatusSubresource.Load(gvk); !ok {
		err := ts.r.Client.Status().Update(ctx, aggregated)
		if err == nil || !apierrors.IsNotFound(err) {
			return err
		}
		// 404: either the template is gone or its kind has no status
		// subresource; only a fresh read tells.
		if _, err := ts.r.Templates.Live(ctx, workv1alpha2.ObjectReference{
			APIVersion: stored.GetAPIVersion(), Kind: stored.GetKind(), Namespace: stored.GetNamespace(), Name: stored.GetName(),
		}); err != nil {
			return err
		}
		ts.noStatusSubresource.Store(gvk, true)
	}
	// Without a status subresource the status is part of the object: write
	// the stored object with only its status replaced.
	obj := stored.DeepCopy()
	if status, ok := aggregated.Object["status"]; ok {
		obj.Object["status"] = status
	} else {
		delete(obj.Object, "status")
	}
	if err := ts.r.Client.Update(ctx, obj); err != nil {
		return err
	}
	if !sameValue(obj.Object["status"], aggregated.Object["status"]) {
		// The kind has gained a status subresource since: the object's
		// endpoint ignored the status. Try the subresource next time.
		ts.noStatusSubresource.Delete(gvk)
		return fmt.Errorf("status of %s %s was not stored; retrying through the status subresource", gvk.Kind, stored.GetName())
	}
	return nil
}

// sameValue compares two decoded JSON values as JSON: a status computed by
// Lua may hold 3.0 where the stored one holds 3.
func sameValue(a, b any) bool {
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	return errA == nil && errB == nil && bytes.Equal(ja, jb)
}

// ignoreGone treats a template that is gone as nothing to do.
func ignoreGone(err error) error {
	if errors.Is(err, binding.ErrTemplateGone) {
		return nil
	}
	return err
}
