// Package karmada reconciles operator.karmada.io Karmada resources: each one
// becomes a control plane on the host cluster, installed phase by phase from
// the operator's embedded charts, each phase gated on the real rollout of
// the one before.
package karmada

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"time"

	"helm.sh/helm/v3/pkg/chart"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	operatorv1alpha1 "github.com/flotilla-io/flotilla/api/operator/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/release"
	"github.com/flotilla-io/flotilla/operator/internal/certs"
	"github.com/flotilla-io/flotilla/operator/internal/helmrelease"
	"github.com/flotilla-io/flotilla/operator/versions"
)

// Event reasons of the operator, on the Karmada resource.
const (
	EventValidationError   = "ValidationError"
	EventCertificateIssued = "CertificateIssued"
	EventReleaseInstalled  = "ReleaseInstalled"
	EventReleaseUpgraded   = "ReleaseUpgraded"
	EventDriftRepaired     = "DriftRepaired"
	EventPhaseFailed       = "PhaseFailed"
	EventReady             = "Ready"
	EventDowngradeRefused  = "DowngradeRefused"
	EventUninstalled       = "Uninstalled"
	// EventReleaseUninstalled: a component taken out of the spec (the
	// descheduler) was uninstalled.
	EventReleaseUninstalled = "ReleaseUninstalled"
)

// waitPoll is how often a waiting phase is looked at again, besides the
// watch events of its workloads.
const waitPoll = 5 * time.Second

// Reconciler turns Karmada resources into control planes.
type Reconciler struct {
	ctrl.Client
	// APIReader reads what the operator's label-filtered cache does not
	// hold (the user's Secrets) and what it may not hold yet.
	APIReader ctrl.Reader
	Recorder  events.EventRecorder
	Helm      *helmrelease.Client
	Versions  versions.Table
	// Charts loads a component's embedded chart.
	Charts func(name string) (*chart.Chart, error)
	// ControlPlanes reaches the API servers the operator installs.
	ControlPlanes *ControlPlanes
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

func (r *Reconciler) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// Reconcile reads a Karmada, then brings its control plane one step closer
// to the spec, and writes the status once at the end.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	k := &operatorv1alpha1.Karmada{}
	if err := r.Get(ctx, req.NamespacedName, k); err != nil {
		return reconcile.Result{}, ctrl.IgnoreNotFound(err)
	}
	if !k.DeletionTimestamp.IsZero() {
		return r.finalize(ctx, k)
	}
	if controllerutil.AddFinalizer(k, operatorv1alpha1.Finalizer) {
		if err := r.Update(ctx, k); err != nil {
			return reconcile.Result{}, fmt.Errorf("adding finalizer: %w", err)
		}
	}

	before := k.DeepCopy()
	result, err := r.reconcile(ctx, k)
	if !equalStatus(before, k) {
		if perr := r.Status().Patch(ctx, k, ctrl.MergeFrom(before)); perr != nil {
			return reconcile.Result{}, errors.Join(err, fmt.Errorf("writing status: %w", perr))
		}
	}
	return result, err
}

// reconcile runs the phases in order and records where it stopped in the
// status conditions.
func (r *Reconciler) reconcile(ctx context.Context, k *operatorv1alpha1.Karmada) (reconcile.Result, error) {
	gen := k.Generation
	if ptr.Deref(k.Spec.Suspend, false) {
		setCondition(k, operatorv1alpha1.ConditionProgressing, metav1.ConditionFalse, operatorv1alpha1.ReasonSuspended, "reconciliation is suspended (spec.suspend)")
		return reconcile.Result{}, nil
	}

	if errs := validate(k); len(errs) > 0 {
		msg := errs.ToAggregate().Error()
		r.Recorder.Eventf(k, nil, corev1.EventTypeWarning, EventValidationError, "Validate", msg)
		r.notReady(k, operatorv1alpha1.ReasonValidationError, msg)
		k.Status.ObservedGeneration = gen
		return reconcile.Result{}, nil
	}
	if fields := unsupported(k); len(fields) > 0 {
		setCondition(k, operatorv1alpha1.ConditionUnsupportedFields, metav1.ConditionTrue, operatorv1alpha1.ReasonIgnored,
			"accepted for compatibility and ignored: "+strings.Join(fields, "; "))
	} else {
		setCondition(k, operatorv1alpha1.ConditionUnsupportedFields, metav1.ConditionFalse, operatorv1alpha1.ReasonNone, "every field set is acted on")
	}

	target, err := r.Versions.Resolve(k.Spec.Version)
	if err != nil {
		r.Recorder.Eventf(k, nil, corev1.EventTypeWarning, EventValidationError, "Validate", "spec.version: %v", err)
		r.notReady(k, operatorv1alpha1.ReasonUnknownVersion, "spec.version: "+err.Error())
		k.Status.ObservedGeneration = gen
		return reconcile.Result{}, nil
	}
	if running := k.Status.KarmadaVersion; running != "" && versions.Compare(target.Version, running) < 0 {
		msg := fmt.Sprintf("version %s is older than the running %s; downgrades are refused (pin spec.version to %s or later)", target.Version, running, running)
		r.Recorder.Eventf(k, nil, corev1.EventTypeWarning, EventDowngradeRefused, "Upgrade", msg)
		r.notReady(k, operatorv1alpha1.ReasonDowngradeRefused, msg)
		k.Status.ObservedGeneration = gen
		return reconcile.Result{}, nil
	}

	in, waiting, err := r.inputs(ctx, k, target)
	if err != nil {
		return r.failed(k, operatorv1alpha1.ReasonCertificatesFailed, err)
	}
	if waiting != "" {
		r.progressing(k, operatorv1alpha1.ReasonCertificatesPending, "certificates: "+waiting)
		return reconcile.Result{RequeueAfter: waitPoll}, nil
	}
	for _, ph := range phases(k) {
		done, msg, err := r.runPhase(ctx, k, in, ph)
		if err != nil {
			return r.failed(k, ph.failed, err)
		}
		if !done {
			r.progressing(k, ph.progressing, msg)
			return reconcile.Result{RequeueAfter: waitPoll}, nil
		}
	}

	wasReady := meta.IsStatusConditionTrue(k.Status.Conditions, operatorv1alpha1.ConditionReady) && k.Status.KarmadaVersion == target.Version
	k.Status.KarmadaVersion = target.Version
	k.Status.KubernetesVersion = in.kubernetesVersion
	k.Status.SecretRef = &operatorv1alpha1.LocalSecretReference{Name: adminKubeconfigSecretName(k.Name), Namespace: k.Namespace}
	k.Status.APIServerService = &operatorv1alpha1.APIServerService{Name: releaseName(k.Name, APIServer)}
	k.Status.ObservedGeneration = gen
	msg := fmt.Sprintf("Flotilla %s (Kubernetes %s) is running; admin kubeconfig in Secret %s", target.Version, in.kubernetesVersion, adminKubeconfigSecretName(k.Name))
	setCondition(k, operatorv1alpha1.ConditionReady, metav1.ConditionTrue, operatorv1alpha1.ReasonAvailable, msg)
	setCondition(k, operatorv1alpha1.ConditionProgressing, metav1.ConditionFalse, operatorv1alpha1.ReasonAvailable, "every phase is rolled out")
	setCondition(k, operatorv1alpha1.ConditionDegraded, metav1.ConditionFalse, operatorv1alpha1.ReasonAvailable, "every component is available")
	if !wasReady {
		r.Recorder.Eventf(k, nil, corev1.EventTypeNormal, EventReady, "Reconcile", msg)
	}
	// Come back when the first certificate is due for renewal.
	return reconcile.Result{RequeueAfter: max(time.Until(in.pki.renewAt), time.Second)}, nil
}

// inputs is what every phase reads: the release, certificates and the
// hashes that roll pods when they change.
type inputs struct {
	target            versions.Release
	domain            string
	pki               *pki
	hashes            map[Component]string
	kubernetesVersion string
}

// inputs returns a message instead when certificates are still being
// issued by cert-manager.
func (r *Reconciler) inputs(ctx context.Context, k *operatorv1alpha1.Karmada, target versions.Release) (*inputs, string, error) {
	in := &inputs{target: target, domain: dnsDomain(k)}
	params, err := r.certParams(ctx, k, in.domain)
	if err != nil {
		return nil, "", err
	}
	var p *pki
	if k.Spec.CertificateIssuer != nil {
		var waiting string
		if p, waiting, err = r.ensureIssuedPKI(ctx, k, params); err != nil || waiting != "" {
			return nil, waiting, err
		}
	} else if p, err = r.ensurePKI(ctx, k, params); err != nil {
		return nil, "", err
	}
	if len(p.issued) > 0 {
		r.Recorder.Eventf(k, nil, corev1.EventTypeNormal, EventCertificateIssued, "IssueCertificates", "issued %s", strings.Join(p.issued, ", "))
	}
	var external *externalEtcdClient
	if e := externalEtcd(k); e != nil {
		if external, err = r.externalEtcdClient(ctx, k, e); err != nil {
			return nil, "", err
		}
	}
	secrets, err := consumerSecrets(k.Name, k.Namespace, in.domain, p, external)
	if err != nil {
		return nil, "", err
	}
	if err := r.ensureSecrets(ctx, k, secrets); err != nil {
		return nil, "", err
	}
	in.pki = p
	in.hashes = certificateHashes(k.Name, secrets)
	return in, "", nil
}

func (r *Reconciler) certParams(ctx context.Context, k *operatorv1alpha1.Karmada, domain string) (certs.Params, error) {
	p := certs.Params{Name: k.Name, Namespace: k.Namespace, DNSDomain: domain, EtcdReplicas: 1}
	subnet := defaultServiceSubnet
	if c := k.Spec.Components; c != nil {
		if a := c.KarmadaAggregatedAPIServer; a != nil {
			p.AggregatedAPIServerCertSANs = a.CertSANs
		}
		if a := c.KarmadaAPIServer; a != nil {
			p.APIServerCertSANs = a.CertSANs
			if a.ServiceSubnet != nil {
				subnet = *a.ServiceSubnet
			}
		}
		if e := c.Etcd; e != nil {
			p.ExternalEtcd = e.External != nil
			if l := e.Local; l != nil {
				p.EtcdReplicas = ptr.Deref(l.Replicas, 1)
				p.EtcdServerCertSANs, p.EtcdPeerCertSANs = l.ServerCertSANs, l.PeerCertSANs
			}
		}
	}
	prefix, err := netip.ParsePrefix(strings.TrimSpace(strings.Split(subnet, ",")[0]))
	if err != nil {
		return p, fieldError("spec.components.karmadaAPIServer.serviceSubnet", err)
	}
	p.ServiceSubnet = prefix
	if v := k.Spec.CustomCertificate; v != nil && v.LeafCertValidityDays != nil {
		p.LeafValidity = time.Duration(*v.LeafCertValidityDays) * 24 * time.Hour
	}
	addrs, err := r.serviceAddresses(ctx, k)
	if err != nil {
		return p, err
	}
	p.ServiceAddresses = addrs
	return p, nil
}

// serviceAddresses are the addresses the API server's Service is reached
// at from outside the host cluster, which its certificate must name: the
// load balancer's, or the host endpoint given for a NodePort.
func (r *Reconciler) serviceAddresses(ctx context.Context, k *operatorv1alpha1.Karmada) ([]string, error) {
	var out []string
	if h := k.Spec.HostCluster; h != nil && h.APIEndpoint != "" {
		host := h.APIEndpoint
		if i := strings.Index(host, "://"); i >= 0 {
			host = host[i+3:]
		}
		if hh, _, err := net.SplitHostPort(host); err == nil {
			host = hh
		}
		out = append(out, strings.TrimSuffix(host, "/"))
	}
	svc := &corev1.Service{}
	err := r.Get(ctx, types.NamespacedName{Namespace: k.Namespace, Name: releaseName(k.Name, APIServer)}, svc)
	if apierrors.IsNotFound(err) {
		return out, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the API server's Service: %w", err)
	}
	for _, ing := range svc.Status.LoadBalancer.Ingress {
		if ing.IP != "" {
			out = append(out, ing.IP)
		}
		if ing.Hostname != "" {
			out = append(out, ing.Hostname)
		}
	}
	return out, nil
}

func (r *Reconciler) externalEtcdClient(ctx context.Context, k *operatorv1alpha1.Karmada, e *operatorv1alpha1.ExternalEtcd) (*externalEtcdClient, error) {
	ns := e.SecretRef.Namespace
	if ns == "" {
		ns = k.Namespace
	}
	sec := &corev1.Secret{}
	if err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: ns, Name: e.SecretRef.Name}, sec); err != nil {
		return nil, fieldError("spec.components.etcd.external.secretRef", fmt.Errorf("reading Secret %s/%s: %w", ns, e.SecretRef.Name, err))
	}
	for _, key := range []string{keyCACert, keyTLSCert, keyTLSKey} {
		if len(sec.Data[key]) == 0 {
			return nil, fieldError("spec.components.etcd.external.secretRef", fmt.Errorf("secret %s/%s has no %s", ns, e.SecretRef.Name, key))
		}
	}
	return &externalEtcdClient{ca: sec.Data[keyCACert], cert: sec.Data[keyTLSCert], key: sec.Data[keyTLSKey]}, nil
}

// phase is one gated step of the install or upgrade.
type phase struct {
	name       string
	components []Component
	contents   bool // install CRDs, namespaces and RBAC into the API server
	admission  bool // register the webhook configurations in the API server
	// aggregation registers the aggregated API server in the API server
	// once its release is rolled out.
	aggregation bool
	progressing string
	failed      string
	// remove are releases the spec no longer asks for, uninstalled before
	// the phase's own are applied.
	remove []Component
}

// phases lists the steps for an instance, in order: etcd (when local), the
// API server, what goes into it, then the controllers. An upgrade takes
// the same steps, so etcd is upgraded before the API server that uses it,
// and the CRDs before the controllers that serve them.
func phases(k *operatorv1alpha1.Karmada) []phase {
	var out []phase
	controllers, removed := controllerComponents(k)
	if externalEtcd(k) == nil {
		out = append(out, phase{name: "etcd", components: []Component{Etcd},
			progressing: operatorv1alpha1.ReasonEtcdProgressing, failed: operatorv1alpha1.ReasonEtcdFailed})
	}
	return append(out,
		phase{name: "API server", components: []Component{APIServer},
			progressing: operatorv1alpha1.ReasonAPIServerProgressing, failed: operatorv1alpha1.ReasonAPIServerFailed},
		phase{name: "API server contents", contents: true,
			progressing: operatorv1alpha1.ReasonContentsProgressing, failed: operatorv1alpha1.ReasonContentsFailed},
		// The aggregated API server needs its RBAC and the karmada-system
		// namespace in the API server; the controllers read Clusters
		// through it once it is registered.
		phase{name: "aggregated API server", components: []Component{AggregatedAPIServer}, aggregation: true,
			progressing: operatorv1alpha1.ReasonAggregatedAPIServerProgressing, failed: operatorv1alpha1.ReasonAggregatedAPIServerFailed},
		phase{name: "controllers", components: controllers, remove: removed,
			progressing: operatorv1alpha1.ReasonControllersProgress, failed: operatorv1alpha1.ReasonControllersFailed},
		// The webhook configurations come last: they refuse what they
		// cover while the webhook does not answer, and the controllers work
		// without them.
		phase{name: "admission webhooks", admission: true,
			progressing: operatorv1alpha1.ReasonAdmissionProgressing, failed: operatorv1alpha1.ReasonAdmissionFailed},
	)
}

// runPhase installs or upgrades a phase's releases (or contents) and
// reports whether its workloads are rolled out.
func (r *Reconciler) runPhase(ctx context.Context, k *operatorv1alpha1.Karmada, in *inputs, ph phase) (bool, string, error) {
	if ph.contents || ph.admission {
		cp, err := r.controlPlane(ctx, k, in)
		if err != nil {
			return false, "", err
		}
		if ph.admission {
			return true, "", r.ensureAdmission(ctx, k, in, cp)
		}
		version, done, msg, err := r.ensureContents(ctx, k, in, cp)
		in.kubernetesVersion = version
		return done, msg, err
	}
	for _, c := range ph.remove {
		if err := r.removeRelease(ctx, k, c); err != nil {
			return false, "", err
		}
	}
	var waiting []string
	for _, c := range ph.components {
		rel, err := r.applyRelease(ctx, k, in, c)
		if err != nil {
			return false, "", err
		}
		done, msg, err := r.rolledOut(ctx, k.Namespace, rel)
		if err != nil {
			return false, "", err
		}
		if !done {
			waiting = append(waiting, msg)
		}
	}
	if len(waiting) > 0 {
		return false, fmt.Sprintf("%s: %s", ph.name, strings.Join(waiting, "; ")), nil
	}
	if ph.aggregation {
		cp, err := r.controlPlane(ctx, k, in)
		if err != nil {
			return false, "", err
		}
		done, msg, err := r.ensureAggregation(ctx, k, in, cp)
		if err != nil || !done {
			return false, fmt.Sprintf("%s: %s", ph.name, msg), err
		}
	}
	return true, "", nil
}

// controlPlane is the client of the instance's API server, reached at its
// Service.
func (r *Reconciler) controlPlane(ctx context.Context, k *operatorv1alpha1.Karmada, in *inputs) (*controlPlane, error) {
	svc := &corev1.Service{}
	if err := r.Get(ctx, types.NamespacedName{Namespace: k.Namespace, Name: releaseName(k.Name, APIServer)}, svc); err != nil {
		return nil, fmt.Errorf("reading the API server's Service: %w", err)
	}
	return r.ControlPlanes.For(ctx, k, in, svc)
}

// applyRelease installs or upgrades one component's release, and puts back
// what a person changed or deleted.
func (r *Reconciler) applyRelease(ctx context.Context, k *operatorv1alpha1.Karmada, in *inputs, c Component) (*releaseManifest, error) {
	ch, err := r.Charts(string(c))
	if err != nil {
		return nil, fmt.Errorf("loading chart %s: %w", c, err)
	}
	values, err := chartValues(k, in, c)
	if err != nil {
		return nil, err
	}
	req := helmrelease.Release{
		Name:      releaseName(k.Name, c),
		Namespace: k.Namespace,
		Chart:     ch,
		Values:    values,
		Labels:    map[string]string{operatorv1alpha1.LabelKarmadaName: k.Name},
		Owner:     ownerReference(k),
	}
	rel, outcome, err := r.Helm.Apply(ctx, req)
	if err != nil {
		return nil, err
	}
	if outcome == helmrelease.Unchanged {
		drift, err := r.drift(ctx, k.Namespace, rel.Manifest)
		if err != nil {
			return nil, err
		}
		if drift != "" {
			log.FromContext(ctx).Info("Putting back a changed object", "release", req.Name, "drift", drift)
			req.Force = true
			if rel, _, err = r.Helm.Apply(ctx, req); err != nil {
				return nil, err
			}
			r.Recorder.Eventf(k, nil, corev1.EventTypeNormal, EventDriftRepaired, "Repair", "release %s: %s", req.Name, drift)
		}
	} else {
		reason := EventReleaseInstalled
		if outcome == helmrelease.Upgraded {
			reason = EventReleaseUpgraded
		}
		r.Recorder.Eventf(k, nil, corev1.EventTypeNormal, reason, "Apply", "release %s revision %d (%s %s)", req.Name, rel.Version, c, in.target.Version)
	}
	return parseManifest(rel.Manifest)
}

// removeRelease uninstalls a component's release that the spec no longer
// asks for. Helm's records of a release (Secrets labelled owner=helm and
// name=<release> by its storage driver) also carry the instance label, so
// the cache tells whether there may be one: a pass with nothing to remove
// makes no request.
func (r *Reconciler) removeRelease(ctx context.Context, k *operatorv1alpha1.Karmada, c Component) error {
	name := releaseName(k.Name, c)
	records := &corev1.SecretList{}
	err := r.List(ctx, records, ctrl.InNamespace(k.Namespace), ctrl.MatchingLabels{
		operatorv1alpha1.LabelKarmadaName: k.Name,
		"owner":                           "helm",
		"name":                            name,
	})
	if err != nil {
		return fmt.Errorf("listing the records of release %s: %w", name, err)
	}
	if len(records.Items) == 0 {
		return nil
	}
	// The cache may still hold records of a release removed by an earlier
	// pass; Helm's own storage says whether there is one.
	rel, err := r.Helm.Get(k.Namespace, name)
	if err != nil {
		return fmt.Errorf("reading release %s: %w", name, err)
	}
	if rel == nil {
		return nil
	}
	if err := r.Helm.Uninstall(ctx, k.Namespace, name); err != nil {
		return err
	}
	log.FromContext(ctx).Info("Uninstalled a component the spec no longer asks for", "release", name)
	r.Recorder.Eventf(k, nil, corev1.EventTypeNormal, EventReleaseUninstalled, "Remove", "release %s: the spec no longer asks for the %s", name, c)
	return nil
}

// rolledOut looks at every Deployment and StatefulSet of a release.
func (r *Reconciler) rolledOut(ctx context.Context, namespace string, m *releaseManifest) (bool, string, error) {
	for _, ref := range m.workloads() {
		key := types.NamespacedName{Namespace: namespace, Name: ref.name}
		switch ref.kind {
		case "Deployment":
			d := &appsv1.Deployment{}
			if err := r.Get(ctx, key, d); err != nil {
				return false, "", ctrl.IgnoreNotFound(err)
			}
			if ok, msg := deploymentRolledOut(d); !ok {
				return false, msg, nil
			}
		case "StatefulSet":
			s := &appsv1.StatefulSet{}
			if err := r.Get(ctx, key, s); err != nil {
				return false, "", ctrl.IgnoreNotFound(err)
			}
			if ok, msg := statefulSetRolledOut(s); !ok {
				return false, msg, nil
			}
		}
	}
	return true, "", nil
}

func ownerReference(k *operatorv1alpha1.Karmada) *metav1.OwnerReference {
	return &metav1.OwnerReference{
		APIVersion:         operatorv1alpha1.GroupVersion.String(),
		Kind:               "Karmada",
		Name:               k.Name,
		UID:                k.UID,
		Controller:         ptr.To(true),
		BlockOwnerDeletion: ptr.To(true),
	}
}

// notReady records a failure that stops every phase.
func (r *Reconciler) notReady(k *operatorv1alpha1.Karmada, reason, msg string) {
	setCondition(k, operatorv1alpha1.ConditionReady, metav1.ConditionFalse, reason, msg)
	setCondition(k, operatorv1alpha1.ConditionProgressing, metav1.ConditionFalse, reason, msg)
	setCondition(k, operatorv1alpha1.ConditionDegraded, metav1.ConditionTrue, reason, msg)
}

// progressing records a phase still rolling out. It is Degraded too when
// the instance had been Ready at this version, since nothing was being
// changed: something broke.
func (r *Reconciler) progressing(k *operatorv1alpha1.Karmada, reason, msg string) {
	wasReady := meta.IsStatusConditionTrue(k.Status.Conditions, operatorv1alpha1.ConditionReady)
	setCondition(k, operatorv1alpha1.ConditionReady, metav1.ConditionFalse, reason, msg)
	setCondition(k, operatorv1alpha1.ConditionProgressing, metav1.ConditionTrue, reason, msg)
	if wasReady {
		setCondition(k, operatorv1alpha1.ConditionDegraded, metav1.ConditionTrue, reason, msg)
	}
}

// failed records a phase that could not be carried out. A cause in the
// spec is a validation error and is not retried until the spec changes;
// anything else is retried with backoff.
func (r *Reconciler) failed(k *operatorv1alpha1.Karmada, reason string, err error) (reconcile.Result, error) {
	if isFieldError(err) {
		r.Recorder.Eventf(k, nil, corev1.EventTypeWarning, EventValidationError, "Validate", err.Error())
		r.notReady(k, operatorv1alpha1.ReasonValidationError, err.Error())
		k.Status.ObservedGeneration = k.Generation
		return reconcile.Result{}, nil
	}
	r.Recorder.Eventf(k, nil, corev1.EventTypeWarning, EventPhaseFailed, "Reconcile", "%s: %v", reason, err)
	r.notReady(k, reason, err.Error())
	return reconcile.Result{}, err
}

func setCondition(k *operatorv1alpha1.Karmada, typ string, status metav1.ConditionStatus, reason, msg string) {
	meta.SetStatusCondition(&k.Status.Conditions, metav1.Condition{
		Type: typ, Status: status, Reason: reason, Message: msg, ObservedGeneration: k.Generation,
	})
}

func equalStatus(a, b *operatorv1alpha1.Karmada) bool {
	return equality.Semantic.DeepEqual(a.Status, b.Status)
}

func externalEtcd(k *operatorv1alpha1.Karmada) *operatorv1alpha1.ExternalEtcd {
	if c := k.Spec.Components; c != nil && c.Etcd != nil {
		return c.Etcd.External
	}
	return nil
}

func dnsDomain(k *operatorv1alpha1.Karmada) string {
	if h := k.Spec.HostCluster; h != nil && h.Networking != nil && h.Networking.DNSDomain != nil && *h.Networking.DNSDomain != "" {
		return *h.Networking.DNSDomain
	}
	return certs.DefaultDNSDomain
}

// defaultServiceSubnet is the control plane's Service range when the spec
// names none, as in Karmada.
const defaultServiceSubnet = "10.96.0.0/12"

// controllerComponents are the controllers phase's releases: those the
// instance runs, and those it does not and that are to be removed if
// installed. The descheduler is optional, as in Karmada's operator: absent
// from the spec, it is not installed, and removing it from the spec
// uninstalls it.
func controllerComponents(k *operatorv1alpha1.Karmada) (run, remove []Component) {
	run = []Component{KubeControllerManager, ControllerManager, Scheduler}
	if c := k.Spec.Components; c != nil && c.KarmadaDescheduler != nil {
		run = append(run, Descheduler)
	} else {
		remove = append(remove, Descheduler)
	}
	return append(run, Webhook), remove
}

// imageOf is the image a component runs: the spec's repository and tag
// where set (a Karmada image for a Flotilla component is replaced), else
// the release's, from privateRegistry when set.
func imageOf(k *operatorv1alpha1.Karmada, target versions.Release, c release.Component, img operatorv1alpha1.Image) (repository, tag string) {
	registry := ""
	if k.Spec.PrivateRegistry != nil {
		registry = k.Spec.PrivateRegistry.Registry
	}
	repository = c.Repository(registry)
	ref := target.Image(c, registry)
	tag = ref[strings.LastIndex(ref, ":")+1:]
	// Karmada's own images cannot run with Flotilla's flags: a resource
	// written for Karmada's operator gets Flotilla's images instead.
	usable := !c.Own() || !karmadaImage(img.ImageRepository)
	if img.ImageRepository != "" && usable {
		repository = img.ImageRepository
	}
	if img.ImageTag != "" && usable {
		tag = img.ImageTag
	}
	return repository, tag
}
