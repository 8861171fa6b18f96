package csrapproval_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"os"
	"strings"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/flotilla/components/controller-manager/internal/csrapproval"
	"github.com/flotilla-io/flotilla/internal/agentaccess"
	"github.com/flotilla-io/flotilla/internal/controllertest"
	"github.com/flotilla-io/flotilla/internal/localfed"
	"github.com/flotilla-io/flotilla/internal/localfed/localfedtest"
)

// A control plane alone: its kube-controller-manager signs what is approved.
var fed = &localfedtest.Shared{Options: localfed.Options{StartTimeout: 5 * time.Minute}}

func TestMain(m *testing.M) { os.Exit(fed.Main(m)) }

// request is a PEM certificate request for subject.
func request(t *testing.T, cn string, orgs []string, dns ...string) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{
		Subject: pkix.Name{CommonName: cn, Organization: orgs}, DNSNames: dns,
	}, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})
}

var agentUsages = []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageKeyEncipherment, certificatesv1.UsageClientAuth}

// as is a client of the control plane impersonating user in groups.
func as(t *testing.T, cfg *rest.Config, user string, groups ...string) kubernetes.Interface {
	t.Helper()
	cfg = rest.CopyConfig(cfg)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: append(groups, "system:authenticated")}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// TestApprovesOnlyAgentRequests calls Reconcile on each request in turn
// against a real API server, which records the decision and, for an
// approved one, signs it.
func TestApprovesOnlyAgentRequests(t *testing.T) {
	f := fed.Get(t)
	cfg := f.ControlPlane.Config
	ctx := t.Context()
	direct, err := client.New(cfg, client.Options{Scheme: controllertest.Scheme(t)})
	if err != nil {
		t.Fatal(err)
	}
	admin, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := agentaccess.EnsureBootstrap(ctx, direct); err != nil {
		t.Fatal(err)
	}
	r := &csrapproval.Reconciler{Client: direct, Kube: admin, Direct: direct}
	bootstrap := as(t, cfg, "system:bootstrap:abcdef", agentaccess.BootstrapGroup)
	// mallory may create CSRs, but not ask for agents' certificates.
	for _, obj := range []client.Object{
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "csr-creator"}, Rules: []rbacv1.PolicyRule{{
			APIGroups: []string{certificatesv1.GroupName}, Resources: []string{"certificatesigningrequests"}, Verbs: []string{"create"},
		}}},
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "csr-creator"},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "csr-creator"},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "mallory"}}},
	} {
		if err := direct.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	stranger := as(t, cfg, "mallory")

	tests := []struct {
		name       string
		by         kubernetes.Interface
		cn         string
		orgs       []string
		dns        []string
		signer     string
		usages     []certificatesv1.KeyUsage
		want       certificatesv1.RequestConditionType // "" = left pending
		wantReason string
	}{
		{name: "agent request from a bootstrap token", by: bootstrap, cn: agentaccess.User("pull1"), orgs: []string{agentaccess.Group},
			signer: agentaccess.SignerName, usages: agentUsages, want: certificatesv1.CertificateApproved},
		{name: "another signer", by: bootstrap, cn: agentaccess.User("pull2"), orgs: []string{agentaccess.Group},
			signer: "example.com/other", usages: agentUsages},
		{name: "agent name in another group", by: bootstrap, cn: agentaccess.User("pull3"), orgs: []string{"system:karmada:admins"},
			signer: agentaccess.SignerName, usages: agentUsages, want: certificatesv1.CertificateDenied, wantReason: "organizations"},
		{name: "server usage", by: bootstrap, cn: agentaccess.User("pull4"), orgs: []string{agentaccess.Group},
			signer: agentaccess.SignerName, usages: []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageServerAuth},
			want: certificatesv1.CertificateDenied, wantReason: "spec.usages"},
		{name: "a DNS name", by: bootstrap, cn: agentaccess.User("pull5"), orgs: []string{agentaccess.Group}, dns: []string{"evil.example"},
			signer: agentaccess.SignerName, usages: agentUsages, want: certificatesv1.CertificateDenied, wantReason: "DNS"},
		{name: "requester without the right to ask", by: stranger, cn: agentaccess.User("pull6"), orgs: []string{agentaccess.Group},
			signer: agentaccess.SignerName, usages: agentUsages},
		{name: "not an agent at all", by: bootstrap, cn: "jane", orgs: []string{"devs"},
			signer: agentaccess.SignerName, usages: agentUsages},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			csr := &certificatesv1.CertificateSigningRequest{
				ObjectMeta: metav1.ObjectMeta{Name: "csr-" + strings.ReplaceAll(strings.ToLower(tt.name), " ", "-")},
				Spec: certificatesv1.CertificateSigningRequestSpec{
					Request: request(t, tt.cn, tt.orgs, tt.dns...), SignerName: tt.signer, Usages: tt.usages,
				},
			}
			var created *certificatesv1.CertificateSigningRequest
			// The authorizer may not have seen the role bindings made just
			// before yet.
			controllertest.WaitFor(t, "CSR created", func(ctx context.Context) (bool, error) {
				var err error
				created, err = tt.by.CertificatesV1().CertificateSigningRequests().Create(ctx, csr, metav1.CreateOptions{})
				if apierrors.IsForbidden(err) {
					return false, nil
				}
				return err == nil, err
			})
			if _, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(created)}); err != nil {
				t.Fatal(err)
			}
			got, err := admin.CertificatesV1().CertificateSigningRequests().Get(ctx, created.Name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if tt.want == "" {
				if len(got.Status.Conditions) != 0 {
					t.Fatalf("conditions = %+v, want the request left pending", got.Status.Conditions)
				}
				return
			}
			if len(got.Status.Conditions) != 1 || got.Status.Conditions[0].Type != tt.want || !strings.Contains(got.Status.Conditions[0].Message, tt.wantReason) {
				t.Fatalf("conditions = %+v, want %s saying %q", got.Status.Conditions, tt.want, tt.wantReason)
			}
			if tt.want != certificatesv1.CertificateApproved {
				return
			}
			// The agent's rights come with its first certificate.
			cluster, _ := agentaccess.ClusterOfUser(tt.cn)
			if err := direct.Get(ctx, client.ObjectKey{Name: agentaccess.User(cluster)}, &rbacv1.ClusterRoleBinding{}); err != nil {
				t.Errorf("the agent's ClusterRoleBinding: %v", err)
			}
			controllertest.WaitFor(t, "certificate issued", func(ctx context.Context) (bool, error) {
				got, err := admin.CertificatesV1().CertificateSigningRequests().Get(ctx, created.Name, metav1.GetOptions{})
				return err == nil && len(got.Status.Certificate) > 0, err
			})
		})
	}

	// An agent's renewal reconciled after unregister revoked its rights must
	// not bring them back.
	agent := as(t, cfg, agentaccess.User("pull1"), agentaccess.Group)
	renewal := &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{Name: "csr-renewal-after-revoke"},
		Spec: certificatesv1.CertificateSigningRequestSpec{
			Request: request(t, agentaccess.User("pull1"), []string{agentaccess.Group}), SignerName: agentaccess.SignerName, Usages: agentUsages,
		},
	}
	controllertest.WaitFor(t, "renewal CSR created", func(ctx context.Context) (bool, error) {
		_, err := agent.CertificatesV1().CertificateSigningRequests().Create(ctx, renewal, metav1.CreateOptions{})
		if apierrors.IsForbidden(err) {
			return false, nil
		}
		return err == nil, err
	})
	if err := agentaccess.Revoke(ctx, direct, "pull1"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(renewal)}); err != nil {
		t.Fatal(err)
	}
	err = direct.Get(ctx, client.ObjectKey{Name: agentaccess.User("pull1")}, &rbacv1.ClusterRoleBinding{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("the agent's ClusterRoleBinding after a renewal following its revocation: %v, want it gone", err)
	}
}

func TestValidate(t *testing.T) {
	parse := func(pemBytes []byte) *x509.CertificateRequest {
		block, _ := pem.Decode(pemBytes)
		req, err := x509.ParseCertificateRequest(block.Bytes)
		if err != nil {
			t.Fatal(err)
		}
		return req
	}
	tests := []struct {
		name    string
		req     []byte
		usages  []certificatesv1.KeyUsage
		wantErr string
	}{
		{"agent", request(t, "system:karmada:agent:m1", []string{agentaccess.Group}), agentUsages, ""},
		{"no key encipherment", request(t, "system:karmada:agent:m1", []string{agentaccess.Group}),
			[]certificatesv1.KeyUsage{certificatesv1.UsageClientAuth, certificatesv1.UsageDigitalSignature}, ""},
		{"no cluster in the name", request(t, "system:karmada:agent:", []string{agentaccess.Group}), agentUsages, "common name"},
		{"extra organization", request(t, "system:karmada:agent:m1", []string{agentaccess.Group, "system:masters"}), agentUsages, "organizations"},
		{"missing client auth", request(t, "system:karmada:agent:m1", []string{agentaccess.Group}),
			[]certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature}, "spec.usages"},
	}
	for _, tt := range tests {
		err := csrapproval.Validate(parse(tt.req), tt.usages)
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("%s: %v", tt.name, err)
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("%s: error %v, want one saying %q", tt.name, err, tt.wantErr)
		}
	}
}
