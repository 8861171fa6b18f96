#!/usr/bin/env bash
# Builds the Kubernetes binaries that envtest, the local federation harness and
# `flotillactl local up` run: kube-apiserver, kube-controller-manager and
# kube-scheduler from k8s.io/kubernetes, etcd from go.etcd.io/etcd/server/v3,
# kwok from sigs.k8s.io/kwok and metrics-server from sigs.k8s.io/metrics-server,
# all through the Go module proxy.
#
# Binaries land in bin/k8s/<version>/. A copy is kept in the user's cache
# directory so that another clone on the same machine links to it instead of
# spending ~15 minutes rebuilding. Existing binaries are never rebuilt; delete
# the directory to force it.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
tools="$root/hack/tools"

modversion() { (cd "$tools/$1" && go list -m -f '{{.Version}}' "$2"); }
k8s_version=$(modversion kube k8s.io/kubernetes)
etcd_version=$(modversion etcd go.etcd.io/etcd/server/v3)
kwok_version=$(modversion kwok sigs.k8s.io/kwok)
metrics_server_version=$(modversion metrics-server sigs.k8s.io/metrics-server)

# The directory name carries every pinned version so that bumping any of them
# builds into a fresh place instead of mixing binaries.
key="${k8s_version}-etcd${etcd_version}-kwok${kwok_version}-$(go env GOOS)-$(go env GOARCH)"
dest="${KUBE_BIN_DIR:-$root/bin/k8s/$k8s_version}"
cache_root="${FLOTILLA_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/flotilla}"
cache="$cache_root/k8s/$key"
# metrics-server is cached under its own key, so that pinning another version
# of it rebuilds it alone.
metrics_server_cache="$cache_root/metrics-server/${metrics_server_version}-$(go env GOOS)-$(go env GOARCH)"

minor=${k8s_version#v1.}; minor=${minor%%.*}
kube_ldflags="-s -w \
 -X k8s.io/component-base/version.gitVersion=$k8s_version \
 -X k8s.io/component-base/version.gitMajor=1 \
 -X k8s.io/component-base/version.gitMinor=$minor \
 -X k8s.io/component-base/version.gitTreeState=clean \
 -X k8s.io/component-base/version.buildDate=1970-01-01T00:00:00Z \
 -X k8s.io/client-go/pkg/version.gitVersion=$k8s_version \
 -X k8s.io/client-go/pkg/version.gitMajor=1 \
 -X k8s.io/client-go/pkg/version.gitMinor=$minor"

build() { # build <module dir> <output name> <package> [ldflags] [cache dir]
	local dir=$1 name=$2 pkg=$3 ldflags=${4:--s -w} out=${5:-$cache}
	if [[ -x "$out/$name" ]]; then
		return
	fi
	echo "building $name ($pkg)" >&2
	mkdir -p "$out"
	(cd "$dir" && CGO_ENABLED=0 GOFLAGS=-mod=mod go build -trimpath -ldflags "$ldflags" -o "$out/.$name.tmp" "$pkg")
	mv "$out/.$name.tmp" "$out/$name"
}

build "$tools/kube" kube-apiserver k8s.io/kubernetes/cmd/kube-apiserver "$kube_ldflags"
build "$tools/kube" kube-controller-manager k8s.io/kubernetes/cmd/kube-controller-manager "$kube_ldflags"
build "$tools/kube" kube-scheduler k8s.io/kubernetes/cmd/kube-scheduler "$kube_ldflags"
build "$tools/etcd" etcd .
build "$tools/kwok" kwok sigs.k8s.io/kwok/cmd/kwok \
	"-s -w -X sigs.k8s.io/kwok/pkg/consts.Version=$kwok_version"
build "$tools/metrics-server" metrics-server sigs.k8s.io/metrics-server/cmd/metrics-server \
	"-s -w -X k8s.io/client-go/pkg/version.gitVersion=$metrics_server_version" "$metrics_server_cache"

mkdir -p "$dest"
for b in kube-apiserver kube-controller-manager kube-scheduler etcd kwok; do
	if [[ ! -x "$dest/$b" ]]; then
		ln -f "$cache/$b" "$dest/$b" 2>/dev/null || cp "$cache/$b" "$dest/$b"
	fi
done
if [[ ! -x "$dest/metrics-server" ]]; then
	ln -f "$metrics_server_cache/metrics-server" "$dest/metrics-server" 2>/dev/null ||
		cp "$metrics_server_cache/metrics-server" "$dest/metrics-server"
fi
echo "$dest"
