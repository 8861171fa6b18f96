package app

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestControllersFlag(t *testing.T) {
	services := []string{ServiceExport, EndpointSlice, ServiceImport, MultiClusterService, EndpointSliceCollect, EndpointSliceDispatch}
	withServices := func(names ...string) []string { return append(names, services...) }
	tests := []struct {
		flag string
		want []string
	}{
		{"*", withServices(FederatedResourceQuotaSync, FederatedResourceQuotaStatus, FederatedResourceQuotaEnforcement, CronFederatedHPA, FederatedHPA, UnifiedAuth)},
		{"*,-federatedResourceQuotaStatus,hpaScaleTargetMarker", withServices(FederatedResourceQuotaSync, FederatedResourceQuotaEnforcement, HPAScaleTargetMarker, CronFederatedHPA, FederatedHPA, UnifiedAuth)},
		{"*,-serviceExport,-endpointsliceDispatch", []string{FederatedResourceQuotaSync, FederatedResourceQuotaStatus, FederatedResourceQuotaEnforcement, CronFederatedHPA, FederatedHPA, UnifiedAuth,
			EndpointSlice, ServiceImport, MultiClusterService, EndpointSliceCollect}},
		{"*,-federatedHorizontalPodAutoscaler", withServices(FederatedResourceQuotaSync, FederatedResourceQuotaStatus, FederatedResourceQuotaEnforcement, CronFederatedHPA, UnifiedAuth)},
		{"*,-unifiedAuth", withServices(FederatedResourceQuotaSync, FederatedResourceQuotaStatus, FederatedResourceQuotaEnforcement, CronFederatedHPA, FederatedHPA)},
		// Without "*", only what is named.
		{"deploymentReplicasSyncer", []string{DeploymentReplicasSyncer}},
		// The first explicit choice wins, as in Karmada.
		{"-hpaScaleTargetMarker,*,hpaScaleTargetMarker", withServices(FederatedResourceQuotaSync, FederatedResourceQuotaStatus, FederatedResourceQuotaEnforcement, CronFederatedHPA, FederatedHPA, UnifiedAuth)},
		{"", nil},
	}
	for _, tc := range tests {
		o := parse(t, "--controllers="+tc.flag)
		sel, err := o.selectable.selection()
		if err != nil {
			t.Fatalf("%q: %v", tc.flag, err)
		}
		var got []string
		for _, name := range selectableNames() {
			if sel.enabled(name) {
				got = append(got, name)
			}
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("--controllers=%s (-want +got):\n%s", tc.flag, diff)
		}
	}

	for _, args := range [][]string{{"--controllers=*,-nosuch"}, {"--federated-resource-quota-sync-period=0s"},
		{"--horizontal-pod-autoscaler-sync-period=0s"}, {"--horizontal-pod-autoscaler-tolerance=-0.5"},
		{"--horizontal-pod-autoscaler-downscale-stabilization=-1m"}, {"--horizontal-pod-autoscaler-cpu-initialization-period=-1s"}} {
		o := parse(t, args...)
		flagName := strings.SplitN(strings.TrimPrefix(args[0], "--"), "=", 2)[0]
		if _, err := o.validate(); err == nil || !strings.Contains(err.Error(), "--"+flagName) {
			t.Errorf("%v: validate() = %v, want an error naming --%s", args, err, flagName)
		}
	}
}
