package workstatus

import (
	"slices"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// memberResource is one resource in one member: what an informer watches.
type memberResource struct {
	cluster string
	gvr     schema.GroupVersionResource
}

// usage counts, for every member resource, the Works whose manifests live
// there, so that an informer runs exactly while some Work needs it. It is
// not safe for concurrent use.
type usage struct {
	works map[types.NamespacedName][]memberResource
	users map[memberResource]int
}

func newUsage() *usage {
	return &usage{works: map[types.NamespacedName][]memberResource{}, users: map[memberResource]int{}}
}

// set records the resources work needs now and returns those no Work needs
// any more.
func (u *usage) set(work types.NamespacedName, resources []memberResource) []memberResource {
	resources = dedupe(resources)
	old := u.works[work]
	if slices.Equal(old, resources) {
		return nil
	}
	for _, r := range resources {
		u.users[r]++
	}
	if len(resources) > 0 {
		u.works[work] = resources
	} else {
		delete(u.works, work)
	}
	return u.release(old)
}

// forget drops a Work that is gone and returns the resources no Work needs
// any more.
func (u *usage) forget(work types.NamespacedName) []memberResource {
	old, ok := u.works[work]
	if !ok {
		return nil
	}
	delete(u.works, work)
	return u.release(old)
}

func (u *usage) release(resources []memberResource) []memberResource {
	var unused []memberResource
	for _, r := range resources {
		u.users[r]--
		if u.users[r] <= 0 {
			delete(u.users, r)
			unused = append(unused, r)
		}
	}
	return unused
}

// needed reports whether some Work needs the resource.
func (u *usage) needed(r memberResource) bool { return u.users[r] > 0 }

// dedupe sorts resources and drops repeats, so that a Work with several
// manifests of one kind counts once.
func dedupe(resources []memberResource) []memberResource {
	out := slices.Clone(resources)
	slices.SortFunc(out, func(a, b memberResource) int {
		if a.cluster != b.cluster {
			if a.cluster < b.cluster {
				return -1
			}
			return 1
		}
		as, bs := a.gvr.String(), b.gvr.String()
		switch {
		case as < bs:
			return -1
		case as > bs:
			return 1
		}
		return 0
	})
	return slices.Compact(out)
}
