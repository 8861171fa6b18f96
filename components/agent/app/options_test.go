package app

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
)

func TestEnabledControllers(t *testing.T) {
	tests := []struct {
		spec    string
		want    []string
		wantErr string
	}{
		{"*", []string{ControllerClusterStatus, ControllerExecution, ControllerWorkStatus}, ""},
		{"*,-workStatus", []string{ControllerClusterStatus, ControllerExecution}, ""},
		{"-workStatus,*", []string{ControllerClusterStatus, ControllerExecution}, ""},
		{"execution", []string{ControllerExecution}, ""},
		{"", nil, ""},
		{"*,certRotation", []string{ControllerClusterStatus, ControllerExecution, ControllerWorkStatus, ControllerCertRotation}, ""},
		{"*,serviceExport", nil, `unknown controller "serviceExport"`},
	}
	for _, tt := range tests {
		got, err := EnabledControllers(tt.spec)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%q: error %v, want %q", tt.spec, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tt.spec, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%q (-want +got):\n%s", tt.spec, diff)
		}
	}
}

func TestValidateNamesTheFlag(t *testing.T) {
	tests := []struct {
		args    []string
		wantErr string
	}{
		{[]string{"--cluster-name=m1"}, ""},
		{nil, "--cluster-name is required"},
		{[]string{"--cluster-name=Not_A_Label"}, `--cluster-name "Not_A_Label"`},
		{[]string{"--cluster-name=m1", "--cluster-lease-renew-interval-fraction=1.5"}, "--cluster-lease-renew-interval-fraction"},
		{[]string{"--cluster-name=m1", "--cluster-lease-duration=0s"}, "--cluster-lease-duration must be positive"},
		{[]string{"--cluster-name=m1", "--cluster-namespace=elsewhere"}, "--cluster-namespace must be karmada-cluster"},
		{[]string{"--cluster-name=m1", "--leader-elect-renew-deadline=20s"}, "--leader-elect-lease-duration"},
		{[]string{"--cluster-name=m1", "--leader-elect=false", "--leader-elect-renew-deadline=20s"}, ""},
	}
	for _, tt := range tests {
		o, err := ParseOptions(tt.args...)
		if err != nil {
			t.Fatal(err)
		}
		_, err = o.validate()
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("%v: %v", tt.args, err)
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("%v: error %v, want one saying %q", tt.args, err, tt.wantErr)
		}
	}
}

func TestAgentCacheSeesItsOwnObjectsOnly(t *testing.T) {
	opts := agentCache("m1")
	works, clusters := 0, 0
	for obj, by := range opts.ByObject {
		switch obj.(type) {
		case *workv1alpha1.Work:
			works++
			if _, ok := by.Namespaces["karmada-es-m1"]; !ok || len(by.Namespaces) != 1 || by.Transform == nil {
				t.Errorf("Works cached in %v (transform set: %v), want karmada-es-m1 only, deflated", by.Namespaces, by.Transform != nil)
			}
		case *clusterv1alpha1.Cluster:
			clusters++
			if by.Field == nil || by.Field.String() != "metadata.name=m1" {
				t.Errorf("Clusters cached with %v, want metadata.name=m1", by.Field)
			}
		}
	}
	if works != 1 || clusters != 1 {
		t.Errorf("%d Work and %d Cluster entries, want one each", works, clusters)
	}
}
