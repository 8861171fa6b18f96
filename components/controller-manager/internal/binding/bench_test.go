package binding

import (
	"testing"

	"k8s.io/utils/ptr"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/overrides"
)

// BenchmarkSyncUpToDate measures the CPU a reconcile of an up-to-date
// Deployment binding spends per cluster outside the API: render, encode
// and compare with the stored Work.
func BenchmarkSyncUpToDate(b *testing.B) {
	interp := staticInterpreter(b)
	template := obj(b, deploymentYAML)
	base := template.DeepCopy()
	prune(base)
	ops := overrides.NewRenderer([]policyv1alpha1.OverridePolicy{registryOverride()}, nil)
	v := ViewOf(testRB())
	t := target{cluster: "member2", replicas: ptr.To[int64](2)}
	work := workIdentity{namespace: "karmada-es-member2", name: "nginx-687f7fb96f", id: "work-id"}
	rd, err := render(b.Context(), interp, ops, base, t, member("member2"), rbIdentity(), work)
	if err != nil {
		b.Fatal(err)
	}
	d, err := buildWork(v, rd, t, work)
	if err != nil {
		b.Fatal(err)
	}
	stored := d.newWork()
	b.ReportAllocs()
	for b.Loop() {
		rd, err := render(b.Context(), interp, ops, base, t, member("member2"), rbIdentity(), work)
		if err != nil {
			b.Fatal(err)
		}
		d, err := buildWork(v, rd, t, work)
		if err != nil {
			b.Fatal(err)
		}
		if ok, err := d.upToDate(stored); err != nil || !ok {
			b.Fatalf("upToDate = %v, %v", ok, err)
		}
	}
}
