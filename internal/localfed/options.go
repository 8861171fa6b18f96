package localfed

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
)

// ControlPlaneName names the control plane's kubeconfig context, cluster and
// user, as Karmada's own tooling does.
const ControlPlaneName = "karmada-apiserver"

// Options configures a federation. The zero value starts a control plane with
// no members.
type Options struct {
	// Members is the number of member clusters, named member1 … memberN.
	Members int

	// PullMembers is the number of members registered in Pull mode, named
	// after the others (member<Members+1> …): each has its agent
	// (components/agent) running in this process, which registers the
	// member, keeps its lease and applies its Works. The control plane never
	// dials them.
	PullMembers int

	// AgentArgs are extra flags of every Pull member's agent, e.g.
	// --cluster-lease-duration=4s.
	AgentArgs []string

	// Nodes describes the fake nodes of every member.
	Nodes NodeOptions

	// APIServerOnlyMembers runs each member as a bare kube-apiserver, with no
	// kube-controller-manager, kube-scheduler, kwok or nodes: objects reach
	// the member's storage and nothing reconciles them there (no ReplicaSets,
	// no pods). Benchmarks use it to measure the control plane, not the
	// members' own work.
	APIServerOnlyMembers bool

	// Host also starts a cluster named host: kube-apiserver,
	// kube-controller-manager and kube-scheduler, with no nodes, for a test
	// that brings its own node agent (test/nodeagent). Its Service range is a
	// block of 127.0.0.0/8 (see ServiceCIDR), so ClusterIPs are addresses a
	// process on this machine can listen on.
	Host bool

	// NoControlPlane starts no karmada-apiserver and registers nothing: the
	// members start as usual, with the credentials a control plane would use
	// (Cluster.Token, CAData, Endpoint), for a test that makes the control
	// plane itself and joins them to it.
	NoControlPlane bool

	// AggregatedAPIServer serves cluster.karmada.io/v1alpha1 (Cluster and
	// its proxy) from Flotilla's aggregated API server, as Karmada does,
	// instead of from the CRD.
	AggregatedAPIServer bool

	// Metrics gives every member a metrics.k8s.io API: kwok simulates each
	// container's CPU and memory usage and serves kubelet-style resource
	// metrics per node, which the member's metrics-server scrapes every
	// 10s. SetPodUsage turns the simulated usage up and down (see doc.go).
	// It needs the metrics-server binary in BinDir.
	Metrics bool

	// MetricsAdapter serves metrics.k8s.io and custom.metrics.k8s.io in
	// the control plane from the metrics adapter
	// (components/metrics-adapter), aggregated over the Ready members, as
	// karmada-metrics-adapter does. Pod and node metrics need Metrics.
	MetricsAdapter bool

	// Profiling serves /debug/pprof on every API server (cluster-admin
	// only), for benchmarks that want to see where the servers spend CPU.
	Profiling bool

	// ControlPlaneAPIServerArgs are extra flags of the control plane's
	// kube-apiserver, after the federation's own, so that a flag given here
	// wins: e.g. --feature-gates=CBORServingAndStorage=true, to compare
	// settings back to back.
	ControlPlaneAPIServerArgs []string

	// ControlPlaneAPIServerEnv is added to the environment of the control
	// plane's kube-apiserver, e.g. GOGC=200 to trade memory for CPU.
	ControlPlaneAPIServerEnv []string

	// BinDir holds kube-apiserver, kube-controller-manager, kube-scheduler, etcd
	// and kwok. Default: $KUBEBUILDER_ASSETS, else bin/k8s/<version> under the
	// module root found above the working directory.
	BinDir string

	// WorkDir receives certificates, kubeconfigs, etcd data and logs/. Default: a
	// new temporary directory. The federation never removes it.
	WorkDir string

	// KubeconfigPath is where the kubeconfig with every context is written.
	// Default: <WorkDir>/kubeconfig.
	KubeconfigPath string

	// Scheme is used by the control plane's client. Default: client-go's types,
	// apiextensions/v1 and cluster.karmada.io/v1alpha1.
	Scheme *runtime.Scheme

	// StopGracePeriod is how long Close waits after SIGTERM before SIGKILL.
	// Default: 5s.
	StopGracePeriod time.Duration

	// StartTimeout bounds Start on top of its context. Default: 2m.
	StartTimeout time.Duration

	// WebhookArgs are extra flags of the webhook, e.g.
	// --allow-no-execute-taint-policy=true.
	WebhookArgs []string

	// WebhookBinary, when set, runs the webhook as a process of its own from
	// this binary (components/webhook/cmd) instead of in this process, so
	// that its CPU time can be told apart (Processes lists it).
	WebhookBinary string
}

// NodeOptions describes the kwok nodes of each member.
type NodeOptions struct {
	// Count of nodes per member. Default: 3.
	Count int
	// CPU capacity of each node. Default: 8.
	CPU resource.Quantity
	// Memory capacity of each node. Default: 32Gi.
	Memory resource.Quantity
	// Pods each node can hold. Default: 110.
	Pods resource.Quantity
}

func (o Options) withDefaults() (Options, error) {
	if o.Members < 0 {
		return o, fmt.Errorf("members must not be negative, got %d", o.Members)
	}
	if o.PullMembers < 0 {
		return o, fmt.Errorf("pull members must not be negative, got %d", o.PullMembers)
	}
	if o.PullMembers > 0 && o.NoControlPlane {
		return o, fmt.Errorf("pull members need a control plane for their agents; NoControlPlane is set")
	}
	if o.MetricsAdapter && o.NoControlPlane {
		return o, fmt.Errorf("the metrics adapter serves in the control plane; NoControlPlane is set")
	}
	if o.Metrics && o.APIServerOnlyMembers {
		return o, fmt.Errorf("metrics need kwok and nodes in the members; APIServerOnlyMembers is set")
	}
	if o.Nodes.Count < 0 {
		return o, fmt.Errorf("node count must not be negative, got %d", o.Nodes.Count)
	}
	if o.Nodes.Count == 0 {
		o.Nodes.Count = 3
	}
	if o.Nodes.CPU.IsZero() {
		o.Nodes.CPU = resource.MustParse("8")
	}
	if o.Nodes.Memory.IsZero() {
		o.Nodes.Memory = resource.MustParse("32Gi")
	}
	if o.Nodes.Pods.IsZero() {
		o.Nodes.Pods = resource.MustParse("110")
	}
	if o.StopGracePeriod <= 0 {
		o.StopGracePeriod = 5 * time.Second
	}
	if o.StartTimeout <= 0 {
		o.StartTimeout = 2 * time.Minute
	}
	return o, nil
}

// MemberName is the name of the i-th member, counting from 1.
func MemberName(i int) string {
	return fmt.Sprintf("member%d", i)
}
