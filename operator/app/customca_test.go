package app

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorv1alpha1 "github.com/flotilla-io/flotilla/api/operator/v1alpha1"
	"github.com/flotilla-io/flotilla/operator/internal/certs"
)

// TestUserCA: customCertificate.apiServerCACert signs the API server's
// certificates with the user's CA instead of one the operator makes.
func TestUserCA(t *testing.T) {
	startOperator(t, oldRelease)
	ns := newNamespace(t)
	ctx := context.Background()
	ca, err := certs.NewCA(certs.CAOptions{CommonName: "corp-root", Validity: 48 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	pair := ca.KeyPair()
	if err := k8s.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "corp-ca"},
		Data:       map[string][]byte{"tls.crt": pair.CertPEM, "tls.key": pair.KeyPEM},
	}); err != nil {
		t.Fatal(err)
	}
	k := newKarmada(ns, "uca")
	k.Spec.CustomCertificate = &operatorv1alpha1.CustomCertificate{APIServerCACert: &operatorv1alpha1.LocalSecretReference{Name: "corp-ca"}}
	if err := k8s.Create(ctx, k); err != nil {
		t.Fatal(err)
	}
	waitCondition(t, ns, "uca", operatorv1alpha1.ConditionProgressing, operatorv1alpha1.ReasonEtcdProgressing)

	sec := &corev1.Secret{}
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "uca-apiserver-cert"}, sec); err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(sec.Data["apiserver.crt"])
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if err := cert.CheckSignatureFrom(ca.Certificate()); err != nil {
		t.Errorf("the API server's certificate is not signed by the user's CA: %v", err)
	}
	if string(sec.Data["ca.crt"]) != string(ca.BundlePEM()) {
		t.Error("the API server does not trust clients of the user's CA")
	}
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "uca-pki-ca"}, &corev1.Secret{}); !apierrors.IsNotFound(err) {
		t.Errorf("the operator stored a CA of its own (get: %v)", err)
	}

	// A Secret that is no CA is refused, naming the field.
	bad := newKarmada(ns, "badca")
	bad.Spec.CustomCertificate = &operatorv1alpha1.CustomCertificate{APIServerCACert: &operatorv1alpha1.LocalSecretReference{Name: "missing"}}
	if err := k8s.Create(ctx, bad); err != nil {
		t.Fatal(err)
	}
	got := waitCondition(t, ns, "badca", operatorv1alpha1.ConditionReady, operatorv1alpha1.ReasonValidationError)
	if msg := readyMessage(got); !strings.Contains(msg, "spec.customCertificate.apiServerCACert") {
		t.Errorf("message %q does not name the field", msg)
	}
}

// TestExternalEtcd: with external etcd no etcd is installed, the API server
// is pointed at the endpoints with the user's client certificate.
func TestExternalEtcd(t *testing.T) {
	startOperator(t, oldRelease)
	ns := newNamespace(t)
	ctx := context.Background()
	if err := k8s.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "etcd-client"},
		Data:       map[string][]byte{"ca.crt": []byte("etcd-ca"), "tls.crt": []byte("client-cert"), "tls.key": []byte("client-key")},
	}); err != nil {
		t.Fatal(err)
	}
	k := newKarmada(ns, "ext")
	k.Spec.Components.Etcd = &operatorv1alpha1.Etcd{External: &operatorv1alpha1.ExternalEtcd{
		Endpoints: []string{"https://etcd-a.example:2379", "https://etcd-b.example:2379"},
		SecretRef: operatorv1alpha1.LocalSecretReference{Name: "etcd-client"},
	}}
	if err := k8s.Create(ctx, k); err != nil {
		t.Fatal(err)
	}
	waitCondition(t, ns, "ext", operatorv1alpha1.ConditionProgressing, operatorv1alpha1.ReasonAPIServerProgressing)
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "ext-etcd"}, &appsv1.StatefulSet{}); !apierrors.IsNotFound(err) {
		t.Errorf("etcd was installed beside external etcd (get: %v)", err)
	}
	d := &appsv1.Deployment{}
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "ext-apiserver"}, d); err != nil {
		t.Fatal(err)
	}
	if args := d.Spec.Template.Spec.Containers[0].Args; !slices.Contains(args, "--etcd-servers=https://etcd-a.example:2379,https://etcd-b.example:2379") {
		t.Errorf("API server args %v", args)
	}
	sec := &corev1.Secret{}
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "ext-apiserver-cert"}, sec); err != nil {
		t.Fatal(err)
	}
	if string(sec.Data["etcd-client.crt"]) != "client-cert" || string(sec.Data["etcd-ca.crt"]) != "etcd-ca" {
		t.Errorf("the API server does not get the user's etcd client certificate: %q", sec.Data["etcd-client.crt"])
	}
}
