package karmada

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	operatorv1alpha1 "github.com/flotilla-io/flotilla/api/operator/v1alpha1"
)

// maxInstanceName keeps every release name within Helm's 53 characters:
// the longest component suffix is "-kube-controller-manager".
const maxInstanceName = 53 - len("-kube-controller-manager")

var flagName = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*[a-z0-9]$`)

// validate checks what the CRD's schema and CEL rules cannot: names, CIDRs,
// SANs, URLs and flag names. Every error names its field.
func validate(k *operatorv1alpha1.Karmada) field.ErrorList {
	var errs field.ErrorList
	if len(k.Name) > maxInstanceName {
		errs = append(errs, field.TooLong(field.NewPath("metadata", "name"), k.Name, maxInstanceName))
	}
	spec := field.NewPath("spec")
	if k.Spec.CertificateIssuer != nil && k.Spec.CustomCertificate != nil && k.Spec.CustomCertificate.APIServerCACert != nil {
		errs = append(errs, field.Forbidden(spec.Child("customCertificate", "apiServerCACert"), "cannot be set with spec.certificateIssuer: the issuer signs every certificate"))
	}
	if r := k.Spec.PrivateRegistry; r != nil {
		if r.Registry == "" || strings.Contains(r.Registry, "://") || strings.ContainsAny(r.Registry, " @") {
			errs = append(errs, field.Invalid(spec.Child("privateRegistry", "registry"), r.Registry, "must be a registry host with an optional path, without a scheme"))
		}
	}
	if h := k.Spec.HostCluster; h != nil && h.Networking != nil && h.Networking.DNSDomain != nil {
		if msgs := validation.IsDNS1123Subdomain(*h.Networking.DNSDomain); len(msgs) > 0 {
			errs = append(errs, field.Invalid(spec.Child("hostCluster", "networking", "dnsDomain"), *h.Networking.DNSDomain, strings.Join(msgs, "; ")))
		}
	}
	return append(errs, validateComponents(k.Spec.Components, spec.Child("components"))...)
}

// validateComponents checks spec.components.
func validateComponents(c *operatorv1alpha1.KarmadaComponents, comps *field.Path) field.ErrorList {
	var errs field.ErrorList
	if c == nil {
		return nil
	}
	if c.Etcd != nil && c.Etcd.Local != nil {
		local := comps.Child("etcd", "local")
		errs = append(errs, validateSANs(local.Child("serverCertSANs"), c.Etcd.Local.ServerCertSANs)...)
		errs = append(errs, validateSANs(local.Child("peerCertSANs"), c.Etcd.Local.PeerCertSANs)...)
	}
	if c.Etcd != nil && c.Etcd.External != nil {
		ext := comps.Child("etcd", "external")
		for i, e := range c.Etcd.External.Endpoints {
			u, err := url.Parse(e)
			if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
				errs = append(errs, field.Invalid(ext.Child("endpoints").Index(i), e, "must be an http or https URL with a host, e.g. https://etcd-0.example:2379"))
			}
		}
		if c.Etcd.External.SecretRef.Name == "" {
			errs = append(errs, field.Required(ext.Child("secretRef", "name"), "a Secret with ca.crt, tls.crt and tls.key for etcd"))
		}
	}
	if a := c.KarmadaAPIServer; a != nil {
		path := comps.Child("karmadaAPIServer")
		if a.ServiceSubnet != nil {
			for i, cidr := range strings.Split(*a.ServiceSubnet, ",") {
				if _, _, err := net.ParseCIDR(strings.TrimSpace(cidr)); err != nil || i > 1 {
					errs = append(errs, field.Invalid(path.Child("serviceSubnet"), *a.ServiceSubnet, "must be a CIDR, or two (IPv4 and IPv6) separated by a comma"))
					break
				}
			}
		}
		errs = append(errs, validateSANs(path.Child("certSANs"), a.CertSANs)...)
		errs = append(errs, validateExtraArgs(path.Child("extraArgs"), a.ExtraArgs)...)
	}
	if a := c.KarmadaAggregatedAPIServer; a != nil {
		path := comps.Child("karmadaAggregatedAPIServer")
		errs = append(errs, validateSANs(path.Child("certSANs"), a.CertSANs)...)
		errs = append(errs, validateExtraArgs(path.Child("extraArgs"), a.ExtraArgs)...)
	}
	if m := c.KubeControllerManager; m != nil {
		errs = append(errs, validateExtraArgs(comps.Child("kubeControllerManager", "extraArgs"), m.ExtraArgs)...)
	}
	if m := c.KarmadaControllerManager; m != nil {
		errs = append(errs, validateExtraArgs(comps.Child("karmadaControllerManager", "extraArgs"), m.ExtraArgs)...)
	}
	if s := c.KarmadaScheduler; s != nil {
		errs = append(errs, validateExtraArgs(comps.Child("karmadaScheduler", "extraArgs"), s.ExtraArgs)...)
	}
	if w := c.KarmadaWebhook; w != nil {
		errs = append(errs, validateExtraArgs(comps.Child("karmadaWebhook", "extraArgs"), w.ExtraArgs)...)
	}
	if d := c.KarmadaDescheduler; d != nil {
		path := comps.Child("karmadaDescheduler", "extraArgs")
		errs = append(errs, validateExtraArgs(path, d.ExtraArgs)...)
		errs = append(errs, validateDeschedulerDurations(path, d.ExtraArgs)...)
	}
	return errs
}

// validateDeschedulerDurations checks the descheduler's two durations as
// the descheduler does when it starts: a value it refuses would otherwise
// show only as a pod restarting, the reason in its log.
func validateDeschedulerDurations(path *field.Path, args map[string]string) field.ErrorList {
	var errs field.ErrorList
	for _, name := range []string{"descheduling-interval", "unschedulable-threshold"} {
		v, ok := args[name]
		if !ok {
			continue
		}
		d, err := time.ParseDuration(v)
		switch {
		case err != nil:
			errs = append(errs, field.Invalid(path.Key(name), v, "must be a duration, e.g. \"2m\" or \"90s\""))
		case name == "descheduling-interval" && d <= 0:
			errs = append(errs, field.Invalid(path.Key(name), v, "must be positive"))
		case d < 0:
			errs = append(errs, field.Invalid(path.Key(name), v, "must not be negative"))
		}
	}
	return errs
}

func validateSANs(path *field.Path, sans []string) field.ErrorList {
	var errs field.ErrorList
	for i, san := range sans {
		if net.ParseIP(san) != nil {
			continue
		}
		name := strings.TrimPrefix(san, "*.")
		if msgs := validation.IsDNS1123Subdomain(name); len(msgs) > 0 {
			errs = append(errs, field.Invalid(path.Index(i), san, "must be an IP address or a DNS name: "+strings.Join(msgs, "; ")))
		}
	}
	return errs
}

func validateExtraArgs(path *field.Path, args map[string]string) field.ErrorList {
	var errs field.ErrorList
	for _, name := range sortedKeys(args) {
		if !flagName.MatchString(name) {
			errs = append(errs, field.Invalid(path.Key(name), name, "must be a flag name without leading dashes, e.g. \"v\" or \"audit-log-path\""))
		}
	}
	return errs
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// fieldErr is an error caused by one field of the spec, reported as a
// validation failure rather than a failed phase.
type fieldErr struct {
	path string
	err  error
}

func (e *fieldErr) Error() string { return fmt.Sprintf("%s: %v", e.path, e.err) }
func (e *fieldErr) Unwrap() error { return e.err }

func fieldError(path string, err error) error { return &fieldErr{path: path, err: err} }

func isFieldError(err error) bool {
	var fe *fieldErr
	return errors.As(err, &fe)
}
