package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/cli-runtime/pkg/resource"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/util/retry"
	"k8s.io/kubectl/pkg/cmd/apply"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/promote"
)

// newApplyCommand is kubectl apply against the control plane, plus
// karmadactl's --all-clusters and --clusters, which propagate what was
// applied with a policy per object.
func newApplyCommand() *cobra.Command {
	var (
		allClusters bool
		clusters    []string
	)
	flags := genericclioptions.NewConfigFlags(true)
	var applyFlags *apply.ApplyFlags
	cmd := &cobra.Command{
		Use:   "apply (-f FILENAME | -k DIRECTORY) [--all-clusters | --clusters=member1,member2]",
		Short: "Apply a configuration to the control plane, and propagate it",
		Long: `Apply a configuration to the control plane as kubectl apply does (same flags).
With --all-clusters, or --clusters naming members, each applied object also gets a
PropagationPolicy (ClusterPropagationPolicy when cluster-scoped) of its own name and
kind placing it on those members, as karmadactl apply does; applying again updates
the placement.`,
		Example: `  # Apply and propagate to every member
  flotillactl apply -f nginx.yaml --all-clusters`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if allClusters && len(clusters) > 0 {
				return errors.New("--all-clusters and --clusters: give one of them")
			}
			// The streams are the command's as run, not as built.
			applyFlags.IOStreams = genericiooptions.IOStreams{In: cmd.InOrStdin(), Out: cmd.OutOrStdout(), ErrOut: cmd.ErrOrStderr()}
			f := cmdutil.NewFactory(flags)
			o, err := applyFlags.ToOptions(f, cmd, "flotillactl", args)
			if err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return err
			}
			var targets []string
			if allClusters || len(clusters) > 0 {
				// Members are checked before anything is applied.
				if targets, err = memberNames(cmd.Context(), flags, clusters); err != nil {
					return err
				}
			}
			if err := o.Run(); err != nil {
				return err
			}
			if targets == nil || o.DryRunStrategy != cmdutil.DryRunNone {
				return nil
			}
			infos, err := o.GetObjects()
			if err != nil {
				return err
			}
			return propagate(cmd.Context(), flags, infosToRefs(infos), targets, cmd.OutOrStdout())
		},
	}
	flags.AddFlags(cmd.Flags())
	applyFlags = apply.NewApplyFlags(genericiooptions.IOStreams{})
	applyFlags.AddFlags(cmd)
	cmd.Flags().BoolVar(&allClusters, "all-clusters", false, "Propagate every applied object to all members.")
	cmd.Flags().StringSliceVar(&clusters, "clusters", nil, "Propagate every applied object to these members, e.g. --clusters=member1,member2.")
	return cmd
}

// memberNames checks the named members exist; none named means all of
// them, sorted.
func memberNames(ctx context.Context, flags *genericclioptions.ConfigFlags, named []string) ([]string, error) {
	c, err := controlPlaneFlags{flags}.client()
	if err != nil {
		return nil, err
	}
	var list clusterv1alpha1.ClusterList
	if err := c.List(ctx, &list); err != nil {
		return nil, fmt.Errorf("listing the member clusters: %w", err)
	}
	var all []string
	for _, cl := range list.Items {
		all = append(all, cl.Name)
	}
	slices.Sort(all)
	if len(named) == 0 {
		if len(all) == 0 {
			return nil, errors.New("--all-clusters: the control plane has no member clusters")
		}
		return all, nil
	}
	for _, n := range named {
		if !slices.Contains(all, n) {
			return nil, fmt.Errorf("--clusters: cluster %q is not a member (see flotillactl get clusters)", n)
		}
	}
	return named, nil
}

// propagate creates or updates one policy per object, placing it on
// clusters.
func propagate(ctx context.Context, flags *genericclioptions.ConfigFlags, objs []objectRef, clusters []string, out io.Writer) error {
	cfg, err := flags.ToRESTConfig()
	if err != nil {
		return err
	}
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, policyv1alpha1.AddToScheme} {
		if err := add(scheme); err != nil {
			return err
		}
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return err
	}
	var errs []error
	for _, o := range objs {
		name := promote.PolicyName(o.namespace, o.name, o.gvk)
		spec := policyv1alpha1.PropagationSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: o.gvk.GroupVersion().String(), Kind: o.gvk.Kind, Namespace: o.namespace, Name: o.name}},
			Placement:         policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: clusters}},
		}
		var policy client.Object
		kind := "PropagationPolicy"
		if o.namespace != "" {
			policy = &policyv1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: o.namespace, Name: name}, Spec: spec}
		} else {
			kind = "ClusterPropagationPolicy"
			policy = &policyv1alpha1.ClusterPropagationPolicy{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: spec}
		}
		verb, err := createOrSetPlacement(ctx, c, policy, clusters)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s %s for %s %s: %w", kind, name, o.gvk.Kind, o.name, err))
			continue
		}
		fmt.Fprintf(out, "%s %s %s\n", kind, name, verb)
	}
	return errors.Join(errs...)
}

// createOrSetPlacement creates policy, or sets the placement of the one
// that exists.
func createOrSetPlacement(ctx context.Context, c client.Client, policy client.Object, clusters []string) (string, error) {
	err := c.Create(ctx, policy)
	if err == nil {
		return "created", nil
	}
	if !apierrors.IsAlreadyExists(err) {
		return "", err
	}
	return "configured", retry.RetryOnConflict(retry.DefaultRetry, func() error {
		existing := policy.DeepCopyObject().(client.Object)
		if err := c.Get(ctx, client.ObjectKeyFromObject(policy), existing); err != nil {
			return err
		}
		switch p := existing.(type) {
		case *policyv1alpha1.PropagationPolicy:
			p.Spec.Placement.ClusterAffinity = &policyv1alpha1.ClusterAffinity{ClusterNames: clusters}
		case *policyv1alpha1.ClusterPropagationPolicy:
			p.Spec.Placement.ClusterAffinity = &policyv1alpha1.ClusterAffinity{ClusterNames: clusters}
		}
		return c.Update(ctx, existing)
	})
}

// objectRef names one applied object.
type objectRef struct {
	gvk             schema.GroupVersionKind
	namespace, name string
}

func infosToRefs(infos []*resource.Info) []objectRef {
	out := make([]objectRef, 0, len(infos))
	for _, info := range infos {
		ref := objectRef{gvk: info.Mapping.GroupVersionKind, name: info.Name}
		if info.Mapping.Scope.Name() == meta.RESTScopeNameNamespace {
			ref.namespace = info.Namespace
		}
		out = append(out, ref)
	}
	return out
}
