package detector

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
)

// BenchmarkPropagate measures the detector alone on the package's API
// server: per iteration, 500 Deployments under one PropagationPolicy,
// from the first create until every one has its binding; it reports the
// bindings written more than once (should be 0) and the process's live heap
// after the iteration (templates of earlier iterations stay cached).
//
//	go test ./components/controller-manager/internal/detector -run '^$' -bench Propagate -benchtime 3x
func BenchmarkPropagate(b *testing.B) {
	if noServer != "" {
		b.Skip(noServer)
	}
	const templates = 500
	ctx := context.Background()
	for i := range b.N {
		b.StopTimer()
		ns := fmt.Sprintf("det-bench-%d-%d", time.Now().UnixNano(), i)
		if err := testClient.Create(ctx, namespaceObj(ns)); err != nil {
			b.Fatal(err)
		}
		pp := newPP(ns, "all", policyv1alpha1.ResourceSelector{APIVersion: "apps/v1", Kind: "Deployment"})
		if err := testClient.Create(ctx, pp); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		start := time.Now()
		var wg sync.WaitGroup
		errs := make(chan error, templates)
		for w := range 8 {
			wg.Go(func() {
				for j := w; j < templates; j += 8 {
					if err := testClient.Create(ctx, newDeployment(ns, fmt.Sprintf("app-%d", j), 3, nil)); err != nil {
						errs <- err
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			b.Fatal(err)
		}
		created := time.Since(start)
		var list workv1alpha2.ResourceBindingList
		for {
			if err := testClient.List(ctx, &list, client.InNamespace(ns)); err != nil {
				b.Fatal(err)
			}
			if len(list.Items) == templates {
				break
			}
			if time.Since(start) > 5*time.Minute {
				b.Fatalf("%d of %d bindings after 5 minutes", len(list.Items), templates)
			}
			time.Sleep(50 * time.Millisecond)
		}
		elapsed := time.Since(start)
		// A binding written more than once (after its template's claim
		// settled) has a generation above 1.
		rewritten := 0
		for _, rb := range list.Items {
			if rb.Generation > 1 {
				rewritten++
			}
		}
		b.ReportMetric(float64(templates)/elapsed.Seconds(), "bindings/s")
		b.ReportMetric(created.Seconds(), "create-s")
		b.ReportMetric(float64(rewritten), "rewritten")
		// The test process holds the detector's caches (every Deployment,
		// every binding), so its live heap bounds theirs.
		var mem runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&mem)
		b.ReportMetric(float64(mem.HeapAlloc)/(1<<20), "heap-MiB")
	}
}
