package localfed

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// KubeVersion is the Kubernetes release whose binaries the federation runs by
// default; it must match K8S_VERSION in the Makefile.
const KubeVersion = "v1.37.2"

const (
	binKubeAPIServer         = "kube-apiserver"
	binKubeControllerManager = "kube-controller-manager"
	binKubeScheduler         = "kube-scheduler"
	binEtcd                  = "etcd"
	binKwok                  = "kwok"
)

// ResolveBinDir returns the directory of the Kubernetes binaries: dir when set,
// else $KUBEBUILDER_ASSETS, else bin/k8s/<KubeVersion> under the module root,
// found by walking up from the working directory to go.mod. It fails, naming
// `make k8s-binaries`, when a binary is missing.
func ResolveBinDir(dir string) (string, error) {
	if dir == "" {
		dir = os.Getenv("KUBEBUILDER_ASSETS")
	}
	if dir == "" {
		root, err := moduleRoot()
		if err != nil {
			return "", fmt.Errorf("locating the Kubernetes binaries (set KUBEBUILDER_ASSETS or run `make k8s-binaries` in the repository): %w", err)
		}
		dir = filepath.Join(root, "bin", "k8s", KubeVersion)
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("resolving binary directory: %w", err)
	}
	for _, name := range []string{binKubeAPIServer, binKubeControllerManager, binKubeScheduler, binEtcd, binKwok} {
		info, err := os.Stat(filepath.Join(dir, name))
		if err == nil && info.Mode().IsRegular() && info.Mode()&0o111 != 0 {
			continue
		}
		if err == nil {
			err = errors.New("not an executable file")
		}
		return "", fmt.Errorf("%s missing from %s (run `make k8s-binaries` to build it): %w", name, dir, err)
	}
	return dir, nil
}

// moduleRoot walks up from the working directory to the directory with go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("getting working directory: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		} else if !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("looking for go.mod: %w", err)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}
