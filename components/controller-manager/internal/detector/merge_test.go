package detector

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/components/controller-manager/internal/detector/policymatch"
)

const rbID = "resourcebinding.karmada.io/permanent-id"

func testIntent() *bindingIntent {
	return &bindingIntent{
		claim:     claim{Kind: policymatch.PropagationPolicy, ID: "p1", Namespace: "team", Name: "web"},
		idLabel:   rbID,
		owner:     metav1.OwnerReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web", UID: "u1", Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)},
		finalizer: workv1alpha2.BindingControllerFinalizer,
		spec: workv1alpha2.ResourceBindingSpec{
			Resource: workv1alpha2.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "team", Name: "web", UID: "u1", ResourceVersion: "7"},
			Replicas: 3,
			ReplicaRequirements: &workv1alpha2.ReplicaRequirements{
				ResourceRequest: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")},
				Namespace:       "team",
			},
			Placement:          &policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1"}}},
			SchedulerName:      policyv1alpha1.DefaultSchedulerName,
			ConflictResolution: policyv1alpha1.ConflictAbort,
		},
	}
}

func fixedID() string { return "b1" }

func TestMergeBindingFillsANewBinding(t *testing.T) {
	var meta metav1.ObjectMeta
	var spec workv1alpha2.ResourceBindingSpec
	intent := testIntent()
	if !mergeBinding(&meta, &spec, intent, fixedID) {
		t.Fatal("mergeBinding into an empty binding reported no change")
	}
	wantMeta := metav1.ObjectMeta{
		Labels:          map[string]string{ppID: "p1", rbID: "b1"},
		Annotations:     map[string]string{ppNS: "team", ppN: "web"},
		OwnerReferences: []metav1.OwnerReference{intent.owner},
		Finalizers:      []string{workv1alpha2.BindingControllerFinalizer},
	}
	if diff := cmp.Diff(wantMeta, meta); diff != "" {
		t.Errorf("metadata (-want +got):\n%s", diff)
	}
	if !equality.Semantic.DeepEqual(intent.spec, spec) {
		t.Errorf("spec = %+v, want %+v", spec, intent.spec)
	}
	if mergeBinding(&meta, &spec, intent, fixedID) {
		t.Error("merging the same intent again reported a change")
	}
}

func TestMergeBinding(t *testing.T) {
	// existing is a binding as the API server returns it after the detector
	// and other controllers wrote it.
	existing := func() (metav1.ObjectMeta, workv1alpha2.ResourceBindingSpec) {
		var meta metav1.ObjectMeta
		var spec workv1alpha2.ResourceBindingSpec
		mergeBinding(&meta, &spec, testIntent(), func() string { return "kept" })
		spec.Clusters = []workv1alpha2.TargetCluster{{Name: "member1", Replicas: 3}}
		spec.Suspension = &workv1alpha2.Suspension{Scheduling: ptr.To(true)}
		spec.RequiredBy = []workv1alpha2.BindingSnapshot{{Namespace: "team", Name: "other"}}
		return meta, spec
	}
	tests := []struct {
		name        string
		modifyHave  func(*metav1.ObjectMeta, *workv1alpha2.ResourceBindingSpec)
		modifyWant  func(*bindingIntent)
		wantChanged bool
		check       func(*testing.T, metav1.ObjectMeta, workv1alpha2.ResourceBindingSpec)
	}{
		{
			name: "nothing new",
			check: func(t *testing.T, _ metav1.ObjectMeta, s workv1alpha2.ResourceBindingSpec) {
				if s.Suspension == nil || !ptr.Deref(s.Suspension.Scheduling, false) {
					t.Errorf("the scheduling suspension was not kept: %+v", s.Suspension)
				}
			},
		},
		{
			name: "quantities the server normalized",
			modifyHave: func(_ *metav1.ObjectMeta, s *workv1alpha2.ResourceBindingSpec) {
				s.ReplicaRequirements.ResourceRequest[corev1.ResourceCPU] = resource.MustParse("0.1")
			},
		},
		{
			name: "an empty suspension stored as {}",
			modifyHave: func(_ *metav1.ObjectMeta, s *workv1alpha2.ResourceBindingSpec) {
				s.Suspension = &workv1alpha2.Suspension{}
			},
		},
		{
			name:        "replicas",
			modifyWant:  func(i *bindingIntent) { i.spec.Replicas = 5 },
			wantChanged: true,
			check: func(t *testing.T, _ metav1.ObjectMeta, s workv1alpha2.ResourceBindingSpec) {
				if s.Replicas != 5 || len(s.Clusters) != 1 || s.Clusters[0].Replicas != 3 {
					t.Errorf("replicas %d, clusters %+v: want 5 and the scheduler's clusters kept", s.Replicas, s.Clusters)
				}
			},
		},
		{
			name: "dispatching suspended by the policy, scheduling suspension kept",
			modifyWant: func(i *bindingIntent) {
				i.spec.Suspension = &workv1alpha2.Suspension{Suspension: policyv1alpha1.Suspension{Dispatching: ptr.To(true)}}
			},
			wantChanged: true,
			check: func(t *testing.T, _ metav1.ObjectMeta, s workv1alpha2.ResourceBindingSpec) {
				want := &workv1alpha2.Suspension{Suspension: policyv1alpha1.Suspension{Dispatching: ptr.To(true)}, Scheduling: ptr.To(true)}
				if diff := cmp.Diff(want, s.Suspension); diff != "" {
					t.Errorf("suspension (-want +got):\n%s", diff)
				}
			},
		},
		{
			name: "claimed by a ClusterPropagationPolicy now",
			modifyWant: func(i *bindingIntent) {
				i.claim = claim{Kind: policymatch.ClusterPropagationPolicy, ID: "c1", Name: "all"}
			},
			wantChanged: true,
			check: func(t *testing.T, m metav1.ObjectMeta, _ workv1alpha2.ResourceBindingSpec) {
				if diff := cmp.Diff(map[string]string{cppID: "c1", rbID: "kept"}, m.Labels); diff != "" {
					t.Errorf("labels (-want +got):\n%s", diff)
				}
				if diff := cmp.Diff(map[string]string{cppN: "all"}, m.Annotations); diff != "" {
					t.Errorf("annotations (-want +got):\n%s", diff)
				}
			},
		},
		{
			name: "another controller owner is replaced, other owners kept",
			modifyHave: func(m *metav1.ObjectMeta, _ *workv1alpha2.ResourceBindingSpec) {
				m.OwnerReferences = []metav1.OwnerReference{
					{APIVersion: "v1", Kind: "ConfigMap", Name: "cm", UID: "x"},
					{APIVersion: "apps/v1", Kind: "Deployment", Name: "web", UID: "old", Controller: ptr.To(true)},
				}
			},
			wantChanged: true,
			check: func(t *testing.T, m metav1.ObjectMeta, _ workv1alpha2.ResourceBindingSpec) {
				want := []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "cm", UID: "x"}, testIntent().owner}
				if diff := cmp.Diff(want, m.OwnerReferences); diff != "" {
					t.Errorf("owner references (-want +got):\n%s", diff)
				}
			},
		},
		{
			name:        "a missing finalizer is added back",
			modifyHave:  func(m *metav1.ObjectMeta, _ *workv1alpha2.ResourceBindingSpec) { m.Finalizers = nil },
			wantChanged: true,
		},
		{
			name:        "a lost permanent id is made again",
			modifyHave:  func(m *metav1.ObjectMeta, _ *workv1alpha2.ResourceBindingSpec) { delete(m.Labels, rbID) },
			wantChanged: true,
			check: func(t *testing.T, m metav1.ObjectMeta, _ workv1alpha2.ResourceBindingSpec) {
				if m.Labels[rbID] != "b1" {
					t.Errorf("permanent id %q, want b1", m.Labels[rbID])
				}
			},
		},
		{
			name:        "a newer template version",
			modifyWant:  func(i *bindingIntent) { i.spec.Resource.ResourceVersion = "8" },
			wantChanged: true,
		},
		{
			name:        "conflict resolution",
			modifyWant:  func(i *bindingIntent) { i.spec.ConflictResolution = policyv1alpha1.ConflictOverwrite },
			wantChanged: true,
		},
		{
			name:        "placement",
			modifyWant:  func(i *bindingIntent) { i.spec.Placement.ClusterAffinity.ClusterNames = []string{"member2"} },
			wantChanged: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			meta, spec := existing()
			if tt.modifyHave != nil {
				tt.modifyHave(&meta, &spec)
			}
			intent := testIntent()
			if tt.modifyWant != nil {
				tt.modifyWant(intent)
			}
			if got := mergeBinding(&meta, &spec, intent, fixedID); got != tt.wantChanged {
				t.Errorf("mergeBinding changed = %v, want %v", got, tt.wantChanged)
			}
			if meta.Labels[rbID] == "" {
				t.Error("the binding lost its permanent id")
			}
			if len(spec.Clusters) != 1 || len(spec.RequiredBy) != 1 {
				t.Errorf("fields of other controllers were not kept: clusters %+v, requiredBy %+v", spec.Clusters, spec.RequiredBy)
			}
			if tt.check != nil {
				tt.check(t, meta, spec)
			}
			if mergeBinding(&meta, &spec, intent, fixedID) {
				t.Error("merging again reported a change")
			}
		})
	}
}
