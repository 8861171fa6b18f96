package namespace

import (
	"regexp"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
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

func cpNamespace(labels, annotations map[string]string) *metav1.ObjectMeta {
	return &metav1.ObjectMeta{Name: "team-a", Labels: labels, Annotations: annotations}
}

func TestMemberNamespace(t *testing.T) {
	const (
		managedLabels      = workv1alpha1.ManagedLabelsAnnotation
		managedAnnotations = workv1alpha1.ManagedAnnotationsAnnotation
		managed            = workv1alpha1.ManagedByKarmadaLabel
	)
	bookkeeping := managedAnnotations + "," + managedLabels
	tests := []struct {
		name        string
		existing    *corev1.Namespace
		cp          metav1.Object
		want        *corev1.Namespace
		wantChanged bool
	}{
		{
			name: "new",
			cp:   cpNamespace(map[string]string{"team": "a", corev1.LabelMetadataName: "team-a"}, map[string]string{"owner": "alice"}),
			want: &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
				Name:   "team-a",
				Labels: map[string]string{"team": "a", managed: "true"},
				Annotations: map[string]string{
					"owner":            "alice",
					managedLabels:      managed + ",team",
					managedAnnotations: "owner," + bookkeeping,
				},
			}},
			wantChanged: true,
		},
		{
			name: "unchanged",
			existing: &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
				Name:   "team-a",
				Labels: map[string]string{"team": "a", managed: "true", corev1.LabelMetadataName: "team-a"},
				Annotations: map[string]string{
					managedLabels:      managed + ",team",
					managedAnnotations: bookkeeping,
				},
			}},
			cp: cpNamespace(map[string]string{"team": "a"}, nil),
			want: &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
				Name:   "team-a",
				Labels: map[string]string{"team": "a", managed: "true", corev1.LabelMetadataName: "team-a"},
				Annotations: map[string]string{
					managedLabels:      managed + ",team",
					managedAnnotations: bookkeeping,
				},
			}},
		},
		{
			name: "a namespace the member made itself is adopted, its own labels kept",
			existing: &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
				Name:        "team-a",
				Labels:      map[string]string{"local": "x", "team": "old"},
				Annotations: map[string]string{"local-note": "y"},
			}},
			cp: cpNamespace(map[string]string{"team": "a"}, nil),
			want: &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
				Name:   "team-a",
				Labels: map[string]string{"local": "x", "team": "a", managed: "true"},
				Annotations: map[string]string{
					"local-note":       "y",
					managedLabels:      managed + ",team",
					managedAnnotations: bookkeeping,
				},
			}},
			wantChanged: true,
		},
		{
			name: "what the control plane dropped goes, what the member added stays",
			existing: &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
				Name:   "team-a",
				Labels: map[string]string{"team": "a", "tier": "gold", "local": "x", managed: "true"},
				Annotations: map[string]string{
					"owner":            "alice",
					"local-note":       "y",
					managedLabels:      managed + ",team,tier",
					managedAnnotations: "owner," + bookkeeping,
				},
			}},
			cp: cpNamespace(map[string]string{"team": "a"}, nil),
			want: &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
				Name:   "team-a",
				Labels: map[string]string{"team": "a", "local": "x", managed: "true"},
				Annotations: map[string]string{
					"local-note":       "y",
					managedLabels:      managed + ",team",
					managedAnnotations: bookkeeping,
				},
			}},
			wantChanged: true,
		},
		{
			name: "the control plane's own bookkeeping is not copied",
			cp: cpNamespace(nil, map[string]string{
				managedLabels: "x", managedAnnotations: "y", "owner": "alice",
			}),
			want: &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
				Name:   "team-a",
				Labels: map[string]string{managed: "true"},
				Annotations: map[string]string{
					"owner":            "alice",
					managedLabels:      managed,
					managedAnnotations: "owner," + bookkeeping,
				},
			}},
			wantChanged: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := tt.existing.DeepCopy()
			got, changed := memberNamespace(tt.existing, tt.cp)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("memberNamespace (-want +got):\n%s", diff)
			}
			if changed != tt.wantChanged {
				t.Errorf("changed = %v, want %v", changed, tt.wantChanged)
			}
			if diff := cmp.Diff(before, tt.existing); diff != "" {
				t.Errorf("existing was modified (-before +after):\n%s", diff)
			}
		})
	}
}

func TestBecameReady(t *testing.T) {
	withReady := func(s metav1.ConditionStatus) *clusterv1alpha1.Cluster {
		c := &clusterv1alpha1.Cluster{}
		if s != "" {
			c.Status.Conditions = []metav1.Condition{{Type: clusterv1alpha1.ClusterConditionReady, Status: s}}
		}
		return c
	}
	tests := []struct {
		old, new metav1.ConditionStatus
		want     bool
	}{
		{"", metav1.ConditionTrue, true},
		{metav1.ConditionUnknown, metav1.ConditionTrue, true},
		{metav1.ConditionFalse, metav1.ConditionTrue, true},
		{metav1.ConditionTrue, metav1.ConditionTrue, false},
		{metav1.ConditionTrue, metav1.ConditionFalse, false},
		{"", metav1.ConditionUnknown, false},
	}
	for _, tt := range tests {
		if got := becameReady(withReady(tt.old), withReady(tt.new)); got != tt.want {
			t.Errorf("becameReady(%q → %q) = %v, want %v", tt.old, tt.new, got, tt.want)
		}
	}
}

func TestManagedByControlPlane(t *testing.T) {
	if managedByControlPlane(&corev1.Namespace{}) {
		t.Error("a namespace without the label is managed")
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{workv1alpha1.ManagedByKarmadaLabel: "true"}}}
	if !managedByControlPlane(ns) {
		t.Error("a labelled namespace is not managed")
	}
}
