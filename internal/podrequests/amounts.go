package podrequests

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// amounts are quantities by resource. A pod names a handful of resources,
// so a slice is cheaper than a ResourceList to build and to search, and the
// requests of every container are summed on each GetReplicas.
type amounts []amount

type amount struct {
	name corev1.ResourceName
	q    resource.Quantity
}

func fromList(l corev1.ResourceList) amounts {
	if len(l) == 0 {
		return nil
	}
	out := make(amounts, 0, len(l))
	for name, q := range l {
		out = append(out, amount{name, q})
	}
	return out
}

func (a amounts) index(name corev1.ResourceName) int {
	for i := range a {
		if a[i].name == name {
			return i
		}
	}
	return -1
}

func (a amounts) has(name corev1.ResourceName) bool { return a.index(name) >= 0 }

// add adds q to name. New entries are copies: Quantity.Add may change the
// decimal a quantity points to, which the caller's may share.
func (a *amounts) add(name corev1.ResourceName, q resource.Quantity) {
	if i := a.index(name); i >= 0 {
		(*a)[i].q.Add(q)
		return
	}
	*a = append(*a, amount{name, q.DeepCopy()})
}

// raise raises name to at least q.
func (a *amounts) raise(name corev1.ResourceName, q resource.Quantity) {
	if i := a.index(name); i < 0 {
		*a = append(*a, amount{name, q.DeepCopy()})
	} else if q.Cmp((*a)[i].q) > 0 {
		(*a)[i].q = q.DeepCopy()
	}
}

func (a *amounts) set(name corev1.ResourceName, q resource.Quantity) {
	if i := a.index(name); i >= 0 {
		(*a)[i].q = q.DeepCopy()
		return
	}
	*a = append(*a, amount{name, q.DeepCopy()})
}

func (a *amounts) addAll(b amounts) {
	for _, x := range b {
		a.add(x.name, x.q)
	}
}

func (a *amounts) raiseAll(b amounts) {
	for _, x := range b {
		a.raise(x.name, x.q)
	}
}

func (a amounts) list() corev1.ResourceList {
	out := make(corev1.ResourceList, len(a))
	for _, x := range a {
		out[x.name] = x.q
	}
	return out
}
