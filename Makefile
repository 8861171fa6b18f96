# Flotilla: a multi-cluster control plane that speaks the Karmada API.

# Kubernetes binaries (kube-apiserver, etcd, ...) built by hack/kube-binaries.sh.
K8S_VERSION ?= v1.37.2
KUBEBUILDER_ASSETS ?= $(LOCALBIN)/k8s/$(K8S_VERSION)

# Extra flags for go test, e.g. GOTEST_FLAGS="-run TestCRDFields -v".
GOTEST_FLAGS ?=
# Members started by `make run`.
MEMBERS ?= 3

# The API groups served by a federation's API server; api/operator is the
# operator's own API, served by the host cluster.
FEDERATION_APIS = ./api/apps/...,./api/autoscaling/...,./api/cluster/...,./api/config/...,./api/multicluster/...,./api/networking/...,./api/policy/...,./api/work/...

SHELL = /usr/bin/env bash -o pipefail
.SHELLFLAGS = -ec

.PHONY: all
all: build

##@ General

.PHONY: help
help: ## Display this help.
	@awk 'BEGIN {FS = ":.*##"; printf "\nUsage:\n  make \033[36m<target>\033[0m\n"} /^[a-zA-Z_0-9-]+:.*?##/ { printf "  \033[36m%-18s\033[0m %s\n", $$1, $$2 } /^##@/ { printf "\n\033[1m%s\033[0m\n", substr($$0, 5) } ' $(MAKEFILE_LIST)

##@ Development

.PHONY: manifests
manifests: controller-gen ## Generate CRDs into config/crd/bases and RBAC into config/rbac; copy the operator's into its chart.
	$(CONTROLLER_GEN) crd:allowDangerousTypes=false paths="{$(FEDERATION_APIS)}" output:crd:artifacts:config=config/crd/bases
	$(CONTROLLER_GEN) crd:allowDangerousTypes=false,generateEmbeddedObjectMeta=true paths="./api/operator/..." output:crd:artifacts:config=config/crd/operator
	$(CONTROLLER_GEN) webhook paths="./components/webhook/..." output:webhook:artifacts:config=config/webhook
	$(CONTROLLER_GEN) rbac:roleName=flotilla-controller-manager paths="{./components/controller-manager/...,./internal/execution/...,./internal/workstatus/...,./internal/clusterstatus/...}" output:rbac:artifacts:config=config/rbac/controller-manager
	$(CONTROLLER_GEN) rbac:roleName=flotilla-scheduler paths="./components/scheduler/..." output:rbac:artifacts:config=config/rbac/scheduler
	$(CONTROLLER_GEN) rbac:roleName=flotilla-descheduler paths="./components/descheduler/..." output:rbac:artifacts:config=config/rbac/descheduler
	$(CONTROLLER_GEN) rbac:roleName=flotilla-scheduler-estimator paths="./components/scheduler-estimator/..." output:rbac:artifacts:config=config/rbac/scheduler-estimator
	$(CONTROLLER_GEN) rbac:roleName=flotilla-webhook paths="./components/webhook/..." output:rbac:artifacts:config=config/rbac/webhook
	$(CONTROLLER_GEN) rbac:roleName=flotilla-aggregated-apiserver paths="./components/aggregated-apiserver/rbac/..." output:rbac:artifacts:config=config/rbac/aggregated-apiserver
	$(CONTROLLER_GEN) rbac:roleName=flotilla-operator paths="./operator/..." output:rbac:artifacts:config=config/rbac/operator
	cp config/crd/operator/operator.karmada.io_karmadas.yaml deploy/charts/flotilla-operator/crds/
	cp config/rbac/operator/role.yaml deploy/charts/flotilla-operator/files/operator-role.yaml

# Packages whose OpenAPI definitions the aggregated API server serves: the
# Cluster API and every Kubernetes type it refers to.
# Flotilla's get OpenAPIModelName methods (zz_generated.model_name.go), the
# names the API server's definition namer looks up.
OPENAPI_PACKAGES = github.com/flotilla-io/flotilla/api/cluster/v1alpha1 \
	github.com/flotilla-io/flotilla/components/aggregated-apiserver/internal/clusterapi
OPENAPI_K8S_PACKAGES = k8s.io/apimachinery/pkg/apis/meta/v1 k8s.io/apimachinery/pkg/runtime k8s.io/apimachinery/pkg/version \
	k8s.io/apimachinery/pkg/api/resource k8s.io/apimachinery/pkg/util/intstr k8s.io/api/core/v1

# The metrics adapter's served types (metrics.k8s.io, custom.metrics.k8s.io).
METRICS_OPENAPI_PACKAGES = k8s.io/metrics/pkg/apis/metrics/v1beta1 k8s.io/metrics/pkg/apis/custom_metrics/v1beta1 \
	k8s.io/metrics/pkg/apis/custom_metrics/v1beta2 $(OPENAPI_K8S_PACKAGES)

.PHONY: generate
generate: controller-gen openapi-gen ## Generate DeepCopy methods for the API types and the aggregated API servers' OpenAPI definitions.
	$(CONTROLLER_GEN) object:headerFile="hack/boilerplate.go.txt" paths="./api/..."
	$(OPENAPI_GEN) --output-dir components/aggregated-apiserver/internal/openapi \
		--output-pkg github.com/flotilla-io/flotilla/components/aggregated-apiserver/internal/openapi \
		--output-file zz_generated.openapi.go --go-header-file hack/boilerplate.go.txt \
		--output-model-name-file zz_generated.model_name.go $(addprefix --readonly-pkg=,$(OPENAPI_K8S_PACKAGES)) \
		--report-filename $(LOCALBIN)/openapi-api-violations.list $(OPENAPI_PACKAGES) $(OPENAPI_K8S_PACKAGES)
	$(OPENAPI_GEN) --output-dir components/metrics-adapter/internal/openapi \
		--output-pkg github.com/flotilla-io/flotilla/components/metrics-adapter/internal/openapi \
		--output-file zz_generated.openapi.go --go-header-file hack/boilerplate.go.txt \
		$(addprefix --readonly-pkg=,$(METRICS_OPENAPI_PACKAGES)) \
		--report-filename $(LOCALBIN)/openapi-api-violations-metrics-adapter.list $(METRICS_OPENAPI_PACKAGES)

.PHONY: fmt
fmt: ## Run go fmt.
	go fmt ./...

.PHONY: vet
vet: ## Run go vet.
	go vet ./...

.PHONY: lint
lint: golangci-lint ## Run golangci-lint with .golangci.yml.
	$(GOLANGCI_LINT) run ./...

# How long envtest waits for an API server to be ready (its default is 20s):
# packages start theirs side by side, which on 2 cores can take longer.
ENVTEST_START_TIMEOUT ?= 2m

# How long one package's tests may take (go test's default is 10m): on a
# fresh machine, with nothing in Go's build cache, the image and e2e packages
# compile every component first, and on 2 cores beside the other packages
# that alone can go past ten minutes.
TEST_TIMEOUT ?= 30m

# The end-to-end suites run after the rest and one at a time: each runs whole
# federations, and every kube-apiserver and kube-controller-manager in them
# watches its certificate files with inotify instances of its own; side by
# side the two suites went past the 128 a user has by default.
.PHONY: test
test: manifests generate fmt vet k8s-binaries ## Run unit, envtest and e2e tests against real API servers.
	KUBEBUILDER_ASSETS="$(abspath $(KUBEBUILDER_ASSETS))" KUBEBUILDER_CONTROLPLANE_START_TIMEOUT=$(ENVTEST_START_TIMEOUT) go test -timeout $(TEST_TIMEOUT) $(GOTEST_FLAGS) $$(go list ./... | grep -v '/test/e2e')
	KUBEBUILDER_ASSETS="$(abspath $(KUBEBUILDER_ASSETS))" KUBEBUILDER_CONTROLPLANE_START_TIMEOUT=$(ENVTEST_START_TIMEOUT) go test -timeout $(TEST_TIMEOUT) $(GOTEST_FLAGS) -p 1 ./test/e2e/...

.PHONY: test-e2e
test-e2e: k8s-binaries ## Run only the end-to-end suites on a local federation.
	KUBEBUILDER_ASSETS="$(abspath $(KUBEBUILDER_ASSETS))" go test -timeout $(TEST_TIMEOUT) $(GOTEST_FLAGS) -p 1 -v ./test/e2e/...

# Template counts of the propagation benchmark's cases.
BENCH_SIZES ?= 1000,5000

.PHONY: bench
bench: k8s-binaries ## Run the benchmarks: Go micro-benchmarks, then propagation on a local federation.
	KUBEBUILDER_ASSETS="$(abspath $(KUBEBUILDER_ASSETS))" go test -run '^$$' -bench . -benchmem $(GOTEST_FLAGS) $$(go list ./... | grep -v '/test/bench\|/test/e2e/operator')
	$(MAKE) bench-propagation
	$(MAKE) bench-writecost
	$(MAKE) bench-failover
	$(MAKE) bench-operator

.PHONY: bench-propagation
bench-propagation: k8s-binaries ## Propagation benchmark: $(BENCH_SIZES) Deployments duplicated and divided over 3 members, one run each.
	KUBEBUILDER_ASSETS="$(abspath $(KUBEBUILDER_ASSETS))" go test -run '^$$' -bench BenchmarkPropagation -benchtime 1x -timeout 180m -v $(GOTEST_FLAGS) ./test/bench -args -bench.sizes=$(BENCH_SIZES)

.PHONY: bench-writecost
bench-writecost: k8s-binaries ## Write-cost benchmark: API server CPU per create, update and status patch of each busy CRD against a ConfigMap of its size, per encoding and setting.
	KUBEBUILDER_ASSETS="$(abspath $(KUBEBUILDER_ASSETS))" go test -run '^$$' -bench BenchmarkWriteCost -benchtime 1x -timeout 60m -v $(GOTEST_FLAGS) ./test/bench/writecost

.PHONY: bench-propagation-pull
bench-propagation-pull: k8s-binaries ## Propagation benchmark, the same cases, with all 3 members in Pull mode (agents in the benchmark's process).
	KUBEBUILDER_ASSETS="$(abspath $(KUBEBUILDER_ASSETS))" go test -run '^$$' -bench BenchmarkPropagation -benchtime 1x -timeout 180m -v $(GOTEST_FLAGS) ./test/bench -args -bench.sizes=$(BENCH_SIZES) -bench.pull-members=3

# Templates the failover benchmark moves off a member.
BENCH_FAILOVER ?= 1000

.PHONY: bench-failover
bench-failover: k8s-binaries ## Failover benchmark: $(BENCH_FAILOVER) divided Deployments moved off a member tainted NoExecute.
	KUBEBUILDER_ASSETS="$(abspath $(KUBEBUILDER_ASSETS))" go test -run '^$$' -bench BenchmarkFailover -benchtime 1x -timeout 120m -v $(GOTEST_FLAGS) ./test/bench -args -bench.failover-templates=$(BENCH_FAILOVER)

# Karmada instances the operator benchmark creates at once.
BENCH_INSTANCES ?= 20

.PHONY: bench-operator
bench-operator: k8s-binaries ## Operator benchmark: $(BENCH_INSTANCES) Karmadas at once on the e2e host; time to Ready, operator CPU and peak RSS.
	KUBEBUILDER_ASSETS="$(abspath $(KUBEBUILDER_ASSETS))" go test -run '^$$' -bench BenchmarkKarmadaReady -benchtime 1x -timeout 90m -v $(GOTEST_FLAGS) ./test/e2e/operator -args -bench.instances=$(BENCH_INSTANCES)

.PHONY: verify
verify: manifests generate fmt bundle verify-kustomize ## Regenerate everything and fail if the tree changed.
	@if [ -n "$$(git status --porcelain -- . ':!bin')" ]; then \
		echo "generated files are out of date; run 'make manifests generate fmt bundle' and commit:"; \
		git status --porcelain -- . ':!bin'; git --no-pager diff --stat; exit 1; \
	fi

##@ OLM bundle

# The bundle is of VERSION (this release's by default, as for the images
# below) and names images under REGISTRY.
CHANNELS ?= alpha
DEFAULT_CHANNEL ?= alpha
# The version the bundle replaces; empty: the newest older bundle of
# DEFAULT_CHANNEL in catalog/ (none for the first).
PREVIOUS ?=
# createdAt of the CSV (RFC 3339, or "now"); empty leaves it out so that
# `make bundle` is reproducible.
BUNDLE_CREATED_AT ?=
BUNDLE_IMAGES ?= $(LOCALBIN)/images/bundle

.PHONY: bundle
bundle: ## Generate bundle/, bundle.Dockerfile and the catalog entry from config/ (VERSION, PREVIOUS, CHANNELS, DEFAULT_CHANNEL).
	go run ./hack/bundle/cmd --version $(VERSION) --registry $(REGISTRY) --channels $(CHANNELS) --default-channel $(DEFAULT_CHANNEL) \
		$(if $(PREVIOUS),--previous $(PREVIOUS)) $(if $(BUNDLE_CREATED_AT),--created-at $(BUNDLE_CREATED_AT))

.PHONY: bundle-image
bundle-image: ## Build the bundle image of bundle/ (OCI layout, no container engine) into bin/images/bundle.
	go run ./hack/bundle/cmd --version $(VERSION) --registry $(REGISTRY) --image $(BUNDLE_IMAGES)

.PHONY: bundle-push
bundle-push: ## Build the bundle image and push it to $(REGISTRY)/operator-bundle:$(VERSION) (credentials of the Docker config).
	go run ./hack/bundle/cmd --version $(VERSION) --registry $(REGISTRY) --image $(BUNDLE_IMAGES) --push

.PHONY: test-bundle
test-bundle: ## Validate the bundle (operator-framework/api validators), the bundle image and the catalog.
	go test $(GOTEST_FLAGS) ./hack/bundle/...

##@ Build

.PHONY: build
build: ## Build flotillactl into bin/, and bin/kubectl-flotilla, the same binary as a kubectl plugin (`kubectl flotilla ...` with bin/ on PATH).
	go build -o $(LOCALBIN)/flotillactl ./cmd/flotillactl
	ln -sf flotillactl $(LOCALBIN)/kubectl-flotilla

.PHONY: run
run: k8s-binaries ## Bring up a local federation (control plane + $(MEMBERS) members), propagate the nginx sample, keep it running.
	KUBEBUILDER_ASSETS="$(abspath $(KUBEBUILDER_ASSETS))" go run ./cmd/flotillactl local up --members $(MEMBERS) --sample config/samples/nginx.yaml

# Images of the components (hack/images): the release they are built as and
# tagged with, the registry they are named under and pushed to, and the
# platforms (comma-separated; more than one makes each image an index).
VERSION ?= $(shell sed -n 's/^var Version = "\(.*\)"$$/\1/p' internal/release/release.go)
REGISTRY ?= $(shell sed -n 's/^const DefaultRegistry = "\(.*\)"$$/\1/p' internal/release/release.go)
PLATFORMS ?= linux/amd64
IMAGES_FLAGS = --version $(VERSION) --registry $(REGISTRY) --platforms $(PLATFORMS) --out $(LOCALBIN)/images

.PHONY: images
images: ## Build the OCI image of every component, no Docker: bin/images/<component>/ (OCI layout) and <component>.tar (docker load).
	go run ./hack/images $(IMAGES_FLAGS)

.PHONY: push
push: ## Build the images and push them to $(REGISTRY) with the credentials of ~/.docker/config.json, e.g. make push REGISTRY=registry.example/flotilla.
	go run ./hack/images $(IMAGES_FLAGS) --push

##@ Deployment

# The operator image `make deploy` installs; empty: config/manager's, this
# release's ghcr.io/flotilla-io/operator.
IMG ?=

.PHONY: deploy
deploy: ## Install the operator (config/default) on the cluster of $KUBECONFIG, server-side applied; IMG=... sets its image.
	go run ./hack/deploy --dir config/default $(if $(IMG),--image $(IMG))

.PHONY: undeploy
undeploy: ## Delete what `make deploy` installed, the Karmada CRD first: every Karmada instance is uninstalled.
	go run ./hack/deploy --dir config/default --delete

.PHONY: verify-kustomize
verify-kustomize: kustomize ## Render config/default and config/samples with the pinned kustomize.
	$(KUSTOMIZE) build config/default >/dev/null
	$(KUSTOMIZE) build config/samples >/dev/null

# URL the chart repository of `make charts` is served from; empty: index.yaml
# names the archives relative to itself.
CHARTS_URL ?=

.PHONY: charts
charts: ## Package the components' charts (operator/charts) and the operator's (deploy/charts) with the Helm SDK into bin/charts, with index.yaml.
	go run ./hack/charts --out $(LOCALBIN)/charts $(if $(CHARTS_URL),--url $(CHARTS_URL)) operator/charts deploy/charts

##@ Dependencies

LOCALBIN ?= $(shell pwd)/bin
$(LOCALBIN):
	mkdir -p $(LOCALBIN)

CONTROLLER_GEN ?= $(LOCALBIN)/controller-gen
GOLANGCI_LINT ?= $(LOCALBIN)/golangci-lint
OPENAPI_GEN ?= $(LOCALBIN)/openapi-gen

KUSTOMIZE ?= $(LOCALBIN)/kustomize

CONTROLLER_TOOLS_VERSION ?= v0.23.0
GOLANGCI_LINT_VERSION ?= v2.15.0
# kustomize v5.8.2 is built on kustomize/api v0.21.2, the version in go.mod
# (hack/deploy renders with it), and needs Go 1.26; v5.8.3 needs Go 1.27.
KUSTOMIZE_VERSION ?= v5.8.2
# openapi-gen comes with k8s.io/kube-openapi, at the version go.mod requires.
KUBE_OPENAPI_VERSION ?= $(shell go list -m -f '{{.Version}}' k8s.io/kube-openapi)

.PHONY: tools
tools: controller-gen openapi-gen golangci-lint kustomize k8s-binaries ## Install every tool and Kubernetes binary into bin/.

.PHONY: controller-gen
controller-gen: $(CONTROLLER_GEN) ## Install controller-gen.
$(CONTROLLER_GEN): $(LOCALBIN)
	$(call go-install-tool,$(CONTROLLER_GEN),sigs.k8s.io/controller-tools/cmd/controller-gen,$(CONTROLLER_TOOLS_VERSION))

.PHONY: openapi-gen
openapi-gen: $(OPENAPI_GEN) ## Install openapi-gen (kube-openapi's, the version go.mod requires).
$(OPENAPI_GEN): $(LOCALBIN)
	$(call go-install-tool,$(OPENAPI_GEN),k8s.io/kube-openapi/cmd/openapi-gen,$(KUBE_OPENAPI_VERSION))

.PHONY: golangci-lint
golangci-lint: $(GOLANGCI_LINT) ## Install golangci-lint.
$(GOLANGCI_LINT): $(LOCALBIN)
	$(call go-install-tool,$(GOLANGCI_LINT),github.com/golangci/golangci-lint/v2/cmd/golangci-lint,$(GOLANGCI_LINT_VERSION))

.PHONY: kustomize
kustomize: $(KUSTOMIZE) ## Install kustomize.
$(KUSTOMIZE): $(LOCALBIN)
	$(call go-install-tool,$(KUSTOMIZE),sigs.k8s.io/kustomize/kustomize/v5,$(KUSTOMIZE_VERSION))

.PHONY: k8s-binaries
k8s-binaries: ## Build kube-apiserver, kube-controller-manager, kube-scheduler, etcd, kwok and metrics-server (cached).
	@KUBE_BIN_DIR="$(abspath $(KUBEBUILDER_ASSETS))" hack/kube-binaries.sh >/dev/null

# go-install-tool installs a pinned Go tool as <name>-<version> and links <name> to it,
# so a version bump in this file reinstalls it.
define go-install-tool
@[ -f "$(1)-$(3)" ] && [ "$$(readlink -- "$(1)" 2>/dev/null)" = "$$(basename "$(1)-$(3)")" ] || { \
set -e; \
package=$(2)@$(3) ;\
echo "Downloading $${package}" ;\
rm -f "$(1)" ;\
GOBIN="$(LOCALBIN)" go install $${package} ;\
mv "$(LOCALBIN)/$$(basename "$(1)")" "$(1)-$(3)" ;\
} ;\
ln -sf "$$(basename "$(1)-$(3)")" "$(1)"
endef
