package imagebuild

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/flotilla-io/flotilla/internal/release"
)

func TestConfig(t *testing.T) {
	const commit = "0123456789abcdef0123456789abcdef01234567"
	tests := []struct {
		name string
		c    release.Component
		m    Metadata
		want v1.Config
	}{
		{
			name: "operator with a revision",
			c:    release.Operator,
			m:    Metadata{Version: "v0.3.0", Revision: commit},
			want: v1.Config{
				Entrypoint: []string{"/flotilla-operator"},
				User:       "65532:65532",
				WorkingDir: "/",
				Labels: map[string]string{
					"org.opencontainers.image.title":       "flotilla-operator",
					"org.opencontainers.image.version":     "v0.3.0",
					"org.opencontainers.image.source":      "https://github.com/flotilla-io/flotilla",
					"org.opencontainers.image.revision":    commit,
					"org.opencontainers.image.licenses":    "Apache-2.0",
					"org.opencontainers.image.description": description(release.Operator),
				},
			},
		},
		{
			name: "scheduler outside a git checkout: no revision label",
			c:    release.Scheduler,
			m:    Metadata{Version: "v0.1.0"},
			want: v1.Config{
				Entrypoint: []string{"/flotilla-scheduler"},
				User:       "65532:65532",
				WorkingDir: "/",
				Labels: map[string]string{
					"org.opencontainers.image.title":       "flotilla-scheduler",
					"org.opencontainers.image.version":     "v0.1.0",
					"org.opencontainers.image.source":      "https://github.com/flotilla-io/flotilla",
					"org.opencontainers.image.licenses":    "Apache-2.0",
					"org.opencontainers.image.description": description(release.Scheduler),
				},
			},
		},
		{
			name: "flotillactl keeps its own name",
			c:    release.Flotillactl,
			m:    Metadata{Version: "v1.0.0-rc.1", Revision: commit},
			want: v1.Config{
				Entrypoint: []string{"/flotillactl"},
				User:       "65532:65532",
				WorkingDir: "/",
				Labels: map[string]string{
					"org.opencontainers.image.title":       "flotillactl",
					"org.opencontainers.image.version":     "v1.0.0-rc.1",
					"org.opencontainers.image.source":      "https://github.com/flotilla-io/flotilla",
					"org.opencontainers.image.revision":    commit,
					"org.opencontainers.image.licenses":    "Apache-2.0",
					"org.opencontainers.image.description": description(release.Flotillactl),
				},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, Config(tt.c, tt.m)); diff != "" {
				t.Errorf("Config (-want +got):\n%s", diff)
			}
		})
	}
}

func TestComponentsHaveImages(t *testing.T) {
	seen := map[string]release.Component{}
	for _, c := range Components() {
		if !c.Own() {
			t.Errorf("%s is an upstream image, not built here", c)
		}
		pkg, err := MainPackage(c)
		if err != nil {
			t.Errorf("MainPackage(%s): %v", c, err)
		}
		if other, ok := seen[pkg]; ok {
			t.Errorf("%s and %s share the main package %s", c, other, pkg)
		}
		seen[pkg] = c
		if d := description(c); d == "Flotilla "+string(c) {
			t.Errorf("%s has no description of its own", c)
		}
	}
	for _, c := range []release.Component{release.Etcd, release.KubeAPIServer, release.KubeControllerManager} {
		if _, err := MainPackage(c); err == nil {
			t.Errorf("MainPackage(%s) found a package for an upstream image", c)
		}
	}
}

func TestParsePlatforms(t *testing.T) {
	amd64 := v1.Platform{OS: "linux", Architecture: "amd64"}
	arm64 := v1.Platform{OS: "linux", Architecture: "arm64"}
	tests := []struct {
		in      string
		want    []v1.Platform
		wantErr bool
	}{
		{in: "", want: []v1.Platform{amd64}},
		{in: "linux/amd64", want: []v1.Platform{amd64}},
		{in: "linux/arm64, linux/amd64", want: []v1.Platform{arm64, amd64}},
		{in: "linux/amd64,", want: []v1.Platform{amd64}},
		{in: "linux/arm/v7", want: []v1.Platform{{OS: "linux", Architecture: "arm", Variant: "v7"}}},
		{in: "windows/amd64", wantErr: true},
		{in: "linux", wantErr: true},
		{in: "linux/amd64,linux/amd64", wantErr: true},
	}
	for _, tt := range tests {
		got, err := ParsePlatforms(tt.in)
		if (err != nil) != tt.wantErr {
			t.Errorf("ParsePlatforms(%q) error = %v, want error %t", tt.in, err, tt.wantErr)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("ParsePlatforms(%q) (-want +got):\n%s", tt.in, diff)
		}
	}
}

func TestBuildEnv(t *testing.T) {
	tests := []struct {
		p       string
		want    []string
		wantErr bool
	}{
		{p: "linux/amd64", want: []string{"CGO_ENABLED=0", "GOOS=linux", "GOARCH=amd64"}},
		{p: "linux/arm64", want: []string{"CGO_ENABLED=0", "GOOS=linux", "GOARCH=arm64"}},
		{p: "linux/arm64/v8", want: []string{"CGO_ENABLED=0", "GOOS=linux", "GOARCH=arm64"}},
		{p: "linux/arm/v7", want: []string{"CGO_ENABLED=0", "GOOS=linux", "GOARCH=arm", "GOARM=7"}},
		{p: "linux/amd64/v3", want: []string{"CGO_ENABLED=0", "GOOS=linux", "GOARCH=amd64", "GOAMD64=v3"}},
		{p: "linux/arm64/v9", wantErr: true},
	}
	for _, tt := range tests {
		p, err := v1.ParsePlatform(tt.p)
		if err != nil {
			t.Fatal(err)
		}
		got, err := buildEnv(*p)
		if (err != nil) != tt.wantErr {
			t.Errorf("buildEnv(%s) error = %v, want error %t", tt.p, err, tt.wantErr)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("buildEnv(%s) (-want +got):\n%s", tt.p, diff)
		}
	}
}

func TestBuildRefuses(t *testing.T) {
	tests := []struct {
		name string
		o    Options
	}{
		{name: "no output directory", o: Options{}},
		{name: "an upstream component", o: Options{OutDir: t.TempDir(), Components: []release.Component{release.Etcd}}},
		{name: "an unknown variant", o: Options{OutDir: t.TempDir(), Components: []release.Component{release.Scheduler},
			Platforms: []v1.Platform{{OS: "linux", Architecture: "arm64", Variant: "v9"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := Build(t.Context(), tt.o); err == nil {
				t.Error("Build succeeded")
			}
		})
	}
}
