package bundle

import (
	"bytes"
	"encoding/base64"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	ggcrname "github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/operator-framework/api/pkg/manifests"
	"github.com/operator-framework/api/pkg/validation"
	"github.com/operator-framework/api/pkg/validation/errors"
	interfaces "github.com/operator-framework/api/pkg/validation/interfaces"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/flotilla-io/flotilla/internal/imagebuild"
	"github.com/flotilla-io/flotilla/internal/release"
)

const root = "../.."

// k8sVersion is the Kubernetes release the deprecated-APIs validator
// checks the bundle against: the one the project builds and tests on.
const k8sVersion = "1.37.2"

// expectedWarnings are the validator warnings the bundle keeps, by a
// substring of their message, each with the reason it stays.
var expectedWarnings = map[string]string{
	// The operator is alpha, and its channel says so; OperatorHub's
	// convention (candidate, fast, stable) is a recommendation, and
	// `make bundle CHANNELS=stable-v0` follows it once there is a stable
	// release.
	`channel(s) ["alpha"] are not following the recommended naming convention`: "alpha channel",
	// The operator records events through events.k8s.io/v1 (GA since
	// 1.19), and its RBAC grants events in that group. RBAC rules name no
	// version, so the validator cannot tell v1 from the v1beta1 that 1.25
	// removed, and warns about any rule on the resource.
	`APIs which were deprecated and removed in v1.25. More info: https://kubernetes.io/docs/reference/using-api/deprecation-guide/#v1-25. Migrate the API(s) for events:`: "events.k8s.io RBAC",
}

// TestBundleValidators runs the validators OperatorHub runs on a bundle
// (`operator-sdk bundle validate --select-optional suite=operatorframework`):
// the default ones, OperatorHub's (v2, with the standard categories and
// capabilities), the good practices, and the deprecated APIs for the
// Kubernetes version the project runs on. Errors fail; warnings are logged
// and must be in expectedWarnings.
func TestBundleValidators(t *testing.T) {
	b, err := manifests.GetBundleFromDir(filepath.Join(root, "bundle"))
	if err != nil {
		t.Fatal(err)
	}
	if b.CSV == nil || b.CSV.Name != CSVName(release.Version) {
		t.Fatalf("bundle/ holds %v, want %s", b.CSV, CSVName(release.Version))
	}
	if b.Package != Package || strings.Join(b.Channels, ",") != "alpha" || b.DefaultChannel != "alpha" {
		t.Errorf("annotations: package %q, channels %q, default %q", b.Package, b.Channels, b.DefaultChannel)
	}
	suites := append(interfaces.Validators{}, validation.DefaultBundleValidators...)
	suites = append(suites,
		validation.OperatorHubV2Validator,
		validation.StandardCategoriesValidator,
		validation.StandardCapabilitiesValidator,
		validation.GoodPracticesValidator,
		validation.AlphaDeprecatedAPIsValidator,
	)
	objs := append(b.ObjectsToValidate(), map[string]string{"k8s-version": k8sVersion})
	seen := sets.New[string]()
	for _, r := range suites.Validate(objs...) {
		for _, e := range r.Errors {
			t.Errorf("%s: %v", r.Name, e)
		}
		for _, w := range r.Warnings {
			t.Logf("warning, %s: %v", r.Name, w)
			if !expectedWarning(w, seen) {
				t.Errorf("unexpected warning from %s: %v", r.Name, w)
			}
		}
	}
	for w := range expectedWarnings {
		if !seen.Has(w) {
			t.Errorf("the warning %q is gone: remove it from expectedWarnings", w)
		}
	}
}

func expectedWarning(w errors.Error, seen sets.Set[string]) bool {
	for sub := range expectedWarnings {
		if strings.Contains(w.Error(), sub) {
			seen.Insert(sub)
			return true
		}
	}
	return false
}

// TestBundleIsCurrent regenerates the bundle in memory and compares it with
// bundle/, as `make verify` does on disk.
func TestBundleIsCurrent(t *testing.T) {
	b, err := Build(Options{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	files, err := b.Files()
	if err != nil {
		t.Fatal(err)
	}
	onDisk := readDir(t, filepath.Join(root, "bundle"))
	for name, data := range files {
		if !bytes.Equal(onDisk[name], data) {
			t.Errorf("bundle/%s is out of date: run make bundle", name)
		}
	}
	for name := range onDisk {
		if _, ok := files[name]; !ok {
			t.Errorf("bundle/%s is not generated any more: run make bundle", name)
		}
	}
	dockerfile, err := os.ReadFile(filepath.Join(root, "bundle.Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(dockerfile, b.Dockerfile("bundle")) {
		t.Error("bundle.Dockerfile is out of date: run make bundle")
	}
}

// TestCSV checks what hack/bundle adds to the base.
func TestCSV(t *testing.T) {
	b, err := Build(Options{Root: root, Version: "v0.3.1", Previous: "v0.3.0", Registry: "registry.example.com/mirror"})
	if err != nil {
		t.Fatal(err)
	}
	csv := b.CSV
	if csv.Name != "flotilla-operator.v0.3.1" || csv.Spec.Version.String() != "0.3.1" || csv.Spec.Replaces != "flotilla-operator.v0.3.0" {
		t.Errorf("name %s, version %s, replaces %s", csv.Name, csv.Spec.Version, csv.Spec.Replaces)
	}
	if got := csv.Annotations["olm.skipRange"]; got != ">=0.0.0 <0.3.1" {
		t.Errorf("olm.skipRange %q", got)
	}
	if _, ok := csv.Annotations["createdAt"]; ok {
		t.Error("createdAt is set though not asked for")
	}
	const image = "registry.example.com/mirror/operator:v0.3.1"
	if got := csv.Annotations["containerImage"]; got != image {
		t.Errorf("containerImage %q", got)
	}
	deps := csv.Spec.InstallStrategy.StrategySpec.DeploymentSpecs
	if len(deps) != 1 {
		t.Fatalf("%d deployments", len(deps))
	}
	pod := deps[0].Spec.Template.Spec
	if pod.Containers[0].Image != image {
		t.Errorf("the Deployment runs %s", pod.Containers[0].Image)
	}
	if !strings.Contains(strings.Join(pod.Containers[0].Args, " "), "--watch-namespace=$(WATCH_NAMESPACE)") {
		t.Errorf("args %q do not pass the OperatorGroup's namespace", pod.Containers[0].Args)
	}
	sa := pod.ServiceAccountName
	perms := csv.Spec.InstallStrategy.StrategySpec
	if len(perms.ClusterPermissions) != 1 || perms.ClusterPermissions[0].ServiceAccountName != sa ||
		len(perms.Permissions) != 1 || perms.Permissions[0].ServiceAccountName != sa {
		t.Errorf("permissions are not those of the Deployment's ServiceAccount %s: %+v", sa, perms)
	}
	examples := csv.Annotations["alm-examples"]
	if !strings.HasPrefix(examples, "[") || !strings.Contains(examples, `"kind": "Karmada"`) {
		t.Errorf("alm-examples: %s", examples)
	}
	for _, extra := range b.Extra {
		if extra.GetNamespace() != "" {
			t.Errorf("%s %s keeps namespace %s", extra.GetKind(), extra.GetName(), extra.GetNamespace())
		}
		if extra.GetKind() == "ServiceAccount" || strings.HasSuffix(extra.GetKind(), "Binding") && extra.GetName() == sa {
			t.Errorf("%s %s is in the bundle; OLM makes it from the CSV", extra.GetKind(), extra.GetName())
		}
	}
	b2, err := Build(Options{Root: root, Version: "v0.3.1", Previous: "v0.3.0", Registry: "registry.example.com/mirror", CreatedAt: mustTime(t, "2026-01-02T03:04:05Z")})
	if err != nil {
		t.Fatal(err)
	}
	if got := b2.CSV.Annotations["createdAt"]; got != "2026-01-02T03:04:05Z" {
		t.Errorf("createdAt %q", got)
	}
	if _, err := Build(Options{Root: root, Version: "v0.3.0", Previous: "v0.3.1"}); err == nil {
		t.Error("a bundle replacing a newer version was built")
	}
}

// TestIcon checks that the CSV base carries config/manifests/icon.svg.
func TestIcon(t *testing.T) {
	svg, err := os.ReadFile(filepath.Join(root, "config/manifests/icon.svg"))
	if err != nil {
		t.Fatal(err)
	}
	csv, err := readCSVBase(filepath.Join(root, csvBase))
	if err != nil {
		t.Fatal(err)
	}
	if len(csv.Spec.Icon) != 1 || csv.Spec.Icon[0].MediaType != "image/svg+xml" || csv.Spec.Icon[0].Data != base64.StdEncoding.EncodeToString(svg) {
		t.Error("the CSV base's icon is not config/manifests/icon.svg; base64 -w0 it into spec.icon")
	}
}

// TestBundleImage builds the bundle image as `make bundle-image` does,
// loads it back from its OCI layout and compares it with bundle/.
func TestBundleImage(t *testing.T) {
	dir := filepath.Join(root, "bundle")
	img, err := Image(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "bundle")
	const ref = "ghcr.io/flotilla-io/operator-bundle:test"
	if err := WriteLayout(out, ref, img); err != nil {
		t.Fatal(err)
	}
	loaded, err := ReadLayout(out, ref)
	if err != nil {
		t.Fatal(err)
	}
	want, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	if got, err := loaded.Digest(); err != nil || got != want {
		t.Fatalf("digest %s after loading, %s built (%v)", got, want, err)
	}
	again, err := Image(dir)
	if err != nil {
		t.Fatal(err)
	}
	if d, _ := again.Digest(); d != want {
		t.Errorf("the same bundle made two images, %s and %s", want, d)
	}

	files, err := ImageFiles(loaded)
	if err != nil {
		t.Fatal(err)
	}
	onDisk := readDir(t, dir)
	if len(files) != len(onDisk) {
		t.Errorf("%d files in the image, %d in bundle/", len(files), len(onDisk))
	}
	for name, data := range onDisk {
		if !bytes.Equal(files[name], data) {
			t.Errorf("/%s in the image differs from bundle/%s", name, name)
		}
	}
	layers, err := loaded.Layers()
	if err != nil {
		t.Fatal(err)
	}
	if len(layers) != 3 {
		t.Errorf("%d layers, want manifests, metadata and tests/scorecard", len(layers))
	}
	cfg, err := loaded.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	b, err := manifests.GetBundleFromDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	labels := cfg.Config.Labels
	if labels["operators.operatorframework.io.bundle.package.v1"] != b.Package ||
		labels["operators.operatorframework.io.bundle.channels.v1"] != strings.Join(b.Channels, ",") ||
		labels["operators.operatorframework.io.bundle.mediatype.v1"] != "registry+v1" ||
		labels["operators.operatorframework.io.bundle.manifests.v1"] != "manifests/" {
		t.Errorf("labels %v", labels)
	}
	if len(cfg.Config.Entrypoint) != 0 || len(cfg.Config.Cmd) != 0 {
		t.Errorf("a bundle image runs nothing; config %+v", cfg.Config)
	}
}

// readDir reads every file under dir by its slash-separated relative path.
func readDir(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		files[filepath.ToSlash(rel)] = data
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func mustTime(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestBundleImagePush pushes the bundle image as `make bundle-push` does,
// to a registry in this process, and pulls it back.
func TestBundleImagePush(t *testing.T) {
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	img, err := Image(filepath.Join(root, "bundle"))
	if err != nil {
		t.Fatal(err)
	}
	ref, err := ggcrname.ParseReference(strings.TrimPrefix(srv.URL, "http://") + "/flotilla-io/" + BundleRepository + ":" + release.Version)
	if err != nil {
		t.Fatal(err)
	}
	if err := imagebuild.Push(t.Context(), ref, imagebuild.Artifact{Image: img}); err != nil {
		t.Fatal(err)
	}
	pulled, err := remote.Image(ref)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := img.Digest()
	if got, err := pulled.Digest(); err != nil || got != want {
		t.Errorf("pulled %s, pushed %s (%v)", got, want, err)
	}
}
