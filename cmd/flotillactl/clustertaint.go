package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
)

// controlPlaneFlags are kubectl's connection flags (--kubeconfig,
// --context, --server, ...), naming the control plane.
type controlPlaneFlags struct {
	*genericclioptions.ConfigFlags
}

func newControlPlaneFlags(cmd *cobra.Command) controlPlaneFlags {
	f := genericclioptions.NewConfigFlags(true)
	f.AddFlags(cmd.Flags())
	return controlPlaneFlags{f}
}

// client connects to the control plane with the cluster.karmada.io types.
func (f controlPlaneFlags) client() (client.Client, error) {
	cfg, err := f.ToRESTConfig()
	if err != nil {
		return nil, err
	}
	scheme := runtime.NewScheme()
	if err := clusterv1alpha1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	return client.New(cfg, client.Options{Scheme: scheme})
}

// dryRun is kubectl's --dry-run: none, client (print only) or server
// (sent, not persisted).
type dryRun string

const (
	dryRunNone   dryRun = "none"
	dryRunClient dryRun = "client"
	dryRunServer dryRun = "server"
)

func (d *dryRun) String() string { return string(*d) }
func (d *dryRun) Type() string   { return "string" }
func (d *dryRun) Set(v string) error {
	switch dryRun(v) {
	case dryRunNone, dryRunClient, dryRunServer:
		*d = dryRun(v)
		return nil
	}
	return fmt.Errorf(`--dry-run: %q is not one of "none", "client", "server"`, v)
}

func (d dryRun) suffix() string {
	if d == dryRunNone {
		return ""
	}
	return " (" + string(d) + " dry run)"
}

// updateTaints reads cluster name, applies edit to its taints and writes
// them back unless nothing changed, retrying on conflicts. edit returns the
// verb to print (e.g. "tainted"), or an error that leaves the cluster as it
// is.
func updateTaints(ctx context.Context, c client.Client, name string, mode dryRun, edit func([]corev1.Taint) ([]corev1.Taint, string, error)) (string, error) {
	var verb string
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var cluster clusterv1alpha1.Cluster
		if err := c.Get(ctx, client.ObjectKey{Name: name}, &cluster); err != nil {
			return err
		}
		taints, v, err := edit(slices.Clone(cluster.Spec.Taints))
		if err != nil {
			return err
		}
		verb = v
		if slices.EqualFunc(taints, cluster.Spec.Taints, func(a, b corev1.Taint) bool { return a.MatchTaint(&b) && a.Value == b.Value }) || mode == dryRunClient {
			return nil
		}
		cluster.Spec.Taints = taints
		var opts []client.UpdateOption
		if mode == dryRunServer {
			opts = append(opts, client.DryRunAll)
		}
		return c.Update(ctx, &cluster, opts...)
	})
	if apierrors.IsNotFound(err) {
		return "", fmt.Errorf("cluster %q not found", name)
	}
	return verb, err
}

// cordonTaint is what cordon adds, as karmadactl does: new bindings keep
// off the cluster, those on it stay.
func cordonTaint() corev1.Taint {
	return corev1.Taint{Key: clusterv1alpha1.TaintClusterUnschedulable, Effect: corev1.TaintEffectNoSchedule}
}

func newCordonCommand(cordon bool) *cobra.Command {
	use, short := "cordon CLUSTER", "Mark a cluster unschedulable: no new placements, existing ones stay"
	if !cordon {
		use, short = "uncordon CLUSTER", "Mark a cluster schedulable again"
	}
	mode := dryRunNone
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Long: short + `.

Cordoning adds the taint ` + clusterv1alpha1.TaintClusterUnschedulable + `:NoSchedule to the Cluster;
uncordoning removes it.`,
		Args: cobra.ExactArgs(1),
	}
	flags := newControlPlaneFlags(cmd)
	cmd.Flags().Var(&mode, "dry-run", `"none", "client" (print what would change) or "server" (send, do not persist)`)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		c, err := flags.client()
		if err != nil {
			return err
		}
		return runCordon(cmd.Context(), cmd.OutOrStdout(), c, args[0], cordon, mode)
	}
	return cmd
}

func runCordon(ctx context.Context, out io.Writer, c client.Client, name string, cordon bool, mode dryRun) error {
	taint := cordonTaint()
	verb, err := updateTaints(ctx, c, name, mode, func(taints []corev1.Taint) ([]corev1.Taint, string, error) {
		matches := func(t corev1.Taint) bool { return t.MatchTaint(&taint) }
		has := slices.ContainsFunc(taints, matches)
		switch {
		case cordon && has:
			return taints, "already cordoned", nil
		case cordon:
			return append(taints, taint), "cordoned", nil
		case !has:
			return taints, "already uncordoned", nil
		}
		return slices.DeleteFunc(taints, matches), "uncordoned", nil
	})
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(out, "cluster/%s %s%s\n", name, verb, mode.suffix())
	return err
}

// taintSpec is one argument of taint: a taint to add, or one to remove
// (key, and effect when given).
type taintSpec struct {
	taint  corev1.Taint
	remove bool
}

// parseTaintSpec reads kubectl's syntax: key[=value]:Effect adds,
// key[:Effect]- removes. Written here because kubectl keeps its parser
// unexported.
func parseTaintSpec(arg string) (taintSpec, error) {
	spec := taintSpec{remove: strings.HasSuffix(arg, "-")}
	body := strings.TrimSuffix(arg, "-")
	keyValue, effect, hasEffect := strings.Cut(body, ":")
	key, value, hasValue := strings.Cut(keyValue, "=")
	if spec.remove && hasValue {
		return spec, fmt.Errorf("taint %q: a taint to remove names its key and effect, not a value", arg)
	}
	if errs := validation.IsQualifiedName(key); len(errs) > 0 {
		return spec, fmt.Errorf("taint %q: key %q: %s", arg, key, strings.Join(errs, "; "))
	}
	if errs := validation.IsValidLabelValue(value); len(errs) > 0 {
		return spec, fmt.Errorf("taint %q: value %q: %s", arg, value, strings.Join(errs, "; "))
	}
	spec.taint = corev1.Taint{Key: key, Value: value, Effect: corev1.TaintEffect(effect)}
	switch {
	case hasEffect:
		switch spec.taint.Effect {
		case corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute:
		default:
			return spec, fmt.Errorf("taint %q: effect %q is not one of NoSchedule, PreferNoSchedule, NoExecute", arg, effect)
		}
	case !spec.remove:
		return spec, fmt.Errorf("taint %q: an effect is required to add a taint (key[=value]:Effect)", arg)
	}
	return spec, nil
}

// applyTaintSpecs edits taints as kubectl taint does: removals first, by
// key and (when given) effect, each required to match something; then
// additions, which replace a taint of the same key and effect only with
// overwrite.
func applyTaintSpecs(taints []corev1.Taint, specs []taintSpec, overwrite bool) ([]corev1.Taint, string, error) {
	var added, removed bool
	for _, s := range specs {
		if !s.remove {
			continue
		}
		before := len(taints)
		taints = slices.DeleteFunc(taints, func(t corev1.Taint) bool {
			return t.Key == s.taint.Key && (s.taint.Effect == "" || t.Effect == s.taint.Effect)
		})
		if len(taints) == before {
			return nil, "", fmt.Errorf("taint %q not found", s.taint.ToString())
		}
		removed = true
	}
	for _, s := range specs {
		if s.remove {
			continue
		}
		i := slices.IndexFunc(taints, func(t corev1.Taint) bool { return t.MatchTaint(&s.taint) })
		switch {
		case i < 0:
			taints = append(taints, s.taint)
		case !overwrite:
			return nil, "", fmt.Errorf("taint %s:%s already exists and --overwrite is false", s.taint.Key, s.taint.Effect)
		default:
			taints[i] = s.taint
		}
		added = true
	}
	switch {
	case added && removed:
		return taints, "modified", nil
	case removed:
		return taints, "untainted", nil
	}
	return taints, "tainted", nil
}

func newTaintCommand() *cobra.Command {
	var overwrite, all bool
	var selector string
	mode := dryRunNone
	cmd := &cobra.Command{
		Use:   "taint clusters NAME KEY_1=VAL_1:TAINT_EFFECT_1 ... KEY_N=VAL_N:TAINT_EFFECT_N",
		Short: "Update the taints of one or more clusters",
		Long: `Update the taints of one or more clusters, with kubectl taint's syntax:
key[=value]:Effect adds a taint, key[:Effect]- removes it. Effects: NoSchedule,
PreferNoSchedule, NoExecute (which evicts bindings that do not tolerate it,
when the control plane runs NoExecute eviction).`,
		Example: `  flotillactl taint clusters member1 dedicated=ml:NoSchedule
  flotillactl taint clusters member1 dedicated:NoSchedule-
  flotillactl taint clusters -l env=staging maintenance:NoExecute`,
		Args: cobra.MinimumNArgs(2),
	}
	flags := newControlPlaneFlags(cmd)
	cmd.Flags().BoolVar(&overwrite, "overwrite", false, "replace a taint of the same key and effect")
	cmd.Flags().BoolVar(&all, "all", false, "every cluster")
	cmd.Flags().StringVarP(&selector, "selector", "l", "", "clusters whose labels match this selector")
	cmd.Flags().Var(&mode, "dry-run", `"none", "client" (print what would change) or "server" (send, do not persist)`)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		switch args[0] {
		case "cluster", "clusters", "cluster.cluster.karmada.io", "clusters.cluster.karmada.io":
		default:
			return fmt.Errorf("resource %q: only clusters can be tainted here", args[0])
		}
		args = args[1:]
		var names []string
		if !all && selector == "" {
			names, args = args[:1], args[1:]
		}
		if len(args) == 0 {
			return fmt.Errorf("at least one taint is required")
		}
		specs := make([]taintSpec, len(args))
		for i, a := range args {
			var err error
			if specs[i], err = parseTaintSpec(a); err != nil {
				return err
			}
		}
		c, err := flags.client()
		if err != nil {
			return err
		}
		if names == nil {
			if names, err = clusterNames(cmd.Context(), c, selector); err != nil {
				return err
			}
		}
		for _, name := range names {
			verb, err := updateTaints(cmd.Context(), c, name, mode, func(taints []corev1.Taint) ([]corev1.Taint, string, error) {
				return applyTaintSpecs(taints, specs, overwrite)
			})
			if err != nil {
				return fmt.Errorf("cluster %s: %w", name, err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "cluster/%s %s%s\n", name, verb, mode.suffix())
		}
		return nil
	}
	return cmd
}

// clusterNames lists the clusters matching selector (every one when empty).
func clusterNames(ctx context.Context, c client.Client, selector string) ([]string, error) {
	sel, err := labels.Parse(selector)
	if err != nil {
		return nil, fmt.Errorf("--selector: %w", err)
	}
	var list clusterv1alpha1.ClusterList
	if err := c.List(ctx, &list, &client.ListOptions{LabelSelector: sel}); err != nil {
		return nil, err
	}
	names := make([]string, len(list.Items))
	for i := range list.Items {
		names[i] = list.Items[i].Name
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("no cluster matches %q", selector)
	}
	return names, nil
}
