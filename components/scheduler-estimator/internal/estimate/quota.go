package estimate

import (
	"math"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// quotaShare is what one set (or one replica) of the answer takes from a
// quota: demand's requests, replicas times.
type quotaShare struct {
	demand   *demand
	replicas int64
}

// quotaLimit returns how many more sets of shares the quotas admit, after the
// assumed shares (already placed, not yet running) are taken from what is
// left; math.MaxInt64 when no quota constrains them.
//
// A quota counts with status.hard minus status.used, the quota controller's
// view, for the resources a request can say something about: cpu and memory
// (bare or requests.), ephemeral-storage, requests.<huge pages or extended
// resource>, and pods (each replica is one pod). Limits and object counts
// are left out: a request does not carry them.
func quotaLimit(quotas []*corev1.ResourceQuota, shares, assumed []quotaShare) int64 {
	limit := int64(math.MaxInt64)
	for _, q := range quotas {
		for hardName, hard := range q.Status.Hard {
			name, ok := quotaResource(hardName)
			if !ok {
				continue
			}
			used := q.Status.Used[hardName]
			free := quotaAmount(name, hard) - quotaAmount(name, used)
			for _, s := range assumed {
				if scopeMatches(q, s.demand.priorityClass) {
					free -= mulSat(shareAmount(name, s.demand), s.replicas)
				}
			}
			var need int64
			for _, s := range shares {
				if scopeMatches(q, s.demand.priorityClass) {
					need = addSat(need, mulSat(shareAmount(name, s.demand), s.replicas))
				}
			}
			if need <= 0 {
				continue
			}
			limit = min(limit, max(free, 0)/need)
		}
	}
	return limit
}

// quotaResource maps a quota's resource name to the requested resource it
// counts; ok is false for what a request cannot tell (limits, object counts,
// storage classes).
func quotaResource(hard corev1.ResourceName) (corev1.ResourceName, bool) {
	switch hard {
	case corev1.ResourceCPU, corev1.ResourceRequestsCPU:
		return corev1.ResourceCPU, true
	case corev1.ResourceMemory, corev1.ResourceRequestsMemory:
		return corev1.ResourceMemory, true
	case corev1.ResourceEphemeralStorage, corev1.ResourceRequestsEphemeralStorage:
		return corev1.ResourceEphemeralStorage, true
	case corev1.ResourcePods, "count/pods":
		return corev1.ResourcePods, true
	}
	if rest, ok := strings.CutPrefix(string(hard), corev1.DefaultResourceRequestsPrefix); ok {
		return corev1.ResourceName(rest), true
	}
	return "", false
}

func quotaAmount(name corev1.ResourceName, q resource.Quantity) int64 {
	if name == corev1.ResourceCPU {
		return q.MilliValue()
	}
	return q.Value()
}

// shareAmount is what one replica of dm counts against name.
func shareAmount(name corev1.ResourceName, dm *demand) int64 {
	if name == corev1.ResourcePods {
		return 1
	}
	return amount(name, dm.requests)
}

// scopeMatches reports whether a pod of priorityClass is counted by q: every
// scope of q must match (spec.scopes and spec.scopeSelector together).
func scopeMatches(q *corev1.ResourceQuota, priorityClass string) bool {
	for _, s := range q.Spec.Scopes {
		if !scopeRequirementMatches(corev1.ScopedResourceSelectorRequirement{ScopeName: s, Operator: corev1.ScopeSelectorOpExists}, priorityClass) {
			return false
		}
	}
	if q.Spec.ScopeSelector != nil {
		for _, r := range q.Spec.ScopeSelector.MatchExpressions {
			if !scopeRequirementMatches(r, priorityClass) {
				return false
			}
		}
	}
	return true
}

func scopeRequirementMatches(r corev1.ScopedResourceSelectorRequirement, priorityClass string) bool {
	if r.ScopeName != corev1.ResourceQuotaScopePriorityClass {
		// Terminating, BestEffort, CrossNamespacePodAffinity and their
		// opposites depend on what a request does not carry (active
		// deadline, limits, pod affinity): such a quota is left out rather
		// than guessed, as Karmada's estimator does.
		return false
	}
	switch r.Operator {
	case corev1.ScopeSelectorOpExists:
		return priorityClass != ""
	case corev1.ScopeSelectorOpDoesNotExist:
		return priorityClass == ""
	case corev1.ScopeSelectorOpIn:
		return priorityClass != "" && slices.Contains(r.Values, priorityClass)
	case corev1.ScopeSelectorOpNotIn:
		return priorityClass == "" || !slices.Contains(r.Values, priorityClass)
	}
	return false
}

// mulSat multiplies without overflowing: a product beyond int64 is
// math.MaxInt64, which no quota or node holds anyway.
func mulSat(a, b int64) int64 {
	if a == 0 || b == 0 {
		return 0
	}
	if a > math.MaxInt64/b {
		return math.MaxInt64
	}
	return a * b
}

func addSat(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}
