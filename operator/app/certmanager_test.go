package app

import (
	"context"
	"net"
	"slices"
	"testing"
	"time"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorv1alpha1 "github.com/flotilla-io/flotilla/api/operator/v1alpha1"
	"github.com/flotilla-io/flotilla/operator/internal/certs"
)

// issue plays cert-manager with a CA of the test's: every Certificate of the
// namespace gets its Secret, as cert-manager's CA issuer writes it.
func issue(t *testing.T, ns string, ca *certs.CA) int {
	t.Helper()
	ctx := context.Background()
	list := &cmv1.CertificateList{}
	if err := k8s.List(ctx, list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, c := range list.Items {
		req := certs.Request{CommonName: c.Spec.CommonName, DNSNames: c.Spec.DNSNames, Validity: c.Spec.Duration.Duration}
		if c.Spec.Subject != nil {
			req.Organizations = c.Spec.Subject.Organizations
		}
		for _, ip := range c.Spec.IPAddresses {
			req.IPs = append(req.IPs, net.ParseIP(ip))
		}
		if slices.Contains(c.Spec.Usages, cmv1.UsageServerAuth) {
			req.Usages |= certs.ServerAuth
		}
		if slices.Contains(c.Spec.Usages, cmv1.UsageClientAuth) {
			req.Usages |= certs.ClientAuth
		}
		pair, _, err := ca.Issue(req)
		if err != nil {
			t.Fatalf("issuing %s: %v", c.Name, err)
		}
		sec := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: c.Spec.SecretName, Labels: c.Spec.SecretTemplate.Labels},
			Type:       corev1.SecretTypeTLS,
			Data:       map[string][]byte{"tls.crt": pair.CertPEM, "tls.key": pair.KeyPEM, "ca.crt": ca.BundlePEM()},
		}
		if err := k8s.Create(ctx, sec); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	return len(list.Items)
}

// TestCertManagerIssuer: with spec.certificateIssuer every certificate is a
// cert-manager Certificate of that issuer, the instance waits until they
// are issued, and the components get the Secrets composed from them.
func TestCertManagerIssuer(t *testing.T) {
	startOperator(t, oldRelease)
	ns := newNamespace(t)
	ctx := context.Background()
	k := newKarmada(ns, "cm")
	k.Spec.CertificateIssuer = &operatorv1alpha1.CertificateIssuerReference{Name: "corp-ca", Kind: "ClusterIssuer"}
	k.Spec.Components.KarmadaAPIServer = &operatorv1alpha1.KarmadaAPIServer{CertSANs: []string{"karmada.example.com"}}
	if err := k8s.Create(ctx, k); err != nil {
		t.Fatal(err)
	}
	waitCondition(t, ns, "cm", operatorv1alpha1.ConditionProgressing, operatorv1alpha1.ReasonCertificatesPending)

	apiserver := &cmv1.Certificate{}
	eventually(t, "the API server's Certificate", func() (bool, error) {
		err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "cm-pki-apiserver"}, apiserver)
		return err == nil, err
	})
	if apiserver.Spec.IssuerRef.Name != "corp-ca" || apiserver.Spec.IssuerRef.Kind != "ClusterIssuer" || apiserver.Spec.IssuerRef.Group != "cert-manager.io" {
		t.Errorf("issuerRef %+v", apiserver.Spec.IssuerRef)
	}
	for _, want := range []string{"karmada.example.com", "cm-apiserver." + ns + ".svc.cluster.local"} {
		if !slices.Contains(apiserver.Spec.DNSNames, want) {
			t.Errorf("the API server's Certificate does not name %s: %v", want, apiserver.Spec.DNSNames)
		}
	}
	if apiserver.Spec.RenewBefore == nil || apiserver.Spec.Duration == nil || apiserver.Spec.RenewBefore.Duration*3 != apiserver.Spec.Duration.Duration {
		t.Errorf("renewal is not at two thirds: duration %v renewBefore %v", apiserver.Spec.Duration, apiserver.Spec.RenewBefore)
	}

	ca, err := certs.NewCA(certs.CAOptions{CommonName: "corp-ca", Validity: 24 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if n := issue(t, ns, ca); n < 10 {
		t.Fatalf("only %d Certificates", n)
	}
	waitCondition(t, ns, "cm", operatorv1alpha1.ConditionProgressing, operatorv1alpha1.ReasonEtcdProgressing)
	for _, name := range []string{"cm-etcd-cert", "cm-apiserver-cert", "cm-admin-config"} {
		sec := &corev1.Secret{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, sec); err != nil {
			t.Fatal(err)
		}
		if string(sec.Data["ca.crt"]) != string(ca.BundlePEM()) {
			t.Errorf("%s does not trust the issuer's CA", name)
		}
	}
	// No CA of the operator's own was made.
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "cm-pki-ca"}, &corev1.Secret{}); !apierrors.IsNotFound(err) {
		t.Errorf("the operator made a CA of its own (get: %v)", err)
	}
}
