package binding

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
)

// ErrTemplateGone is returned (wrapped) when a binding's template, or its
// kind, no longer exists; the binding is about to be garbage collected.
var ErrTemplateGone = errors.New("resource template not found")

// ObjectGetter reads one object; a client.Reader (a client, a cache) is one.
type ObjectGetter interface {
	Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error
}

// TemplateReader reads the resource template of a binding. Any kind can be a
// template, so it reads unstructured objects; the client maps their kinds to
// resources through the RESTMapper.
type TemplateReader struct {
	// Cache, when set, is read first (e.g. the manager's cache, which then
	// keeps an informer per template kind). Its copy is used only when it
	// is the version the binding was built from.
	Cache ObjectGetter
	// API reads from the API server (e.g. the manager's APIReader).
	API ObjectGetter
}

// Get returns the template of ref. A cached copy older or newer than the
// binding's spec.resource.resourceVersion is not trusted: the API server
// is asked.
func (t TemplateReader) Get(ctx context.Context, ref workv1alpha2.ObjectReference) (*unstructured.Unstructured, error) {
	key := client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}
	if t.Cache != nil {
		u := newTemplate(ref)
		if err := t.Cache.Get(ctx, key, u); err == nil && ref.ResourceVersion != "" && u.GetResourceVersion() == ref.ResourceVersion {
			return u, nil
		}
	}
	return t.Live(ctx, ref)
}

// Cached returns the cached copy of the template of ref, whatever its
// version, or reads it from the API server when there is no cache or the
// cache does not have it. For writers whose writes are guarded by the
// resourceVersion read: a stale copy costs a conflict, not a wrong write.
func (t TemplateReader) Cached(ctx context.Context, ref workv1alpha2.ObjectReference) (*unstructured.Unstructured, error) {
	if t.Cache != nil {
		u := newTemplate(ref)
		if err := t.Cache.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, u); err == nil {
			return u, nil
		}
	}
	return t.Live(ctx, ref)
}

// Live reads the template from the API server.
func (t TemplateReader) Live(ctx context.Context, ref workv1alpha2.ObjectReference) (*unstructured.Unstructured, error) {
	u := newTemplate(ref)
	if err := t.API.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, u); err != nil {
		if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
			return nil, fmt.Errorf("%s %s: %w", ref.Kind, describeRef(ref), ErrTemplateGone)
		}
		return nil, fmt.Errorf("reading %s %s: %w", ref.Kind, describeRef(ref), err)
	}
	return u, nil
}

func newTemplate(ref workv1alpha2.ObjectReference) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(ref.APIVersion)
	u.SetKind(ref.Kind)
	return u
}

func describeRef(ref workv1alpha2.ObjectReference) string {
	if ref.Namespace == "" {
		return ref.Name
	}
	return ref.Namespace + "/" + ref.Name
}
