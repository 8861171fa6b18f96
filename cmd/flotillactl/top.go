package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/kubernetes"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"
	metricsclient "k8s.io/metrics/pkg/client/clientset/versioned"
)

// queryFromClusterAnnotation names the member an item of the control
// plane's metrics.k8s.io came from (the metrics adapter sets it).
const queryFromClusterAnnotation = "resource.karmada.io/query-from-cluster"

// topOptions are the flags of top pod and top node.
type topOptions struct {
	get           getOptions
	allNamespaces bool
	noHeaders     bool
}

func newTopCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "top",
		Short: "Display CPU and memory use of pods and nodes in member clusters",
		Long: `Display the CPU and memory use of pods or nodes, as kubectl top does, with a
CLUSTER column: from the control plane's metrics.k8s.io, which the metrics
adapter serves over all members (--operation-scope karmada, the default), or
from each member's own metrics.k8s.io through the cluster proxy (members), or
both (all).`,
	}
	cmd.AddCommand(newTopPodCommand(), newTopNodeCommand())
	return cmd
}

func (o *topOptions) addFlags(cmd *cobra.Command) {
	o.get.scope = scopeKarmada
	o.get.flags = genericclioptions.NewConfigFlags(true)
	o.get.flags.AddFlags(cmd.Flags())
	fs := cmd.Flags()
	fs.Var(&o.get.scope, "operation-scope", `Where to read: "karmada" (the control plane's aggregated metrics), "members" or "all".`)
	fs.StringSliceVarP(&o.get.clusters, "clusters", "C", nil, "Members to read, e.g. -C=member1,member2; all members by default. Only with --operation-scope members or all.")
	fs.StringVarP(&o.get.selector, "selector", "l", "", "Label selector to filter on, e.g. -l key1=value1,key2=value2.")
	fs.BoolVar(&o.noHeaders, "no-headers", false, "Print no header line.")
}

func newTopPodCommand() *cobra.Command {
	o := &topOptions{}
	cmd := &cobra.Command{
		Use:   "pod [NAME | -l label]",
		Short: "Display CPU and memory use of pods",
		Example: `  # Pods of the namespace in every member, from the control plane
  flotillactl top pod -n web

  # Pods labelled app=web in member1, through its proxy
  flotillactl top pod -l app=web --operation-scope members -C member1`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.runPods(cmd.Context(), cmd.OutOrStdout(), args)
		},
	}
	o.addFlags(cmd)
	cmd.Flags().BoolVarP(&o.allNamespaces, "all-namespaces", "A", false, "Show pods of all namespaces.")
	return cmd
}

func newTopNodeCommand() *cobra.Command {
	o := &topOptions{}
	cmd := &cobra.Command{
		Use:   "node [NAME | -l label]",
		Short: "Display CPU and memory use of nodes",
		Example: `  # Nodes of every member
  flotillactl top node`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.runNodes(cmd.Context(), cmd.OutOrStdout(), args)
		},
	}
	o.addFlags(cmd)
	return cmd
}

// listOptions narrows a list to the label selector and the name, if any.
func (o *topOptions) listOptions(args []string) metav1.ListOptions {
	opts := metav1.ListOptions{LabelSelector: o.get.selector}
	if len(args) == 1 {
		opts.FieldSelector = fields.OneTermEqualSelector("metadata.name", args[0]).String()
	}
	return opts
}

// clusterOf is the CLUSTER cell: the member the control plane read the
// item from, or the member read.
func clusterOf(target string, meta metav1.ObjectMeta) string {
	if target == controlPlaneRow {
		if c := meta.Annotations[queryFromClusterAnnotation]; c != "" {
			return c
		}
	}
	return target
}

func (o *topOptions) metricsClients(ctx context.Context) ([]target, []metricsclient.Interface, error) {
	if len(o.get.clusters) > 0 && o.get.scope == scopeKarmada {
		return nil, nil, errors.New("--clusters: only with --operation-scope members or all")
	}
	targets, err := o.get.targets(ctx)
	if err != nil {
		return nil, nil, err
	}
	clients := make([]metricsclient.Interface, 0, len(targets))
	for _, t := range targets {
		cfg, err := t.getter.ToRESTConfig()
		if err != nil {
			return nil, nil, err
		}
		mc, err := metricsclient.NewForConfig(cfg)
		if err != nil {
			return nil, nil, fmt.Errorf("cluster %s: %w", t.name, err)
		}
		clients = append(clients, mc)
	}
	return targets, clients, nil
}

type podRow struct {
	namespace, name, cluster string
	cpu, memory              resource.Quantity
}

func (o *topOptions) runPods(ctx context.Context, out io.Writer, args []string) error {
	targets, clients, err := o.metricsClients(ctx)
	if err != nil {
		return err
	}
	namespace, _, err := o.get.flags.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return fmt.Errorf("reading the namespace of the kubeconfig: %w", err)
	}
	if o.allNamespaces {
		namespace = metav1.NamespaceAll
	}
	var rows []podRow
	var errs []error
	for i, t := range targets {
		list, err := clients[i].MetricsV1beta1().PodMetricses(namespace).List(ctx, o.listOptions(args))
		if err != nil {
			// One member that cannot be read does not hide the others.
			errs = append(errs, fmt.Errorf("cluster %s: %w", t.name, err))
			continue
		}
		for _, p := range list.Items {
			rows = append(rows, podRowOf(t.name, p))
		}
	}
	if len(rows) == 0 && len(errs) == 0 {
		return errors.New("no metrics of pods found")
	}
	slices.SortFunc(rows, func(a, b podRow) int {
		return strings.Compare(a.namespace+"/"+a.name+"/"+a.cluster, b.namespace+"/"+b.name+"/"+b.cluster)
	})
	// The tabwriter keeps the first write error and Flush returns it.
	w := tabwriter.NewWriter(out, 0, 8, 3, ' ', 0)
	if !o.noHeaders {
		header := "NAME\tCLUSTER\tCPU(cores)\tMEMORY(bytes)"
		if o.allNamespaces {
			header = "NAMESPACE\t" + header
		}
		_, _ = fmt.Fprintln(w, header)
	}
	for _, r := range rows {
		line := fmt.Sprintf("%s\t%s\t%dm\t%dMi", r.name, r.cluster, r.cpu.MilliValue(), r.memory.Value()/(1024*1024))
		if o.allNamespaces {
			line = r.namespace + "\t" + line
		}
		_, _ = fmt.Fprintln(w, line)
	}
	return errors.Join(append(errs, w.Flush())...)
}

func podRowOf(target string, p metricsv1beta1.PodMetrics) podRow {
	r := podRow{namespace: p.Namespace, name: p.Name, cluster: clusterOf(target, p.ObjectMeta)}
	for _, c := range p.Containers {
		r.cpu.Add(c.Usage[corev1.ResourceCPU])
		r.memory.Add(c.Usage[corev1.ResourceMemory])
	}
	return r
}

func (o *topOptions) runNodes(ctx context.Context, out io.Writer, args []string) error {
	targets, clients, err := o.metricsClients(ctx)
	if err != nil {
		return err
	}
	type nodeRow struct {
		name, cluster string
		cpu, memory   resource.Quantity
	}
	var rows []nodeRow
	var errs []error
	for i, t := range targets {
		list, err := clients[i].MetricsV1beta1().NodeMetricses().List(ctx, o.listOptions(args))
		if err != nil {
			errs = append(errs, fmt.Errorf("cluster %s: %w", t.name, err))
			continue
		}
		for _, n := range list.Items {
			rows = append(rows, nodeRow{name: n.Name, cluster: clusterOf(t.name, n.ObjectMeta),
				cpu: n.Usage[corev1.ResourceCPU], memory: n.Usage[corev1.ResourceMemory]})
		}
	}
	// The percentages are of the node's allocatable, read from its member
	// through the proxy.
	allocatable, err := o.nodeAllocatable(ctx)
	if err != nil {
		errs = append(errs, err)
	}
	if len(rows) == 0 && len(errs) == 0 {
		return errors.New("no metrics of nodes found")
	}
	slices.SortFunc(rows, func(a, b nodeRow) int { return strings.Compare(a.cluster+"/"+a.name, b.cluster+"/"+b.name) })
	w := tabwriter.NewWriter(out, 0, 8, 3, ' ', 0)
	if !o.noHeaders {
		_, _ = fmt.Fprintln(w, "NAME\tCLUSTER\tCPU(cores)\tCPU(%)\tMEMORY(bytes)\tMEMORY(%)")
	}
	for _, r := range rows {
		a := allocatable[r.cluster+"/"+r.name]
		_, _ = fmt.Fprintf(w, "%s\t%s\t%dm\t%s\t%dMi\t%s\n", r.name, r.cluster, r.cpu.MilliValue(), percent(r.cpu, a[corev1.ResourceCPU]),
			r.memory.Value()/(1024*1024), percent(r.memory, a[corev1.ResourceMemory]))
	}
	return errors.Join(append(errs, w.Flush())...)
}

// nodeAllocatable reads the nodes of every member named by the flags (all
// by default), by member/node.
func (o *topOptions) nodeAllocatable(ctx context.Context) (map[string]corev1.ResourceList, error) {
	members := o.get
	members.scope = scopeMembers
	targets, err := members.targets(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string]corev1.ResourceList{}
	var errs []error
	for _, t := range targets {
		cfg, err := t.getter.ToRESTConfig()
		if err == nil {
			var kube kubernetes.Interface
			if kube, err = kubernetes.NewForConfig(cfg); err == nil {
				var nodes *corev1.NodeList
				if nodes, err = kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: o.get.selector}); err == nil {
					for _, n := range nodes.Items {
						out[t.name+"/"+n.Name] = n.Status.Allocatable
					}
				}
			}
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("reading the nodes of %s: %w", t.name, err))
		}
	}
	return out, errors.Join(errs...)
}

// percent is used of total as kubectl top prints it, <unknown> without a
// total.
func percent(used, total resource.Quantity) string {
	if total.IsZero() {
		return "<unknown>"
	}
	return fmt.Sprintf("%d%%", used.MilliValue()*100/total.MilliValue())
}
