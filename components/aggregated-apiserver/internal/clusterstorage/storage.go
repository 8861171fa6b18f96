package clusterstorage

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/generic"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/storage/names"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
)

// Storage is what the API server installs for clusters.
type Storage struct {
	Cluster *REST
	Status  *StatusREST
	Proxy   *ProxyREST
}

// Map is the storage by resource path, for an APIGroupInfo.
func (s *Storage) Map() map[string]rest.Storage {
	return map[string]rest.Storage{"clusters": s.Cluster, "clusters/status": s.Status, "clusters/proxy": s.Proxy}
}

// REST is the clusters resource.
type REST struct {
	*genericregistry.Store
}

// Categories puts clusters in `kubectl get karmada`, as the CRD does.
func (r *REST) Categories() []string { return []string{"karmada"} }

// StatusREST is the clusters/status subresource: it writes status only.
type StatusREST struct {
	store *genericregistry.Store
}

// New returns an empty Cluster.
func (r *StatusREST) New() runtime.Object { return &clusterv1alpha1.Cluster{} }

// Destroy is a no-op: the main store owns the storage.
func (r *StatusREST) Destroy() {}

// Get returns the Cluster.
func (r *StatusREST) Get(ctx context.Context, name string, options *metav1.GetOptions) (runtime.Object, error) {
	return r.store.Get(ctx, name, options)
}

// Update writes the Cluster's status.
func (r *StatusREST) Update(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo, createValidation rest.ValidateObjectFunc, updateValidation rest.ValidateObjectUpdateFunc, forceAllowCreate bool, options *metav1.UpdateOptions) (runtime.Object, bool, error) {
	// Status writes never create, whatever the caller asks.
	return r.store.Update(ctx, name, objInfo, createValidation, updateValidation, false, options)
}

// GetResetFields lists the fields a status write leaves alone.
func (r *StatusREST) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return r.store.GetResetFields()
}

// ConvertToTable prints as the main resource does.
func (r *StatusREST) ConvertToTable(ctx context.Context, object runtime.Object, tableOptions runtime.Object) (*metav1.Table, error) {
	return r.store.ConvertToTable(ctx, object, tableOptions)
}

// NewStorage returns the clusters storage on optsGetter (etcd), with the
// CRD's validation, and a proxy that reads member credentials through
// secrets.
func NewStorage(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter, secrets SecretGetter) (*Storage, error) {
	r, err := newRules(scheme)
	if err != nil {
		return nil, err
	}
	main := strategy{ObjectTyper: scheme, NameGenerator: names.SimpleNameGenerator, crd: r.main}
	store := &genericregistry.Store{
		NewFunc:                   func() runtime.Object { return &clusterv1alpha1.Cluster{} },
		NewListFunc:               func() runtime.Object { return &clusterv1alpha1.ClusterList{} },
		PredicateFunc:             matchCluster,
		DefaultQualifiedResource:  clusterv1alpha1.GroupVersion.WithResource("clusters").GroupResource(),
		SingularQualifiedResource: clusterv1alpha1.GroupVersion.WithResource("cluster").GroupResource(),
		CreateStrategy:            main,
		UpdateStrategy:            main,
		DeleteStrategy:            main,
		ResetFieldsStrategy:       main,
		TableConvertor:            r.table,
	}
	if err := store.CompleteWithOptions(&generic.StoreOptions{RESTOptions: optsGetter, AttrFunc: getAttrs}); err != nil {
		return nil, fmt.Errorf("completing the clusters storage: %w", err)
	}
	statusStore := *store
	status := strategy{ObjectTyper: scheme, NameGenerator: names.SimpleNameGenerator, crd: r.status}
	statusStore.UpdateStrategy = status
	statusStore.ResetFieldsStrategy = status
	return &Storage{
		Cluster: &REST{Store: store},
		Status:  &StatusREST{store: &statusStore},
		Proxy:   &ProxyREST{Clusters: store, Secrets: secrets},
	}, nil
}
