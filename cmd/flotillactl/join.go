package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/join"
)

// memberFlags name the member cluster's kubeconfig, as karmadactl's
// --cluster-kubeconfig and --cluster-context.
type memberFlags struct {
	kubeconfig, context string
}

func (m *memberFlags) bind(cmd *cobra.Command) {
	cmd.Flags().StringVar(&m.kubeconfig, "cluster-kubeconfig", "", "path of the member cluster's kubeconfig (default: the usual kubeconfig rules)")
	cmd.Flags().StringVar(&m.context, "cluster-context", "", "context of the member in --cluster-kubeconfig (default: the context named after the cluster if there is one, else the current one)")
}

// config reaches the member called name.
func (m *memberFlags) config(name string) (*rest.Config, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if m.kubeconfig != "" {
		rules.ExplicitPath = m.kubeconfig
	}
	context := m.context
	if context == "" {
		if raw, err := rules.Load(); err == nil {
			if _, ok := raw.Contexts[name]; ok {
				context = name
			}
		}
	}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: context}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("--cluster-kubeconfig/--cluster-context: %w", err)
	}
	return cfg, nil
}

func kubeClient(cfg *rest.Config) (client.Client, error) {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, clusterv1alpha1.AddToScheme} {
		if err := add(scheme); err != nil {
			return nil, err
		}
	}
	return client.New(cfg, client.Options{Scheme: scheme})
}

func newJoinCommand() *cobra.Command {
	var member memberFlags
	var opts join.Options
	var dryRun bool
	cmd := &cobra.Command{
		Use:   "join CLUSTER_NAME --cluster-kubeconfig=<KUBECONFIG>",
		Short: "Register a cluster to the control plane in Push mode",
		Long: `Register a cluster to the control plane in Push mode, as karmadactl join does: in
the member, the namespace karmada-cluster (--cluster-namespace) with the ServiceAccount
karmada-<cluster> (full access) and karmada-impersonator, and their long-lived token
Secrets; in the control plane, their tokens in Secrets <cluster> and
<cluster>-impersonator and the Cluster, owning both. What karmada-impersonator may
impersonate, for the cluster proxy, is the controller-manager's (unifiedAuth): only
the users, groups and service accounts allowed clusters/proxy on the cluster.`,
		Example: `  flotillactl join member1 --cluster-kubeconfig=member1.kubeconfig --cluster-region=eu-west-1 --cluster-zones=a,b`,
		Args:    cobra.ExactArgs(1),
	}
	flags := newControlPlaneFlags(cmd)
	member.bind(cmd)
	cmd.Flags().StringVar(&opts.ClusterNamespace, "cluster-namespace", join.DefaultClusterNamespace, "namespace of the member's credentials, in the control plane and in the member")
	cmd.Flags().StringVar(&opts.Provider, "cluster-provider", "", "provider of the cluster, for spread constraints")
	cmd.Flags().StringVar(&opts.Region, "cluster-region", "", "region of the cluster, for spread constraints")
	cmd.Flags().StringSliceVar(&opts.Zones, "cluster-zones", nil, "zones of the cluster, for spread constraints")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "check the connections and print what would be done, without changing anything")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		opts.ClusterName = args[0]
		memberCfg, err := member.config(opts.ClusterName)
		if err != nil {
			return err
		}
		cpCfg, err := flags.ToRESTConfig()
		if err != nil {
			return err
		}
		return runJoin(cmd.Context(), cmd.OutOrStdout(), cpCfg, memberCfg, opts, dryRun)
	}
	return cmd
}

func runJoin(ctx context.Context, out io.Writer, cpCfg, memberCfg *rest.Config, opts join.Options, dryRun bool) error {
	opts.APIEndpoint = memberCfg.Host
	opts.CAData = memberCfg.CAData
	if len(opts.CAData) == 0 && memberCfg.CAFile != "" {
		if err := rest.LoadTLSFiles(memberCfg); err != nil {
			return fmt.Errorf("reading the member's CA: %w", err)
		}
		opts.CAData = memberCfg.CAData
	}
	opts.InsecureSkipTLSVerification = memberCfg.Insecure
	if memberCfg.Proxy != nil {
		u, err := memberCfg.Proxy(nil)
		if err != nil {
			return fmt.Errorf("the member's proxy: %w", err)
		}
		if u != nil {
			opts.ProxyURL = u.String()
		}
	}
	memberClient, err := kubeClient(memberCfg)
	if err != nil {
		return err
	}
	cp, err := kubeClient(cpCfg)
	if err != nil {
		return err
	}
	id, err := join.MemberID(ctx, memberClient)
	if err != nil {
		return err
	}
	if dryRun {
		fmt.Fprintf(out, "cluster(%s) would be joined: member %s (ID %s), credentials in %s (dry run)\n", opts.ClusterName, opts.APIEndpoint, id, opts.ClusterNamespace)
		return nil
	}
	creds, err := join.GrantAccess(ctx, memberClient, opts)
	if err != nil {
		return err
	}
	if _, err := join.Register(ctx, cp, id, creds, opts); err != nil {
		return err
	}
	_, err = fmt.Fprintf(out, "cluster(%s) is joined successfully\n", opts.ClusterName)
	return err
}

func newUnjoinCommand() *cobra.Command {
	var member memberFlags
	var namespace string
	var wait time.Duration
	cmd := &cobra.Command{
		Use:   "unjoin CLUSTER_NAME [--cluster-kubeconfig=<KUBECONFIG>]",
		Short: "Remove a Push cluster from the control plane",
		Long: `Remove a Push cluster from the control plane, as karmadactl unjoin does: the
Cluster is deleted and awaited (the control plane first removes what it propagated
there), then, with --cluster-kubeconfig, what join created in the member is removed.`,
		Args: cobra.ExactArgs(1),
	}
	flags := newControlPlaneFlags(cmd)
	member.bind(cmd)
	cmd.Flags().StringVar(&namespace, "cluster-namespace", join.DefaultClusterNamespace, "namespace of the member's credentials")
	cmd.Flags().DurationVar(&wait, "wait", time.Minute, "how long to wait for the Cluster to be deleted")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		name := args[0]
		cpCfg, err := flags.ToRESTConfig()
		if err != nil {
			return err
		}
		cp, err := kubeClient(cpCfg)
		if err != nil {
			return err
		}
		var memberClient client.Client
		if member.kubeconfig != "" || member.context != "" {
			memberCfg, err := member.config(name)
			if err != nil {
				return err
			}
			if memberClient, err = kubeClient(memberCfg); err != nil {
				return err
			}
		}
		if err := join.Unjoin(cmd.Context(), cp, memberClient, name, namespace, wait); err != nil {
			return err
		}
		_, err = fmt.Fprintf(cmd.OutOrStdout(), "cluster(%s) is unjoined successfully\n", name)
		return err
	}
	return cmd
}
