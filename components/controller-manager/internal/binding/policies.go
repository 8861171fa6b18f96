package binding

import (
	"context"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
)

// policyScope is what an override policy can reach: its namespace (empty
// for a ClusterOverridePolicy, which reaches every namespace) and selectors.
func policyScope(obj client.Object) (namespace string, selectors []policyv1alpha1.ResourceSelector, ok bool) {
	switch p := obj.(type) {
	case *policyv1alpha1.OverridePolicy:
		return p.Namespace, p.Spec.ResourceSelectors, true
	case *policyv1alpha1.ClusterOverridePolicy:
		return "", p.Spec.ResourceSelectors, true
	}
	return "", nil, false
}

// mayOverride tells, from the binding's resource reference alone, whether
// a policy of namespace (empty: a ClusterOverridePolicy) with selectors may
// select the template. Label selectors need the template, so a selector
// with one matches any template of its kind here: a binding requeued for
// nothing renders to the same Works and writes nothing.
func mayOverride(namespace string, selectors []policyv1alpha1.ResourceSelector, ref workv1alpha2.ObjectReference) bool {
	if namespace != "" && ref.Namespace != namespace {
		return false
	}
	if len(selectors) == 0 {
		return true
	}
	for _, s := range selectors {
		if s.APIVersion == ref.APIVersion && s.Kind == ref.Kind &&
			(s.Namespace == "" || s.Namespace == ref.Namespace) &&
			(s.Name == "" || s.Name == ref.Name) {
			return true
		}
	}
	return false
}

// resourceBindingsForPolicy maps an override policy, before and after a
// change (the handler is called with both), to the ResourceBindings whose
// templates it may select.
func (r *Reconciler) resourceBindingsForPolicy(ctx context.Context, obj client.Object) []reconcile.Request {
	ns, selectors, ok := policyScope(obj)
	if !ok {
		return nil
	}
	var list workv1alpha2.ResourceBindingList
	if err := r.Client.List(ctx, &list, client.InNamespace(ns), client.UnsafeDisableDeepCopy); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing ResourceBindings for an override policy", "policy", client.ObjectKeyFromObject(obj))
		return nil
	}
	var out []reconcile.Request
	for i := range list.Items {
		if mayOverride(ns, selectors, list.Items[i].Spec.Resource) {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
		}
	}
	return out
}

// clusterResourceBindingsForPolicy maps an override policy to the
// ClusterResourceBindings whose templates it may select; an OverridePolicy
// reaches the namespaced templates of its namespace that a
// ClusterPropagationPolicy claimed.
func (r *Reconciler) clusterResourceBindingsForPolicy(ctx context.Context, obj client.Object) []reconcile.Request {
	ns, selectors, ok := policyScope(obj)
	if !ok {
		return nil
	}
	var list workv1alpha2.ClusterResourceBindingList
	if err := r.Client.List(ctx, &list, client.UnsafeDisableDeepCopy); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing ClusterResourceBindings for an override policy", "policy", client.ObjectKeyFromObject(obj))
		return nil
	}
	var out []reconcile.Request
	for i := range list.Items {
		if mayOverride(ns, selectors, list.Items[i].Spec.Resource) {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
		}
	}
	return out
}
