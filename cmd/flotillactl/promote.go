package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/cli-runtime/pkg/resource"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/promote"
)

type promoteOptions struct {
	get        getOptions
	cluster    string
	policyName string
	autoPolicy bool
	dryRun     bool
}

func newPromoteCommand() *cobra.Command {
	o := &promoteOptions{autoPolicy: true}
	cmd := &cobra.Command{
		Use:   "promote TYPE NAME -C CLUSTER [-n NAMESPACE]",
		Short: "Bring an object running in a member cluster under the control plane",
		Long: `Promote an object that already runs in a member cluster into the federation
without disturbing it, as karmadactl promote does: the object is read from the
member through the control plane's cluster proxy and created in the control plane
as a resource template (annotated work.karmada.io/conflict-resolution: overwrite),
with a PropagationPolicy (ClusterPropagationPolicy for a cluster-scoped object)
placing it on that member only. The member's object is then taken over in place:
a Deployment keeps its pods.`,
		Example: `  # Promote the nginx Deployment of member1's default namespace
  flotillactl promote deployment nginx -n default -C member1`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 2 {
				return fmt.Errorf("promote takes TYPE and NAME, got %d arguments", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.run(cmd.Context(), cmd.OutOrStdout(), args[0], args[1])
		},
	}
	o.get.flags = genericclioptions.NewConfigFlags(true)
	// --cluster is the member, as in karmadactl promote, not kubectl's
	// kubeconfig cluster.
	o.get.flags.ClusterName = nil
	o.get.flags.AddFlags(cmd.Flags())
	fs := cmd.Flags()
	fs.StringVarP(&o.cluster, "cluster", "C", "", "The member the object runs in.")
	fs.StringVar(&o.policyName, "policy-name", "", "Name of the created policy; by default the object's name and a hash of its namespace and kind.")
	fs.BoolVar(&o.autoPolicy, "auto-create-policy", true, "Create the policy; with false, only the template is created and a policy of yours must select it.")
	fs.BoolVar(&o.dryRun, "dry-run", false, "Print the template and policy as YAML and create nothing.")
	return cmd
}

func (o *promoteOptions) run(ctx context.Context, out io.Writer, typ, name string) error {
	if o.cluster == "" {
		return errors.New("--cluster: the member the object runs in is required")
	}
	o.get.scope, o.get.clusters = scopeMembers, []string{o.cluster}
	targets, err := o.get.targets(ctx)
	if err != nil {
		return err
	}
	namespace, _, err := o.get.flags.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return fmt.Errorf("reading the namespace of the kubeconfig: %w", err)
	}
	infos, err := resource.NewBuilder(targets[0].getter).Unstructured().
		NamespaceParam(namespace).DefaultNamespace().
		ResourceTypeOrNameArgs(false, typ, name).Flatten().Do().Infos()
	if err != nil {
		return fmt.Errorf("reading %s %s in cluster %s: %w", typ, name, o.cluster, err)
	}
	if len(infos) != 1 {
		return fmt.Errorf("%s %s names %d objects in cluster %s, want one", typ, name, len(infos), o.cluster)
	}
	obj, ok := infos[0].Object.(*unstructured.Unstructured)
	if !ok {
		return fmt.Errorf("unexpected %T", infos[0].Object)
	}
	opts := promote.Options{
		Cluster: o.cluster, GVK: obj.GroupVersionKind(), Namespace: obj.GetNamespace(), Name: obj.GetName(),
		PolicyName: o.policyName, NoPolicy: !o.autoPolicy,
	}
	res := promote.Plan(obj, opts)
	if o.dryRun {
		p := &printers.YAMLPrinter{}
		if err := p.PrintObj(res.Template, out); err != nil {
			return err
		}
		if res.Policy != nil {
			return p.PrintObj(res.Policy, out)
		}
		return nil
	}
	cfg, err := o.get.flags.ToRESTConfig()
	if err != nil {
		return err
	}
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, policyv1alpha1.AddToScheme} {
		if err := add(scheme); err != nil {
			return err
		}
	}
	cp, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return err
	}
	if err := promote.Create(ctx, cp, res, opts); err != nil {
		return err
	}
	what := obj.GetName()
	if opts.Namespace != "" {
		what = opts.Namespace + "/" + what
	}
	fmt.Fprintf(out, "%s %s promoted from cluster %s", obj.GetKind(), what, o.cluster)
	switch p := res.Policy.(type) {
	case *policyv1alpha1.PropagationPolicy:
		fmt.Fprintf(out, " (PropagationPolicy %s)", p.Name)
	case *policyv1alpha1.ClusterPropagationPolicy:
		fmt.Fprintf(out, " (ClusterPropagationPolicy %s)", p.Name)
	}
	fmt.Fprintln(out)
	return nil
}
