package app

import (
	"flag"
	"fmt"
	"slices"
	"strings"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/flotilla-io/flotilla/components/controller-manager/internal/cronfederatedhpa"
	"github.com/flotilla-io/flotilla/components/controller-manager/internal/deploymentreplicassyncer"
	"github.com/flotilla-io/flotilla/components/controller-manager/internal/federatedresourcequota"
	"github.com/flotilla-io/flotilla/components/controller-manager/internal/hpascaletargetmarker"
	"github.com/flotilla-io/flotilla/internal/eventrecorder"
	"github.com/flotilla-io/flotilla/internal/features"
)

// Karmada's --controllers names of the controllers that flag selects.
const (
	FederatedResourceQuotaSync        = "federatedResourceQuotaSync"
	FederatedResourceQuotaStatus      = "federatedResourceQuotaStatus"
	FederatedResourceQuotaEnforcement = "federatedResourceQuotaEnforcement"
	HPAScaleTargetMarker              = "hpaScaleTargetMarker"
	DeploymentReplicasSyncer          = "deploymentReplicasSyncer"
	CronFederatedHPA                  = "cronFederatedHorizontalPodAutoscaler"

	ServiceExport         = "serviceExport"
	EndpointSlice         = "endpointSlice"
	ServiceImport         = "serviceImport"
	MultiClusterService   = "multiclusterservice"
	EndpointSliceCollect  = "endpointsliceCollect"
	EndpointSliceDispatch = "endpointsliceDispatch"
)

// disabledByDefault are the controllers "*" leaves off, Karmada's.
var disabledByDefault = []string{HPAScaleTargetMarker, DeploymentReplicasSyncer}

// selectableOptions are the flags of the controllers --controllers selects.
type selectableOptions struct {
	controllers     string
	quotaSyncPeriod time.Duration
}

func (o *selectableOptions) bindFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.controllers, "controllers", "*", fmt.Sprintf(
		`A comma-separated list of controllers to enable: "*" enables those on by default, "foo" enables foo, "-foo" disables foo. `+
			"Selectable: %s. Off by default: %s.", strings.Join(selectableNames(), ", "), strings.Join(disabledByDefault, ", ")))
	fs.DurationVar(&o.quotaSyncPeriod, "federated-resource-quota-sync-period", federatedresourcequota.DefaultResyncPeriod,
		"How often every FederatedResourceQuota's overall usage is recalculated from the bindings, besides when they change (FederatedQuotaEnforcement).")
}

// selectableNames are the names --controllers knows.
func selectableNames() []string {
	return []string{FederatedResourceQuotaSync, FederatedResourceQuotaStatus, FederatedResourceQuotaEnforcement,
		HPAScaleTargetMarker, DeploymentReplicasSyncer, CronFederatedHPA,
		ServiceExport, EndpointSlice, ServiceImport, MultiClusterService, EndpointSliceCollect, EndpointSliceDispatch}
}

// selection is a parsed --controllers.
type selection []string

func (o *selectableOptions) selection() (selection, error) {
	var out selection
	known := selectableNames()
	for item := range strings.SplitSeq(o.controllers, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		if item != "*" && !slices.Contains(known, strings.TrimPrefix(item, "-")) {
			return nil, fmt.Errorf("--controllers: unknown controller %q; known: %s", item, strings.Join(known, ", "))
		}
		out = append(out, item)
	}
	if o.quotaSyncPeriod <= 0 {
		return nil, fmt.Errorf("--federated-resource-quota-sync-period must be positive, got %s", o.quotaSyncPeriod)
	}
	return out, nil
}

// enabled is Karmada's rule: an explicit "name" or "-name" decides (the
// first one given), otherwise "*" enables what is on by default, and
// without "*" nothing else runs.
func (s selection) enabled(name string) bool {
	star := false
	for _, item := range s {
		switch item {
		case name:
			return true
		case "-" + name:
			return false
		case "*":
			star = true
		}
	}
	return star && !slices.Contains(disabledByDefault, name)
}

// selectedControllers are the controllers --controllers and the feature
// gates turn on: the FederatedResourceQuota controllers (enforcement with
// FederatedQuotaEnforcement) and those that keep HPA-scaled templates in
// line with their members, and the CronFederatedHPA controller.
func selectedControllers(mgr ctrl.Manager, opts Options, recorders *eventrecorder.Broadcaster) ([]controllerSetup, error) {
	sel, err := opts.selectable.selection()
	if err != nil {
		return nil, err
	}
	enforce := opts.featureGates().Enabled(features.FederatedQuotaEnforcement)
	named := []struct {
		name  string
		on    bool
		setup controllerSetup
	}{
		{FederatedResourceQuotaSync, true, controllerSetup{federatedresourcequota.SyncControllerName, (&federatedresourcequota.SyncReconciler{
			Client: mgr.GetClient(), Recorder: recorders.NewRecorder(federatedresourcequota.SyncControllerName),
		}).SetupWithManager}},
		{FederatedResourceQuotaStatus, true, controllerSetup{federatedresourcequota.StatusControllerName, (&federatedresourcequota.StatusReconciler{
			Client: mgr.GetClient(), Recorder: recorders.NewRecorder(federatedresourcequota.StatusControllerName), Enforcement: enforce,
		}).SetupWithManager}},
		{FederatedResourceQuotaEnforcement, enforce, controllerSetup{federatedresourcequota.EnforcementControllerName, (&federatedresourcequota.EnforcementReconciler{
			Client: mgr.GetClient(), Recorder: recorders.NewRecorder(federatedresourcequota.EnforcementControllerName),
			ResyncPeriod: opts.selectable.quotaSyncPeriod,
		}).SetupWithManager}},
		{HPAScaleTargetMarker, true, controllerSetup{hpascaletargetmarker.ControllerName,
			(&hpascaletargetmarker.Reconciler{Client: mgr.GetClient()}).SetupWithManager}},
		{DeploymentReplicasSyncer, true, controllerSetup{deploymentreplicassyncer.ControllerName,
			(&deploymentreplicassyncer.Reconciler{Client: mgr.GetClient()}).SetupWithManager}},
		{CronFederatedHPA, true, controllerSetup{cronfederatedhpa.ControllerName, (&cronfederatedhpa.Reconciler{
			Client: mgr.GetClient(), Recorder: recorders.NewRecorder(cronfederatedhpa.ControllerName),
		}).SetupWithManager}},
	}
	var out []controllerSetup
	for _, c := range named {
		if c.on && sel.enabled(c.name) {
			out = append(out, c.setup)
		}
	}
	return out, nil
}
