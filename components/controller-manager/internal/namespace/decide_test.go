package namespace

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
)

func TestPropagatable(t *testing.T) {
	skipped := []*regexp.Regexp{regexp.MustCompile(`^istio-.*`)}
	for name, want := range map[string]bool{
		"team-a":           true,
		"kubernetes-stuff": true,
		"default":          false,
		"kube-system":      false,
		"kube-public":      false,
		"kube-node-lease":  false,
		"karmada-system":   false,
		"karmada-cluster":  false,
		"karmada-es-m1":    false,
		"istio-system":     false,
		"my-istio-system":  true,
	} {
		if got := propagatable(name, skipped); got != want {
			t.Errorf("propagatable(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestOptedOut(t *testing.T) {
	for value, want := range map[string]bool{"true": true, "True": true, "TRUE": true, "false": false, "": false, "yes": false} {
		labels := map[string]string{"namespace.karmada.io/skip-auto-propagation": value}
		if got := optedOut(labels); got != want {
			t.Errorf("optedOut(%q) = %v, want %v", value, got, want)
		}
	}
	if optedOut(nil) {
		t.Error("optedOut(nil) = true")
	}
}

// ns builds a namespace's metadata as the cache gives it.
func ns(name string, labels, annotations map[string]string) *metav1.ObjectMeta {
	return &metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name), Labels: labels, Annotations: annotations}
}

func TestDecide(t *testing.T) {
	now := metav1.Now()
	deleting := ns("team-a", nil, nil)
	deleting.DeletionTimestamp = &now
	skipped := []*regexp.Regexp{regexp.MustCompile(`^legacy-.*$`)}
	tests := []struct {
		name string
		ns   metav1.Object
		want plan
	}{
		{"gone", nil, plan{}},
		{"being deleted", deleting, plan{hold: true}},
		{"propagated", ns("team-a", map[string]string{"team": "a"}, nil), plan{propagate: true}},
		{"reserved", ns("kube-flotilla", nil, nil), plan{}},
		{"default", ns("default", nil, nil), plan{}},
		{"on the skip list", ns("legacy-app", nil, nil), plan{}},
		{"opted out", ns("team-a", map[string]string{policyv1alpha1.NamespaceSkipAutoPropagationLabel: "True"}, nil), plan{}},
		{"opted out wins over a claim", ns("team-a", map[string]string{
			policyv1alpha1.NamespaceSkipAutoPropagationLabel:        "true",
			policyv1alpha1.ClusterPropagationPolicyPermanentIDLabel: "id",
		}, nil), plan{}},
		{"claimed by a ClusterPropagationPolicy", ns("team-a", map[string]string{policyv1alpha1.ClusterPropagationPolicyPermanentIDLabel: "id"}, nil), plan{handOver: true}},
		{"an empty claim label claims nothing", ns("team-a", map[string]string{policyv1alpha1.ClusterPropagationPolicyPermanentIDLabel: ""}, nil), plan{propagate: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name := "team-a"
			if tt.ns != nil {
				name = tt.ns.GetName()
			}
			if got := decide(name, tt.ns, skipped); got != tt.want {
				t.Errorf("decide = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestTargetClusters(t *testing.T) {
	now := metav1.Now()
	clusters := []clusterv1alpha1.Cluster{
		{ObjectMeta: metav1.ObjectMeta{Name: "push"}, Spec: clusterv1alpha1.ClusterSpec{SyncMode: clusterv1alpha1.Push}},
		{ObjectMeta: metav1.ObjectMeta{Name: "pull"}, Spec: clusterv1alpha1.ClusterSpec{SyncMode: clusterv1alpha1.Pull}},
		{ObjectMeta: metav1.ObjectMeta{Name: "leaving", DeletionTimestamp: &now}},
		{ObjectMeta: metav1.ObjectMeta{Name: "not-ready"}, Status: clusterv1alpha1.ClusterStatus{Conditions: []metav1.Condition{
			{Type: clusterv1alpha1.ClusterConditionReady, Status: metav1.ConditionFalse},
		}}},
	}
	got := clusterNames(targetClusters(clusters))
	if diff := cmp.Diff([]string{"push", "pull", "not-ready"}, got); diff != "" {
		t.Errorf("targetClusters (-want +got):\n%s", diff)
	}
}

// work builds a Work of namespace team-a in cluster's execution namespace.
func work(cluster string, labels map[string]string) workv1alpha1.Work {
	return workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{
		Namespace: "karmada-es-" + cluster, Name: workName("team-a"), Labels: labels,
	}}
}

func TestUnwanted(t *testing.T) {
	now := metav1.Now()
	ourLabels := map[string]string{ManagedByLabel: ControllerName}
	takenOver := map[string]string{ManagedByLabel: ControllerName, workv1alpha2.ClusterResourceBindingPermanentIDLabel: "crb"}
	deleting := work("m3", ourLabels)
	deleting.DeletionTimestamp = &now
	stray := work("m1", ourLabels)
	stray.Namespace = "somewhere-else"
	tests := []struct {
		name        string
		works       []workv1alpha1.Work
		targets     []string
		p           plan
		wantDelete  []string
		wantRelease []string
	}{
		{
			name:    "all wanted",
			works:   []workv1alpha1.Work{work("m1", ourLabels), work("m2", ourLabels)},
			targets: []string{"m1", "m2"},
			p:       plan{propagate: true},
		},
		{
			name:       "a cluster that went",
			works:      []workv1alpha1.Work{work("m1", ourLabels), work("gone", ourLabels)},
			targets:    []string{"m1"},
			p:          plan{propagate: true},
			wantDelete: []string{"karmada-es-gone"},
		},
		{
			name:       "not propagated any more",
			works:      []workv1alpha1.Work{work("m1", ourLabels), work("m2", ourLabels), deleting},
			p:          plan{},
			wantDelete: []string{"karmada-es-m1", "karmada-es-m2"},
		},
		{
			name:        "claimed by a policy: handed over",
			works:       []workv1alpha1.Work{work("m1", ourLabels), work("m2", ourLabels)},
			p:           plan{handOver: true},
			wantRelease: []string{"karmada-es-m1", "karmada-es-m2"},
		},
		{
			name:        "taken over by a binding, even where wanted",
			works:       []workv1alpha1.Work{work("m1", takenOver), work("m2", ourLabels)},
			targets:     []string{"m1", "m2"},
			p:           plan{propagate: true},
			wantRelease: []string{"karmada-es-m1"},
		},
		{
			name:       "outside execution namespaces",
			works:      []workv1alpha1.Work{stray},
			targets:    []string{"m1"},
			p:          plan{propagate: true},
			wantDelete: []string{"somewhere-else"},
		},
	}
	namespaces := func(ws []*workv1alpha1.Work) []string {
		if len(ws) == 0 {
			return nil
		}
		out := make([]string, 0, len(ws))
		for _, w := range ws {
			out = append(out, w.Namespace)
		}
		return out
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			del, release := unwanted(tt.works, tt.targets, tt.p)
			if diff := cmp.Diff(tt.wantDelete, namespaces(del)); diff != "" {
				t.Errorf("deleted (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantRelease, namespaces(release)); diff != "" {
				t.Errorf("released (-want +got):\n%s", diff)
			}
		})
	}
}

func TestWorkName(t *testing.T) {
	// The name a ClusterResourceBinding of the namespace gives its Works.
	if got, want := workName("team-a"), "team-a-"; len(got) <= len(want) || got[:len(want)] != want {
		t.Errorf("workName(team-a) = %q", got)
	}
	for _, name := range []string{"team-a", "a", "a-b-c", "x1"} {
		got, ok := namespaceOfWork(workName(name))
		if !ok || got != name {
			t.Errorf("namespaceOfWork(workName(%q)) = %q, %v", name, got, ok)
		}
	}
	for _, w := range []string{"", "team-a", "team-a-123", "-abc", "nginx-687f7fb96f"} {
		if got, ok := namespaceOfWork(w); ok {
			t.Errorf("namespaceOfWork(%q) = %q, true; want false", w, got)
		}
	}
}

func TestNamespaceManifest(t *testing.T) {
	tests := []struct {
		name string
		ns   metav1.Object
		want map[string]any
	}{
		{
			name: "labels and annotations, without server fields and bookkeeping",
			ns: &metav1.ObjectMeta{
				Name: "team-a", UID: "u1", ResourceVersion: "7", CreationTimestamp: metav1.Now(), Generation: 2,
				Labels:        map[string]string{"team": "a", corev1.LabelMetadataName: "team-a"},
				Annotations:   map[string]string{"owner": "alice", workv1alpha1.ManagedLabelsAnnotation: "x", workv1alpha1.ManagedAnnotationsAnnotation: "y"},
				Finalizers:    []string{"kubernetes"},
				ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}},
			},
			want: map[string]any{
				"apiVersion": "v1", "kind": "Namespace",
				"metadata": map[string]any{
					"name":        "team-a",
					"labels":      map[string]any{"team": "a"},
					"annotations": map[string]any{"owner": "alice"},
				},
			},
		},
		{
			name: "bare",
			ns:   &metav1.ObjectMeta{Name: "team-a", Labels: map[string]string{corev1.LabelMetadataName: "team-a"}},
			want: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "team-a"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := fmt.Sprint(tt.ns.GetLabels(), tt.ns.GetAnnotations())
			got := namespaceManifest(tt.ns)
			if diff := cmp.Diff(tt.want, got.Object); diff != "" {
				t.Errorf("namespaceManifest (-want +got):\n%s", diff)
			}
			if after := fmt.Sprint(tt.ns.GetLabels(), tt.ns.GetAnnotations()); after != before {
				t.Errorf("the namespace was changed: %s, was %s", after, before)
			}
		})
	}
}

func TestCheckRendered(t *testing.T) {
	ok := namespaceManifest(ns("team-a", nil, nil))
	renamed := ok.DeepCopy()
	renamed.SetName("team-b")
	rekinded := ok.DeepCopy()
	rekinded.SetKind("ConfigMap")
	namespaced := ok.DeepCopy()
	namespaced.SetNamespace("x")
	tests := []struct {
		name    string
		obj     *unstructured.Unstructured
		wantErr string
	}{
		{"unchanged", ok, ""},
		{"renamed", renamed, `overrides changed metadata.name to "team-b"; a namespace cannot be renamed per cluster`},
		{"another kind", rekinded, "overrides changed apiVersion/kind to v1/ConfigMap; a namespace must stay a v1 Namespace"},
		{"namespaced", namespaced, `overrides set metadata.namespace to "x" on a cluster-scoped Namespace`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := checkRendered(tt.obj, "team-a")
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tt.wantErr {
				t.Errorf("checkRendered = %q, want %q", got, tt.wantErr)
			}
		})
	}
}

func TestDecorate(t *testing.T) {
	const (
		managedLabels      = workv1alpha1.ManagedLabelsAnnotation
		managedAnnotations = workv1alpha1.ManagedAnnotationsAnnotation
	)
	id := workIdentity{namespace: "karmada-es-m1", name: "team-a-abc", id: "wid"}
	tests := []struct {
		name        string
		annotations map[string]string
		wantCR      string
		wantAnn     map[string]string
	}{
		{
			name:        "abort by default",
			annotations: map[string]string{"owner": "alice"},
			wantCR:      "abort",
			wantAnn: map[string]string{
				"owner": "alice",
				workv1alpha1.ConflictResolutionAnnotation:  "abort",
				workv1alpha1.ResourceTemplateUIDAnnotation: "uid-team-a",
				workv1alpha1.WorkNamespaceAnnotation:       "karmada-es-m1",
				workv1alpha1.WorkNameAnnotation:            "team-a-abc",
				managedAnnotations: "owner," + managedAnnotations + "," + managedLabels + "," + workv1alpha1.ResourceTemplateUIDAnnotation + "," +
					workv1alpha1.ConflictResolutionAnnotation + "," + workv1alpha1.WorkNameAnnotation + "," + workv1alpha1.WorkNamespaceAnnotation,
				managedLabels: workv1alpha1.ManagedByKarmadaLabel + ",team," + workv1alpha1.WorkPermanentIDLabel,
			},
		},
		{
			name:        "the namespace asks to take over what members have",
			annotations: map[string]string{workv1alpha1.ConflictResolutionAnnotation: "overwrite"},
			wantCR:      "overwrite",
		},
		{
			name:        "anything else is abort",
			annotations: map[string]string{workv1alpha1.ConflictResolutionAnnotation: "Overwrite!"},
			wantCR:      "abort",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := namespaceManifest(ns("team-a", map[string]string{"team": "a"}, tt.annotations))
			cr := decorate(obj, "uid-team-a", id)
			if cr != tt.wantCR {
				t.Errorf("conflict resolution = %q, want %q", cr, tt.wantCR)
			}
			if got := obj.GetAnnotations()[workv1alpha1.ConflictResolutionAnnotation]; got != tt.wantCR {
				t.Errorf("manifest's conflict resolution = %q, want %q", got, tt.wantCR)
			}
			wantLabels := map[string]string{"team": "a", workv1alpha1.ManagedByKarmadaLabel: "true", workv1alpha1.WorkPermanentIDLabel: "wid"}
			if diff := cmp.Diff(wantLabels, obj.GetLabels()); diff != "" {
				t.Errorf("labels (-want +got):\n%s", diff)
			}
			if tt.wantAnn != nil {
				if diff := cmp.Diff(tt.wantAnn, obj.GetAnnotations()); diff != "" {
					t.Errorf("annotations (-want +got):\n%s", diff)
				}
			}
		})
	}
}

func TestJoinKeys(t *testing.T) {
	if got := joinKeys(map[string]string{"b": "", "a": ""}, "c", "a"); got != "a,b,c" {
		t.Errorf("joinKeys = %q", got)
	}
	if got := joinKeys(nil); got != "" {
		t.Errorf("joinKeys(nil) = %q", got)
	}
}

// rendered is a decorated manifest of namespace team-a, with the cluster
// overrides record when cops is set.
func rendered(t *testing.T, cops string) (*metav1.ObjectMeta, *unstructured.Unstructured, string) {
	t.Helper()
	annotations := map[string]string{}
	if cops != "" {
		annotations[policyv1alpha1.AppliedClusterOverrides] = cops
	}
	n := ns("team-a", map[string]string{"team": "a"}, annotations)
	obj := namespaceManifest(n)
	cr := decorate(obj, string(n.UID), workIdentity{namespace: "karmada-es-m1", name: workName("team-a"), id: "wid"})
	return n, obj, cr
}

func TestBuildWork(t *testing.T) {
	n, obj, cr := rendered(t, `[{"policyName":"cop"}]`)
	d, err := buildWork(n, obj, cr, workIdentity{namespace: "karmada-es-m1", name: workName("team-a"), id: "wid"})
	if err != nil {
		t.Fatal(err)
	}
	w := d.newWork()
	want := metav1.ObjectMeta{
		Namespace: "karmada-es-m1",
		Name:      workName("team-a"),
		Labels:    map[string]string{ManagedByLabel: ControllerName, workv1alpha1.WorkPermanentIDLabel: "wid"},
		Annotations: map[string]string{
			workv1alpha1.ConflictResolutionAnnotation: "abort",
			policyv1alpha1.AppliedClusterOverrides:    `[{"policyName":"cop"}]`,
		},
		Finalizers:      []string{workv1alpha1.ExecutionControllerFinalizer},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Namespace", Name: "team-a", UID: "uid-team-a"}},
	}
	if diff := cmp.Diff(want, w.ObjectMeta); diff != "" {
		t.Errorf("Work metadata (-want +got):\n%s", diff)
	}
	if len(w.Spec.Workload.Manifests) != 1 {
		t.Fatalf("manifests = %d, want 1", len(w.Spec.Workload.Manifests))
	}
	var got map[string]any
	if err := json.Unmarshal(w.Spec.Workload.Manifests[0].Raw, &got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(obj.Object, got); diff != "" {
		t.Errorf("manifest (-want +got):\n%s", diff)
	}
	if w.Spec.SuspendDispatching != nil || w.Spec.PreserveResourcesOnDeletion != nil {
		t.Errorf("spec sets more than the manifest: %+v", w.Spec)
	}
}

func TestUpToDateAndApply(t *testing.T) {
	n, obj, cr := rendered(t, "")
	id := workIdentity{namespace: "karmada-es-m1", name: workName("team-a"), id: "wid"}
	d, err := buildWork(n, obj, cr, id)
	if err != nil {
		t.Fatal(err)
	}
	current := d.newWork()
	// Stored manifests come back re-encoded: whitespace and key order
	// differ, the content does not.
	reencoded := current.DeepCopy()
	var m map[string]any
	_ = json.Unmarshal(reencoded.Spec.Workload.Manifests[0].Raw, &m)
	reencoded.Spec.Workload.Manifests[0].Raw, _ = json.MarshalIndent(m, "", "  ")

	tests := []struct {
		name   string
		change func(*workv1alpha1.Work)
		want   bool
	}{
		{"as written", func(*workv1alpha1.Work) {}, true},
		{"others' labels, annotations, finalizers, owners and status", func(w *workv1alpha1.Work) {
			w.Labels["other"] = "x"
			w.Annotations["other"] = "y"
			w.Finalizers = append(w.Finalizers, "other/finalizer")
			w.OwnerReferences = append(w.OwnerReferences, metav1.OwnerReference{Kind: "Other", Name: "o", UID: "o"})
			w.Status.Conditions = []metav1.Condition{{Type: "Applied", Status: metav1.ConditionTrue}}
		}, true},
		{"re-encoded manifest", func(w *workv1alpha1.Work) { w.Spec = reencoded.Spec }, true},
		{"manifest changed", func(w *workv1alpha1.Work) {
			w.Spec.Workload.Manifests[0].Raw = []byte(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"team-a"}}`)
		}, false},
		{"manifest unreadable", func(w *workv1alpha1.Work) { w.Spec.Workload.Manifests[0].Raw = []byte(`{`) }, false},
		{"two manifests", func(w *workv1alpha1.Work) {
			w.Spec.Workload.Manifests = append(w.Spec.Workload.Manifests, w.Spec.Workload.Manifests[0])
		}, false},
		{"label gone", func(w *workv1alpha1.Work) { delete(w.Labels, ManagedByLabel) }, false},
		{"conflict resolution changed", func(w *workv1alpha1.Work) { w.Annotations[workv1alpha1.ConflictResolutionAnnotation] = "overwrite" }, false},
		{"stale override record", func(w *workv1alpha1.Work) { w.Annotations[policyv1alpha1.AppliedClusterOverrides] = "[]" }, false},
		{"finalizer gone", func(w *workv1alpha1.Work) { w.Finalizers = nil }, false},
		{"owned by an earlier namespace of the name", func(w *workv1alpha1.Work) { w.OwnerReferences[0].UID = "old" }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			existing := current.DeepCopy()
			tt.change(existing)
			if got := d.upToDate(existing); got != tt.want {
				t.Fatalf("upToDate = %v, want %v", got, tt.want)
			}
			updated := existing.DeepCopy()
			d.apply(updated)
			if !d.upToDate(updated) {
				t.Errorf("not up to date after apply: %+v", updated)
			}
			for k, v := range existing.Labels {
				if _, ours := d.labels[k]; !ours && updated.Labels[k] != v {
					t.Errorf("label %s lost", k)
				}
			}
			for _, f := range existing.Finalizers {
				if !containsString(updated.Finalizers, f) {
					t.Errorf("finalizer %s lost", f)
				}
			}
			owners := 0
			for _, ref := range updated.OwnerReferences {
				if ref.Kind == "Namespace" {
					owners++
				}
			}
			if owners != 1 {
				t.Errorf("owner references = %+v, want one namespace", updated.OwnerReferences)
			}
		})
	}
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestSelectedNamespaces(t *testing.T) {
	tests := []struct {
		name      string
		selectors []policyv1alpha1.ResourceSelector
		wantNamed []string
		wantAll   bool
	}{
		{"no selectors select everything", nil, nil, true},
		{"by name", []policyv1alpha1.ResourceSelector{
			{APIVersion: "v1", Kind: "Namespace", Name: "team-a"},
			{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
			{APIVersion: "v1", Kind: "Namespace", Name: "team-b"},
		}, []string{"team-a", "team-b"}, false},
		{"by kind", []policyv1alpha1.ResourceSelector{{APIVersion: "v1", Kind: "Namespace"}}, nil, true},
		{"by labels", []policyv1alpha1.ResourceSelector{
			{APIVersion: "v1", Kind: "Namespace", LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}}},
		}, nil, true},
		{"other kinds only", []policyv1alpha1.ResourceSelector{{APIVersion: "v1", Kind: "ConfigMap"}}, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			named, all := selectedNamespaces(tt.selectors)
			if diff := cmp.Diff(tt.wantNamed, named); diff != "" || all != tt.wantAll {
				t.Errorf("selectedNamespaces = %v, %v; want %v, %v", named, all, tt.wantNamed, tt.wantAll)
			}
		})
	}
}

func TestAllRaces(t *testing.T) {
	gr := schema.GroupResource{Group: "work.karmada.io", Resource: "works"}
	conflict := apierrors.NewConflict(gr, "w", errors.New("changed"))
	exists := apierrors.NewAlreadyExists(gr, "w")
	other := apierrors.NewForbidden(gr, "w", errors.New("no"))
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"conflict", conflict, true},
		{"wrapped", fmt.Errorf("cluster m1: %w", conflict), true},
		{"joined races", errors.Join(fmt.Errorf("m1: %w", conflict), errors.Join(fmt.Errorf("m2: %w", exists))), true},
		{"a real failure among them", errors.Join(conflict, fmt.Errorf("m2: %w", other)), false},
		{"failure", other, false},
	}
	for _, tt := range tests {
		if got := allRaces(tt.err); got != tt.want {
			t.Errorf("%s: allRaces = %v, want %v", tt.name, got, tt.want)
		}
	}
}
