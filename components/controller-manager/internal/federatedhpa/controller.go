// Package federatedhpa is Karmada's federatedHorizontalPodAutoscaler
// controller: it scales a resource template (through its scale
// subresource in the control plane) from the metrics of the template's
// pods in every member it is scheduled to, with the algorithm and the
// behavior (tolerance, stabilisation windows, scaling policies) of
// Kubernetes' HorizontalPodAutoscaler. The scheduler then divides the new
// count among the members.
//
// Pods are listed in the members (the Ready ones the binding places the
// template in); metrics come from the control plane's metrics APIs, which
// the metrics adapter serves aggregated over the members.
package federatedhpa

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	autoscalingv1alpha1 "github.com/flotilla-io/flotilla/api/autoscaling/v1alpha1"
	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/internal/membercluster"
	"github.com/flotilla-io/flotilla/internal/names"
)

// ControllerName is Karmada's name of the controller, the source of its events.
const ControllerName = "federatedHPA-controller"

// Defaults of the controller's settings, kube-controller-manager's and
// Karmada's.
const (
	DefaultSyncPeriod              = 15 * time.Second
	DefaultTolerance               = 0.1
	DefaultDownscaleStabilization  = 5 * time.Minute
	DefaultCPUInitializationPeriod = 5 * time.Minute
	DefaultInitialReadinessDelay   = 30 * time.Second
)

// Event reasons: Kubernetes' HorizontalPodAutoscaler's and Karmada's own
// (FailedGetScaleTargetRef, FailedGetBindings, FailedGetTargetClusters).
// They are also the reasons of the conditions they go with.
const (
	ReasonFailedGetScale                   = "FailedGetScale"
	ReasonSucceededGetScale                = "SucceededGetScale"
	ReasonFailedGetScaleTargetRef          = "FailedGetScaleTargetRef"
	ReasonFailedGetBindings                = "FailedGetBindings"
	ReasonFailedGetBinding                 = "FailedGetBinding"
	ReasonFailedGetTargetClusters          = "FailedGetTargetClusters"
	ReasonSelectorRequired                 = "SelectorRequired"
	ReasonInvalidSelector                  = "InvalidSelector"
	ReasonFailedComputeMetricsReplicas     = "FailedComputeMetricsReplicas"
	ReasonFailedGetResourceMetric          = "FailedGetResourceMetric"
	ReasonFailedGetContainerResourceMetric = "FailedGetContainerResourceMetric"
	ReasonFailedGetPodsMetric              = "FailedGetPodsMetric"
	ReasonFailedGetObjectMetric            = "FailedGetObjectMetric"
	ReasonFailedGetExternalMetric          = "FailedGetExternalMetric"
	ReasonInvalidMetricSourceType          = "InvalidMetricSourceType"
	ReasonValidMetricFound                 = "ValidMetricFound"
	ReasonScalingDisabled                  = "ScalingDisabled"
	ReasonSuccessfulRescale                = "SuccessfulRescale"
	ReasonFailedRescale                    = "FailedRescale"
	ReasonSucceededRescale                 = "SucceededRescale"
	ReasonFailedUpdateScale                = "FailedUpdateScale"
)

const actionScale = "Scale"

// +kubebuilder:rbac:groups=autoscaling.karmada.io,resources=federatedhpas,verbs=get;list;watch
// +kubebuilder:rbac:groups=autoscaling.karmada.io,resources=federatedhpas/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=*,resources=*/scale,verbs=get;update;patch
// +kubebuilder:rbac:groups=work.karmada.io,resources=resourcebindings,verbs=get;list;watch
// +kubebuilder:rbac:groups=cluster.karmada.io,resources=clusters,verbs=get;list;watch
// +kubebuilder:rbac:groups=metrics.k8s.io,resources=pods,verbs=get;list
// +kubebuilder:rbac:groups=custom.metrics.k8s.io;external.metrics.k8s.io,resources=*,verbs=get;list
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch;update

// Reconciler runs FederatedHPAs.
type Reconciler struct {
	Client   client.Client
	Recorder events.EventRecorder
	Members  *membercluster.ClientCache
	Metrics  Metrics

	// SyncPeriod is how often each FederatedHPA is evaluated.
	SyncPeriod time.Duration
	// Tolerance is the default of both directions' tolerance.
	Tolerance float64
	// DownscaleStabilization is the scale-down stabilisation window when
	// the FederatedHPA sets none.
	DownscaleStabilization  time.Duration
	CPUInitializationPeriod time.Duration
	InitialReadinessDelay   time.Duration
	MaxConcurrentReconciles int
	// Now is the clock; time.Now when nil.
	Now func() time.Time

	mu sync.Mutex
	// recommendations and the scale events are, per FederatedHPA, what
	// the windows and policies look back on; like Kubernetes' HPA, they
	// live in memory and start afresh after a restart.
	recommendations map[types.NamespacedName][]recommendation
	scaleUps        map[types.NamespacedName][]scaleEvent
	scaleDowns      map[types.NamespacedName][]scaleEvent
}

// SetupWithManager registers the controller. Only spec changes trigger a
// reconcile besides the periodic one: the controller's own status writes
// must not make it evaluate again at once.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Client == nil || r.Recorder == nil || r.Members == nil || r.Metrics == nil {
		return errors.New("federatedhpa controller: Client, Recorder, Members and Metrics are required")
	}
	r.defaults()
	r.recommendations = map[types.NamespacedName][]recommendation{}
	r.scaleUps = map[types.NamespacedName][]scaleEvent{}
	r.scaleDowns = map[types.NamespacedName][]scaleEvent{}
	return ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName).
		For(&autoscalingv1alpha1.FederatedHPA{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		WithOptions(controller.Options{MaxConcurrentReconciles: r.MaxConcurrentReconciles}).
		Complete(r)
}

func (r *Reconciler) defaults() {
	if r.SyncPeriod <= 0 {
		r.SyncPeriod = DefaultSyncPeriod
	}
	if r.MaxConcurrentReconciles <= 0 {
		r.MaxConcurrentReconciles = 5
	}
	if r.Now == nil {
		r.Now = time.Now
	}
}

// Reconcile evaluates one FederatedHPA and comes back after SyncPeriod.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	fhpa := &autoscalingv1alpha1.FederatedHPA{}
	if err := r.Client.Get(ctx, req.NamespacedName, fhpa); err != nil {
		if apierrors.IsNotFound(err) {
			r.forget(req.NamespacedName)
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	original := fhpa.Status.DeepCopy()
	err := r.evaluate(ctx, fhpa)
	if !equality.Semantic.DeepEqual(original, &fhpa.Status) {
		if uerr := r.Client.Status().Update(ctx, fhpa); uerr != nil {
			return ctrl.Result{}, errors.Join(err, fmt.Errorf("updating the status of FederatedHPA %s: %w", req.NamespacedName, uerr))
		}
	}
	if err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{RequeueAfter: r.SyncPeriod}, nil
}

func (r *Reconciler) forget(key types.NamespacedName) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.recommendations, key)
	delete(r.scaleUps, key)
	delete(r.scaleDowns, key)
}

// target is what one evaluation reads about the workload.
type target struct {
	object      *unstructured.Unstructured
	scale       *unstructured.Unstructured
	spec        int32 // the template's replicas
	status      int32 // the replicas its status reports
	selector    labels.Selector
	pods        []MemberPod
	calibration float64
}

// failure is an error with the event and condition that report it.
type failure struct {
	reason    string
	condition autoscalingv2.HorizontalPodAutoscalerConditionType
	condStat  corev1.ConditionStatus
	condWhy   string
	message   string
	err       error
}

func (f *failure) Error() string { return f.err.Error() }
func (f *failure) Unwrap() error { return f.err }

func fail(reason string, cond autoscalingv2.HorizontalPodAutoscalerConditionType, condWhy, format string, err error) *failure {
	return &failure{reason: reason, condition: cond, condStat: corev1.ConditionFalse, condWhy: condWhy, message: fmt.Sprintf(format, err), err: err}
}

// evaluate computes and applies the replica count, leaving the status in
// fhpa; it returns an error for a retry with backoff.
func (r *Reconciler) evaluate(ctx context.Context, fhpa *autoscalingv1alpha1.FederatedHPA) error {
	now := r.Now()
	t, err := r.readTarget(ctx, fhpa)
	if err != nil {
		var f *failure
		if errors.As(err, &f) {
			r.Recorder.Eventf(fhpa, nil, corev1.EventTypeWarning, f.reason, actionScale, "%s", f.err.Error())
			setCondition(&fhpa.Status, f.condition, f.condStat, f.condWhy, f.message, now)
		}
		return err
	}
	setCondition(&fhpa.Status, autoscalingv2.AbleToScale, corev1.ConditionTrue, ReasonSucceededGetScale, "the HPA controller was able to get the target's current scale", now)

	key := types.NamespacedName{Namespace: fhpa.Namespace, Name: fhpa.Name}
	current := t.spec
	minReplicas := ptr.Deref(fhpa.Spec.MinReplicas, autoscalingv1alpha1.DefaultMinReplicas)
	r.mu.Lock()
	if _, ok := r.recommendations[key]; !ok {
		r.recommendations[key] = []recommendation{{current, now}}
	}
	r.mu.Unlock()

	var (
		desired  int32
		reason   string
		statuses []autoscalingv2.MetricStatus
		retErr   error
	)
	rescale := true
	switch {
	case current == 0 && minReplicas != 0:
		// A workload scaled to zero by hand is left alone.
		desired, rescale = 0, false
		setCondition(&fhpa.Status, autoscalingv2.ScalingActive, corev1.ConditionFalse, ReasonScalingDisabled, "scaling is disabled since the replica count of the target is zero", now)
	case current > fhpa.Spec.MaxReplicas:
		reason, desired = "Current number of replicas above Spec.MaxReplicas", fhpa.Spec.MaxReplicas
	case current < minReplicas:
		reason, desired = "Current number of replicas below Spec.MinReplicas", minReplicas
	default:
		proposal, metricName, st, err := r.computeForMetrics(ctx, fhpa, t, now)
		statuses = st
		if err != nil && proposal == -1 {
			fhpa.Status.CurrentReplicas = current
			fhpa.Status.CurrentMetrics = statuses
			r.Recorder.Eventf(fhpa, nil, corev1.EventTypeWarning, ReasonFailedComputeMetricsReplicas, actionScale, "%s", err.Error())
			return fmt.Errorf("computing the replicas of FederatedHPA %s: %w", key, err)
		}
		// Some metrics failed but others ask for more: scale, and retry.
		retErr = err
		desired = proposal
		switch {
		case desired > current:
			reason = metricName + " above target"
		case desired < current:
			reason = "All metrics below target"
		}
		desired = r.normalize(fhpa, key, current, desired, minReplicas, now)
		rescale = desired != current
	}

	if rescale {
		if err := unstructured.SetNestedField(t.scale.Object, int64(desired), "spec", "replicas"); err != nil {
			return fmt.Errorf("setting the scale of %s: %w", t.object.GetName(), err)
		}
		if err := r.Client.SubResource("scale").Update(ctx, t.object, client.WithSubResourceBody(t.scale)); err != nil {
			r.Recorder.Eventf(fhpa, nil, corev1.EventTypeWarning, ReasonFailedRescale, actionScale, "New size: %d; reason: %s; error: %v", desired, reason, err)
			setCondition(&fhpa.Status, autoscalingv2.AbleToScale, corev1.ConditionFalse, ReasonFailedUpdateScale,
				fmt.Sprintf("the HPA controller was unable to update the target scale: %v", err), now)
			fhpa.Status.CurrentReplicas = current
			fhpa.Status.CurrentMetrics = statuses
			return fmt.Errorf("rescaling %s %s/%s: %w", t.object.GetKind(), fhpa.Namespace, t.object.GetName(), err)
		}
		setCondition(&fhpa.Status, autoscalingv2.AbleToScale, corev1.ConditionTrue, ReasonSucceededRescale,
			fmt.Sprintf("the HPA controller was able to update the target scale to %d", desired), now)
		r.Recorder.Eventf(fhpa, nil, corev1.EventTypeNormal, ReasonSuccessfulRescale, actionScale, "New size: %d; reason: %s", desired, reason)
		r.recordScale(fhpa.Spec.Behavior, key, current, desired, now)
		ctrl.LoggerFrom(ctx).Info("Rescaled", "from", current, "to", desired, "reason", reason)
		fhpa.Status.LastScaleTime = &metav1.Time{Time: now}
	} else {
		desired = current
	}
	fhpa.Status.CurrentReplicas = current
	fhpa.Status.DesiredReplicas = desired
	fhpa.Status.CurrentMetrics = statuses
	fhpa.Status.ObservedGeneration = ptr.To(fhpa.Generation)
	return retErr
}

// readTarget reads the template, its scale, its binding and its pods in
// the members.
func (r *Reconciler) readTarget(ctx context.Context, fhpa *autoscalingv1alpha1.FederatedHPA) (*target, error) {
	ref := fhpa.Spec.ScaleTargetRef
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return nil, fail(ReasonFailedGetScale, autoscalingv2.AbleToScale, ReasonFailedGetScale,
			"the HPA controller was unable to get the target's current scale: %v", fmt.Errorf("scaleTargetRef.apiVersion: %w", err))
	}
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(gv.WithKind(ref.Kind))
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: fhpa.Namespace, Name: ref.Name}, obj); err != nil {
		return nil, fail(ReasonFailedGetScaleTargetRef, autoscalingv2.AbleToScale, ReasonFailedGetScaleTargetRef,
			"the HPA controller was unable to get the target reference object: %v", err)
	}
	scale := &unstructured.Unstructured{}
	scale.SetGroupVersionKind(autoscalingv1.SchemeGroupVersion.WithKind("Scale"))
	if err := r.Client.SubResource("scale").Get(ctx, obj, scale); err != nil {
		return nil, fail(ReasonFailedGetScale, autoscalingv2.AbleToScale, ReasonFailedGetScale,
			"the HPA controller was unable to get the target's current scale: %v", err)
	}
	spec, _, _ := unstructured.NestedInt64(scale.Object, "spec", "replicas")
	status, _, _ := unstructured.NestedInt64(scale.Object, "status", "replicas")
	sel, _, _ := unstructured.NestedString(scale.Object, "status", "selector")
	t := &target{object: obj, scale: scale, spec: int32(spec), status: int32(status)}

	rb := &workv1alpha2.ResourceBinding{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: fhpa.Namespace, Name: names.Binding(ref.Name, ref.Kind)}, rb); err != nil {
		return nil, fail(ReasonFailedGetBindings, autoscalingv2.AbleToScale, ReasonFailedGetBinding,
			"the HPA controller was unable to get the binding by scaleTargetRef: %v", err)
	}
	if res := rb.Spec.Resource; res.APIVersion != ref.APIVersion || res.Kind != ref.Kind || res.Name != ref.Name {
		return nil, fail(ReasonFailedGetBindings, autoscalingv2.AbleToScale, ReasonFailedGetBinding,
			"the HPA controller was unable to get the binding by scaleTargetRef: %v", fmt.Errorf("binding %s is of %s %s", rb.Name, res.Kind, res.Name))
	}
	if len(rb.Spec.Clusters) == 0 {
		return nil, fail(ReasonFailedGetTargetClusters, autoscalingv2.AbleToScale, ReasonFailedGetTargetClusters,
			"the HPA controller was unable to get the target clusters from binding: %v", errors.New("binding has no schedulable clusters"))
	}

	if sel == "" {
		return nil, &failure{reason: ReasonSelectorRequired, condition: autoscalingv2.ScalingActive, condStat: corev1.ConditionFalse,
			condWhy: ReasonInvalidSelector, message: "the HPA target's scale is missing a selector", err: errors.New("selector is required")}
	}
	if t.selector, err = labels.Parse(sel); err != nil {
		err = fmt.Errorf("couldn't convert selector into a corresponding internal selector object: %w", err)
		return nil, fail(ReasonInvalidSelector, autoscalingv2.ScalingActive, ReasonInvalidSelector, "%v", err)
	}

	// Pods come from the Ready members the template is scheduled to; a
	// member that cannot be read is left out, and calibration makes up
	// for its replicas.
	logger := ctrl.LoggerFrom(ctx)
	var reached int32
	for _, tc := range rb.Spec.Clusters {
		cluster := &clusterv1alpha1.Cluster{}
		if err := r.Client.Get(ctx, client.ObjectKey{Name: tc.Name}, cluster); err != nil {
			logger.Info("Leaving out a member", "cluster", tc.Name, "error", err.Error())
			continue
		}
		if !isReady(cluster) {
			continue
		}
		clients, err := r.Members.ForCluster(ctx, cluster)
		if err != nil {
			logger.Info("Leaving out a member", "cluster", tc.Name, "error", err.Error())
			continue
		}
		list, err := clients.Kube.CoreV1().Pods(fhpa.Namespace).List(ctx, metav1.ListOptions{LabelSelector: sel})
		if err != nil {
			logger.Info("Leaving out a member", "cluster", tc.Name, "error", err.Error())
			continue
		}
		reached += tc.Replicas
		for i := range list.Items {
			t.pods = append(t.pods, MemberPod{Cluster: tc.Name, Pod: &list.Items[i]})
		}
	}
	if reached == 0 {
		return nil, fail(ReasonFailedGetScale, autoscalingv2.AbleToScale, ReasonFailedGetScale,
			"the HPA controller was unable to get the target's current scale: %v",
			errors.New("failed to get replicas in any of clusters, possibly because all of clusters are not ready"))
	}
	t.calibration = 1
	if t.spec > 0 {
		t.calibration = float64(reached) / float64(t.spec)
	}
	return t, nil
}

func isReady(c *clusterv1alpha1.Cluster) bool {
	for _, cond := range c.Status.Conditions {
		if cond.Type == clusterv1alpha1.ClusterConditionReady {
			return cond.Status == metav1.ConditionTrue
		}
	}
	return false
}

// tolerances are the controller's, overridden per direction by the
// FederatedHPA's behavior.
func (r *Reconciler) tolerances(fhpa *autoscalingv1alpha1.FederatedHPA) Tolerances {
	t := Tolerances{Down: r.Tolerance, Up: r.Tolerance}
	if b := fhpa.Spec.Behavior; b != nil {
		if b.ScaleDown != nil && b.ScaleDown.Tolerance != nil {
			t.Down = b.ScaleDown.Tolerance.AsApproximateFloat64()
		}
		if b.ScaleUp != nil && b.ScaleUp.Tolerance != nil {
			t.Up = b.ScaleUp.Tolerance.AsApproximateFloat64()
		}
	}
	return t
}

// computeForMetrics is the largest count the metrics ask for, the metric
// that asks for it, and every metric's status. Failed metrics are
// reported; they stop the scaling (-1) when all fail, or when the others
// would scale down.
func (r *Reconciler) computeForMetrics(ctx context.Context, fhpa *autoscalingv1alpha1.FederatedHPA, t *target, now time.Time) (int32, string, []autoscalingv2.MetricStatus, error) {
	calc := Calculator{CPUInitializationPeriod: r.CPUInitializationPeriod, InitialReadinessDelay: r.InitialReadinessDelay, Now: now}
	tol := r.tolerances(fhpa)
	specs := fhpa.Spec.Metrics
	if len(specs) == 0 {
		// The webhook's default, for a FederatedHPA written without it.
		specs = []autoscalingv2.MetricSpec{{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
			Name: corev1.ResourceCPU, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType,
				AverageUtilization: ptr.To(autoscalingv1alpha1.DefaultCPUUtilization)}}}}
	}
	statuses := make([]autoscalingv2.MetricStatus, len(specs))
	var (
		replicas    int32
		metric      string
		invalid     int
		firstErr    error
		firstFailed *failure
	)
	for i, spec := range specs {
		proposal, name, f := r.computeForMetric(ctx, fhpa, calc, tol, spec, t, &statuses[i])
		if f != nil {
			if invalid == 0 {
				firstErr, firstFailed = f.err, f
			}
			invalid++
			r.Recorder.Eventf(fhpa, nil, corev1.EventTypeWarning, f.reason, actionScale, "%s", f.err.Error())
			continue
		}
		if replicas == 0 || proposal > replicas {
			replicas, metric = proposal, name
		}
	}
	if firstErr != nil {
		firstErr = fmt.Errorf("invalid metrics (%d invalid out of %d), first error is: %w", invalid, len(specs), firstErr)
	}
	// A failed metric leaves its status empty; those are dropped, as the
	// CRD requires every status to have a type.
	statuses = slices.DeleteFunc(statuses, func(s autoscalingv2.MetricStatus) bool { return s.Type == "" })
	if invalid >= len(specs) || (invalid > 0 && replicas < t.spec) {
		if firstFailed != nil {
			setCondition(&fhpa.Status, firstFailed.condition, firstFailed.condStat, firstFailed.condWhy, firstFailed.message, now)
		}
		if firstErr == nil {
			firstErr = errors.New("no metrics to compute the replica count from")
		}
		return -1, "", statuses, firstErr
	}
	setCondition(&fhpa.Status, autoscalingv2.ScalingActive, corev1.ConditionTrue, ReasonValidMetricFound,
		fmt.Sprintf("the HPA was able to successfully calculate a replica count from %s", metric), now)
	return replicas, metric, statuses, firstErr
}

func unableToCompute(reason string, err error) *failure {
	return fail(reason, autoscalingv2.ScalingActive, reason, "the HPA was unable to compute the replica count: %v", err)
}

// computeForMetric is the count one metric asks for, with its status.
func (r *Reconciler) computeForMetric(ctx context.Context, fhpa *autoscalingv1alpha1.FederatedHPA, calc Calculator, tol Tolerances,
	spec autoscalingv2.MetricSpec, t *target, status *autoscalingv2.MetricStatus) (int32, string, *failure) {
	ns := fhpa.Namespace
	switch spec.Type {
	case autoscalingv2.ResourceMetricSourceType:
		if spec.Resource == nil {
			return 0, "", unableToCompute(ReasonFailedGetResourceMetric, errors.New("spec.metrics[].resource is required for a Resource metric"))
		}
		n, cur, f := r.resourceReplicas(ctx, calc, tol, ns, spec.Resource.Name, "", spec.Resource.Target, t, ReasonFailedGetResourceMetric)
		if f != nil {
			return 0, "", f
		}
		*status = autoscalingv2.MetricStatus{Type: spec.Type, Resource: &autoscalingv2.ResourceMetricStatus{Name: spec.Resource.Name, Current: cur}}
		return n, fmt.Sprintf("%s resource", spec.Resource.Name), nil
	case autoscalingv2.ContainerResourceMetricSourceType:
		if spec.ContainerResource == nil {
			return 0, "", unableToCompute(ReasonFailedGetContainerResourceMetric, errors.New("spec.metrics[].containerResource is required for a ContainerResource metric"))
		}
		cr := spec.ContainerResource
		n, cur, f := r.resourceReplicas(ctx, calc, tol, ns, cr.Name, cr.Container, cr.Target, t, ReasonFailedGetContainerResourceMetric)
		if f != nil {
			return 0, "", f
		}
		*status = autoscalingv2.MetricStatus{Type: spec.Type, ContainerResource: &autoscalingv2.ContainerResourceMetricStatus{Name: cr.Name, Container: cr.Container, Current: cur}}
		return n, fmt.Sprintf("%s container resource", cr.Name), nil
	case autoscalingv2.PodsMetricSourceType:
		if spec.Pods == nil || spec.Pods.Target.AverageValue == nil {
			return 0, "", unableToCompute(ReasonFailedGetPodsMetric, errors.New("a Pods metric needs target.averageValue"))
		}
		msel, err := metav1.LabelSelectorAsSelector(spec.Pods.Metric.Selector)
		if err != nil {
			return 0, "", unableToCompute(ReasonFailedGetPodsMetric, err)
		}
		samples, _, err := r.Metrics.Pods(ctx, spec.Pods.Metric.Name, ns, t.selector, msel)
		if err != nil {
			return 0, "", unableToCompute(ReasonFailedGetPodsMetric, fmt.Errorf("unable to get metric %s: %w", spec.Pods.Metric.Name, err))
		}
		n, avg, err := calc.AverageValue(t.pods, samples, "", spec.Pods.Target.AverageValue.MilliValue(), t.spec, t.calibration, tol)
		if err != nil {
			return 0, "", unableToCompute(ReasonFailedGetPodsMetric, fmt.Errorf("unable to get metric %s: %w", spec.Pods.Metric.Name, err))
		}
		*status = autoscalingv2.MetricStatus{Type: spec.Type, Pods: &autoscalingv2.PodsMetricStatus{Metric: spec.Pods.Metric,
			Current: autoscalingv2.MetricValueStatus{AverageValue: resource.NewMilliQuantity(avg, resource.DecimalSI)}}}
		return n, fmt.Sprintf("pods metric %s", spec.Pods.Metric.Name), nil
	case autoscalingv2.ObjectMetricSourceType:
		if spec.Object == nil {
			return 0, "", unableToCompute(ReasonFailedGetObjectMetric, errors.New("spec.metrics[].object is required for an Object metric"))
		}
		o := spec.Object
		msel, err := metav1.LabelSelectorAsSelector(o.Metric.Selector)
		if err != nil {
			return 0, "", unableToCompute(ReasonFailedGetObjectMetric, err)
		}
		value, _, err := r.Metrics.Object(ctx, o.Metric.Name, ns, o.DescribedObject, msel)
		if err != nil {
			return 0, "", unableToCompute(ReasonFailedGetObjectMetric, fmt.Errorf("unable to get metric %s on %s %s/%s: %w", o.Metric.Name, o.DescribedObject.Kind, ns, o.DescribedObject.Name, err))
		}
		cur := autoscalingv2.MetricValueStatus{}
		var n int32
		switch {
		case o.Target.Type == autoscalingv2.ValueMetricType && o.Target.Value != nil:
			n, err = calc.Ratio(t.pods, float64(value)/float64(o.Target.Value.MilliValue()), t.spec, t.calibration, tol)
			if err != nil {
				return 0, "", unableToCompute(ReasonFailedGetObjectMetric, err)
			}
			cur.Value = resource.NewMilliQuantity(value, resource.DecimalSI)
		case o.Target.Type == autoscalingv2.AverageValueMetricType && o.Target.AverageValue != nil:
			var per int64
			n, per = PerPod(t.status, value, o.Target.AverageValue.MilliValue(), tol)
			cur.AverageValue = resource.NewMilliQuantity(per, resource.DecimalSI)
		default:
			return 0, "", unableToCompute(ReasonFailedGetObjectMetric, fmt.Errorf("invalid object metric source: target type %q without its value", o.Target.Type))
		}
		*status = autoscalingv2.MetricStatus{Type: spec.Type, Object: &autoscalingv2.ObjectMetricStatus{DescribedObject: o.DescribedObject, Metric: o.Metric, Current: cur}}
		return n, fmt.Sprintf("%s metric %s", o.DescribedObject.Kind, o.Metric.Name), nil
	case autoscalingv2.ExternalMetricSourceType:
		if spec.External == nil {
			return 0, "", unableToCompute(ReasonFailedGetExternalMetric, errors.New("spec.metrics[].external is required for an External metric"))
		}
		e := spec.External
		msel, err := metav1.LabelSelectorAsSelector(e.Metric.Selector)
		if err != nil {
			return 0, "", unableToCompute(ReasonFailedGetExternalMetric, err)
		}
		values, _, err := r.Metrics.External(ctx, e.Metric.Name, ns, msel)
		if err != nil {
			return 0, "", unableToCompute(ReasonFailedGetExternalMetric, fmt.Errorf("unable to get external metric %s/%s: %w", ns, e.Metric.Name, err))
		}
		var total int64
		for _, v := range values {
			total += v
		}
		cur := autoscalingv2.MetricValueStatus{}
		var n int32
		switch {
		case e.Target.Type == autoscalingv2.ValueMetricType && e.Target.Value != nil:
			n, err = calc.Ratio(t.pods, float64(total)/float64(e.Target.Value.MilliValue()), t.spec, t.calibration, tol)
			if err != nil {
				return 0, "", unableToCompute(ReasonFailedGetExternalMetric, err)
			}
			cur.Value = resource.NewMilliQuantity(total, resource.DecimalSI)
		case e.Target.Type == autoscalingv2.AverageValueMetricType && e.Target.AverageValue != nil:
			var per int64
			n, per = PerPod(t.status, total, e.Target.AverageValue.MilliValue(), tol)
			cur.AverageValue = resource.NewMilliQuantity(per, resource.DecimalSI)
		default:
			return 0, "", unableToCompute(ReasonFailedGetExternalMetric, fmt.Errorf("invalid external metric source: target type %q without its value", e.Target.Type))
		}
		*status = autoscalingv2.MetricStatus{Type: spec.Type, External: &autoscalingv2.ExternalMetricStatus{Metric: e.Metric, Current: cur}}
		return n, fmt.Sprintf("external metric %s", e.Metric.Name), nil
	}
	return 0, "", unableToCompute(ReasonInvalidMetricSourceType, fmt.Errorf("unknown metric source type %q", spec.Type))
}

// resourceReplicas is the count a (container) resource metric asks for.
func (r *Reconciler) resourceReplicas(ctx context.Context, calc Calculator, tol Tolerances, ns string, name corev1.ResourceName, container string,
	target autoscalingv2.MetricTarget, t *target, reason string) (int32, autoscalingv2.MetricValueStatus, *failure) {
	samples, _, err := r.Metrics.Resource(ctx, name, ns, t.selector, container)
	if err != nil {
		return 0, autoscalingv2.MetricValueStatus{}, unableToCompute(reason, fmt.Errorf("unable to get metrics for resource %s: %w", name, err))
	}
	switch {
	case target.AverageValue != nil:
		n, avg, err := calc.AverageValue(t.pods, samples, name, target.AverageValue.MilliValue(), t.spec, t.calibration, tol)
		if err != nil {
			return 0, autoscalingv2.MetricValueStatus{}, unableToCompute(reason, fmt.Errorf("failed to get %s usage: %w", name, err))
		}
		return n, autoscalingv2.MetricValueStatus{AverageValue: resource.NewMilliQuantity(avg, resource.DecimalSI)}, nil
	case target.AverageUtilization != nil:
		n, util, avg, err := calc.ResourceUtilization(t.pods, samples, name, container, *target.AverageUtilization, t.spec, t.calibration, tol)
		if err != nil {
			return 0, autoscalingv2.MetricValueStatus{}, unableToCompute(reason, fmt.Errorf("failed to get %s utilization: %w", name, err))
		}
		return n, autoscalingv2.MetricValueStatus{AverageUtilization: ptr.To(util), AverageValue: resource.NewMilliQuantity(avg, resource.DecimalSI)}, nil
	}
	return 0, autoscalingv2.MetricValueStatus{}, unableToCompute(reason, errors.New("invalid resource metric source: neither a utilization target nor a value target was set"))
}

// normalize stabilises and bounds desired, setting AbleToScale and
// ScalingLimited to say what held it back.
func (r *Reconciler) normalize(fhpa *autoscalingv1alpha1.FederatedHPA, key types.NamespacedName, current, desired, minReplicas int32, now time.Time) int32 {
	r.mu.Lock()
	defer r.mu.Unlock()
	var stabilized int32
	var l limit
	if b := fhpa.Spec.Behavior; b == nil {
		var why limit
		stabilized, r.recommendations[key] = stabilizeDown(r.recommendations[key], desired, r.DownscaleStabilization, now)
		why = limit{stabilized, ReasonReadyForNewScale, "recommended size matches current size"}
		if stabilized != desired {
			why = limit{stabilized, ReasonScaleDownStabilized, "recent recommendations were higher than current one, applying the highest recent recommendation"}
		}
		setCondition(&fhpa.Status, autoscalingv2.AbleToScale, corev1.ConditionTrue, why.reason, why.message, now)
		l = limitWithoutBehavior(current, stabilized, minReplicas, fhpa.Spec.MaxReplicas)
	} else {
		b = withDefaults(b, r.DownscaleStabilization)
		up := time.Duration(ptr.Deref(b.ScaleUp.StabilizationWindowSeconds, 0)) * time.Second
		down := time.Duration(ptr.Deref(b.ScaleDown.StabilizationWindowSeconds, 0)) * time.Second
		var why limit
		why, r.recommendations[key] = stabilize(r.recommendations[key], desired, current, up, down, now)
		stabilized = why.replicas
		if stabilized == desired {
			why = limit{stabilized, ReasonReadyForNewScale, "recommended size matches current size"}
		}
		setCondition(&fhpa.Status, autoscalingv2.AbleToScale, corev1.ConditionTrue, why.reason, why.message, now)
		l = limitWithBehavior(current, stabilized, minReplicas, fhpa.Spec.MaxReplicas, r.scaleUps[key], r.scaleDowns[key], b, now)
	}
	limited := corev1.ConditionFalse
	if l.replicas != stabilized {
		limited = corev1.ConditionTrue
	}
	setCondition(&fhpa.Status, autoscalingv2.ScalingLimited, limited, l.reason, l.message, now)
	return l.replicas
}

// recordScale remembers a change for the policies' periods.
func (r *Reconciler) recordScale(b *autoscalingv2.HorizontalPodAutoscalerBehavior, key types.NamespacedName, from, to int32, now time.Time) {
	if b == nil {
		return
	}
	b = withDefaults(b, r.DownscaleStabilization)
	r.mu.Lock()
	defer r.mu.Unlock()
	if to > from {
		r.scaleUps[key] = recordEvent(r.scaleUps[key], to-from, longestPeriod(b.ScaleUp), now)
	} else {
		r.scaleDowns[key] = recordEvent(r.scaleDowns[key], to-from, longestPeriod(b.ScaleDown), now)
	}
}

// withDefaults is b with Kubernetes' rules for a direction it leaves out,
// and the controller's scale-down window when none is set; the webhook
// fills these in already, but a FederatedHPA written before it ran may
// lack them.
func withDefaults(b *autoscalingv2.HorizontalPodAutoscalerBehavior, downWindow time.Duration) *autoscalingv2.HorizontalPodAutoscalerBehavior {
	b = b.DeepCopy()
	if b.ScaleUp == nil {
		b.ScaleUp = &autoscalingv2.HPAScalingRules{Policies: []autoscalingv2.HPAScalingPolicy{
			{Type: autoscalingv2.PodsScalingPolicy, Value: 4, PeriodSeconds: 15},
			{Type: autoscalingv2.PercentScalingPolicy, Value: 100, PeriodSeconds: 15},
		}}
	}
	if b.ScaleDown == nil {
		b.ScaleDown = &autoscalingv2.HPAScalingRules{Policies: []autoscalingv2.HPAScalingPolicy{
			{Type: autoscalingv2.PercentScalingPolicy, Value: 100, PeriodSeconds: 15},
		}}
	}
	if b.ScaleDown.StabilizationWindowSeconds == nil {
		b.ScaleDown.StabilizationWindowSeconds = ptr.To(int32(downWindow / time.Second))
	}
	return b
}

// setCondition sets a condition, moving its transition time only when its
// status changes.
func setCondition(status *autoscalingv2.HorizontalPodAutoscalerStatus, typ autoscalingv2.HorizontalPodAutoscalerConditionType,
	s corev1.ConditionStatus, reason, message string, now time.Time) {
	for i := range status.Conditions {
		c := &status.Conditions[i]
		if c.Type != typ {
			continue
		}
		if c.Status != s {
			c.LastTransitionTime = metav1.Time{Time: now}
		}
		c.Status, c.Reason, c.Message = s, reason, message
		return
	}
	status.Conditions = append(status.Conditions, autoscalingv2.HorizontalPodAutoscalerCondition{
		Type: typ, Status: s, Reason: reason, Message: message, LastTransitionTime: metav1.Time{Time: now}})
}
