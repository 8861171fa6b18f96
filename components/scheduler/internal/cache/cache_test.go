package cache_test

import (
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/flotilla-io/flotilla/components/scheduler/internal/cache"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/fixture"
)

func names(s *cache.Snapshot) []string {
	clusters := s.Clusters()
	out := make([]string, 0, len(clusters))
	for _, c := range clusters {
		out = append(out, c.Name())
	}
	return out
}

func TestSnapshotsAreImmutable(t *testing.T) {
	c := cache.New()
	c.AddOrUpdate(fixture.Cluster("b").Obj())
	c.AddOrUpdate(fixture.Cluster("a").Obj())
	first := c.Snapshot()
	if again := c.Snapshot(); again != first {
		t.Error("an unchanged cache should hand out the same snapshot")
	}
	c.AddOrUpdate(fixture.Cluster("c").Obj())
	c.Delete("a")
	if diff := cmp.Diff([]string{"a", "b"}, names(first)); diff != "" {
		t.Errorf("old snapshot changed (-want +got):\n%s", diff)
	}
	second := c.Snapshot()
	if diff := cmp.Diff([]string{"b", "c"}, names(second)); diff != "" {
		t.Errorf("new snapshot (-want +got):\n%s", diff)
	}
	if _, ok := second.Get("a"); ok {
		t.Error("deleted cluster still in the snapshot")
	}
	if !c.Has("b") || c.Has("a") {
		t.Error("Has disagrees with the content")
	}
}

func TestConcurrentUse(t *testing.T) {
	c := cache.New()
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() {
			for j := range 200 {
				name := string(rune('a' + (i+j)%8))
				c.AddOrUpdate(fixture.Cluster(name).Obj())
				_ = c.Snapshot().Len()
				if j%7 == 0 {
					c.Delete(name)
				}
			}
		})
	}
	wg.Wait()
}

func TestClusterInfo(t *testing.T) {
	info := fixture.Cluster("a").API("batch/v1", "jobs", "Job").Zone("z1").Info()
	if !info.ServesAPI(cache.APIKey("batch/v1", "Job")) || !info.ServesAPI(cache.APIKey("apps/v1", "Deployment")) {
		t.Error("served kinds not found")
	}
	if info.ServesAPI(cache.APIKey("apps/v1", "StatefulSet")) {
		t.Error("unserved kind found")
	}
	if info.APIEnablementsIncomplete() {
		t.Error("complete by default")
	}
	if !fixture.Cluster("b").APIsIncomplete().Info().APIEnablementsIncomplete() {
		t.Error("CompleteAPIEnablements=False not seen")
	}
	if diff := cmp.Diff([]string{"z1"}, info.Zones); diff != "" {
		t.Errorf("zones (-want +got):\n%s", diff)
	}
}
