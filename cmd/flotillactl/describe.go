package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/resource"
	"k8s.io/kubectl/pkg/describe"
)

// describeOptions are get's scope and selection flags plus kubectl
// describe's own.
type describeOptions struct {
	get        getOptions
	showEvents bool
	chunkSize  int64
}

func newDescribeCommand() *cobra.Command {
	o := &describeOptions{get: getOptions{scope: scopeKarmada}}
	cmd := &cobra.Command{
		Use:   "describe (-f FILENAME | TYPE [NAME_PREFIX | -l label] | TYPE/NAME)",
		Short: "Show details of resources of the control plane and of member clusters",
		Long: `Show the details of resources as kubectl describe does, from the control plane
(--operation-scope karmada, the default), from member clusters (members) through
the control plane's cluster proxy, or from both (all); each is headed by the
cluster it is in.`,
		Example: `  # The nginx Deployment in every member
  flotillactl describe deployment nginx --operation-scope members`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.run(cmd.Context(), cmd.OutOrStdout(), args)
		},
	}
	o.get.flags = genericclioptions.NewConfigFlags(true)
	o.get.flags.AddFlags(cmd.Flags())
	fs := cmd.Flags()
	fs.Var(&o.get.scope, "operation-scope", `Where to look: "karmada" (the control plane), "members" or "all".`)
	fs.StringSliceVarP(&o.get.clusters, "clusters", "C", nil, "Members to look in, e.g. -C=member1,member2; all members by default. Only with --operation-scope members or all.")
	fs.StringVarP(&o.get.selector, "selector", "l", "", "Label selector to filter on.")
	fs.BoolVarP(&o.get.allNamespaces, "all-namespaces", "A", false, "Describe across all namespaces.")
	fs.BoolVar(&o.showEvents, "show-events", true, "Show the events of the object.")
	fs.Int64Var(&o.chunkSize, "chunk-size", 500, "Return large lists in chunks rather than all at once.")
	return cmd
}

func (o *describeOptions) run(ctx context.Context, out io.Writer, args []string) error {
	g := &o.get
	if len(g.clusters) > 0 && g.scope == scopeKarmada {
		return errors.New("--clusters: only with --operation-scope members or all")
	}
	targets, err := g.targets(ctx)
	if err != nil {
		return err
	}
	namespace, _, err := g.flags.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return fmt.Errorf("reading the namespace of the kubeconfig: %w", err)
	}
	var errs []error
	first := true
	for _, t := range targets {
		infos, err := resource.NewBuilder(t.getter).Unstructured().
			NamespaceParam(namespace).DefaultNamespace().AllNamespaces(g.allNamespaces).
			LabelSelectorParam(g.selector).ResourceTypeOrNameArgs(true, args...).
			ContinueOnError().Latest().Flatten().Do().Infos()
		if err != nil {
			errs = append(errs, fmt.Errorf("cluster %s: %w", t.name, err))
		}
		for _, info := range infos {
			d, err := describe.Describer(t.getter, info.Mapping)
			if err != nil {
				errs = append(errs, fmt.Errorf("cluster %s: %w", t.name, err))
				continue
			}
			text, err := d.Describe(info.Namespace, info.Name, describe.DescriberSettings{ShowEvents: o.showEvents, ChunkSize: o.chunkSize})
			if err != nil {
				errs = append(errs, fmt.Errorf("cluster %s: %w", t.name, err))
				continue
			}
			if !first {
				fmt.Fprintln(out)
			}
			first = false
			fmt.Fprintf(out, "Cluster:      %s\n%s", t.name, text)
		}
	}
	return errors.Join(errs...)
}
