package registration

import (
	"strings"
	"testing"

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
