// Package versions is the operator's version table: for every Flotilla
// release it can run, the Kubernetes and etcd versions that go with it, and
// the images of each component. An unpinned instance runs the operator's
// own release; a pinned one runs the release it names.
package versions

import (
	"fmt"
	"slices"
	"strings"

	utilversion "k8s.io/apimachinery/pkg/util/version"

	"github.com/flotilla-io/flotilla/internal/release"
)

// Release is one row of the table.
type Release struct {
	// Version of Flotilla, e.g. "v0.1.0".
	Version string
	// Kubernetes is the version of kube-apiserver and
	// kube-controller-manager, e.g. "v1.37.2".
	Kubernetes string
	// Etcd is the tag of the etcd image, e.g. "3.6.16-0".
	Etcd string
}

// Image is the reference of a component's image in this release, from
// registry when set.
func (r Release) Image(c release.Component, registry string) string {
	switch c {
	case release.Etcd:
		return c.Image(registry, r.Etcd)
	case release.KubeAPIServer, release.KubeControllerManager:
		return c.Image(registry, r.Kubernetes)
	}
	return c.Image(registry, r.Version)
}

// history lists the releases before the one in development, oldest first.
// A row is added here when a release is cut, so that newer operators can
// still run instances pinned to it.
var history = []Release{}

// current is what the release in development runs. The Kubernetes version
// is the one whose flags the charts use; the etcd tag follows the etcd
// module the project builds (hack/tools/etcd).
var current = Release{Kubernetes: "v1.37.2", Etcd: "3.6.16-0"}

// Table is the set of releases an operator knows, and which one is its own.
type Table struct {
	releases []Release // sorted by version, oldest first
	own      Release
}

// Builtin is the table compiled into this operator: the released history
// plus its own release.
func Builtin() (Table, error) {
	own := current
	own.Version = release.Version
	return New(own, history...)
}

// New builds a table whose own release is own, and which also knows
// others. A version listed twice is an error.
func New(own Release, others ...Release) (Table, error) {
	rows := append(slices.Clone(others), own)
	for _, r := range rows {
		if _, err := parse(r.Version); err != nil {
			return Table{}, err
		}
	}
	slices.SortFunc(rows, func(a, b Release) int { return Compare(a.Version, b.Version) })
	for i := 1; i < len(rows); i++ {
		if Compare(rows[i-1].Version, rows[i].Version) == 0 {
			return Table{}, fmt.Errorf("version table lists %s twice", rows[i].Version)
		}
	}
	return Table{releases: rows, own: own}, nil
}

// Own is the operator's own release, which unpinned instances run.
func (t Table) Own() Release { return t.own }

// Versions lists the known versions, oldest first.
func (t Table) Versions() []string {
	out := make([]string, len(t.releases))
	for i, r := range t.releases {
		out[i] = r.Version
	}
	return out
}

// Resolve returns the release an instance runs: pinned when set, else the
// operator's own.
func (t Table) Resolve(pinned string) (Release, error) {
	if pinned == "" {
		return t.own, nil
	}
	for _, r := range t.releases {
		if Compare(r.Version, pinned) == 0 {
			return r, nil
		}
	}
	return Release{}, fmt.Errorf("version %s is not in this operator's version table (known: %s)", pinned, strings.Join(t.Versions(), ", "))
}

// Compare orders two release versions as semantic versions; an unparsable
// one sorts first.
func Compare(a, b string) int {
	va, errA := parse(a)
	vb, errB := parse(b)
	switch {
	case errA != nil && errB != nil:
		return strings.Compare(a, b)
	case errA != nil:
		return -1
	case errB != nil:
		return 1
	}
	switch {
	case va.LessThan(vb):
		return -1
	case vb.LessThan(va):
		return 1
	}
	return 0
}

func parse(v string) (*utilversion.Version, error) {
	parsed, err := utilversion.ParseSemantic(v)
	if err != nil {
		return nil, fmt.Errorf("release version %q: %w", v, err)
	}
	return parsed, nil
}
