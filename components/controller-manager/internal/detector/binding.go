package detector

import (
	"context"
	"fmt"
	"strings"

	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configv1alpha1 "github.com/flotilla-io/flotilla/api/config/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/internal/names"
)

// newBinding returns an empty ResourceBinding for a namespaced template, a
// ClusterResourceBinding for a cluster-scoped one.
func newBinding(namespaced bool) client.Object {
	if namespaced {
		return &workv1alpha2.ResourceBinding{}
	}
	return &workv1alpha2.ClusterResourceBinding{}
}

// bindingParts gives access to what both binding kinds share.
func bindingParts(obj client.Object) (*metav1.ObjectMeta, *workv1alpha2.ResourceBindingSpec) {
	switch b := obj.(type) {
	case *workv1alpha2.ResourceBinding:
		return &b.ObjectMeta, &b.Spec
	case *workv1alpha2.ClusterResourceBinding:
		return &b.ObjectMeta, &b.Spec
	}
	panic(fmt.Sprintf("not a binding: %T", obj))
}

// bindingKey is where the binding of a template lives.
func bindingKey(res resourceType, tmpl *unstructured.Unstructured) client.ObjectKey {
	key := client.ObjectKey{Name: names.Binding(tmpl.GetName(), tmpl.GetKind())}
	if res.Namespaced {
		key.Namespace = tmpl.GetNamespace()
	}
	return key
}

// interpretError is a failure of the resource interpreter, reported with
// its own event reason.
type interpretError struct {
	op  configv1alpha1.InterpreterOperation
	err error
}

func (e *interpretError) Error() string {
	return fmt.Sprintf("interpreting %s: %v", e.op, e.err)
}

func (e *interpretError) Unwrap() error { return e.err }

// bindingIntent computes what the binding of tmpl claimed by p says. It
// asks the interpreter for the components of multi-template kinds,
// otherwise for replicas and replica requirements; interpreted names the
// operation asked, if any.
func (d *Detector) bindingIntent(ctx context.Context, res resourceType, tmpl *unstructured.Unstructured, p *policy) (intent *bindingIntent, interpreted configv1alpha1.InterpreterOperation, err error) {
	spec := p.spec
	intent = &bindingIntent{
		claim: p.claim(),
		owner: metav1.OwnerReference{
			APIVersion:         tmpl.GetAPIVersion(),
			Kind:               tmpl.GetKind(),
			Name:               tmpl.GetName(),
			UID:                tmpl.GetUID(),
			Controller:         ptr.To(true),
			BlockOwnerDeletion: ptr.To(true),
		},
		spec: workv1alpha2.ResourceBindingSpec{
			Resource: workv1alpha2.ObjectReference{
				APIVersion:      tmpl.GetAPIVersion(),
				Kind:            tmpl.GetKind(),
				Namespace:       tmpl.GetNamespace(),
				Name:            tmpl.GetName(),
				UID:             tmpl.GetUID(),
				ResourceVersion: tmpl.GetResourceVersion(),
			},
			PropagateDeps: spec.PropagateDeps,
			// Copies: the policy is shared with the cache, and decoding the
			// server's answer into the binding would write through pointers.
			Placement:                   spec.Placement.DeepCopy(),
			SchedulerName:               spec.SchedulerName,
			Failover:                    spec.Failover.DeepCopy(),
			ConflictResolution:          conflictResolution(tmpl, spec.ConflictResolution),
			PreserveResourcesOnDeletion: copyBool(spec.PreserveResourcesOnDeletion),
			WorkloadAffinityGroups:      affinityGroups(tmpl, spec.Placement.WorkloadAffinity),
		},
	}
	if res.Namespaced {
		intent.idLabel, intent.finalizer = workv1alpha2.ResourceBindingPermanentIDLabel, workv1alpha2.BindingControllerFinalizer
	} else {
		intent.idLabel, intent.finalizer = workv1alpha2.ClusterResourceBindingPermanentIDLabel, workv1alpha2.ClusterResourceBindingControllerFinalizer
	}
	if spec.Suspension != nil {
		intent.spec.Suspension = &workv1alpha2.Suspension{Suspension: *spec.Suspension.DeepCopy()}
	}
	if spec.SchedulePriority != nil {
		prio, err := d.schedulePriority(ctx, spec.SchedulePriority)
		if err != nil {
			return nil, "", err
		}
		intent.spec.SchedulePriority = &workv1alpha2.SchedulePriority{Priority: prio}
	}

	gvk := tmpl.GroupVersionKind()
	interp := d.opts.Interpreter
	switch {
	case interp.HookEnabled(gvk, configv1alpha1.InterpreterOperationInterpretComponent):
		interpreted = configv1alpha1.InterpreterOperationInterpretComponent
		components, err := interp.GetComponents(ctx, tmpl)
		if err != nil {
			return nil, interpreted, &interpretError{op: interpreted, err: err}
		}
		intent.spec.Components = components
	case interp.HookEnabled(gvk, configv1alpha1.InterpreterOperationInterpretReplica):
		interpreted = configv1alpha1.InterpreterOperationInterpretReplica
		replicas, requires, err := interp.GetReplicas(ctx, tmpl)
		if err != nil {
			return nil, interpreted, &interpretError{op: interpreted, err: err}
		}
		intent.spec.Replicas, intent.spec.ReplicaRequirements = replicas, requires
	}
	return intent, interpreted, nil
}

// conflictResolution is the policy's, unless the template's
// work.karmada.io/conflict-resolution annotation says otherwise. Empty means
// Abort, the API default, so that what is stored compares equal.
func conflictResolution(tmpl *unstructured.Unstructured, fromPolicy policyv1alpha1.ConflictResolution) policyv1alpha1.ConflictResolution {
	v := metadataString(tmpl, "annotations", workv1alpha1.ConflictResolutionAnnotation)
	switch strings.ToLower(v) {
	case workv1alpha1.ConflictResolutionOverwrite:
		return policyv1alpha1.ConflictOverwrite
	case workv1alpha1.ConflictResolutionAbort:
		return policyv1alpha1.ConflictAbort
	}
	if fromPolicy == "" {
		return policyv1alpha1.ConflictAbort
	}
	return fromPolicy
}

// affinityGroups resolves the template's workload affinity groups: the
// values of its labels named by the policy's groupByLabelKey.
func affinityGroups(tmpl *unstructured.Unstructured, wa *policyv1alpha1.WorkloadAffinity) *workv1alpha2.WorkloadAffinityGroups {
	if wa == nil {
		return nil
	}
	var g workv1alpha2.WorkloadAffinityGroups
	if wa.Affinity != nil {
		g.AffinityGroup = metadataString(tmpl, "labels", wa.Affinity.GroupByLabelKey)
	}
	if wa.AntiAffinity != nil {
		g.AntiAffinityGroup = metadataString(tmpl, "labels", wa.AntiAffinity.GroupByLabelKey)
	}
	if g == (workv1alpha2.WorkloadAffinityGroups{}) {
		return nil
	}
	return &g
}

// schedulePriority resolves the policy's priority class to its value.
func (d *Detector) schedulePriority(ctx context.Context, sp *policyv1alpha1.SchedulePriority) (int32, error) {
	switch sp.PriorityClassSource {
	case policyv1alpha1.KubePriorityClass, "":
		pc := &schedulingv1.PriorityClass{}
		if err := d.client.Get(ctx, client.ObjectKey{Name: sp.PriorityClassName}, pc); err != nil {
			return 0, fmt.Errorf("getting PriorityClass %s of the schedulePriority: %w", sp.PriorityClassName, err)
		}
		return pc.Value, nil
	}
	return 0, fmt.Errorf("schedulePriority: unknown priorityClassSource %q", sp.PriorityClassSource)
}

func copyBool(b *bool) *bool {
	if b == nil {
		return nil
	}
	return ptr.To(*b)
}
