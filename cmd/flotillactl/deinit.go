package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/storage/driver"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorv1alpha1 "github.com/flotilla-io/flotilla/api/operator/v1alpha1"
)

type deinitOptions struct {
	namespace, name string
	dryRun, force   bool
	timeout         time.Duration
}

func newDeinitCommand() *cobra.Command {
	o := &deinitOptions{}
	cmd := &cobra.Command{
		Use:   "deinit",
		Short: "Remove what flotillactl init installed from the host cluster",
		Long: `Remove Flotilla from the host cluster of --kubeconfig/--context, as karmadactl
deinit removes Karmada: the Karmada resource --name in --namespace first,
waiting until the operator has uninstalled its control plane (etcd's data and
the certificates go with it, unless the resource sets preserveDataOnDeletion),
then the operator's Helm release flotilla-operator, the Secrets init made, and
the namespace when init created it. The operator stays while other Karmada
resources of its namespace need it. The Karmada CRD stays: deleting it would delete
every Karmada resource of the host.

It asks before removing anything, unless --force.`,
		Example: `  flotillactl deinit
  flotillactl deinit -n karmada-system --name karmada --force`,
		Args: cobra.NoArgs,
	}
	host := newHostFlags(cmd)
	f := cmd.Flags()
	f.StringVarP(&o.namespace, "namespace", "n", "karmada-system", "namespace init installed into")
	f.StringVar(&o.name, "name", "karmada", "name of the Karmada resource")
	f.BoolVar(&o.dryRun, "dry-run", false, "print what would be removed, and remove nothing")
	f.BoolVarP(&o.force, "force", "f", false, "remove without asking for confirmation")
	f.DurationVar(&o.timeout, "timeout", 5*time.Minute, "how long to wait for the operator to uninstall the control plane; 0 waits forever")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if o.namespace == "" {
			return errors.New("--namespace: must not be empty")
		}
		if o.name == "" {
			return errors.New("--name: must not be empty")
		}
		if o.timeout < 0 {
			return fmt.Errorf("--timeout: %s: must not be negative", o.timeout)
		}
		return runDeinit(cmd.Context(), cmd.InOrStdin(), cmd.OutOrStdout(), host, o)
	}
	return cmd
}

func runDeinit(ctx context.Context, in io.Reader, out io.Writer, host hostFlags, o *deinitOptions) error {
	cl, err := host.client()
	if err != nil {
		return err
	}
	cfg, err := host.helm(o.namespace)
	if err != nil {
		return err
	}
	key := client.ObjectKey{Namespace: o.namespace, Name: o.name}

	// What is there to remove.
	k := &operatorv1alpha1.Karmada{}
	err = cl.Get(ctx, key, k)
	hasKarmada := err == nil
	if err != nil && !apierrors.IsNotFound(err) && !meta.IsNoMatchError(err) {
		return fmt.Errorf("reading Karmada %s: %w", key, err)
	}
	others, err := otherKarmadas(ctx, cl, key)
	if err != nil {
		return err
	}
	hasRelease := true
	if _, err := action.NewGet(cfg).Run(operatorRelease); errors.Is(err, driver.ErrReleaseNotFound) {
		hasRelease = false
	} else if err != nil {
		return fmt.Errorf("reading Helm release %s in %s: %w", operatorRelease, o.namespace, err)
	}
	secrets := &corev1.SecretList{}
	if err := cl.List(ctx, secrets, client.InNamespace(o.namespace), client.MatchingLabels{labelCreatedBy: createdBy}); err != nil {
		return fmt.Errorf("listing Secrets of %s: %w", o.namespace, err)
	}
	ns := &corev1.Namespace{}
	ownNamespace := false
	if err := cl.Get(ctx, client.ObjectKey{Name: o.namespace}, ns); err == nil {
		ownNamespace = ns.Labels[labelCreatedBy] == createdBy
	} else if !apierrors.IsNotFound(err) {
		return fmt.Errorf("reading namespace %s: %w", o.namespace, err)
	}

	var plan []string
	if hasKarmada {
		plan = append(plan, fmt.Sprintf("Karmada %s and its control plane", key))
	}
	keepOperator := len(others) > 0
	if hasRelease && !keepOperator {
		plan = append(plan, fmt.Sprintf("the operator (Helm release %s in %s)", operatorRelease, o.namespace))
	}
	for _, s := range secrets.Items {
		plan = append(plan, fmt.Sprintf("Secret %s/%s", s.Namespace, s.Name))
	}
	if ownNamespace && !keepOperator {
		plan = append(plan, "namespace "+o.namespace)
	}
	if len(plan) == 0 {
		fmt.Fprintf(out, "Nothing to remove: no Karmada %s and no operator release in %s\n", key, o.namespace)
		return nil
	}
	fmt.Fprintln(out, "deinit removes:")
	for _, p := range plan {
		fmt.Fprintln(out, "  - "+p)
	}
	if keepOperator && hasRelease {
		fmt.Fprintf(out, "The operator stays: it runs %v too.\n", others)
	}
	if o.dryRun {
		fmt.Fprintln(out, "(dry run: nothing was removed)")
		return nil
	}
	if !o.force && !confirm(in, out, "Remove them?") {
		return errors.New("cancelled: nothing was removed (pass --force to skip the question)")
	}

	started := time.Now()
	step := func(format string, args ...any) {
		fmt.Fprintf(out, "[%5s] %s\n", time.Since(started).Round(time.Second), fmt.Sprintf(format, args...))
	}
	if hasKarmada {
		if err := cl.Delete(ctx, k); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting Karmada %s: %w", key, err)
		}
		pr := &progress{step: step}
		last, err := pollUntil(ctx, o.timeout, func(ctx context.Context) (bool, string, error) {
			err := cl.Get(ctx, key, k)
			if apierrors.IsNotFound(err) {
				return true, "", nil
			}
			if err != nil {
				return false, "", fmt.Errorf("reading Karmada %s: %w", key, err)
			}
			msg := fmt.Sprintf("waiting for the operator to uninstall Karmada %s (finalizers %v)", key, k.Finalizers)
			if c := meta.FindStatusCondition(k.Status.Conditions, operatorv1alpha1.ConditionReady); c != nil && c.Reason == operatorv1alpha1.ReasonDeleting {
				msg += ": " + c.Message
			}
			pr.show(msg)
			return false, msg, nil
		})
		if err != nil {
			return fmt.Errorf("%s after %s: %w; the operator (Deployment %s/%s) must be running to uninstall it: see its logs, then run deinit again",
				last, time.Since(started).Round(time.Second), err, o.namespace, operatorRelease)
		}
		step("Removed Karmada %s", key)
	}
	if keepOperator {
		return nil
	}
	if hasRelease {
		if _, err := action.NewUninstall(cfg).Run(operatorRelease); err != nil && !errors.Is(err, driver.ErrReleaseNotFound) {
			return fmt.Errorf("uninstalling Helm release %s in %s: %w; `helm uninstall %s -n %s` retries it", operatorRelease, o.namespace, err, operatorRelease, o.namespace)
		}
		step("Uninstalled the operator (Helm release %s)", operatorRelease)
	}
	for i := range secrets.Items {
		if err := cl.Delete(ctx, &secrets.Items[i]); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting Secret %s/%s: %w", o.namespace, secrets.Items[i].Name, err)
		}
	}
	if ownNamespace {
		if err := cl.Delete(ctx, ns); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting namespace %s: %w", o.namespace, err)
		}
		step("Deleting namespace %s", o.namespace)
	}
	step("Flotilla is removed from the host cluster")
	return nil
}

// otherKarmadas are the Karmada resources of key's namespace besides key,
// which the operator init installed there still serves.
func otherKarmadas(ctx context.Context, cl client.Client, key client.ObjectKey) ([]string, error) {
	list := &operatorv1alpha1.KarmadaList{}
	err := cl.List(ctx, list, client.InNamespace(key.Namespace))
	if meta.IsNoMatchError(err) || apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("listing Karmada resources: %w", err)
	}
	var out []string
	for _, k := range list.Items {
		if client.ObjectKeyFromObject(&k) != key {
			out = append(out, client.ObjectKeyFromObject(&k).String())
		}
	}
	return out, nil
}
