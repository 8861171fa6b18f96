package detector

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/uuid"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configv1alpha1 "github.com/flotilla-io/flotilla/api/config/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	"github.com/flotilla-io/flotilla/components/controller-manager/internal/detector/policymatch"
	flotillaevents "github.com/flotilla-io/flotilla/internal/events"
)

// errWaiting marks failures that only wait for something to happen: they
// are retried with backoff and logged quietly.
var errWaiting = errors.New("waiting")

// Event actions.
const (
	actionApplyPolicy   = "ApplyPolicy"
	actionPreemptPolicy = "PreemptPolicy"
	actionInterpret     = "Interpret"
)

// reconcile brings the claim and the binding of one template in line with
// the policies.
func (d *Detector) reconcile(ctx context.Context, key templateKey) error {
	ti := d.informers.get(key.GVR)
	if ti == nil {
		// The type went away.
		d.changes.forget(key)
		return nil
	}
	obj, exists, err := ti.informer.GetIndexer().GetByKey(key.storeKey())
	if err != nil {
		return fmt.Errorf("reading %s from the cache: %w", key, err)
	}
	if !exists {
		d.changes.forget(key)
		return nil
	}
	cached, ok := cachedTemplateOf(obj)
	if !ok || cached.ignored {
		return nil
	}
	if cached.DeletionTimestamp != nil {
		// The garbage collector removes the binding with the template.
		return nil
	}
	tmpl, err := cached.Unstructured()
	if err != nil {
		return err
	}
	token, changed := d.changes.get(key)
	log := d.log.WithValues("template", key.String())
	ctx = ctrl.LoggerInto(ctx, log)
	if err := d.syncTemplate(ctx, ti.resourceType, tmpl, changed); err != nil {
		return err
	}
	d.changes.done(key, token)
	return nil
}

// syncTemplate decides the template's policy and acts on it. changed tells
// whether the template changed since it was last synced, for Lazy policies.
func (d *Detector) syncTemplate(ctx context.Context, res resourceType, tmpl *unstructured.Unstructured, changed bool) error {
	t := templateOf(tmpl)
	annotations := tmpl.GetAnnotations()
	current := claimOf(t.Labels, annotations)

	pps, cpps, err := d.selectingPolicies(ctx, t)
	if err != nil {
		return err
	}
	var claimed *policymatch.Candidate
	candidates := func(ps []selecting) []policymatch.Candidate {
		out := make([]policymatch.Candidate, len(ps))
		for i, s := range ps {
			out[i] = s.candidate
			if current.ID != "" && s.policy.kind == current.Kind && s.policy.id() == current.ID {
				claimed = &out[i]
			}
		}
		return out
	}
	decision := policymatch.Decide(claimed, candidates(pps), candidates(cpps))

	if decision.Policy == nil {
		if !hasClaimMetadata(t.Labels, annotations) {
			return nil
		}
		if going, err := d.namespaceGoing(ctx, t.Namespace); err != nil || going {
			// Deleting a namespace deletes its policies and templates in no
			// set order. A template whose policy went first goes next, and
			// its binding with it: releasing them would rewrite the
			// template, the binding, its Works and every member object on
			// their way out.
			return err
		}
		return d.release(ctx, res, tmpl, t.Labels, annotations)
	}
	p := find(decision.Policy, pps, cpps)
	if p.id() == "" {
		// The policy-id controller is about to label it; the label's
		// update event queues this template again.
		ctrl.LoggerFrom(ctx).V(1).Info("Waiting for the policy's permanent id", "policy", p.String())
		return nil
	}
	want := p.claim()
	claimChanged := !claimChange(t.Labels, annotations, want).empty()
	if !claimChanged && !changed && p.lazy() {
		// Lazy: changes of the policy wait for the next template change,
		// as long as the binding exists and says the same.
		if ok, err := d.bindingClaimedBy(ctx, res, tmpl, want); err != nil || ok {
			return err
		}
	}
	if err := d.dependentOverridesPresent(ctx, p); err != nil {
		return err
	}
	return d.apply(ctx, res, tmpl, t.Labels, annotations, p, current, decision.Preempted)
}

// selecting is a policy selecting the template, and how.
type selecting struct {
	policy    *policy
	candidate policymatch.Candidate
}

// selectingPolicies lists the PropagationPolicies (of the template's
// namespace) and the ClusterPropagationPolicies selecting t. Policies
// being deleted select nothing.
func (d *Detector) selectingPolicies(ctx context.Context, t policymatch.Template) (pps, cpps []selecting, err error) {
	if t.Namespace != "" {
		var list policyv1alpha1.PropagationPolicyList
		if err := d.client.List(ctx, &list, client.InNamespace(t.Namespace), client.UnsafeDisableDeepCopy); err != nil {
			return nil, nil, fmt.Errorf("listing PropagationPolicies: %w", err)
		}
		for i := range list.Items {
			p, _ := policyFrom(&list.Items[i])
			if prio := policymatch.Priority(t.Namespace, p.spec.ResourceSelectors, t); prio != policymatch.NoMatch && !p.deleting() {
				pps = append(pps, selecting{policy: p, candidate: p.candidate(prio)})
			}
		}
	}
	var list policyv1alpha1.ClusterPropagationPolicyList
	if err := d.client.List(ctx, &list, client.UnsafeDisableDeepCopy); err != nil {
		return nil, nil, fmt.Errorf("listing ClusterPropagationPolicies: %w", err)
	}
	for i := range list.Items {
		p, _ := policyFrom(&list.Items[i])
		if prio := policymatch.Priority("", p.spec.ResourceSelectors, t); prio != policymatch.NoMatch && !p.deleting() {
			cpps = append(cpps, selecting{policy: p, candidate: p.candidate(prio)})
		}
	}
	return pps, cpps, nil
}

// find returns the policy of a candidate Decide returned.
func find(c *policymatch.Candidate, pps, cpps []selecting) *policy {
	for _, ps := range [][]selecting{pps, cpps} {
		for _, s := range ps {
			if s.candidate.Kind == c.Kind && s.candidate.Namespace == c.Namespace && s.candidate.Name == c.Name {
				return s.policy
			}
		}
	}
	panic("policymatch.Decide returned a policy it was not given")
}

// dependentOverridesPresent fails while an override policy named in the
// policy's dependentOverrides is missing: the templates must not reach a
// member unmodified.
func (d *Detector) dependentOverridesPresent(ctx context.Context, p *policy) error {
	for _, name := range p.spec.DependentOverrides {
		var obj client.Object = &policyv1alpha1.OverridePolicy{}
		key := client.ObjectKey{Namespace: p.meta.Namespace, Name: name}
		if p.kind == policymatch.ClusterPropagationPolicy {
			obj, key.Namespace = &policyv1alpha1.ClusterOverridePolicy{}, ""
		}
		if err := d.client.Get(ctx, key, obj); err != nil {
			if apierrors.IsNotFound(err) {
				return fmt.Errorf("%w: %s needs its dependent override %s", errWaiting, p, name)
			}
			return fmt.Errorf("getting dependent override %s: %w", name, err)
		}
	}
	return nil
}

// apply claims the template for p and writes its binding, with the events
// of conventions.md.
func (d *Detector) apply(ctx context.Context, res resourceType, tmpl *unstructured.Unstructured, labels, annotations map[string]string, p *policy, previous claim, preempted bool) (err error) {
	log := ctrl.LoggerFrom(ctx)
	// wrote: the claim or the binding was written; claimFailed: preempting
	// failed at the claim itself.
	wrote, claimFailed := false, false
	defer func() {
		switch {
		case err != nil && !errors.Is(err, context.Canceled):
			d.recorder.Eventf(tmpl, nil, corev1.EventTypeWarning, flotillaevents.ReasonApplyPolicyFailed, actionApplyPolicy,
				"Applying %s failed: %v", p, err)
			if preempted && claimFailed {
				d.recorder.Eventf(tmpl, nil, corev1.EventTypeWarning, flotillaevents.ReasonPreemptPolicyFailed, actionPreemptPolicy,
					"%s failed to preempt %s: %v", p, describe(previous), err)
			}
		case wrote:
			d.recorder.Eventf(tmpl, nil, corev1.EventTypeNormal, flotillaevents.ReasonApplyPolicySucceed, actionApplyPolicy,
				"Applied %s", p)
		}
	}()

	if change := claimChange(labels, annotations, p.claim()); !change.empty() {
		claimedTmpl, err := d.patchTemplate(ctx, res, tmpl, change)
		if apierrors.IsNotFound(err) {
			// Deleted meanwhile: its delete event drops it from the queue.
			log.V(1).Info("Template gone before its claim")
			return nil
		}
		if err != nil {
			claimFailed = true
			return fmt.Errorf("claiming the template: %w", err)
		}
		// The claimed version is the one the binding refers to.
		tmpl, wrote = claimedTmpl, true
		if preempted {
			log.Info("Policy preempted the template", "policy", p.String(), "previous", describe(previous))
			d.recorder.Eventf(tmpl, nil, corev1.EventTypeNormal, flotillaevents.ReasonPreemptPolicySucceed, actionPreemptPolicy,
				"%s preempted %s", p, describe(previous))
		}
	}

	intent, op, err := d.bindingIntent(ctx, res, tmpl, p)
	if err != nil {
		if ie := (*interpretError)(nil); errors.As(err, &ie) {
			reason := flotillaevents.ReasonGetReplicasFailed
			if ie.op == configv1alpha1.InterpreterOperationInterpretComponent {
				reason = flotillaevents.ReasonGetComponentsFailed
			}
			d.recorder.Eventf(tmpl, nil, corev1.EventTypeWarning, reason, actionInterpret, "%v", ie.err)
		}
		return err
	}
	written, err := d.writeBinding(ctx, res, tmpl, intent)
	if err != nil {
		return fmt.Errorf("writing the binding: %w", err)
	}
	if written {
		wrote = true
		log.V(1).Info("Wrote the binding", "policy", p.String())
		switch op {
		case configv1alpha1.InterpreterOperationInterpretReplica:
			d.recorder.Eventf(tmpl, nil, corev1.EventTypeNormal, flotillaevents.ReasonGetReplicasSucceed, actionInterpret,
				"Replicas %d interpreted", intent.spec.Replicas)
		case configv1alpha1.InterpreterOperationInterpretComponent:
			d.recorder.Eventf(tmpl, nil, corev1.EventTypeNormal, flotillaevents.ReasonGetComponentsSucceed, actionInterpret,
				"%d components interpreted", len(intent.spec.Components))
		}
	}
	return nil
}

// describe names the policy of a claim in events.
func describe(c claim) string {
	if c.Kind == policymatch.ClusterPropagationPolicy {
		return "ClusterPropagationPolicy " + c.Name
	}
	return "PropagationPolicy " + c.Namespace + "/" + c.Name
}

// namespaceGoing reports whether namespace is being deleted. One missing
// from the cache is taken as live: its template exists, the cache lags.
func (d *Detector) namespaceGoing(ctx context.Context, namespace string) (bool, error) {
	if namespace == "" {
		return false, nil
	}
	var ns corev1.Namespace
	if err := d.client.Get(ctx, client.ObjectKey{Name: namespace}, &ns); err != nil {
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return false, fmt.Errorf("reading namespace %s: %w", namespace, err)
	}
	return ns.DeletionTimestamp != nil, nil
}

// release removes the claim of a template no policy selects any more, from
// the binding first, so that a failure leaves the template claimed and
// retried. The binding stays, as in Karmada: the template keeps its place
// in the members until it is deleted or another policy claims it.
func (d *Detector) release(ctx context.Context, res resourceType, tmpl *unstructured.Unstructured, labels, annotations map[string]string) error {
	obj := newBinding(res.Namespaced)
	err := d.client.Get(ctx, bindingKey(res, tmpl), obj)
	if apierrors.IsNotFound(err) {
		// The cache may not have a binding written moments ago; released
		// without it, the template would leave it claimed for good.
		obj = newBinding(res.Namespaced)
		err = d.reader.Get(ctx, bindingKey(res, tmpl), obj)
	}
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return fmt.Errorf("getting the binding: %w", err)
	default:
		meta, _ := bindingParts(obj)
		if c := claimChange(meta.Labels, meta.Annotations, claim{}); !c.empty() && meta.DeletionTimestamp == nil {
			meta.Labels, meta.Annotations = c.apply(meta.Labels, meta.Annotations)
			if err := d.client.Update(ctx, obj); err != nil && !apierrors.IsNotFound(err) {
				return fmt.Errorf("releasing the binding: %w", err)
			}
		}
	}
	if _, err := d.patchTemplate(ctx, res, tmpl, claimChange(labels, annotations, claim{})); err != nil {
		if apierrors.IsNotFound(err) {
			// Deleted meanwhile, with its policy as when a namespace
			// goes: the normal end of a template, nothing to release.
			ctrl.LoggerFrom(ctx).V(1).Info("Template gone before its release")
			return nil
		}
		return fmt.Errorf("releasing the template: %w", err)
	}
	ctrl.LoggerFrom(ctx).Info("Released the template: no policy selects it", "previous", describe(claimOf(labels, annotations)))
	return nil
}

// patchTemplate makes change on the template and returns the result.
func (d *Detector) patchTemplate(ctx context.Context, res resourceType, tmpl *unstructured.Unstructured, change metaChange) (*unstructured.Unstructured, error) {
	patch, err := change.mergePatch(tmpl.GetUID())
	if err != nil {
		return nil, err
	}
	ri := d.dynamic.Resource(res.GVR)
	opts := metav1.PatchOptions{FieldManager: Name}
	if res.Namespaced {
		return ri.Namespace(tmpl.GetNamespace()).Patch(ctx, tmpl.GetName(), types.MergePatchType, patch, opts)
	}
	return ri.Patch(ctx, tmpl.GetName(), types.MergePatchType, patch, opts)
}

// bindingClaimedBy reports whether the template's binding exists with the
// claim want.
func (d *Detector) bindingClaimedBy(ctx context.Context, res resourceType, tmpl *unstructured.Unstructured, want claim) (bool, error) {
	obj := newBinding(res.Namespaced)
	if err := d.client.Get(ctx, bindingKey(res, tmpl), obj); err != nil {
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return false, fmt.Errorf("getting the binding: %w", err)
	}
	meta, _ := bindingParts(obj)
	return claimChange(meta.Labels, meta.Annotations, want).empty(), nil
}

// writeBinding makes the template's binding hold intent, creating it if
// needed, and reports whether it wrote.
func (d *Detector) writeBinding(ctx context.Context, res resourceType, tmpl *unstructured.Unstructured, intent *bindingIntent) (bool, error) {
	key := bindingKey(res, tmpl)
	obj := newBinding(res.Namespaced)
	err := d.client.Get(ctx, key, obj)
	fromCreate := false
	switch {
	case err == nil:
		d.created.forget(key)
	case apierrors.IsNotFound(err):
		if created, ok := d.created.get(key); ok {
			// The cache is behind our own create.
			obj, err, fromCreate = created, nil, true
			break
		}
		obj = newBinding(res.Namespaced)
		obj.SetName(key.Name)
		obj.SetNamespace(key.Namespace)
		meta, spec := bindingParts(obj)
		mergeBinding(meta, spec, intent, newPermanentID)
		if err = d.client.Create(ctx, obj); err == nil {
			d.created.add(key, obj)
			return true, nil
		}
		if !apierrors.IsAlreadyExists(err) {
			return false, err
		}
		// The cache is behind a create of another process or an earlier
		// run of this one.
		obj = newBinding(res.Namespaced)
		err = d.reader.Get(ctx, key, obj)
	}
	if err != nil {
		return false, fmt.Errorf("getting the binding: %w", err)
	}
	meta, spec := bindingParts(obj)
	if meta.DeletionTimestamp != nil {
		return false, fmt.Errorf("%w: binding %s is being deleted; it is recreated once gone", errWaiting, key.Name)
	}
	if owner := metav1.GetControllerOfNoCopy(meta); owner != nil && owner.UID != tmpl.GetUID() {
		// A template deleted and recreated under the same name: the old
		// binding goes with the old template first, and its Works with it.
		return false, fmt.Errorf("%w: binding %s belongs to another %s %s (uid %s) and goes with it", errWaiting, key.Name, owner.Kind, owner.Name, owner.UID)
	}
	if !mergeBinding(meta, spec, intent, newPermanentID) {
		return false, nil
	}
	if err := d.client.Update(ctx, obj); err != nil {
		if fromCreate {
			// Changed or gone since we created it: read it afresh next time.
			d.created.forget(key)
		}
		return false, err
	}
	if fromCreate {
		d.created.add(key, obj)
	}
	return true, nil
}

func newPermanentID() string { return string(uuid.NewUUID()) }
