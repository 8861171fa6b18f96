package dependencies

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	configv1alpha1 "github.com/flotilla-io/flotilla/api/config/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
)

func clusters(names ...string) []workv1alpha2.TargetCluster {
	out := make([]workv1alpha2.TargetCluster, len(names))
	for i, n := range names {
		out[i] = workv1alpha2.TargetCluster{Name: n, Replicas: 1}
	}
	return out
}

func snap(ns, name string, cs ...string) workv1alpha2.BindingSnapshot {
	return workv1alpha2.BindingSnapshot{Namespace: ns, Name: name, Clusters: clusters(cs...)}
}

func web(cs ...string) dependent {
	return dependent{namespace: "team", name: "web-deployment", id: "id-web-deployment", clusters: clusters(cs...)}
}

// cfg is the ConfigMap team/cfg as a dependency.
func cfg() dependency {
	return dependency{ref: workv1alpha2.ObjectReference{
		APIVersion: "v1", Kind: "ConfigMap", Namespace: "team", Name: "cfg", UID: types.UID("uid-cfg"), ResourceVersion: "7",
	}}
}

func TestDependedByLabel(t *testing.T) {
	a, b := DependedByLabel("team", "web-deployment"), DependedByLabel("team", "api-deployment")
	if a == b {
		t.Errorf("two bindings share the label key %s", a)
	}
	if a != DependedByLabel("team", "web-deployment") {
		t.Errorf("the label key is not deterministic")
	}
	// The key's name part must be a valid label name: at most 63 characters.
	long := DependedByLabel(string(make([]byte, 63)), string(make([]byte, 253)))
	if n := len(long) - len("resourcebinding.karmada.io/"); n > 63 {
		t.Errorf("label name %q has %d characters", long, n)
	}
}

func TestWithSnapshot(t *testing.T) {
	tests := []struct {
		name        string
		requiredBy  []workv1alpha2.BindingSnapshot
		s           workv1alpha2.BindingSnapshot
		want        []workv1alpha2.BindingSnapshot
		wantChanged bool
	}{{
		name:        "first entry",
		s:           snap("team", "web", "m1"),
		want:        []workv1alpha2.BindingSnapshot{snap("team", "web", "m1")},
		wantChanged: true,
	}, {
		name:        "appended after others",
		requiredBy:  []workv1alpha2.BindingSnapshot{snap("team", "api", "m3")},
		s:           snap("team", "web", "m1"),
		want:        []workv1alpha2.BindingSnapshot{snap("team", "api", "m3"), snap("team", "web", "m1")},
		wantChanged: true,
	}, {
		name:        "same schedule: unchanged",
		requiredBy:  []workv1alpha2.BindingSnapshot{snap("team", "web", "m1", "m2"), snap("team", "api", "m3")},
		s:           snap("team", "web", "m1", "m2"),
		want:        []workv1alpha2.BindingSnapshot{snap("team", "web", "m1", "m2"), snap("team", "api", "m3")},
		wantChanged: false,
	}, {
		name:        "new schedule replaces the entry in place",
		requiredBy:  []workv1alpha2.BindingSnapshot{snap("team", "web", "m1", "m2"), snap("team", "api", "m3")},
		s:           snap("team", "web", "m3"),
		want:        []workv1alpha2.BindingSnapshot{snap("team", "web", "m3"), snap("team", "api", "m3")},
		wantChanged: true,
	}, {
		name:        "same name in another namespace is another binding",
		requiredBy:  []workv1alpha2.BindingSnapshot{snap("other", "web", "m2")},
		s:           snap("team", "web", "m1"),
		want:        []workv1alpha2.BindingSnapshot{snap("other", "web", "m2"), snap("team", "web", "m1")},
		wantChanged: true,
	}, {
		name:        "duplicates collapse",
		requiredBy:  []workv1alpha2.BindingSnapshot{snap("team", "web", "m1"), snap("team", "api"), snap("team", "web", "m1")},
		s:           snap("team", "web", "m1"),
		want:        []workv1alpha2.BindingSnapshot{snap("team", "web", "m1"), snap("team", "api")},
		wantChanged: true,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := cloneSnapshots(tt.requiredBy)
			got, changed := withSnapshot(tt.requiredBy, tt.s)
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("requiredBy (-want +got):\n%s", diff)
			}
			if changed != tt.wantChanged {
				t.Errorf("changed = %v, want %v", changed, tt.wantChanged)
			}
			if diff := cmp.Diff(before, tt.requiredBy, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("the input was modified (-before +after):\n%s", diff)
			}
		})
	}
}

func cloneSnapshots(in []workv1alpha2.BindingSnapshot) []workv1alpha2.BindingSnapshot {
	out := make([]workv1alpha2.BindingSnapshot, len(in))
	for i := range in {
		in[i].DeepCopyInto(&out[i])
	}
	return out
}

func TestWithoutSnapshot(t *testing.T) {
	tests := []struct {
		name        string
		requiredBy  []workv1alpha2.BindingSnapshot
		want        []workv1alpha2.BindingSnapshot
		wantChanged bool
	}{
		{name: "empty", wantChanged: false},
		{name: "other bindings only", requiredBy: []workv1alpha2.BindingSnapshot{snap("team", "api", "m1")},
			want: []workv1alpha2.BindingSnapshot{snap("team", "api", "m1")}},
		{name: "last entry", requiredBy: []workv1alpha2.BindingSnapshot{snap("team", "web", "m1")}, want: nil, wantChanged: true},
		{name: "one of several", requiredBy: []workv1alpha2.BindingSnapshot{snap("team", "api", "m2"), snap("team", "web", "m1"), snap("other", "web")},
			want: []workv1alpha2.BindingSnapshot{snap("team", "api", "m2"), snap("other", "web")}, wantChanged: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, changed := withoutSnapshot(tt.requiredBy, "team", "web")
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("requiredBy (-want +got):\n%s", diff)
			}
			if changed != tt.wantChanged {
				t.Errorf("changed = %v, want %v", changed, tt.wantChanged)
			}
		})
	}
}

func TestResolve(t *testing.T) {
	abort, overwrite := settings{}, settings{overwrite: true}
	preserve := settings{preserve: true}
	const (
		crConflict       = "ConflictResolution conflicted (Overwrite vs Abort)"
		preserveConflict = "PreserveResourcesOnDeletion conflicted (true vs false)"
	)
	tests := []struct {
		name          string
		all           []settings
		want          settings
		wantConflicts []string
	}{
		{name: "none", want: settings{}},
		{name: "one", all: []settings{overwrite}, want: overwrite},
		{name: "agreeing", all: []settings{abort, abort}, want: abort},
		{name: "any Overwrite wins", all: []settings{abort, overwrite}, want: overwrite, wantConflicts: []string{crConflict}},
		{name: "any preservation wins", all: []settings{preserve, abort}, want: preserve, wantConflicts: []string{preserveConflict}},
		{name: "both disagree", all: []settings{{overwrite: true, preserve: true}, abort}, want: settings{overwrite: true, preserve: true}, wantConflicts: []string{crConflict, preserveConflict}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, conflicts := resolve(tt.all)
			if got != tt.want {
				t.Errorf("resolve = %+v, want %+v", got, tt.want)
			}
			if diff := cmp.Diff(tt.wantConflicts, conflicts); diff != "" {
				t.Errorf("conflicts (-want +got):\n%s", diff)
			}
		})
	}
}

// A dependent released by its policy keeps its place but has no say while
// a claimed one has.
func TestHeard(t *testing.T) {
	claimedAbort := voice{claimed: true}
	releasedOverwrite := voice{settings: settings{overwrite: true}}
	for _, tt := range []struct {
		name   string
		voices []voice
		want   []settings
	}{
		{name: "claimed ones only", voices: []voice{claimedAbort, releasedOverwrite}, want: []settings{{}}},
		{name: "all released: all", voices: []voice{releasedOverwrite, {}}, want: []settings{{overwrite: true}, {}}},
		{name: "none", want: []settings{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, heard(tt.voices), cmp.AllowUnexported(settings{})); diff != "" {
				t.Errorf("heard (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNewAttached(t *testing.T) {
	d := web("m1", "m2")
	d.voice = voice{settings: settings{overwrite: true}, claimed: true}
	got := newAttached(d, cfg(), "id-cfg")
	want := &workv1alpha2.ResourceBinding{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: "team",
			Name:      "cfg-configmap",
			Labels: map[string]string{
				workv1alpha2.BindingManagedByLabel:           ManagedBy,
				workv1alpha2.ResourceBindingPermanentIDLabel: "id-cfg",
				DependedByLabel("team", "web-deployment"):    "id-web-deployment",
			},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "v1", Kind: "ConfigMap", Name: "cfg", UID: "uid-cfg",
				Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
			}},
			Finalizers: []string{workv1alpha2.BindingControllerFinalizer},
		},
		Spec: workv1alpha2.ResourceBindingSpec{
			Resource:           cfg().ref,
			RequiredBy:         []workv1alpha2.BindingSnapshot{snap("team", "web-deployment", "m1", "m2")},
			ConflictResolution: policyv1alpha1.ConflictOverwrite,
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("attached binding (-want +got):\n%s", diff)
	}
	if !ownedByDistributor(got) {
		t.Errorf("the distributor does not own the binding it created")
	}
}

// attachedBy is an attached binding the distributor made for cfg, required
// by the given snapshots.
func attachedBy(requiredBy ...workv1alpha2.BindingSnapshot) *workv1alpha2.ResourceBinding {
	rb := newAttached(web(), cfg(), "id-cfg")
	rb.Spec.RequiredBy = requiredBy
	for _, s := range requiredBy {
		rb.Labels[DependedByLabel(s.Namespace, s.Name)] = "id-" + s.Name
	}
	if !slices.ContainsFunc(requiredBy, func(s workv1alpha2.BindingSnapshot) bool { return s.Name == "web-deployment" }) {
		delete(rb.Labels, DependedByLabel("team", "web-deployment"))
	}
	return rb
}

// claimed makes rb the binding of a policy claiming the dependency.
func claimed(rb *workv1alpha2.ResourceBinding) *workv1alpha2.ResourceBinding {
	rb.Labels[policyv1alpha1.PropagationPolicyPermanentIDLabel] = "pp-id"
	rb.Spec.Placement = &policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"m3"}}}
	rb.Spec.Clusters = clusters("m3")
	rb.Spec.Resource.ResourceVersion = "5"
	return rb
}

func TestAttach(t *testing.T) {
	newer := cfg()
	newer.ref.ResourceVersion = "8"
	tests := []struct {
		name          string
		rb            *workv1alpha2.ResourceBinding
		d             dependent
		dep           dependency
		others        []voice
		want          *workv1alpha2.ResourceBinding
		wantChanged   bool
		wantConflicts int
	}{{
		name: "up to date",
		rb:   attachedBy(snap("team", "web-deployment", "m1")),
		d:    web("m1"), dep: cfg(),
		want: attachedBy(snap("team", "web-deployment", "m1")),
	}, {
		name: "schedule changed",
		rb:   attachedBy(snap("team", "web-deployment", "m1")),
		d:    web("m3"), dep: cfg(),
		want:        attachedBy(snap("team", "web-deployment", "m3")),
		wantChanged: true,
	}, {
		name: "second dependent",
		rb:   attachedBy(snap("team", "api-deployment", "m2")),
		d:    web("m1"), dep: cfg(),
		want: func() *workv1alpha2.ResourceBinding {
			rb := attachedBy(snap("team", "api-deployment", "m2"), snap("team", "web-deployment", "m1"))
			return rb
		}(),
		others:      []voice{{}},
		wantChanged: true,
	}, {
		name: "dependency changed: the reference follows",
		rb:   attachedBy(snap("team", "web-deployment", "m1")),
		d:    web("m1"), dep: newer,
		want: func() *workv1alpha2.ResourceBinding {
			rb := attachedBy(snap("team", "web-deployment", "m1"))
			rb.Spec.Resource.ResourceVersion = "8"
			return rb
		}(),
		wantChanged: true,
	}, {
		name: "settings resolved over dependents, with a conflict",
		rb:   attachedBy(snap("team", "api-deployment", "m2"), snap("team", "web-deployment", "m1")),
		d:    dependent{namespace: "team", name: "web-deployment", id: "id-web-deployment", clusters: clusters("m1"), voice: voice{settings: settings{overwrite: true}}},
		dep:  cfg(), others: []voice{{}},
		want: func() *workv1alpha2.ResourceBinding {
			rb := attachedBy(snap("team", "api-deployment", "m2"), snap("team", "web-deployment", "m1"))
			rb.Spec.ConflictResolution = policyv1alpha1.ConflictOverwrite
			return rb
		}(),
		wantChanged: true, wantConflicts: 1,
	}, {
		name: "a released dependent has no say while a claimed one has",
		rb: func() *workv1alpha2.ResourceBinding {
			rb := attachedBy(snap("team", "api-deployment", "m2"), snap("team", "web-deployment", "m1"))
			rb.Spec.ConflictResolution = policyv1alpha1.ConflictOverwrite
			rb.Spec.PreserveResourcesOnDeletion = ptr.To(true)
			return rb
		}(),
		d:   dependent{namespace: "team", name: "web-deployment", id: "id-web-deployment", clusters: clusters("m1"), voice: voice{claimed: true}},
		dep: cfg(), others: []voice{{settings: settings{overwrite: true, preserve: true}}},
		want:        attachedBy(snap("team", "api-deployment", "m2"), snap("team", "web-deployment", "m1")),
		wantChanged: true,
	}, {
		name: "own policy: requiredBy and label only",
		rb:   claimed(attachedBy()),
		d:    dependent{namespace: "team", name: "web-deployment", id: "id-web-deployment", clusters: clusters("m1"), voice: voice{settings: settings{overwrite: true}}},
		dep:  newer,
		want: func() *workv1alpha2.ResourceBinding {
			rb := claimed(attachedBy(snap("team", "web-deployment", "m1")))
			return rb
		}(),
		wantChanged: true, wantConflicts: 1,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			changed, conflicts := attach(tt.rb, tt.d, tt.dep, tt.others)
			if diff := cmp.Diff(tt.want, tt.rb); diff != "" {
				t.Errorf("binding (-want +got):\n%s", diff)
			}
			if changed != tt.wantChanged {
				t.Errorf("changed = %v, want %v", changed, tt.wantChanged)
			}
			if len(conflicts) != tt.wantConflicts {
				t.Errorf("conflicts = %q, want %d", conflicts, tt.wantConflicts)
			}
		})
	}
}

func TestDetach(t *testing.T) {
	tests := []struct {
		name        string
		rb          *workv1alpha2.ResourceBinding
		remaining   []voice
		want        *workv1alpha2.ResourceBinding
		wantChanged bool
		wantDelete  bool
	}{{
		name:       "last dependent: deleted",
		rb:         attachedBy(snap("team", "web-deployment", "m1")),
		want:       attachedBy(),
		wantDelete: true, wantChanged: true,
	}, {
		name: "others remain: entry, label and their settings",
		rb: func() *workv1alpha2.ResourceBinding {
			rb := attachedBy(snap("team", "api-deployment", "m2"), snap("team", "web-deployment", "m1"))
			rb.Spec.ConflictResolution = policyv1alpha1.ConflictOverwrite
			rb.Spec.PreserveResourcesOnDeletion = ptr.To(true)
			return rb
		}(),
		remaining:   []voice{{}},
		want:        attachedBy(snap("team", "api-deployment", "m2")),
		wantChanged: true,
	}, {
		name:      "only released dependents remain: theirs",
		rb:        attachedBy(snap("team", "api-deployment", "m2"), snap("team", "web-deployment", "m1")),
		remaining: []voice{{settings: settings{overwrite: true}}},
		want: func() *workv1alpha2.ResourceBinding {
			rb := attachedBy(snap("team", "api-deployment", "m2"))
			rb.Spec.ConflictResolution = policyv1alpha1.ConflictOverwrite
			return rb
		}(),
		wantChanged: true,
	}, {
		name: "not attached to it: unchanged",
		rb:   attachedBy(snap("team", "api-deployment", "m2")),
		want: attachedBy(snap("team", "api-deployment", "m2")),
	}, {
		name:        "own policy: kept without the entry",
		rb:          claimed(attachedBy(snap("team", "web-deployment", "m1"))),
		want:        claimed(attachedBy()),
		wantChanged: true,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			changed, deleteIt := detach(tt.rb, "team", "web-deployment", tt.remaining)
			if diff := cmp.Diff(tt.want, tt.rb, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("binding (-want +got):\n%s", diff)
			}
			if changed != tt.wantChanged || deleteIt != tt.wantDelete {
				t.Errorf("changed, delete = %v, %v; want %v, %v", changed, deleteIt, tt.wantChanged, tt.wantDelete)
			}
		})
	}
}

func TestDependencyKeys(t *testing.T) {
	raw := `[{"apiVersion":"v1","kind":"ConfigMap","namespace":"team","name":"cfg"},` +
		`{"apiVersion":"v1","kind":"Secret","name":"token"},` +
		`{"apiVersion":"example.io/v1","kind":"Thing","labelSelector":{"matchLabels":{"app":"web"}}}]`
	got := dependencyKeys("team", raw)
	want := []string{"/ConfigMap/team/cfg", "/Secret/team/token", "example.io/Thing/team/*"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("keys (-want +got):\n%s", diff)
	}
	if got := dependencyKeys("team", "not json"); got != nil {
		t.Errorf("malformed annotation indexed as %q", got)
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name    string
		ref     map[string]any
		wantErr string
	}{
		{name: "by name", ref: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "name": "cfg"}},
		{name: "by selector", ref: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "labelSelector": map[string]any{}}},
		{name: "no kind", ref: map[string]any{"apiVersion": "v1", "name": "cfg"}, wantErr: "dependencies[0].kind: required"},
		{name: "no apiVersion", ref: map[string]any{"kind": "ConfigMap", "name": "cfg"}, wantErr: "dependencies[0].apiVersion: required"},
		{name: "nothing named", ref: map[string]any{"apiVersion": "v1", "kind": "ConfigMap"}, wantErr: "dependencies[0]: one of name or labelSelector is required"},
		{name: "bad apiVersion", ref: map[string]any{"apiVersion": "a/b/c", "kind": "ConfigMap", "name": "x"}, wantErr: "dependencies[0].apiVersion: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := validate(refsOf(t, tt.ref))
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("validate: %v", err)
			case tt.wantErr != "" && (err == nil || !contains(err.Error(), tt.wantErr)):
				t.Errorf("validate = %v, want an error containing %q", err, tt.wantErr)
			}
		})
	}
}

func refsOf(t *testing.T, refs ...map[string]any) []configv1alpha1.DependentObjectReference {
	t.Helper()
	raw, err := json.Marshal(refs)
	if err != nil {
		t.Fatal(err)
	}
	var out []configv1alpha1.DependentObjectReference
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

func TestAttachedTo(t *testing.T) {
	tests := []struct {
		name string
		rb   *workv1alpha2.ResourceBinding
		id   string
		want bool
	}{
		{name: "listed and labelled", rb: attachedBy(snap("team", "web-deployment", "m1")), id: "id-web-deployment", want: true},
		{name: "listed, id unknown", rb: attachedBy(snap("team", "web-deployment", "m1")), want: true},
		{name: "labelled only", rb: func() *workv1alpha2.ResourceBinding {
			rb := attachedBy(snap("team", "api-deployment"))
			rb.Labels[DependedByLabel("team", "web-deployment")] = "id-web-deployment"
			return rb
		}(), id: "id-web-deployment", want: true},
		{name: "another dependent's binding under a colliding key", rb: func() *workv1alpha2.ResourceBinding {
			rb := attachedBy(snap("team", "api-deployment"))
			rb.Labels[DependedByLabel("team", "web-deployment")] = "id-api-deployment"
			return rb
		}(), id: "id-web-deployment", want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := attachedTo(tt.rb, "team", "web-deployment", tt.id); got != tt.want {
				t.Errorf("attachedTo = %v, want %v", got, tt.want)
			}
		})
	}
}
