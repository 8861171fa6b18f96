package karmada

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"maps"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/log"

	operatorv1alpha1 "github.com/flotilla-io/flotilla/api/operator/v1alpha1"
	"github.com/flotilla-io/flotilla/operator/internal/certs"
)

// pki is an instance's certificate material after the certificates phase.
type pki struct {
	// cas are the CAs the operator holds the keys of; none when
	// cert-manager issues.
	cas map[certs.ID]*certs.CA
	// bundles are the PEM bundles that verify what each CA signed.
	bundles map[certs.ID][]byte
	pairs   map[certs.ID]certs.KeyPair
	sa      certs.ServiceAccountKey
	// userCA is true when the instance's CA is the user's
	// (customCertificate.apiServerCACert).
	userCA bool
	// renewAt is the earliest time a certificate becomes due.
	renewAt time.Time
	// issued lists what was (re)issued in this pass, with why, for events.
	issued []string
}

// ensurePKI loads every certificate of the instance from its Secret, and
// issues the missing, changed and due ones. Each certificate lives in a
// Secret of its own (<instance>-pki-<id>, type kubernetes.io/tls), so that a
// renewal rewrites one object and the consumers' Secrets are composed from
// them afterwards.
func (r *Reconciler) ensurePKI(ctx context.Context, k *operatorv1alpha1.Karmada, params certs.Params) (*pki, error) {
	now := r.now()
	p := &pki{cas: map[certs.ID]*certs.CA{}, bundles: map[certs.ID][]byte{}, pairs: map[certs.ID]certs.KeyPair{}}

	for _, spec := range certs.Plan(params) {
		if spec.IsCA() {
			ca, err := r.ensureCA(ctx, k, spec, now, p)
			if err != nil {
				return nil, err
			}
			p.cas[spec.ID] = ca
			p.bundles[spec.ID] = ca.BundlePEM()
			continue
		}
		signer := p.cas[spec.Signer]
		sec, err := r.getSecret(ctx, k.Namespace, pkiSecretName(k.Name, spec.ID))
		if err != nil {
			return nil, err
		}
		existing := certs.KeyPair{}
		if sec != nil {
			existing = certs.KeyPair{CertPEM: sec.Data[keyTLSCert], KeyPEM: sec.Data[keyTLSKey]}
		}
		if reissue, why := certs.NeedsReissue(existing, spec, signer, now, certs.DefaultRenewFraction); reissue {
			pair, _, err := signer.Issue(spec.Request)
			if err != nil {
				return nil, fmt.Errorf("issuing certificate %s: %w", spec.ID, err)
			}
			data := map[string][]byte{keyTLSCert: pair.CertPEM, keyTLSKey: pair.KeyPEM, keyCACert: signer.BundlePEM()}
			if err := r.writeSecret(ctx, k, sec, pkiSecretName(k.Name, spec.ID), corev1.SecretTypeTLS, data); err != nil {
				return nil, err
			}
			if sec != nil {
				p.issued = append(p.issued, fmt.Sprintf("%s (%s)", spec.ID, why))
			} else {
				p.issued = append(p.issued, string(spec.ID))
			}
			existing = pair
		}
		p.pairs[spec.ID] = existing
		p.noteDue(existing.CertPEM, now)
	}

	sa, err := r.ensureServiceAccountKey(ctx, k)
	if err != nil {
		return nil, err
	}
	p.sa = sa
	return p, nil
}

// ensureCA returns a CA of the instance: the user's for the instance CA when
// customCertificate.apiServerCACert names one, else the operator's, created
// on first use and replaced when due (every certificate it signed is then
// reissued, being no longer signed by the current CA).
func (r *Reconciler) ensureCA(ctx context.Context, k *operatorv1alpha1.Karmada, spec certs.Spec, now time.Time, p *pki) (*certs.CA, error) {
	if spec.ID == certs.IDCA && k.Spec.CustomCertificate != nil && k.Spec.CustomCertificate.APIServerCACert != nil {
		ref := k.Spec.CustomCertificate.APIServerCACert
		ns := ref.Namespace
		if ns == "" {
			ns = k.Namespace
		}
		sec := &corev1.Secret{}
		// The user's Secret carries no label of the operator's, so it is
		// not in the operator's cache.
		if err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: ns, Name: ref.Name}, sec); err != nil {
			return nil, fieldError("spec.customCertificate.apiServerCACert", fmt.Errorf("reading Secret %s/%s: %w", ns, ref.Name, err))
		}
		ca, err := certs.LoadCA(sec.Data[keyTLSCert], sec.Data[keyTLSKey], sec.Data[keyCACert])
		if err != nil {
			return nil, fieldError("spec.customCertificate.apiServerCACert", fmt.Errorf("secret %s/%s: %w", ns, ref.Name, err))
		}
		p.userCA = true
		return ca, nil
	}

	name := pkiSecretName(k.Name, spec.ID)
	sec, err := r.getSecret(ctx, k.Namespace, name)
	if err != nil {
		return nil, err
	}
	if sec != nil {
		ca, err := certs.LoadCA(sec.Data[keyTLSCert], sec.Data[keyTLSKey], nil)
		if err == nil {
			if due, _ := certs.Due(ca.Certificate(), now, certs.DefaultRenewFraction); !due {
				p.noteDue(sec.Data[keyTLSCert], now)
				return ca, nil
			}
		} else {
			log.FromContext(ctx).Info("Replacing unreadable CA", "secret", name, "error", err.Error())
		}
	}
	ca, err := certs.NewCA(spec.CAOptions())
	if err != nil {
		return nil, fmt.Errorf("creating CA %s: %w", spec.ID, err)
	}
	pair := ca.KeyPair()
	data := map[string][]byte{keyTLSCert: pair.CertPEM, keyTLSKey: pair.KeyPEM}
	if err := r.writeSecret(ctx, k, sec, name, corev1.SecretTypeTLS, data); err != nil {
		return nil, err
	}
	p.issued = append(p.issued, string(spec.ID))
	p.noteDue(pair.CertPEM, now)
	return ca, nil
}

// ensureServiceAccountKey returns the key pair that signs the control
// plane's service-account tokens. It is never rotated on a schedule:
// replacing it would invalidate every token issued.
func (r *Reconciler) ensureServiceAccountKey(ctx context.Context, k *operatorv1alpha1.Karmada) (certs.ServiceAccountKey, error) {
	name := serviceAccountKeySecretName(k.Name)
	sec, err := r.getSecret(ctx, k.Namespace, name)
	if err != nil {
		return certs.ServiceAccountKey{}, err
	}
	if sec != nil {
		key := certs.ServiceAccountKey{PrivatePEM: sec.Data[keySAKey], PublicPEM: sec.Data[keySAPub]}
		if err := certs.CheckServiceAccountKey(key); err == nil {
			return key, nil
		}
	}
	key, err := certs.NewServiceAccountKey("")
	if err != nil {
		return certs.ServiceAccountKey{}, err
	}
	data := map[string][]byte{keySAKey: key.PrivatePEM, keySAPub: key.PublicPEM}
	return key, r.writeSecret(ctx, k, sec, name, corev1.SecretTypeOpaque, data)
}

func (p *pki) noteDue(certPEM []byte, now time.Time) {
	block, _ := pem.Decode(certPEM)
	if block == nil {
		return
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return
	}
	if _, at := certs.Due(cert, now, certs.DefaultRenewFraction); p.renewAt.IsZero() || at.Before(p.renewAt) {
		p.renewAt = at
	}
}

// getSecret reads one of the operator's Secrets from the cache; nil when
// there is none.
func (r *Reconciler) getSecret(ctx context.Context, namespace, name string) (*corev1.Secret, error) {
	sec := &corev1.Secret{}
	err := r.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, sec)
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("reading Secret %s/%s: %w", namespace, name, err)
	}
	return sec, nil
}

// writeSecret creates the Secret, or updates existing when its data
// differs. A Secret the cache had not seen yet is read from the API server
// instead of failing the pass.
func (r *Reconciler) writeSecret(ctx context.Context, k *operatorv1alpha1.Karmada, existing *corev1.Secret, name string, typ corev1.SecretType, data map[string][]byte) error {
	if existing == nil {
		sec := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: k.Namespace, Labels: operatorLabels(k)},
			Type:       typ,
			Data:       data,
		}
		err := r.Create(ctx, sec)
		if !apierrors.IsAlreadyExists(err) {
			if err != nil {
				return fmt.Errorf("creating Secret %s: %w", name, err)
			}
			return nil
		}
		existing = &corev1.Secret{}
		if err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: k.Namespace, Name: name}, existing); err != nil {
			return fmt.Errorf("reading Secret %s: %w", name, err)
		}
	}
	if sameData(existing.Data, data) && hasLabels(existing.Labels, operatorLabels(k)) {
		return nil
	}
	updated := existing.DeepCopy()
	updated.Data = data
	if updated.Labels == nil {
		updated.Labels = map[string]string{}
	}
	maps.Copy(updated.Labels, operatorLabels(k))
	if err := r.Update(ctx, updated); err != nil {
		return fmt.Errorf("updating Secret %s: %w", name, err)
	}
	return nil
}

func sameData(a, b map[string][]byte) bool {
	return maps.EqualFunc(a, b, bytes.Equal)
}

func hasLabels(have, want map[string]string) bool {
	for k, v := range want {
		if have[k] != v {
			return false
		}
	}
	return true
}

// operatorLabels are on every object the operator writes itself.
func operatorLabels(k *operatorv1alpha1.Karmada) map[string]string {
	return map[string]string{
		operatorv1alpha1.LabelKarmadaName: k.Name,
		operatorv1alpha1.LabelManagedBy:   operatorv1alpha1.ManagedByOperator,
	}
}

// ensureSecretsOf writes every Secret of a map, by name.
func (r *Reconciler) ensureSecrets(ctx context.Context, k *operatorv1alpha1.Karmada, secrets map[string]map[string][]byte) error {
	for name, data := range secrets {
		sec, err := r.getSecret(ctx, k.Namespace, name)
		if err != nil {
			return err
		}
		if err := r.writeSecret(ctx, k, sec, name, corev1.SecretTypeOpaque, data); err != nil {
			return err
		}
	}
	return nil
}
