package detector

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/flotilla-io/flotilla/components/controller-manager/internal/detector/policymatch"
)

const (
	ppID  = "propagationpolicy.karmada.io/permanent-id"
	ppNS  = "propagationpolicy.karmada.io/namespace"
	ppN   = "propagationpolicy.karmada.io/name"
	cppID = "clusterpropagationpolicy.karmada.io/permanent-id"
	cppN  = "clusterpropagationpolicy.karmada.io/name"
)

func TestClaimOf(t *testing.T) {
	tests := []struct {
		name        string
		labels      map[string]string
		annotations map[string]string
		want        claim
	}{
		{"unclaimed", map[string]string{"app": "x"}, nil, claim{}},
		{"PropagationPolicy", map[string]string{ppID: "1"}, map[string]string{ppNS: "team", ppN: "web"},
			claim{Kind: policymatch.PropagationPolicy, ID: "1", Namespace: "team", Name: "web"}},
		{"ClusterPropagationPolicy", map[string]string{cppID: "2"}, map[string]string{cppN: "all"},
			claim{Kind: policymatch.ClusterPropagationPolicy, ID: "2", Name: "all"}},
		{"both: the PropagationPolicy wins", map[string]string{ppID: "1", cppID: "2"}, map[string]string{ppNS: "team", ppN: "web", cppN: "all"},
			claim{Kind: policymatch.PropagationPolicy, ID: "1", Namespace: "team", Name: "web"}},
		{"an id without annotations", map[string]string{ppID: "1"}, nil, claim{Kind: policymatch.PropagationPolicy, ID: "1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, claimOf(tt.labels, tt.annotations)); diff != "" {
				t.Errorf("claimOf (-want +got):\n%s", diff)
			}
		})
	}
}

func TestClaimChange(t *testing.T) {
	pp := claim{Kind: policymatch.PropagationPolicy, ID: "1", Namespace: "team", Name: "web"}
	cpp := claim{Kind: policymatch.ClusterPropagationPolicy, ID: "2", Name: "all"}
	tests := []struct {
		name        string
		labels      map[string]string
		annotations map[string]string
		want        claim
		change      metaChange
	}{
		{
			name:   "claim an unclaimed template",
			labels: map[string]string{"app": "x"},
			want:   pp,
			change: metaChange{setLabels: map[string]string{ppID: "1"}, setAnnotations: map[string]string{ppNS: "team", ppN: "web"}},
		},
		{
			name:        "already claimed",
			labels:      map[string]string{"app": "x", ppID: "1"},
			annotations: map[string]string{ppNS: "team", ppN: "web", "other": "y"},
			want:        pp,
		},
		{
			name:        "a PropagationPolicy preempts a ClusterPropagationPolicy",
			labels:      map[string]string{cppID: "2"},
			annotations: map[string]string{cppN: "all"},
			want:        pp,
			change: metaChange{
				setLabels: map[string]string{ppID: "1"}, setAnnotations: map[string]string{ppNS: "team", ppN: "web"},
				removeLabels: []string{cppID}, removeAnnotations: []string{cppN},
			},
		},
		{
			name:        "another PropagationPolicy",
			labels:      map[string]string{ppID: "9"},
			annotations: map[string]string{ppNS: "team", ppN: "old"},
			want:        pp,
			change:      metaChange{setLabels: map[string]string{ppID: "1"}, setAnnotations: map[string]string{ppN: "web"}},
		},
		{
			name:        "a ClusterPropagationPolicy",
			labels:      map[string]string{"app": "x"},
			annotations: map[string]string{},
			want:        cpp,
			change:      metaChange{setLabels: map[string]string{cppID: "2"}, setAnnotations: map[string]string{cppN: "all"}},
		},
		{
			name:        "release",
			labels:      map[string]string{"app": "x", ppID: "1"},
			annotations: map[string]string{ppNS: "team", ppN: "web", cppN: "stale"},
			want:        claim{},
			change:      metaChange{removeLabels: []string{ppID}, removeAnnotations: []string{ppNS, ppN, cppN}},
		},
		{name: "nothing to release", labels: map[string]string{"app": "x"}, want: claim{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := claimChange(tt.labels, tt.annotations, tt.want)
			if diff := cmp.Diff(tt.change, got, cmp.AllowUnexported(metaChange{}), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("claimChange (-want +got):\n%s", diff)
			}
			labels, annotations := got.apply(copyMap(tt.labels), copyMap(tt.annotations))
			if again := claimChange(labels, annotations, tt.want); !again.empty() {
				t.Errorf("after apply, claimChange = %+v, want none", again)
			}
			if c := claimOf(labels, annotations); c != tt.want {
				t.Errorf("after apply, claimOf = %+v, want %+v", c, tt.want)
			}
		})
	}
}

func copyMap(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func TestMergePatch(t *testing.T) {
	c := metaChange{
		setLabels:         map[string]string{ppID: "1"},
		setAnnotations:    map[string]string{ppN: "web"},
		removeLabels:      []string{cppID},
		removeAnnotations: []string{cppN},
	}
	data, err := c.mergePatch("uid-1")
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"metadata": map[string]any{
		"uid":         "uid-1",
		"labels":      map[string]any{ppID: "1", cppID: nil},
		"annotations": map[string]any{ppN: "web", cppN: nil},
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("mergePatch (-want +got):\n%s", diff)
	}

	data, err = metaChange{removeLabels: []string{ppID}}.mergePatch("uid-2")
	if err != nil {
		t.Fatal(err)
	}
	if string(data) != `{"metadata":{"labels":{"propagationpolicy.karmada.io/permanent-id":null},"uid":"uid-2"}}` {
		t.Errorf("release patch = %s", data)
	}
}
