package binding

import (
	"context"
	"sync/atomic"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/internal/controllertest"
)

// A deleting binding is released once: a reconcile that still reads it as
// it was before the release (a cache behind the API server, requeued by
// its Works' deletion) sends nothing, while another deleting binding is
// still released. A lagging cache cannot be staged on a real API server
// at will, hence a fake client here.
func TestDeletingBindingReleasedOnce(t *testing.T) {
	scheme := controllertest.Scheme(t)
	deleting := func(name string) *workv1alpha2.ResourceBinding {
		return &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{
			Namespace: "default", Name: name, UID: types.UID("uid-" + name),
			Finalizers:        []string{workv1alpha2.BindingControllerFinalizer},
			DeletionTimestamp: &metav1.Time{Time: metav1.Now().Time},
		}}
	}
	a, b := deleting("web-a"), deleting("web-b")
	var patches atomic.Int32
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(a, b).
		WithInterceptorFuncs(interceptor.Funcs{Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			patches.Add(1)
			return c.Patch(ctx, obj, patch, opts...)
		}}).Build()
	// What the cache held before the releases.
	read := func(rb *workv1alpha2.ResourceBinding) *workv1alpha2.ResourceBinding {
		got := &workv1alpha2.ResourceBinding{}
		if err := c.Get(t.Context(), client.ObjectKeyFromObject(rb), got); err != nil {
			t.Fatal(err)
		}
		return got
	}
	staleA, staleB := read(a), read(b)
	r := &Reconciler{Client: c, released: cache.NewExpiring()}

	steps := []struct {
		name        string
		stale       *workv1alpha2.ResourceBinding
		wantPatches int32
	}{
		{"the first reconcile releases the binding", staleA, 1},
		{"a reconcile on the stale read sends nothing", staleA, 1},
		{"and again", staleA, 1},
		{"another deleting binding is released", staleB, 2},
	}
	for _, s := range steps {
		if err := r.reconcileDelete(t.Context(), ViewOf(s.stale.DeepCopy())); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if got := patches.Load(); got != s.wantPatches {
			t.Errorf("%s: %d patches so far, want %d", s.name, got, s.wantPatches)
		}
	}
	for _, rb := range []*workv1alpha2.ResourceBinding{a, b} {
		err := c.Get(t.Context(), client.ObjectKeyFromObject(rb), &workv1alpha2.ResourceBinding{})
		if client.IgnoreNotFound(err) != nil || err == nil {
			t.Errorf("binding %s: want it gone once released, got err %v", rb.Name, err)
		}
	}
}
