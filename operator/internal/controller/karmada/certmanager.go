package karmada

import (
	"context"
	"fmt"
	"net"
	"strings"
	"time"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	cmmeta "github.com/cert-manager/cert-manager/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	operatorv1alpha1 "github.com/flotilla-io/flotilla/api/operator/v1alpha1"
	"github.com/flotilla-io/flotilla/operator/internal/certs"
)

// certificateIssuerField is the field the cert-manager mode's errors name.
const certificateIssuerField = "spec.certificateIssuer"

// ensureIssuedPKI is ensurePKI when spec.certificateIssuer names a
// cert-manager issuer: each leaf of the plan becomes a Certificate whose
// Secret is the one the operator would have written (<instance>-pki-<id>,
// tls.crt, tls.key, ca.crt), so everything downstream is the same.
// cert-manager renews them; the operator only keeps their specs current.
// The returned message is non-empty while a certificate is not issued yet.
func (r *Reconciler) ensureIssuedPKI(ctx context.Context, k *operatorv1alpha1.Karmada, params certs.Params) (*pki, string, error) {
	p := &pki{cas: map[certs.ID]*certs.CA{}, bundles: map[certs.ID][]byte{}, pairs: map[certs.ID]certs.KeyPair{}}
	var pending []string
	for _, spec := range certs.Plan(params) {
		if spec.IsCA() {
			continue
		}
		want := certificate(k, spec)
		have := &cmv1.Certificate{}
		err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: k.Namespace, Name: want.Name}, have)
		switch {
		case meta.IsNoMatchError(err):
			return nil, "", fieldError(certificateIssuerField, fmt.Errorf("cert-manager's Certificate API is not installed on this cluster: %w", err))
		case apierrors.IsNotFound(err):
			if err := r.Create(ctx, want); err != nil && !apierrors.IsAlreadyExists(err) {
				return nil, "", fmt.Errorf("creating Certificate %s: %w", want.Name, err)
			}
		case err != nil:
			return nil, "", fmt.Errorf("reading Certificate %s: %w", want.Name, err)
		case !equality.Semantic.DeepEqual(have.Spec, want.Spec):
			have.Spec = want.Spec
			if err := r.Update(ctx, have); err != nil {
				return nil, "", fmt.Errorf("updating Certificate %s: %w", want.Name, err)
			}
		}
		sec, err := r.getSecret(ctx, k.Namespace, want.Spec.SecretName)
		if err != nil {
			return nil, "", err
		}
		if sec == nil || len(sec.Data[keyTLSCert]) == 0 || len(sec.Data[keyTLSKey]) == 0 || len(sec.Data[keyCACert]) == 0 {
			pending = append(pending, want.Name)
			continue
		}
		p.pairs[spec.ID] = certs.KeyPair{CertPEM: sec.Data[keyTLSCert], KeyPEM: sec.Data[keyTLSKey]}
		if _, ok := p.bundles[spec.Signer]; !ok {
			p.bundles[spec.Signer] = sec.Data[keyCACert]
		}
	}
	if len(pending) > 0 {
		return nil, fmt.Sprintf("waiting for cert-manager to issue %s", strings.Join(pending, ", ")), nil
	}
	sa, err := r.ensureServiceAccountKey(ctx, k)
	if err != nil {
		return nil, "", err
	}
	p.sa = sa
	// The issuer renews; nothing for the operator to come back for.
	p.renewAt = r.now().Add(24 * time.Hour)
	return p, "", nil
}

// certificate is the cert-manager Certificate of one leaf of the plan.
func certificate(k *operatorv1alpha1.Karmada, spec certs.Spec) *cmv1.Certificate {
	ref := k.Spec.CertificateIssuer
	issuer := cmmeta.IssuerReference{Name: ref.Name, Kind: ref.Kind, Group: ref.Group}
	if issuer.Kind == "" {
		issuer.Kind = cmv1.IssuerKind
	}
	if issuer.Group == "" {
		issuer.Group = "cert-manager.io"
	}
	req := spec.Request
	validity := req.Validity
	if validity == 0 {
		validity = certs.DefaultLeafValidity
	}
	usages := []cmv1.KeyUsage{cmv1.UsageDigitalSignature, cmv1.UsageKeyEncipherment}
	if req.Usages&certs.ServerAuth != 0 {
		usages = append(usages, cmv1.UsageServerAuth)
	}
	if req.Usages&certs.ClientAuth != 0 {
		usages = append(usages, cmv1.UsageClientAuth)
	}
	key := &cmv1.CertificatePrivateKey{Algorithm: cmv1.ECDSAKeyAlgorithm, Size: 256, RotationPolicy: cmv1.RotationPolicyAlways}
	if a := string(req.Algorithm); strings.HasPrefix(a, "RSA-") {
		key.Algorithm = cmv1.RSAKeyAlgorithm
		_, _ = fmt.Sscanf(strings.TrimPrefix(a, "RSA-"), "%d", &key.Size)
	}
	name := pkiSecretName(k.Name, spec.ID)
	c := &cmv1.Certificate{
		TypeMeta:   metav1.TypeMeta{APIVersion: cmv1.SchemeGroupVersion.String(), Kind: cmv1.CertificateKind},
		ObjectMeta: metav1.ObjectMeta{Namespace: k.Namespace, Name: name, Labels: operatorLabels(k)},
		Spec: cmv1.CertificateSpec{
			CommonName:  req.CommonName,
			DNSNames:    req.DNSNames,
			IPAddresses: ipStrings(req.IPs),
			Duration:    &metav1.Duration{Duration: validity},
			// Renewed at two thirds of the lifetime, as the operator's own
			// CA does.
			RenewBefore: &metav1.Duration{Duration: validity / 3},
			SecretName:  name,
			// The label puts the Secret in the operator's cache and makes
			// its changes reach the instance.
			SecretTemplate: &cmv1.CertificateSecretTemplate{Labels: operatorLabels(k)},
			IssuerRef:      issuer,
			Usages:         usages,
			PrivateKey:     key,
		},
	}
	if len(req.Organizations) > 0 {
		c.Spec.Subject = &cmv1.X509Subject{Organizations: req.Organizations}
	}
	return c
}

func ipStrings(ips []net.IP) []string {
	out := make([]string, 0, len(ips))
	for _, ip := range ips {
		out = append(out, ip.String())
	}
	return out
}
