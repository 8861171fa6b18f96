package main

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/bootstrap"
	"github.com/flotilla-io/flotilla/internal/release"
)

// fullClient is a client of cfg that knows client-go's types and Clusters:
// registration writes Secrets, ConfigMaps, RBAC and the agent's objects.
func fullClient(cfg *rest.Config, what string) (client.Client, error) {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, clusterv1alpha1.AddToScheme} {
		if err := add(scheme); err != nil {
			return nil, err
		}
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, fmt.Errorf("client of the %s: %w", what, err)
	}
	return c, nil
}

// connect reaches the cluster kubectl's flags name.
func connect(flags controlPlaneFlags, what string) (client.Client, *rest.Config, error) {
	cfg, err := flags.ToRESTConfig()
	if err != nil {
		return nil, nil, fmt.Errorf("kubeconfig of the %s: %w", what, err)
	}
	c, err := fullClient(cfg, what)
	return c, cfg, err
}

func newTokenCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "token",
		Short: "Manage the bootstrap tokens with which Pull members register (kubectl's flags name the control plane)",
	}
	cp := controlPlaneFlags{genericclioptions.NewConfigFlags(true)}
	cp.AddFlags(cmd.PersistentFlags())

	var ttl time.Duration
	var description string
	var printRegister bool
	create := &cobra.Command{
		Use:   "create",
		Short: "Create a bootstrap token and publish the control plane's cluster-info for registering members",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, cfg, err := connect(cp, "control plane")
			if err != nil {
				return err
			}
			ca := cfg.CAData
			if len(ca) == 0 && cfg.CAFile != "" {
				return fmt.Errorf("the control plane's kubeconfig names its CA by file (%s); embed it (certificate-authority-data) so it can be published", cfg.CAFile)
			}
			if err := bootstrap.EnsureClusterInfo(cmd.Context(), c, cfg.Host, ca); err != nil {
				return err
			}
			t, err := bootstrap.CreateToken(cmd.Context(), c, ttl, description)
			if err != nil {
				return err
			}
			if !printRegister {
				_, err := fmt.Fprintln(cmd.OutOrStdout(), t.String())
				return err
			}
			hash, err := bootstrap.CAHash(ca)
			if err != nil {
				return err
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "flotillactl register %s --token %s --discovery-token-ca-cert-hash %s --cluster-name <name>\n", cfg.Host, t, hash)
			return err
		},
	}
	create.Flags().DurationVar(&ttl, "ttl", bootstrap.DefaultTokenTTL, "how long the token is valid; 0 never expires")
	create.Flags().StringVar(&description, "description", "", "what the token is for")
	create.Flags().BoolVar(&printRegister, "print-register-command", false, "print the whole register command rather than the token alone")

	list := &cobra.Command{
		Use:   "list",
		Short: "List the registration tokens",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, _, err := connect(cp, "control plane")
			if err != nil {
				return err
			}
			tokens, err := bootstrap.ListTokens(cmd.Context(), c)
			if err != nil {
				return err
			}
			return printTokens(cmd.OutOrStdout(), tokens)
		},
	}
	del := &cobra.Command{
		Use:   "delete <token-id>...",
		Short: "Delete registration tokens, by id or whole token",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, _, err := connect(cp, "control plane")
			if err != nil {
				return err
			}
			for _, id := range args {
				if err := bootstrap.DeleteToken(cmd.Context(), c, id); err != nil {
					return err
				}
				if _, err := fmt.Fprintf(cmd.OutOrStdout(), "bootstrap token %q deleted\n", id); err != nil {
					return err
				}
			}
			return nil
		},
	}
	cmd.AddCommand(create, list, del)
	return cmd
}

func printTokens(out io.Writer, tokens []bootstrap.Token) error {
	w := tabwriter.NewWriter(out, 0, 8, 2, ' ', 0)
	fmt.Fprintln(w, "TOKEN\tEXPIRES\tDESCRIPTION")
	for _, t := range tokens {
		expires := "<never>"
		if !t.Expires.IsZero() {
			expires = t.Expires.Format(time.RFC3339)
		}
		fmt.Fprintf(w, "%s\t%s\t%s\n", t, expires, t.Description)
	}
	return w.Flush()
}

func newRegisterCommand() *cobra.Command {
	var o bootstrap.RegisterOptions
	var token string
	var certSeconds int
	var member controlPlaneFlags
	cmd := &cobra.Command{
		Use:   "register <control-plane-endpoint>",
		Short: "Register this member in Pull mode: get its agent a certificate with a bootstrap token and install the agent",
		Long: `Reads the control plane's cluster-info with the bootstrap token, trusts its CA only if
it has one of the --discovery-token-ca-cert-hash pins, asks for the agent's client
certificate (system:karmada:agent:<cluster-name>) with a CSR that the control plane's
controller-manager approves, and installs into the member the agent's
kubeconfig Secret, ServiceAccount and Deployment (namespace karmada-system). The agent
then registers the Cluster in Pull mode. It runs from the member's side, as karmadactl
register does: kubectl's flags (--kubeconfig, --context, ...) name the member.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			t, err := bootstrap.ParseToken(token)
			if err != nil {
				return err
			}
			if certSeconds < 0 {
				return fmt.Errorf("--cert-expiration-seconds must not be negative, got %d", certSeconds)
			}
			c, _, err := connect(member, "member")
			if err != nil {
				return err
			}
			o.Endpoint, o.Token, o.Member = args[0], t, c
			o.CertExpiration = time.Duration(certSeconds) * time.Second
			if _, err := bootstrap.Register(cmd.Context(), o); err != nil {
				return err
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "Cluster %s registered: its agent (%s) runs in namespace %s of the member\n", o.ClusterName, o.AgentImage, bootstrap.AgentNamespace)
			return err
		},
	}
	// kubectl's flags but its --token: register's is the bootstrap token,
	// as karmadactl's.
	member = controlPlaneFlags{genericclioptions.NewConfigFlags(true)}
	member.BearerToken = nil
	member.AddFlags(cmd.Flags())
	f := cmd.Flags()
	f.StringVar(&token, "token", "", "bootstrap token (flotillactl token create)")
	f.StringSliceVar(&o.CAHashes, "discovery-token-ca-cert-hash", nil, "pin of the control plane's CA, sha256:<hex> (repeatable)")
	f.StringVar(&o.ClusterName, "cluster-name", "", "name of the member in the control plane")
	f.StringVar(&o.AgentImage, "karmada-agent-image", release.Agent.Image("", release.Version), "image of the agent")
	f.IntVar(&certSeconds, "cert-expiration-seconds", 0, "validity asked for the agent's certificate; 0 is the signer's default")
	f.DurationVar(&o.Timeout, "discovery-timeout", 2*time.Minute, "how long to wait for the agent's certificate")
	return cmd
}

func newUnregisterCommand() *cobra.Command {
	var member memberFlags
	var cp controlPlaneFlags
	var timeout time.Duration
	cmd := &cobra.Command{
		Use: "unregister <cluster-name>",
		Short: "Remove a Pull member: its Cluster (its Works leave the member first), its agent's rights and, " +
			"with --cluster-kubeconfig or --cluster-context, the agent; kubectl's flags name the control plane",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, _, err := connect(cp, "control plane")
			if err != nil {
				return err
			}
			var m client.Client
			if member.kubeconfig != "" || member.context != "" {
				cfg, err := member.config(args[0])
				if err != nil {
					return err
				}
				if m, err = fullClient(cfg, "member"); err != nil {
					return err
				}
			}
			if err := bootstrap.Unregister(cmd.Context(), c, m, args[0], timeout); err != nil {
				return err
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "Cluster %s unregistered\n", args[0])
			return err
		},
	}
	cp = newControlPlaneFlags(cmd)
	member.bind(cmd)
	cmd.Flags().DurationVar(&timeout, "wait", 2*time.Minute, "how long to wait for the Cluster to go")
	return cmd
}
