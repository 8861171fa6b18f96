package detector

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// SkippedAPIs are API groups, group versions and kinds whose objects the
// detector never propagates. The zero value skips nothing.
type SkippedAPIs struct {
	groups        map[string]bool
	groupVersions map[schema.GroupVersion]bool
	// kinds are keyed with the kind in lower case: kinds in the flag are
	// case-insensitive.
	kinds map[schema.GroupVersionKind]bool
}

// ParseSkippedAPIs parses Karmada's --skipped-propagating-apis syntax:
// semicolon-separated entries, each "<group>" (networking.k8s.io),
// "<group>/<version>" (networking.k8s.io/v1beta1) or
// "<group>/<version>/<kind>,<kind>" (networking.k8s.io/v1/Ingress,IngressClass;
// kinds are case-insensitive). The core group is empty: "/v1/Pod,Secret".
func ParseSkippedAPIs(s string) (*SkippedAPIs, error) {
	out := &SkippedAPIs{groups: map[string]bool{}, groupVersions: map[schema.GroupVersion]bool{}, kinds: map[schema.GroupVersionKind]bool{}}
	for entry := range strings.SplitSeq(s, ";") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		parts := strings.Split(entry, "/")
		switch len(parts) {
		case 1:
			out.groups[parts[0]] = true
		case 2:
			if parts[1] == "" {
				return nil, fmt.Errorf("skipped APIs: %q has an empty version", entry)
			}
			out.groupVersions[schema.GroupVersion{Group: parts[0], Version: parts[1]}] = true
		case 3:
			if parts[1] == "" {
				return nil, fmt.Errorf("skipped APIs: %q has an empty version", entry)
			}
			for kind := range strings.SplitSeq(parts[2], ",") {
				if kind = strings.TrimSpace(kind); kind == "" {
					return nil, fmt.Errorf("skipped APIs: %q has an empty kind", entry)
				}
				out.kinds[schema.GroupVersionKind{Group: parts[0], Version: parts[1], Kind: strings.ToLower(kind)}] = true
			}
		default:
			return nil, fmt.Errorf("skipped APIs: %q is not <group>, <group>/<version> or <group>/<version>/<kinds>", entry)
		}
	}
	return out, nil
}

// Skips reports whether objects of gvk are skipped.
func (s *SkippedAPIs) Skips(gvk schema.GroupVersionKind) bool {
	if s == nil {
		return false
	}
	lower := gvk
	lower.Kind = strings.ToLower(gvk.Kind)
	return s.groups[gvk.Group] || s.groupVersions[gvk.GroupVersion()] || s.kinds[lower]
}

// karmadaGroups are the API groups of Karmada itself, served by the
// control plane: they describe the federation rather than workloads. Other
// groups ending in .karmada.io are users' own and propagate as any other;
// so do multicluster.x-k8s.io ServiceExports and ServiceImports, which the
// multi-cluster service flow propagates with policies.
var karmadaGroups = map[string]bool{
	"cluster.karmada.io":     true,
	"policy.karmada.io":      true,
	"work.karmada.io":        true,
	"config.karmada.io":      true,
	"networking.karmada.io":  true,
	"autoscaling.karmada.io": true,
	"remedy.karmada.io":      true,
	"apps.karmada.io":        true,
}

// builtinSkipped: what is never propagated, whatever the flags say. Exactly
// Karmada's list: its own groups, events (events.k8s.io and the core
// Event) and coordination.k8s.io/v1 Leases, which each cluster makes for
// itself.
func builtinSkipped(gvk schema.GroupVersionKind) bool {
	switch {
	case karmadaGroups[gvk.Group], gvk.Group == "events.k8s.io":
		return true
	case gvk.Group == "" && gvk.Kind == "Event":
		return true
	case gvk.Group == "coordination.k8s.io" && gvk.Version == "v1" && gvk.Kind == "Lease":
		return true
	}
	return false
}
