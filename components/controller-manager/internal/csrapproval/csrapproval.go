// Package csrapproval is the agent CSR approving controller: it approves the
// certificate signing requests with which Pull members' agents get their
// client certificates, from a bootstrap token when a member registers or
// from the agent itself when it renews, and nothing else.
//
// A request is the agent's when it is for the signer
// kubernetes.io/kube-apiserver-client, its subject is
// system:karmada:agent:<cluster> in the one organization
// system:karmada:agents, it names no DNS, IP, email or URI, and it asks for
// client auth and digital signature (key encipherment allowed). The
// requester must then be allowed to create certificatesigningrequests/
// clusteragent (bootstrap tokens are, through their group), or
// certificatesigningrequests/selfclusteragent when it is the agent asking
// for its own name again: a subject access review asks the API server, as
// Karmada's approver does. A request for that signer that claims an agent's
// name but breaks a rule is denied, saying which; requests for other
// signers and other subjects are left to whoever handles them.
//
// Approving an agent's first certificate also grants that agent its rights
// in the control plane (internal/agentaccess), cut to its own cluster.
package csrapproval

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"slices"
	"strings"

	authorizationv1 "k8s.io/api/authorization/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/flotilla-io/flotilla/internal/agentaccess"
)

// ControllerName names the controller.
const ControllerName = "agent-csr-approving-controller"

// Reasons of the conditions this controller sets.
const (
	ReasonAutoApproved = "AutoApproved"
	ReasonInvalid      = "InvalidAgentRequest"
)

// Subresources a requester must be allowed to create: any agent's
// certificate (bootstrap tokens), or its own again (the agent renewing).
const (
	subresourceAgent     = "clusteragent"
	subresourceSelfAgent = "selfclusteragent"
)

// Reconciler approves agent CSRs. Set the exported fields, then call
// SetupWithManager.
type Reconciler struct {
	// Client reads CSRs through the manager's cache.
	Client client.Client
	// Kube approves and denies (the approval subresource) and asks subject
	// access reviews.
	Kube kubernetes.Interface
	// Direct writes the agent's RBAC without a cache: RBAC objects are no
	// reason to watch every role of the control plane.
	Direct client.Client
}

// +kubebuilder:rbac:groups=certificates.k8s.io,resources=certificatesigningrequests,verbs=get;list;watch
// +kubebuilder:rbac:groups=certificates.k8s.io,resources=certificatesigningrequests/approval,verbs=update
// +kubebuilder:rbac:groups=certificates.k8s.io,resources=signers,resourceNames=kubernetes.io/kube-apiserver-client,verbs=approve
// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=clusterroles;clusterrolebindings;roles;rolebindings,verbs=get;create;update;bind;escalate
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get;create

// SetupWithManager registers the controller on CSRs for the
// kube-apiserver-client signer.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Client == nil || r.Kube == nil || r.Direct == nil {
		return errors.New("agent CSR approving controller: Client, Kube and Direct are required")
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName).
		For(&certificatesv1.CertificateSigningRequest{}, builder.WithPredicates(predicate.NewPredicateFuncs(func(obj client.Object) bool {
			csr, ok := obj.(*certificatesv1.CertificateSigningRequest)
			return ok && csr.Spec.SignerName == agentaccess.SignerName
		}))).
		Complete(r)
}

// Reconcile decides one CSR.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	csr := &certificatesv1.CertificateSigningRequest{}
	if err := r.Client.Get(ctx, req.NamespacedName, csr); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if decided(csr) || csr.Spec.SignerName != agentaccess.SignerName {
		return ctrl.Result{}, nil
	}
	request, err := parse(csr.Spec.Request)
	if err != nil {
		// Not even a request: nobody can claim it is an agent's.
		return ctrl.Result{}, nil
	}
	if !claimsAgent(request) {
		return ctrl.Result{}, nil
	}
	log := ctrl.LoggerFrom(ctx).WithValues("subject", request.Subject.CommonName, "requester", csr.Spec.Username)
	if err := Validate(request, csr.Spec.Usages); err != nil {
		log.Info("Denying an invalid agent CSR", "reason", err.Error())
		return ctrl.Result{}, r.decide(ctx, csr, certificatesv1.CertificateDenied, ReasonInvalid, err.Error())
	}
	subresource := subresourceAgent
	if csr.Spec.Username == request.Subject.CommonName {
		subresource = subresourceSelfAgent
	}
	allowed, err := r.authorized(ctx, csr, subresource)
	if err != nil {
		return ctrl.Result{}, err
	}
	if !allowed {
		// Another approver, or an administrator, may still decide.
		log.Info("Agent CSR from a requester not allowed to ask for it; leaving it pending", "subresource", subresource)
		return ctrl.Result{}, nil
	}
	cluster, _ := agentaccess.ClusterOfUser(request.Subject.CommonName)
	// The rights come with the first certificate only. An agent renewing
	// its own has them, or had them revoked by unregister while its request
	// was on its way: granting them then would bring back what unregister
	// removed.
	if subresource == subresourceAgent {
		if err := agentaccess.Grant(ctx, r.Direct, cluster); err != nil {
			return ctrl.Result{}, fmt.Errorf("granting the agent of %s its rights: %w", cluster, err)
		}
	}
	log.Info("Approving agent CSR", "cluster", cluster)
	return ctrl.Result{}, r.decide(ctx, csr, certificatesv1.CertificateApproved, ReasonAutoApproved,
		"Auto approving karmada agent certificate after SubjectAccessReview.")
}

// decided: approved, denied or failed already, or signed.
func decided(csr *certificatesv1.CertificateSigningRequest) bool {
	if len(csr.Status.Certificate) > 0 {
		return true
	}
	for _, c := range csr.Status.Conditions {
		switch c.Type {
		case certificatesv1.CertificateApproved, certificatesv1.CertificateDenied, certificatesv1.CertificateFailed:
			return true
		}
	}
	return false
}

func parse(pemBytes []byte) (*x509.CertificateRequest, error) {
	block, _ := pem.Decode(pemBytes)
	if block == nil || block.Type != "CERTIFICATE REQUEST" {
		return nil, errors.New("spec.request is not a PEM certificate request")
	}
	req, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("parsing spec.request: %w", err)
	}
	return req, nil
}

// claimsAgent: the request asks for an agent's identity, by name or group.
func claimsAgent(req *x509.CertificateRequest) bool {
	return strings.HasPrefix(req.Subject.CommonName, agentaccess.UserPrefix) || slices.Contains(req.Subject.Organization, agentaccess.Group)
}

// Usages an agent certificate may have: exactly these, with or without key
// encipherment.
var (
	usagesWithKeyEncipherment = []certificatesv1.KeyUsage{certificatesv1.UsageClientAuth, certificatesv1.UsageDigitalSignature, certificatesv1.UsageKeyEncipherment}
	usagesPlain               = []certificatesv1.KeyUsage{certificatesv1.UsageClientAuth, certificatesv1.UsageDigitalSignature}
)

// Validate checks an agent's certificate request, naming the first rule it
// breaks.
func Validate(req *x509.CertificateRequest, usages []certificatesv1.KeyUsage) error {
	if _, ok := agentaccess.ClusterOfUser(req.Subject.CommonName); !ok {
		return fmt.Errorf("subject common name %q is not %s<cluster>", req.Subject.CommonName, agentaccess.UserPrefix)
	}
	if !slices.Equal(req.Subject.Organization, []string{agentaccess.Group}) {
		return fmt.Errorf("subject organizations %q are not exactly [%s]", req.Subject.Organization, agentaccess.Group)
	}
	switch {
	case len(req.DNSNames) > 0:
		return errors.New("DNS subjectAltNames are not allowed")
	case len(req.IPAddresses) > 0:
		return errors.New("IP subjectAltNames are not allowed")
	case len(req.EmailAddresses) > 0:
		return errors.New("email subjectAltNames are not allowed")
	case len(req.URIs) > 0:
		return errors.New("URI subjectAltNames are not allowed")
	}
	got := slices.Clone(usages)
	slices.Sort(got)
	got = slices.Compact(got)
	if !slices.Equal(got, usagesWithKeyEncipherment) && !slices.Equal(got, usagesPlain) {
		return fmt.Errorf("spec.usages %q must be client auth and digital signature, optionally key encipherment", usages)
	}
	return nil
}

// authorized asks the API server whether the requester may create the CSR
// subresource.
func (r *Reconciler) authorized(ctx context.Context, csr *certificatesv1.CertificateSigningRequest, subresource string) (bool, error) {
	extra := map[string]authorizationv1.ExtraValue{}
	for k, v := range csr.Spec.Extra {
		extra[k] = authorizationv1.ExtraValue(v)
	}
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: csr.Spec.Username, UID: csr.Spec.UID, Groups: csr.Spec.Groups, Extra: extra,
		ResourceAttributes: &authorizationv1.ResourceAttributes{
			Group: certificatesv1.GroupName, Resource: "certificatesigningrequests", Subresource: subresource, Verb: "create", Version: "*",
		},
	}}
	sar, err := r.Kube.AuthorizationV1().SubjectAccessReviews().Create(ctx, sar, metav1.CreateOptions{})
	if err != nil {
		return false, fmt.Errorf("asking whether %s may create certificatesigningrequests/%s: %w", csr.Spec.Username, subresource, err)
	}
	return sar.Status.Allowed, nil
}

// decide appends the condition through the approval subresource.
func (r *Reconciler) decide(ctx context.Context, csr *certificatesv1.CertificateSigningRequest, kind certificatesv1.RequestConditionType, reason, message string) error {
	csr = csr.DeepCopy()
	csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
		Type: kind, Status: corev1.ConditionTrue, Reason: reason, Message: message, LastUpdateTime: metav1.Now(),
	})
	if _, err := r.Kube.CertificatesV1().CertificateSigningRequests().UpdateApproval(ctx, csr.Name, csr, metav1.UpdateOptions{}); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("setting %s on CSR %s: %w", kind, csr.Name, err)
	}
	return nil
}
