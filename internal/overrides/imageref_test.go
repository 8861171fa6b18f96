package overrides

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const (
	digestA = "sha256:" + "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	digestB = "sha256:" + "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210"
)

func TestParseImage(t *testing.T) {
	tests := []struct {
		image string
		want  imageRef
	}{
		{"nginx", imageRef{repository: "nginx"}},
		{"nginx:1.25", imageRef{repository: "nginx", tag: "1.25"}},
		{"library/nginx:1.25", imageRef{repository: "library/nginx", tag: "1.25"}},
		{"docker.io/library/nginx:1.25", imageRef{registry: "docker.io", repository: "library/nginx", tag: "1.25"}},
		{"localhost:5000/nginx:1.0", imageRef{registry: "localhost:5000", repository: "nginx", tag: "1.0"}},
		{"localhost:5000/nginx", imageRef{registry: "localhost:5000", repository: "nginx"}},
		{"localhost/nginx", imageRef{registry: "localhost", repository: "nginx"}},
		{"nginx@" + digestA, imageRef{repository: "nginx", digest: digestA}},
		{"nginx:1.25@" + digestA, imageRef{repository: "nginx", tag: "1.25", digest: digestA}},
		{"my.registry:5000/nginx@" + digestA, imageRef{registry: "my.registry:5000", repository: "nginx", digest: digestA}},
		{"ghcr.io/org/team/app:v1", imageRef{registry: "ghcr.io", repository: "org/team/app", tag: "v1"}},
		{"registry.k8s.io/kube-apiserver:v1.30.0", imageRef{registry: "registry.k8s.io", repository: "kube-apiserver", tag: "v1.30.0"}},
		{"test-repo/myapp:1.0.0", imageRef{repository: "test-repo/myapp", tag: "1.0.0"}},
		{"quay.io/a_b/c__d-e.f:Tag_1.x-y", imageRef{registry: "quay.io", repository: "a_b/c__d-e.f", tag: "Tag_1.x-y"}},
	}
	for _, tt := range tests {
		t.Run(tt.image, func(t *testing.T) {
			got, err := parseImage(tt.image)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(imageRef{})); diff != "" {
				t.Errorf("parse (-want +got):\n%s", diff)
			}
			if s := got.String(); s != tt.image {
				t.Errorf("String() = %q, want the input back", s)
			}
		})
	}
}

func TestParseImageErrors(t *testing.T) {
	for _, image := range []string{
		"",
		"nginx:",
		"nginx:-1",
		"nginx@sha256",
		"nginx@sha256:abc",
		"Nginx:1.0",
		"docker.io/",
		"docker.io//nginx",
		"nginx:1.0:2",
		"-nginx",
		"ngi nx",
		"nginx:" + strings.Repeat("a", 129),
	} {
		t.Run(image, func(t *testing.T) {
			if got, err := parseImage(image); err == nil {
				t.Errorf("parseImage(%q) = %+v, want an error", image, got)
			}
		})
	}
}
