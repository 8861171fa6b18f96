package core_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/core"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/fixture"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/framework"
)

// at builds a candidate from a cluster builder, with room avail; the order
// of the returned slice is the preference order.
func at(b *fixture.ClusterBuilder, avail int64) core.Candidate {
	info := b.Info()
	return core.Candidate{Cluster: info, Name: info.Name(), Avail: avail}
}

func byField(f policyv1alpha1.SpreadFieldValue, minG, maxG int) policyv1alpha1.SpreadConstraint {
	return policyv1alpha1.SpreadConstraint{SpreadByField: f, MinGroups: minG, MaxGroups: maxG}
}

func selectedNames(cs []core.Candidate) []string {
	out := make([]string, len(cs))
	for i := range cs {
		out[i] = cs[i].Name
	}
	slices.Sort(out)
	return out
}

func TestSelect(t *testing.T) {
	// Six clusters over two providers, three regions and four zones,
	// in preference order.
	six := func(avail ...int64) []core.Candidate {
		if len(avail) == 0 {
			avail = []int64{10, 10, 10, 10, 10, 10}
		}
		return []core.Candidate{
			at(fixture.Cluster("m1").Provider("aws").Region("eu").Zone("eu-a").Label("rack", "r1"), avail[0]),
			at(fixture.Cluster("m2").Provider("aws").Region("eu").Zone("eu-b").Label("rack", "r1"), avail[1]),
			at(fixture.Cluster("m3").Provider("aws").Region("us").Zone("us-a").Label("rack", "r2"), avail[2]),
			at(fixture.Cluster("m4").Provider("gcp").Region("us").Zone("us-a").Label("rack", "r2"), avail[3]),
			at(fixture.Cluster("m5").Provider("gcp").Region("ap").Zone("ap-a").Label("rack", "r3"), avail[4]),
			at(fixture.Cluster("m6").Provider("gcp").Region("ap").Zone("ap-a").Label("rack", "r3"), avail[5]),
		}
	}
	tests := []struct {
		name        string
		cands       []core.Candidate
		constraints []policyv1alpha1.SpreadConstraint
		need        int64
		want        []string
		wantErr     bool
	}{
		{name: "no constraints keep all", cands: six(), need: -1,
			want: []string{"m1", "m2", "m3", "m4", "m5", "m6"}},
		{name: "cluster maxGroups takes the best", cands: six(), need: -1,
			constraints: []policyv1alpha1.SpreadConstraint{byField(policyv1alpha1.SpreadByFieldCluster, 1, 2)},
			want:        []string{"m1", "m2"}},
		{name: "neither field nor label means clusters", cands: six(), need: -1,
			constraints: []policyv1alpha1.SpreadConstraint{{MaxGroups: 3}},
			want:        []string{"m1", "m2", "m3"}},
		{name: "cluster minGroups unmet", cands: six(), need: -1,
			constraints: []policyv1alpha1.SpreadConstraint{byField(policyv1alpha1.SpreadByFieldCluster, 7, 0)},
			wantErr:     true},
		{name: "cluster: capacity swaps in a roomier cluster", cands: six(1, 1, 1, 1, 1, 50), need: 51,
			constraints: []policyv1alpha1.SpreadConstraint{byField(policyv1alpha1.SpreadByFieldCluster, 1, 2)},
			want:        []string{"m1", "m6"}},
		{name: "cluster: no pair holds the replicas", cands: six(1, 1, 1, 1, 1, 5), need: 51,
			constraints: []policyv1alpha1.SpreadConstraint{byField(policyv1alpha1.SpreadByFieldCluster, 1, 2)},
			wantErr:     true},
		{name: "region: two regions, one cluster each", cands: six(), need: -1,
			constraints: []policyv1alpha1.SpreadConstraint{
				byField(policyv1alpha1.SpreadByFieldRegion, 2, 2), byField(policyv1alpha1.SpreadByFieldCluster, 2, 2)},
			want: []string{"m1", "m3"}},
		{name: "region: two regions, up to three clusters", cands: six(), need: -1,
			constraints: []policyv1alpha1.SpreadConstraint{
				byField(policyv1alpha1.SpreadByFieldRegion, 2, 2), byField(policyv1alpha1.SpreadByFieldCluster, 2, 3)},
			want: []string{"m1", "m2", "m3"}},
		{name: "region: without cluster constraint all clusters of the chosen regions", cands: six(), need: -1,
			constraints: []policyv1alpha1.SpreadConstraint{byField(policyv1alpha1.SpreadByFieldRegion, 1, 1)},
			want:        []string{"m1", "m2"}},
		{name: "region: minGroups above the regions there are", cands: six(), need: -1,
			constraints: []policyv1alpha1.SpreadConstraint{byField(policyv1alpha1.SpreadByFieldRegion, 4, 0)},
			wantErr:     true},
		{name: "region: capacity picks a roomier region", cands: six(1, 1, 1, 1, 40, 40), need: 60,
			constraints: []policyv1alpha1.SpreadConstraint{
				byField(policyv1alpha1.SpreadByFieldRegion, 1, 1), byField(policyv1alpha1.SpreadByFieldCluster, 1, 2)},
			want: []string{"m5", "m6"}},
		{name: "region: cluster maxGroups below region minGroups", cands: six(), need: -1,
			constraints: []policyv1alpha1.SpreadConstraint{
				byField(policyv1alpha1.SpreadByFieldRegion, 3, 3), byField(policyv1alpha1.SpreadByFieldCluster, 1, 2)},
			wantErr: true},
		{name: "zone: three zones", cands: six(), need: -1,
			constraints: []policyv1alpha1.SpreadConstraint{
				byField(policyv1alpha1.SpreadByFieldZone, 3, 3), byField(policyv1alpha1.SpreadByFieldCluster, 3, 3)},
			want: []string{"m1", "m2", "m3"}},
		{name: "zone: min 2 max 2 over clusters sharing a zone", cands: six(), need: -1,
			constraints: []policyv1alpha1.SpreadConstraint{byField(policyv1alpha1.SpreadByFieldZone, 2, 2)},
			want:        []string{"m1", "m2"}},
		{name: "provider: both providers", cands: six(), need: -1,
			constraints: []policyv1alpha1.SpreadConstraint{
				byField(policyv1alpha1.SpreadByFieldProvider, 2, 2), byField(policyv1alpha1.SpreadByFieldCluster, 2, 2)},
			want: []string{"m1", "m4"}},
		{name: "provider: one provider", cands: six(), need: -1,
			constraints: []policyv1alpha1.SpreadConstraint{byField(policyv1alpha1.SpreadByFieldProvider, 1, 1)},
			want:        []string{"m1", "m2", "m3"}},
		{name: "label: two racks", cands: six(), need: -1,
			constraints: []policyv1alpha1.SpreadConstraint{
				{SpreadByLabel: "rack", MinGroups: 2, MaxGroups: 2}, byField(policyv1alpha1.SpreadByFieldCluster, 2, 2)},
			want: []string{"m1", "m3"}},
		{name: "label: minGroups over the racks there are", cands: six(), need: -1,
			constraints: []policyv1alpha1.SpreadConstraint{{SpreadByLabel: "rack", MinGroups: 4}},
			wantErr:     true},
		{name: "provider and region together", cands: six(), need: -1,
			constraints: []policyv1alpha1.SpreadConstraint{
				byField(policyv1alpha1.SpreadByFieldProvider, 1, 1), byField(policyv1alpha1.SpreadByFieldRegion, 2, 2),
				byField(policyv1alpha1.SpreadByFieldCluster, 2, 2)},
			want: []string{"m1", "m3"}},
		{name: "multi-zone cluster counts in both zones", need: -1,
			cands: []core.Candidate{
				at(fixture.Cluster("wide").Zones("z1", "z2"), 1),
				at(fixture.Cluster("narrow").Zones("z3"), 1),
			},
			constraints: []policyv1alpha1.SpreadConstraint{byField(policyv1alpha1.SpreadByFieldZone, 1, 2)},
			want:        []string{"wide"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := core.Select(tc.cands, tc.constraints, tc.need)
			if tc.wantErr {
				var u *framework.UnschedulableError
				if !errors.As(err, &u) {
					t.Fatalf("want an UnschedulableError, got %v (%v)", err, selectedNames(got))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, selectedNames(got)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
