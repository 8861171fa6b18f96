package e2e

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/localfed"
	"github.com/flotilla-io/flotilla/internal/names"
)

// nsCreate creates a namespace in the control plane, deleted when the test
// ends.
func nsCreate(t *testing.T, name string, labels map[string]string) {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
	create(t, ns)
	t.Cleanup(func() { _ = cp.Delete(context.Background(), ns) })
}

// nsChange changes the control plane's namespace, retrying on conflicts.
func nsChange(t *testing.T, name string, change func(labels map[string]string)) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var ns corev1.Namespace
		if err := cp.Get(t.Context(), client.ObjectKey{Name: name}, &ns); err != nil {
			return err
		}
		if ns.Labels == nil {
			ns.Labels = map[string]string{}
		}
		change(ns.Labels)
		return cp.Update(t.Context(), &ns)
	})
	if err != nil {
		t.Fatalf("changing namespace %s: %v", name, err)
	}
}

// nsIn waits until the namespace in each of members satisfies cond; a
// missing namespace is passed as nil.
func nsIn(t *testing.T, members []*localfed.Cluster, name, what string, cond func(*corev1.Namespace) bool) {
	t.Helper()
	for _, m := range members {
		eventually(t, "namespace "+name+" "+what+" in "+m.Name, func(ctx context.Context) (bool, error) {
			var ns corev1.Namespace
			err := m.Client.Get(ctx, client.ObjectKey{Name: name}, &ns)
			if apierrors.IsNotFound(err) {
				return cond(nil), nil
			}
			if err != nil {
				return false, err
			}
			return cond(&ns), nil
		})
	}
}

// nsPropagated: the member's namespace is the control plane's copy.
func nsPropagated(ns *corev1.Namespace) bool {
	return ns != nil && ns.DeletionTimestamp.IsZero() &&
		ns.Labels[workv1alpha1.ManagedByKarmadaLabel] == workv1alpha1.ManagedByKarmadaLabelValue
}

// nsGone: the member has no such namespace (its deletion has finished).
func nsGone(ns *corev1.Namespace) bool { return ns == nil }

func TestNamespaceAutoPropagation(t *testing.T) {
	t.Parallel()
	const name = "nsync-auto"
	nsCreate(t, name, map[string]string{"team": "a", "tier": "gold"})
	nsIn(t, fed.Members, name, "propagated with its labels", func(ns *corev1.Namespace) bool {
		return nsPropagated(ns) && ns.Labels["team"] == "a" && ns.Labels["tier"] == "gold"
	})
	// One Work per member, in its execution namespace.
	for _, m := range fed.MemberNames() {
		key := client.ObjectKey{Namespace: names.ExecutionSpace(m), Name: names.Work("", name, "Namespace")}
		if err := cp.Get(t.Context(), key, &workv1alpha1.Work{}); err != nil {
			t.Errorf("Work %s: %v", key, err)
		}
	}

	nsChange(t, name, func(labels map[string]string) {
		labels["team"] = "b"
		delete(labels, "tier")
	})
	nsIn(t, fed.Members, name, "relabelled", func(ns *corev1.Namespace) bool {
		if !nsPropagated(ns) {
			return false
		}
		_, hasTier := ns.Labels["tier"]
		return ns.Labels["team"] == "b" && !hasTier
	})

	if err := cp.Delete(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		t.Fatal(err)
	}
	nsIn(t, fed.Members, name, "deleted", nsGone)
}

func TestNamespaceSkipAutoPropagation(t *testing.T) {
	t.Parallel()
	skip := map[string]string{policyv1alpha1.NamespaceSkipAutoPropagationLabel: "true"}

	// Labelled from the start: never propagated. The barrier, created
	// after it, shows the controller has seen both.
	nsCreate(t, "nsync-optout", skip)
	nsCreate(t, "nsync-optout-barrier", nil)
	nsIn(t, fed.Members, "nsync-optout-barrier", "propagated", nsPropagated)
	nsIn(t, fed.Members, "nsync-optout", "absent", nsGone)

	// Labelled later: removed from the members that got it from the
	// control plane; the member that had its own keeps it.
	own, others := fed.Members[0], fed.Members[1:]
	local := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "nsync-later", Labels: map[string]string{"local": "yes"}}}
	if err := own.Client.Create(t.Context(), local); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = own.Client.Delete(context.Background(), local) })
	nsCreate(t, "nsync-later", map[string]string{"team": "l"})
	nsIn(t, others, "nsync-later", "propagated", func(ns *corev1.Namespace) bool {
		return nsPropagated(ns) && ns.Labels["team"] == "l"
	})

	nsChange(t, "nsync-later", func(labels map[string]string) {
		labels[policyv1alpha1.NamespaceSkipAutoPropagationLabel] = "true"
	})
	nsIn(t, others, "nsync-later", "removed", nsGone)
	// Its Work goes only once the execution controller has dealt with the
	// member's namespace.
	key := client.ObjectKey{Namespace: names.ExecutionSpace(own.Name), Name: names.Work("", "nsync-later", "Namespace")}
	eventually(t, "Work "+key.String()+" gone", func(ctx context.Context) (bool, error) {
		err := cp.Get(ctx, key, &workv1alpha1.Work{})
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
	nsIn(t, []*localfed.Cluster{own}, "nsync-later", "kept as the member had it", func(ns *corev1.Namespace) bool {
		if ns == nil {
			return false
		}
		_, managed := ns.Labels[workv1alpha1.ManagedByKarmadaLabel]
		return ns.UID == local.UID && ns.DeletionTimestamp.IsZero() && ns.Labels["local"] == "yes" && !managed
	})
}
