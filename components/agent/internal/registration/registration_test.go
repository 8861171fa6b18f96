package registration

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
)

func TestCheck(t *testing.T) {
	now := metav1.Now()
	pull := func(id string) *clusterv1alpha1.Cluster {
		return &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "m"}, Spec: clusterv1alpha1.ClusterSpec{SyncMode: clusterv1alpha1.Pull, ID: id}}
	}
	deleting := pull("a")
	deleting.DeletionTimestamp = &now
	push := pull("a")
	push.Spec.SyncMode = clusterv1alpha1.Push
	tests := []struct {
		name    string
		cluster *clusterv1alpha1.Cluster
		id      string
		wantErr string
	}{
		{"own registration", pull("a"), "a", ""},
		{"registered by hand without id", pull(""), "a", ""},
		{"another member's name", pull("b"), "a", "another member"},
		{"a Push cluster", push, "a", "spec.syncMode Push"},
		{"being deleted", deleting, "a", "being deleted"},
	}
	for _, tt := range tests {
		err := Check(tt.cluster, Spec{Name: "m", ID: tt.id})
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("%s: %v", tt.name, err)
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("%s: error %v, want one saying %q", tt.name, err, tt.wantErr)
		}
	}
}

func TestApplyKeepsWhatIsNotTheAgents(t *testing.T) {
	c := &clusterv1alpha1.Cluster{Spec: clusterv1alpha1.ClusterSpec{ID: "a", Region: "old", Provider: "old"}}
	apply(c, Spec{ID: "ignored", APIEndpoint: "https://m", Provider: "p", Region: "r", Zones: []string{"z1", "z2"}})
	if c.Spec.ID != "a" || c.Spec.SyncMode != clusterv1alpha1.Pull || c.Spec.APIEndpoint != "https://m" || c.Spec.Provider != "p" ||
		c.Spec.Region != "r" || strings.Join(c.Spec.Zones, ",") != "z1,z2" {
		t.Errorf("spec after apply = %+v", c.Spec)
	}
}

// TestApplyFollowsTheFlags: the proxy and the secret references are the
// agent's, set and cleared as its flags say; taints and resource models
// stay.
func TestApplyFollowsTheFlags(t *testing.T) {
	ref := &clusterv1alpha1.LocalSecretReference{Namespace: "karmada-cluster", Name: "m"}
	imp := &clusterv1alpha1.LocalSecretReference{Namespace: "karmada-cluster", Name: "m-impersonator"}
	taints := []corev1.Taint{{Key: "k", Effect: corev1.TaintEffectNoSchedule}}
	c := &clusterv1alpha1.Cluster{Spec: clusterv1alpha1.ClusterSpec{Taints: taints}}
	apply(c, Spec{ProxyURL: "http://proxy:3128", SecretRef: ref, ImpersonatorSecretRef: imp})
	want := clusterv1alpha1.ClusterSpec{SyncMode: clusterv1alpha1.Pull, ProxyURL: "http://proxy:3128", SecretRef: ref, ImpersonatorSecretRef: imp, Taints: taints}
	if diff := cmp.Diff(want, c.Spec); diff != "" {
		t.Errorf("spec (-want +got):\n%s", diff)
	}
	apply(c, Spec{})
	want = clusterv1alpha1.ClusterSpec{SyncMode: clusterv1alpha1.Pull, Taints: taints}
	if diff := cmp.Diff(want, c.Spec); diff != "" {
		t.Errorf("spec after --report-secrets=None without a proxy (-want +got):\n%s", diff)
	}
}
