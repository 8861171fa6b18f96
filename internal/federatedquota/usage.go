// Package federatedquota is the arithmetic of FederatedResourceQuota
// enforcement, shared by the controller that writes a quota's
// status.overallUsed and the webhook that refuses bindings over it: what a
// ResourceBinding's scheduled replicas request, and how that counts
// against a quota's limits.
package federatedquota

import (
	"errors"
	"net/http"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
)

// BindingUsage is what a binding's scheduled replicas request in all
// clusters together: replicas times the per-replica request, per component
// for multi-component workloads. An unscheduled binding uses nothing.
func BindingUsage(spec *workv1alpha2.ResourceBindingSpec) corev1.ResourceList {
	usage := corev1.ResourceList{}
	add := func(requests corev1.ResourceList, replicas int32) {
		if replicas <= 0 {
			return
		}
		for name, q := range requests {
			if q.IsZero() {
				continue
			}
			more := q.DeepCopy()
			more.Mul(int64(replicas))
			total := usage[name]
			total.Add(more)
			usage[name] = total
		}
	}
	requirements := map[string]corev1.ResourceList{}
	for _, c := range spec.Components {
		if c.ReplicaRequirements != nil {
			requirements[c.Name] = c.ReplicaRequirements.ResourceRequest
		}
	}
	for _, target := range spec.Clusters {
		if len(target.Components) > 0 {
			for _, c := range target.Components {
				add(requirements[c.Name], c.Replicas)
			}
			continue
		}
		if spec.ReplicaRequirements != nil {
			add(spec.ReplicaRequirements.ResourceRequest, target.Replicas)
		}
	}
	return usage
}

// Requested is the resource a quota limit counts: a limit on
// "requests.cpu" counts the same requests as one on "cpu", since a binding
// only carries requests.
func Requested(limit corev1.ResourceName) corev1.ResourceName {
	return corev1.ResourceName(strings.TrimPrefix(string(limit), "requests."))
}

// Used is the usage of bindings counted against the limits of overall,
// keyed as overall is: a limit nothing requests is left out, as Karmada
// leaves it out of status.overallUsed.
func Used(bindings []workv1alpha2.ResourceBinding, overall corev1.ResourceList) corev1.ResourceList {
	total := corev1.ResourceList{}
	for i := range bindings {
		for name, q := range BindingUsage(&bindings[i].Spec) {
			sum := total[name]
			sum.Add(q)
			total[name] = sum
		}
	}
	used := corev1.ResourceList{}
	for limit := range overall {
		if q, ok := total[Requested(limit)]; ok {
			used[limit] = q
		}
	}
	return used
}

// ExceededReason is the reason of the 403 status with which the webhook
// refuses a binding over a quota, Karmada's: the scheduler tells a refusal
// over quota from other failed writes by it.
const ExceededReason metav1.StatusReason = "QuotaExceeded"

// IsExceeded reports whether err is the webhook's refusal of a binding
// over a FederatedResourceQuota.
func IsExceeded(err error) bool {
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return false
	}
	s := status.Status()
	return s.Code == http.StatusForbidden && s.Reason == ExceededReason
}
