package bundled_test

import (
	"io/fs"
	"path"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	configv1alpha1 "github.com/flotilla-io/flotilla/api/config/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/interpreter/bundled"
	"github.com/flotilla-io/flotilla/internal/interpreter/customizationtest"
	"github.com/flotilla-io/flotilla/lua"
	"github.com/flotilla-io/flotilla/lua/customizations"
)

// TestBundledCustomizations runs the golden tests of every bundled
// customization, and fails for a customization without tests or tests
// without a customization.
func TestBundledCustomizations(t *testing.T) {
	fsys := customizations.FS()
	dirs, err := bundled.Dirs(fsys)
	if err != nil {
		t.Fatal(err)
	}
	withTests := map[string]bool{}
	err = fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() && d.Name() == bundled.TestdataDir {
			withTests[path.Dir(p)] = true
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	vm := lua.New()
	t.Cleanup(vm.Close)
	for _, dir := range dirs {
		delete(withTests, dir)
		t.Run(dir, func(t *testing.T) {
			customizationtest.Test(t, fsys, dir, vm)
		})
	}
	for dir := range withTests {
		t.Errorf("%s has testdata but no customization YAML", dir)
	}
}

// TestLoadEmbedded checks that the embedded customizations load into one
// layer.
func TestLoadEmbedded(t *testing.T) {
	vm := lua.New()
	t.Cleanup(vm.Close)
	set, err := bundled.New(customizations.FS(), vm)
	if err != nil {
		t.Fatal(err)
	}
	dirs, err := bundled.Dirs(customizations.FS())
	if err != nil {
		t.Fatal(err)
	}
	if set.Kinds() == 0 && len(dirs) > 0 {
		t.Errorf("loaded no kinds from %d customization directories", len(dirs))
	}
}

// TestBundledOperations checks that the bundled rules answer what Karmada's
// bundled customizations answer for kinds Karmada users still run: the
// older Flux versions next to the newer ones, and the replica and retention
// operations of workloads.
func TestBundledOperations(t *testing.T) {
	vm := lua.New()
	t.Cleanup(vm.Close)
	set, err := bundled.New(customizations.FS(), vm)
	if err != nil {
		t.Fatal(err)
	}
	const (
		replica = configv1alpha1.InterpreterOperationInterpretReplica
		revise  = configv1alpha1.InterpreterOperationReviseReplica
		retain  = configv1alpha1.InterpreterOperationRetain
		status  = configv1alpha1.InterpreterOperationInterpretStatus
		aggr    = configv1alpha1.InterpreterOperationAggregateStatus
		health  = configv1alpha1.InterpreterOperationInterpretHealth
		depends = configv1alpha1.InterpreterOperationInterpretDependency
	)
	fluxOps := []configv1alpha1.InterpreterOperation{retain, status, aggr, health, depends}
	tests := []struct {
		apiVersion, kind string
		ops              []configv1alpha1.InterpreterOperation
	}{
		{"helm.toolkit.fluxcd.io/v2beta1", "HelmRelease", fluxOps},
		{"helm.toolkit.fluxcd.io/v2", "HelmRelease", fluxOps},
		{"source.toolkit.fluxcd.io/v1beta2", "Bucket", fluxOps},
		{"source.toolkit.fluxcd.io/v1beta2", "HelmChart", fluxOps},
		{"source.toolkit.fluxcd.io/v1beta2", "HelmRepository", fluxOps},
		{"source.toolkit.fluxcd.io/v1beta2", "OCIRepository", fluxOps},
		{"source.toolkit.fluxcd.io/v1", "GitRepository", fluxOps},
		{"kustomize.toolkit.fluxcd.io/v1", "Kustomization", fluxOps},
		{"apps.kruise.io/v1alpha1", "BroadcastJob", []configv1alpha1.InterpreterOperation{replica, revise, retain}},
		{"apps.kruise.io/v1alpha1", "SidecarSet", []configv1alpha1.InterpreterOperation{replica, retain}},
		{"argoproj.io/v1alpha1", "Workflow", []configv1alpha1.InterpreterOperation{replica, revise, retain}},
		{"ray.io/v1", "RayService", []configv1alpha1.InterpreterOperation{replica, revise}},
		{"flink.apache.org/v1beta1", "FlinkDeployment", []configv1alpha1.InterpreterOperation{replica}},
	}
	for _, tt := range tests {
		gvk := schema.FromAPIVersionAndKind(tt.apiVersion, tt.kind)
		for _, op := range tt.ops {
			if !set.HookEnabled(gvk, op) {
				t.Errorf("%s %s: no bundled %s rule", tt.apiVersion, tt.kind, op)
			}
		}
	}
}
