package app

import (
	"errors"
	"flag"
	"fmt"
	"slices"
	"strings"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/flotilla-io/flotilla/components/controller-manager/internal/cronfederatedhpa"
	"github.com/flotilla-io/flotilla/components/controller-manager/internal/deploymentreplicassyncer"
	"github.com/flotilla-io/flotilla/components/controller-manager/internal/federatedhpa"
	"github.com/flotilla-io/flotilla/components/controller-manager/internal/federatedresourcequota"
	"github.com/flotilla-io/flotilla/components/controller-manager/internal/hpascaletargetmarker"
	"github.com/flotilla-io/flotilla/components/controller-manager/internal/unifiedauth"
	"github.com/flotilla-io/flotilla/internal/eventrecorder"
	"github.com/flotilla-io/flotilla/internal/features"
	"github.com/flotilla-io/flotilla/internal/membercluster"
)

// Karmada's --controllers names of the controllers that flag selects.
const (
	FederatedResourceQuotaSync        = "federatedResourceQuotaSync"
	FederatedResourceQuotaStatus      = "federatedResourceQuotaStatus"
	FederatedResourceQuotaEnforcement = "federatedResourceQuotaEnforcement"
	HPAScaleTargetMarker              = "hpaScaleTargetMarker"
	DeploymentReplicasSyncer          = "deploymentReplicasSyncer"
	CronFederatedHPA                  = "cronFederatedHorizontalPodAutoscaler"
	FederatedHPA                      = "federatedHorizontalPodAutoscaler"
	UnifiedAuth                       = "unifiedAuth"

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
	hpa             hpaOptions
}

// hpaOptions are kube-controller-manager's HorizontalPodAutoscaler flags,
// which Karmada's controller-manager takes for the FederatedHPA controller.
type hpaOptions struct {
	syncPeriod              time.Duration
	upscaleDelay            time.Duration
	downscaleDelay          time.Duration
	downscaleStabilization  time.Duration
	tolerance               float64
	cpuInitializationPeriod time.Duration
	initialReadinessDelay   time.Duration
}

func (o *hpaOptions) bindFlags(fs *flag.FlagSet) {
	fs.DurationVar(&o.syncPeriod, "horizontal-pod-autoscaler-sync-period", federatedhpa.DefaultSyncPeriod,
		"How often each FederatedHPA is evaluated and its target scaled.")
	// Kubernetes' HPA stopped using these when stabilisation windows came;
	// Karmada still takes them, and so does Flotilla, to no effect.
	fs.DurationVar(&o.upscaleDelay, "horizontal-pod-autoscaler-upscale-delay", 3*time.Minute,
		"Accepted for compatibility with Karmada; has no effect (scale-up is governed by spec.behavior.scaleUp).")
	fs.DurationVar(&o.downscaleDelay, "horizontal-pod-autoscaler-downscale-delay", 5*time.Minute,
		"Accepted for compatibility with Karmada; has no effect (see --horizontal-pod-autoscaler-downscale-stabilization).")
	fs.DurationVar(&o.downscaleStabilization, "horizontal-pod-autoscaler-downscale-stabilization", federatedhpa.DefaultDownscaleStabilization,
		"How far back a FederatedHPA looks at its recommendations and does not scale down below any of them, unless its spec.behavior.scaleDown sets a window.")
	fs.Float64Var(&o.tolerance, "horizontal-pod-autoscaler-tolerance", federatedhpa.DefaultTolerance,
		"The least change (from 1.0) in the ratio of a metric to its target for a FederatedHPA to scale, unless its spec.behavior sets one.")
	fs.DurationVar(&o.cpuInitializationPeriod, "horizontal-pod-autoscaler-cpu-initialization-period", federatedhpa.DefaultCPUInitializationPeriod,
		"How long after a pod starts its CPU samples may be left out (while it is not ready, or before a sample taken since it became ready).")
	fs.DurationVar(&o.initialReadinessDelay, "horizontal-pod-autoscaler-initial-readiness-delay", federatedhpa.DefaultInitialReadinessDelay,
		"How long after a pod starts its readiness changes count as its first readiness: an unready pod whose readiness last changed within it is taken as never ready.")
}

func (o hpaOptions) validate() error {
	var errs []error
	if o.syncPeriod <= 0 {
		errs = append(errs, fmt.Errorf("--horizontal-pod-autoscaler-sync-period must be positive, got %s", o.syncPeriod))
	}
	if o.tolerance < 0 {
		errs = append(errs, fmt.Errorf("--horizontal-pod-autoscaler-tolerance must not be negative, got %g", o.tolerance))
	}
	for name, d := range map[string]time.Duration{
		"horizontal-pod-autoscaler-upscale-delay":             o.upscaleDelay,
		"horizontal-pod-autoscaler-downscale-delay":           o.downscaleDelay,
		"horizontal-pod-autoscaler-downscale-stabilization":   o.downscaleStabilization,
		"horizontal-pod-autoscaler-cpu-initialization-period": o.cpuInitializationPeriod,
		"horizontal-pod-autoscaler-initial-readiness-delay":   o.initialReadinessDelay,
	} {
		if d < 0 {
			errs = append(errs, fmt.Errorf("--%s must not be negative, got %s", name, d))
		}
	}
	return errors.Join(errs...)
}

func (o *selectableOptions) bindFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.controllers, "controllers", "*", fmt.Sprintf(
		`A comma-separated list of controllers to enable: "*" enables those on by default, "foo" enables foo, "-foo" disables foo. `+
			"Selectable: %s. Off by default: %s.", strings.Join(selectableNames(), ", "), strings.Join(disabledByDefault, ", ")))
	fs.DurationVar(&o.quotaSyncPeriod, "federated-resource-quota-sync-period", federatedresourcequota.DefaultResyncPeriod,
		"How often every FederatedResourceQuota's overall usage is recalculated from the bindings, besides when they change (FederatedQuotaEnforcement).")
	o.hpa.bindFlags(fs)
}

// selectableNames are the names --controllers knows.
func selectableNames() []string {
	return []string{FederatedResourceQuotaSync, FederatedResourceQuotaStatus, FederatedResourceQuotaEnforcement,
		HPAScaleTargetMarker, DeploymentReplicasSyncer, CronFederatedHPA, FederatedHPA, UnifiedAuth,
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
	if err := o.hpa.validate(); err != nil {
		return nil, err
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
// line with their members, the FederatedHPA and CronFederatedHPA
// controllers, and the unified-auth controller.
func selectedControllers(mgr ctrl.Manager, opts Options, recorders *eventrecorder.Broadcaster, members *membercluster.ClientCache) ([]controllerSetup, error) {
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
		{FederatedHPA, true, controllerSetup{federatedhpa.ControllerName, func(mgr ctrl.Manager) error {
			metrics, err := federatedhpa.NewRESTMetrics(mgr.GetConfig(), mgr.GetRESTMapper())
			if err != nil {
				return err
			}
			if err := mgr.Add(metrics); err != nil {
				return fmt.Errorf("adding the metrics clients: %w", err)
			}
			hpa := opts.selectable.hpa
			return (&federatedhpa.Reconciler{
				Client: mgr.GetClient(), Recorder: recorders.NewRecorder(federatedhpa.ControllerName),
				Members: members, Metrics: metrics,
				SyncPeriod: hpa.syncPeriod, Tolerance: hpa.tolerance, DownscaleStabilization: hpa.downscaleStabilization,
				CPUInitializationPeriod: hpa.cpuInitializationPeriod, InitialReadinessDelay: hpa.initialReadinessDelay,
			}).SetupWithManager(mgr)
		}}},
		{UnifiedAuth, true, controllerSetup{unifiedauth.ControllerName, (&unifiedauth.Reconciler{
			Client: mgr.GetClient(), Recorder: recorders.NewRecorder(unifiedauth.ControllerName),
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
