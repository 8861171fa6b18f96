package binding

import (
	"context"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	configv1alpha1 "github.com/flotilla-io/flotilla/api/config/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/overrides"
)

const reviseReplicaOp = configv1alpha1.InterpreterOperationReviseReplica

// overrideApplier renders a template for a cluster through override
// policies; *overrides.Renderer is one.
type overrideApplier interface {
	Apply(obj *unstructured.Unstructured, cluster *clusterv1alpha1.Cluster) (*unstructured.Unstructured, []overrides.Match, error)
}

// overrideRenderer prepares the override policies that can apply to a
// template of namespace (empty: cluster-scoped): every
// ClusterOverridePolicy and the OverridePolicies of that namespace, read
// from the cache without copies (the renderer only reads them).
func (r *Reconciler) overrideRenderer(ctx context.Context, namespace string) (*overrides.Renderer, error) {
	var cops policyv1alpha1.ClusterOverridePolicyList
	if err := r.Client.List(ctx, &cops, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("listing ClusterOverridePolicies: %w", err)
	}
	var ops policyv1alpha1.OverridePolicyList
	if namespace != "" {
		if err := r.Client.List(ctx, &ops, client.InNamespace(namespace), client.UnsafeDisableDeepCopy); err != nil {
			return nil, fmt.Errorf("listing OverridePolicies: %w", err)
		}
	}
	return overrides.NewRenderer(ops.Items, cops.Items), nil
}

// cluster returns the Cluster override rules are matched against. A
// Cluster not (or no longer) known is matched by its name alone.
func (r *Reconciler) cluster(ctx context.Context, name string) (*clusterv1alpha1.Cluster, error) {
	c := &clusterv1alpha1.Cluster{}
	if err := r.Client.Get(ctx, client.ObjectKey{Name: name}, c, client.UnsafeDisableDeepCopy); err != nil {
		if apierrors.IsNotFound(err) {
			return &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name}}, nil
		}
		return nil, fmt.Errorf("reading Cluster %s: %w", name, err)
	}
	return c, nil
}

// describePolicies names the policies of ms, once each, in order.
func describePolicies(ms []overrides.Match) string {
	refs := overrides.Policies(ms)
	s := make([]string, len(refs))
	for i, p := range refs {
		s[i] = p.String()
	}
	return strings.Join(s, ", ")
}
