package detector

import (
	"maps"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	"github.com/flotilla-io/flotilla/components/controller-manager/internal/detector/policymatch"
)

// policyHandler requeues the templates a policy change may concern: those
// the policy selects now (it may claim or preempt them) and those it claims
// (it may have stopped selecting them, lost priority or gone). Templates it
// selected before but never claimed are not concerned.
func (d *Detector) policyHandler() toolscache.ResourceEventHandler {
	return toolscache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if p, ok := policyFrom(obj); ok {
				d.requeueFor(p, "")
			}
		},
		UpdateFunc: func(oldObj, newObj any) {
			o, ok1 := policyFrom(oldObj)
			n, ok2 := policyFrom(newObj)
			if !ok1 || !ok2 || !policyChanged(o, n) {
				return
			}
			d.requeueFor(n, o.id())
		},
		DeleteFunc: func(obj any) {
			if p, ok := policyFrom(obj); ok {
				d.requeueClaimed(p.kind, p.id())
			}
		},
	}
}

// policyChanged: what decides claims and bindings is the spec, the
// permanent id and the deletion.
func policyChanged(o, n *policy) bool {
	return o.meta.Generation != n.meta.Generation ||
		!maps.Equal(o.meta.Labels, n.meta.Labels) ||
		(o.meta.DeletionTimestamp == nil) != (n.meta.DeletionTimestamp == nil)
}

// requeueFor queues what p selects and what it, or its previous permanent
// id, claims.
func (d *Detector) requeueFor(p *policy, oldID string) {
	d.requeueClaimed(p.kind, p.id())
	if oldID != p.id() {
		d.requeueClaimed(p.kind, oldID)
	}
	if p.deleting() {
		return
	}
	policyNamespace := ""
	if p.kind == policymatch.PropagationPolicy {
		policyNamespace = p.meta.Namespace
	}
	for _, sel := range p.spec.ResourceSelectors {
		d.requeueSelected(policyNamespace, sel)
	}
}

// requeueClaimed queues the templates claimed by the policy with this id.
func (d *Detector) requeueClaimed(kind policymatch.PolicyKind, id string) {
	if id == "" {
		return
	}
	value := ppClaimIndexValue(id)
	if kind == policymatch.ClusterPropagationPolicy {
		value = cppClaimIndexValue(id)
	}
	for _, ti := range d.informers.all() {
		objs, err := ti.informer.GetIndexer().ByIndex(claimIndex, value)
		if err != nil {
			continue
		}
		for _, obj := range objs {
			if c, ok := cachedTemplateOf(obj); ok {
				d.queue.Add(keyOf(ti.GVR, c))
			}
		}
	}
}

// requeueSelected queues the templates sel selects, looked up in the
// informer of the selected kind by name or namespace when it can.
func (d *Detector) requeueSelected(policyNamespace string, sel policyv1alpha1.ResourceSelector) {
	gv, err := schema.ParseGroupVersion(sel.APIVersion)
	if err != nil {
		return
	}
	ti := d.informers.forKind(gv.WithKind(sel.Kind))
	if ti == nil {
		// Not watched (yet): its informer's initial list queues everything.
		return
	}
	namespace := sel.Namespace
	if policyNamespace != "" {
		if !ti.Namespaced || (namespace != "" && namespace != policyNamespace) {
			return
		}
		namespace = policyNamespace
	}
	if !ti.Namespaced && namespace != "" {
		return
	}
	indexer := ti.informer.GetIndexer()
	var objs []any
	switch {
	case sel.Name != "" && (namespace != "" || !ti.Namespaced):
		key := sel.Name
		if namespace != "" {
			key = namespace + "/" + sel.Name
		}
		if obj, ok, _ := indexer.GetByKey(key); ok {
			objs = []any{obj}
		}
	case namespace != "":
		objs, _ = indexer.ByIndex(toolscache.NamespaceIndex, namespace)
	default:
		// Also a ClusterPropagationPolicy naming a namespaced kind without
		// a namespace: that name in every namespace. Policy changes are
		// rare; a name index would cost memory for every template.
		objs = indexer.List()
	}
	for _, obj := range objs {
		c, ok := cachedTemplateOf(obj)
		if !ok || c.ignored {
			continue
		}
		if policymatch.SelectorPriority(policyNamespace, sel, c.selectable()) != policymatch.NoMatch {
			d.queue.Add(keyOf(ti.GVR, c))
		}
	}
}

// templateOf is what selectors look at in u.
func templateOf(u *unstructured.Unstructured) policymatch.Template {
	return policymatch.Template{
		APIVersion: u.GetAPIVersion(),
		Kind:       u.GetKind(),
		Namespace:  u.GetNamespace(),
		Name:       u.GetName(),
		Labels:     u.GetLabels(),
	}
}
