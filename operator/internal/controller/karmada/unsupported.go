package karmada

import (
	"maps"
	"path"
	"slices"
	"strings"

	operatorv1alpha1 "github.com/flotilla-io/flotilla/api/operator/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/features"
)

// unsupported lists the fields a Karmada resource sets that Flotilla
// accepts, for compatibility with Karmada's operator, but does not act on,
// each with why. They are reported in the UnsupportedFields condition
// rather than silently dropped.
func unsupported(k *operatorv1alpha1.Karmada) []string {
	var out []string
	add := func(field, why string) { out = append(out, field+" ("+why+")") }
	if k.Spec.CRDTarball != nil {
		add("spec.crdTarball", "the CRDs are built into the operator and match its version")
	}
	if h := k.Spec.HostCluster; h != nil && h.SecretRef != nil {
		add("spec.hostCluster.secretRef", "the control plane runs on the operator's own cluster")
	}
	// Only the controller-manager has feature gates so far: a gate it does
	// not know is dropped, not passed to a binary that would refuse it.
	_, unknownTop := features.Known(k.Spec.FeatureGates)
	for _, g := range unknownTop {
		add("spec.featureGates."+g, "no Flotilla component has this gate")
	}
	c := k.Spec.Components
	if c == nil {
		return out
	}
	if m := c.KarmadaControllerManager; m != nil {
		_, unknown := features.Known(m.FeatureGates)
		for _, g := range unknown {
			add("spec.components.karmadaControllerManager.featureGates."+g, "Flotilla's controller-manager has no such gate")
		}
	}
	if s := c.KarmadaScheduler; s != nil {
		for _, g := range slices.Sorted(maps.Keys(s.FeatureGates)) {
			add("spec.components.karmadaScheduler.featureGates."+g, "Flotilla's scheduler has no feature gates")
		}
	}
	if c.KarmadaSearch != nil {
		add("spec.components.karmadaSearch", "Flotilla has no search component")
	}
	if c.KarmadaMetricsAdapter != nil {
		add("spec.components.karmadaMetricsAdapter", "not available in Flotilla yet")
	}
	if m := c.KarmadaControllerManager; m != nil {
		if len(m.Controllers) > 0 {
			add("spec.components.karmadaControllerManager.controllers", "Flotilla's controller-manager runs all its controllers")
		}
		if karmadaImage(m.ImageRepository) {
			add("spec.components.karmadaControllerManager.imageRepository", "a Karmada image; Flotilla's is used")
		}
	}
	if s := c.KarmadaScheduler; s != nil && karmadaImage(s.ImageRepository) {
		add("spec.components.karmadaScheduler.imageRepository", "a Karmada image; Flotilla's is used")
	}
	if w := c.KarmadaWebhook; w != nil && karmadaImage(w.ImageRepository) {
		add("spec.components.karmadaWebhook.imageRepository", "a Karmada image; Flotilla's is used")
	}
	if a := c.KarmadaAggregatedAPIServer; a != nil && karmadaImage(a.ImageRepository) {
		add("spec.components.karmadaAggregatedAPIServer.imageRepository", "a Karmada image; Flotilla's is used")
	}
	if d := c.KarmadaDescheduler; d != nil && karmadaImage(d.ImageRepository) {
		add("spec.components.karmadaDescheduler.imageRepository", "a Karmada image; Flotilla's is used")
	}
	return out
}

// karmadaImage reports whether a repository is one of Karmada's own
// component images (".../karmada-controller-manager" and so on), which a
// resource written for Karmada's operator names and which cannot run with
// Flotilla's flags.
func karmadaImage(repository string) bool {
	return strings.HasPrefix(path.Base(repository), "karmada-")
}
