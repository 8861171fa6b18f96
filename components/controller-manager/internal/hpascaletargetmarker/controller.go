// Package hpascaletargetmarker is Karmada's hpa-scale-target-marker: a
// template scaled by a propagated HorizontalPodAutoscaler gets the label
// resourcetemplate.karmada.io/retain-replicas: "true", so that the replicas
// the HPAs set in the members are kept rather than reset to the template's
// (the deployment-replicas-syncer then brings the template's count in line
// with the members'). The label goes again when no propagated HPA scales the
// template any more.
package hpascaletargetmarker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
)

// ControllerName is Karmada's name of the controller.
const ControllerName = "hpa-scale-target-marker"

// +kubebuilder:rbac:groups=autoscaling,resources=horizontalpodautoscalers,verbs=get;list;watch
// +kubebuilder:rbac:groups=*,resources=*,verbs=get;patch

// Target is the template one HPA scales: the request of this controller.
type Target struct {
	Namespace  string
	APIVersion string
	Kind       string
	Name       string
}

func targetOf(hpa *autoscalingv2.HorizontalPodAutoscaler) Target {
	ref := hpa.Spec.ScaleTargetRef
	return Target{Namespace: hpa.Namespace, APIVersion: ref.APIVersion, Kind: ref.Kind, Name: ref.Name}
}

// Reconciler labels or unlabels one scale target.
type Reconciler struct {
	// Client reads HPAs from the cache; templates are read and patched as
	// unstructured objects, which it reads from the API server.
	Client client.Client
	// Mapper resolves a scale target's kind to its resource.
	Mapper meta.RESTMapper
}

// SetupWithManager watches HPAs; each change enqueues the targets it
// concerns, the old one too when the target moved.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Client == nil {
		return errors.New("hpa-scale-target-marker: Client is required")
	}
	if r.Mapper == nil {
		r.Mapper = mgr.GetRESTMapper()
	}
	enqueue := func(q workqueue.TypedRateLimitingInterface[Target], hpas ...*autoscalingv2.HorizontalPodAutoscaler) {
		for _, h := range hpas {
			if h.Spec.ScaleTargetRef.Name != "" {
				q.Add(targetOf(h))
			}
		}
	}
	events := handler.TypedFuncs[*autoscalingv2.HorizontalPodAutoscaler, Target]{
		CreateFunc: func(_ context.Context, e event.TypedCreateEvent[*autoscalingv2.HorizontalPodAutoscaler], q workqueue.TypedRateLimitingInterface[Target]) {
			enqueue(q, e.Object)
		},
		UpdateFunc: func(_ context.Context, e event.TypedUpdateEvent[*autoscalingv2.HorizontalPodAutoscaler], q workqueue.TypedRateLimitingInterface[Target]) {
			if targetOf(e.ObjectOld) != targetOf(e.ObjectNew) || propagated(e.ObjectOld) != propagated(e.ObjectNew) {
				enqueue(q, e.ObjectOld, e.ObjectNew)
			}
		},
		DeleteFunc: func(_ context.Context, e event.TypedDeleteEvent[*autoscalingv2.HorizontalPodAutoscaler], q workqueue.TypedRateLimitingInterface[Target]) {
			enqueue(q, e.Object)
		},
	}
	return builder.TypedControllerManagedBy[Target](mgr).
		Named(ControllerName).
		WatchesRawSource(source.TypedKind(mgr.GetCache(), &autoscalingv2.HorizontalPodAutoscaler{}, events)).
		Complete(r)
}

// propagated reports whether a PropagationPolicy or ClusterPropagationPolicy
// claims the HPA, i.e. it runs in members.
func propagated(hpa *autoscalingv2.HorizontalPodAutoscaler) bool {
	_, pp := hpa.Labels[policyv1alpha1.PropagationPolicyPermanentIDLabel]
	_, cpp := hpa.Labels[policyv1alpha1.ClusterPropagationPolicyPermanentIDLabel]
	return pp || cpp
}

// Reconcile labels the target when a propagated HPA of its namespace
// scales it, and unlabels it otherwise.
func (r *Reconciler) Reconcile(ctx context.Context, t Target) (reconcile.Result, error) {
	log := ctrl.LoggerFrom(ctx).WithValues("target", t)
	var hpas autoscalingv2.HorizontalPodAutoscalerList
	if err := r.Client.List(ctx, &hpas, client.InNamespace(t.Namespace)); err != nil {
		return reconcile.Result{}, fmt.Errorf("listing HPAs: %w", err)
	}
	scaled := false
	for i := range hpas.Items {
		h := &hpas.Items[i]
		if h.DeletionTimestamp.IsZero() && propagated(h) && targetOf(h) == t {
			scaled = true
			break
		}
	}
	gv, err := schema.ParseGroupVersion(t.APIVersion)
	if err != nil {
		// A bad reference cannot be fixed by retrying; the HPA's next
		// change comes back here.
		log.Error(err, "The HPA's scaleTargetRef.apiVersion is not valid")
		return reconcile.Result{}, nil
	}
	mapping, err := r.Mapper.RESTMapping(gv.WithKind(t.Kind).GroupKind(), gv.Version)
	if err != nil {
		return reconcile.Result{}, fmt.Errorf("resolving scaleTargetRef %s %s: %w", t.APIVersion, t.Kind, err)
	}
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(mapping.GroupVersionKind)
	if err := r.Client.Get(ctx, types.NamespacedName{Namespace: t.Namespace, Name: t.Name}, obj); err != nil {
		if apierrors.IsNotFound(err) {
			return reconcile.Result{}, nil
		}
		return reconcile.Result{}, fmt.Errorf("reading the scale target: %w", err)
	}
	has := obj.GetLabels()[workv1alpha1.RetainReplicasLabel] == workv1alpha1.RetainReplicasValue
	if has == scaled {
		return reconcile.Result{}, nil
	}
	var value any // null removes the label
	if scaled {
		value = workv1alpha1.RetainReplicasValue
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]any{workv1alpha1.RetainReplicasLabel: value}}})
	if err != nil {
		return reconcile.Result{}, err
	}
	if err := r.Client.Patch(ctx, obj, client.RawPatch(types.MergePatchType, patch)); err != nil {
		if apierrors.IsNotFound(err) {
			return reconcile.Result{}, nil
		}
		return reconcile.Result{}, fmt.Errorf("labelling the scale target: %w", err)
	}
	log.V(1).Info("Scale target labelled", "retainReplicas", scaled)
	return reconcile.Result{}, nil
}
