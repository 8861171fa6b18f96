package workloadgroups_test

import (
	"context"
	"strconv"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/fixture"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/framework"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/workloadgroups"
)

// builderIndexer registers Index's indexes on a fake client's builder.
type builderIndexer struct{ b *fake.ClientBuilder }

func (i builderIndexer) IndexField(_ context.Context, obj client.Object, field string, fn client.IndexerFunc) error {
	i.b.WithIndex(obj, field, fn)
	return nil
}

// The fake client stands in for the informer cache because the test needs
// it to lag behind a write on purpose, which a real informer only does by
// chance; the scheduler's integration tests cover the real one.
func newReader(t *testing.T, objs ...client.Object) client.Client {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := workv1alpha2.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	b := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...)
	if err := workloadgroups.Index(context.Background(), builderIndexer{b}); err != nil {
		t.Fatal(err)
	}
	return b.Build()
}

func TestMembersPreferTheNewerOfInformerAndWrite(t *testing.T) {
	ctx := context.Background()
	a := fixture.Binding("a").AntiAffinityGroup("ha").Obj()
	b := fixture.Binding("b").AntiAffinityGroup("ha").AffinityGroup("shop").Scheduled(fixture.T("m2", 1)).Obj()
	c := fixture.Binding("c").AntiAffinityGroup("other").Obj()
	d := fixture.Binding("d").Namespace("elsewhere").AntiAffinityGroup("ha").Scheduled(fixture.T("m3", 1)).Obj()
	reader := newReader(t, a, b, c, d)
	if err := reader.Get(ctx, client.ObjectKeyFromObject(a), a); err != nil {
		t.Fatal(err)
	}
	rv, err := strconv.Atoi(a.ResourceVersion)
	if err != nil {
		t.Fatal(err)
	}
	tr := workloadgroups.New(reader)
	members := func(kind framework.GroupKind, group string) []framework.GroupMember {
		t.Helper()
		got, err := tr.Members(ctx, kind, "default", group)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	want := []framework.GroupMember{{Name: a.Name}, {Name: b.Name, Clusters: []string{"m2"}}}
	if diff := cmp.Diff(want, members(framework.AntiAffinityGroup, "ha")); diff != "" {
		t.Fatalf("from the informer (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]framework.GroupMember{{Name: b.Name, Clusters: []string{"m2"}}}, members(framework.AffinityGroup, "shop")); diff != "" {
		t.Fatalf("affinity group (-want +got):\n%s", diff)
	}

	// Our write of a, not delivered yet, counts.
	tr.Written(a, strconv.Itoa(rv+5), []workv1alpha2.TargetCluster{fixture.T("m1", 1)})
	want[0].Clusters = []string{"m1"}
	if diff := cmp.Diff(want, members(framework.AntiAffinityGroup, "ha")); diff != "" {
		t.Errorf("with our write (-want +got):\n%s", diff)
	}
	// An older version delivered meanwhile changes nothing.
	tr.Observe(a)
	if tr.Pending() != 1 {
		t.Errorf("forgot a write the informer has not delivered")
	}
	// Once the informer holds a newer version, it is the truth, and the
	// write is forgotten.
	a.ResourceVersion = strconv.Itoa(rv + 6)
	tr.Observe(a)
	if tr.Pending() != 0 {
		t.Errorf("kept a write the informer caught up with")
	}
	want[0].Clusters = nil
	if diff := cmp.Diff(want, members(framework.AntiAffinityGroup, "ha")); diff != "" {
		t.Errorf("after the informer caught up (-want +got):\n%s", diff)
	}

	// A write older than the informer's copy loses.
	tr.Written(b, "1", nil)
	want[0].Clusters, want[1].Clusters = nil, []string{"m2"}
	if diff := cmp.Diff(want, members(framework.AntiAffinityGroup, "ha")); diff != "" {
		t.Errorf("with a stale write (-want +got):\n%s", diff)
	}
	tr.Forget(b.Namespace, b.Name)
	if tr.Pending() != 0 {
		t.Errorf("Forget kept the write")
	}
}

// Lock holds bindings sharing a group apart and lets others through; the
// counter is only safe if it does.
func TestLockSerializesAGroup(t *testing.T) {
	tr := workloadgroups.New(nil)
	both := &workv1alpha2.WorkloadAffinityGroups{AffinityGroup: "x", AntiAffinityGroup: "y"}
	onlyY := &workv1alpha2.WorkloadAffinityGroups{AntiAffinityGroup: "y"}
	var wg sync.WaitGroup
	inside := 0
	for i := range 200 {
		g := both
		if i%2 == 0 {
			g = onlyY
		}
		wg.Go(func() {
			unlock := tr.Lock("ns", g)
			defer unlock()
			inside++
			if inside != 1 {
				t.Errorf("%d cycles of one group at once", inside)
			}
			inside--
		})
	}
	wg.Wait()
	// No group, or no namespace: nothing to wait for, even while held.
	unlock := tr.Lock("ns", both)
	tr.Lock("ns", nil)()
	tr.Lock("", both)()
	tr.Lock("other", both)()
	unlock()
}
