package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

// fieldOwner is the field manager of everything hack/deploy applies.
const fieldOwner = "flotilla-deploy"

// managerContainer is the operator's container in config/manager.
const managerContainer = "manager"

// Render runs kustomize on dir, as `kustomize build dir` does, and returns
// the objects in the order kustomize gives them. A non-empty image replaces
// the image of the operator's container.
func Render(dir, image string) ([]*unstructured.Unstructured, error) {
	resMap, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		return nil, fmt.Errorf("rendering %s: %w", dir, err)
	}
	objs := make([]*unstructured.Unstructured, 0, resMap.Size())
	for _, r := range resMap.Resources() {
		data, err := r.AsYAML()
		if err != nil {
			return nil, err
		}
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(data, &u.Object); err != nil {
			return nil, fmt.Errorf("%s: %w", r.CurId(), err)
		}
		objs = append(objs, u)
	}
	if image != "" {
		if err := setImage(objs, image); err != nil {
			return nil, err
		}
	}
	return objs, nil
}

// setImage points the operator's container at image.
func setImage(objs []*unstructured.Unstructured, image string) error {
	found := false
	for _, u := range objs {
		if u.GetKind() != kindDeployment {
			continue
		}
		containers, _, err := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
		if err != nil {
			return fmt.Errorf("deployment %s: %w", u.GetName(), err)
		}
		for i, c := range containers {
			c, ok := c.(map[string]any)
			if !ok || c["name"] != managerContainer {
				continue
			}
			c["image"] = image
			containers[i] = c
			found = true
		}
		if err := unstructured.SetNestedSlice(u.Object, containers, "spec", "template", "spec", "containers"); err != nil {
			return err
		}
	}
	if !found {
		return fmt.Errorf("no Deployment with a %q container to set the image of", managerContainer)
	}
	return nil
}

// applyOrder ranks kinds so that what others depend on comes first:
// namespaces and CRDs, then identities and their permissions, then the
// workload. Kinds not listed go last, in the order given.
var applyOrder = []string{
	"Namespace",
	kindCRD,
	"ServiceAccount",
	"ClusterRole",
	"Role",
	"ClusterRoleBinding",
	"RoleBinding",
	"ConfigMap",
	"Secret",
	"Service",
	kindDeployment,
}

func rank(u *unstructured.Unstructured) int {
	if i := slices.Index(applyOrder, u.GetKind()); i >= 0 {
		return i
	}
	return len(applyOrder)
}

// sorted returns objs in apply order, stable within a kind.
func sorted(objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	out := slices.Clone(objs)
	slices.SortStableFunc(out, func(a, b *unstructured.Unstructured) int { return rank(a) - rank(b) })
	return out
}

// Kinds handled apart from the others.
const (
	kindCRD        = "CustomResourceDefinition"
	kindDeployment = "Deployment"
)

// ref names an object as kubectl prints it: kind.group/name.
func ref(u *unstructured.Unstructured) string {
	kind := strings.ToLower(u.GetKind())
	if g := u.GroupVersionKind().Group; g != "" {
		kind += "." + g
	}
	return kind + "/" + u.GetName()
}

// Deployer applies and deletes a set of objects on one cluster.
type Deployer struct {
	Client client.Client
	// Out gets one line per object.
	Out io.Writer
	// Timeout bounds each wait: for a CRD to be established after it is
	// applied, and to be gone after it is deleted.
	Timeout time.Duration
}

// Apply server-side applies objs in dependency order, taking ownership of
// every field it sets, and waits for each CRD to be established before
// going on.
func (d *Deployer) Apply(ctx context.Context, objs []*unstructured.Unstructured) error {
	for _, u := range sorted(objs) {
		if err := d.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(u.DeepCopy()),
			client.FieldOwner(fieldOwner), client.ForceOwnership); err != nil {
			return fmt.Errorf("applying %s: %w", ref(u), err)
		}
		d.say(u, "serverside-applied")
		if u.GetKind() == kindCRD {
			if err := d.waitEstablished(ctx, u.GetName()); err != nil {
				return err
			}
		}
	}
	return nil
}

func (d *Deployer) waitEstablished(ctx context.Context, name string) error {
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, d.timeout(), true, func(ctx context.Context) (bool, error) {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := d.Client.Get(ctx, client.ObjectKey{Name: name}, crd); err != nil {
			return false, err
		}
		for _, c := range crd.Status.Conditions {
			if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for CRD %s to be established: %w", name, err)
	}
	return nil
}

// Delete deletes objs. CRDs go first, while the operator still runs, and
// are waited for: deleting the Karmada CRD deletes every Karmada, whose
// finalizers the operator removes once it has uninstalled their control
// planes. Then the rest, in the reverse of the apply order, so the
// namespace goes last. Objects already gone are reported and skipped.
func (d *Deployer) Delete(ctx context.Context, objs []*unstructured.Unstructured) error {
	order := sorted(objs)
	slices.Reverse(order)
	slices.SortStableFunc(order, func(a, b *unstructured.Unstructured) int {
		return crdFirst(a) - crdFirst(b)
	})
	for _, u := range order {
		live := u.DeepCopy()
		err := d.Client.Get(ctx, client.ObjectKeyFromObject(u), live)
		if err == nil && live.GetDeletionTimestamp() != nil {
			// Deleted before and waiting for its finalizers, such as a
			// namespace being emptied: deleting again would change nothing.
			d.say(u, "is being deleted")
			continue
		}
		if err == nil {
			err = d.Client.Delete(ctx, live, client.PropagationPolicy(metav1.DeletePropagationBackground))
		}
		switch {
		case apierrors.IsNotFound(err) || meta.IsNoMatchError(err):
			d.say(u, "not found")
			continue
		case err != nil:
			return fmt.Errorf("deleting %s: %w", ref(u), err)
		}
		d.say(u, "deleted")
		if u.GetKind() == kindCRD {
			if err := d.waitGone(ctx, u); err != nil {
				return err
			}
		}
	}
	return nil
}

func crdFirst(u *unstructured.Unstructured) int {
	if u.GetKind() == kindCRD {
		return 0
	}
	return 1
}

func (d *Deployer) waitGone(ctx context.Context, u *unstructured.Unstructured) error {
	// A failed read is retried, not the end of the wait: near the deadline
	// the client's rate limiter refuses to wait, and that says nothing about
	// the object.
	var last error
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, d.timeout(), true, func(ctx context.Context) (bool, error) {
		err := d.Client.Get(ctx, client.ObjectKeyFromObject(u), u.DeepCopy())
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		last = err
		return false, nil
	})
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return fmt.Errorf("waiting for %s to be deleted: %w", ref(u), ctx.Err())
	case last != nil:
		return fmt.Errorf("%s is still there after %s (last read: %w): its custom resources wait for their finalizers (is the operator running?)", ref(u), d.timeout(), last)
	}
	return fmt.Errorf("%s is still there after %s: its custom resources wait for their finalizers (is the operator running?)", ref(u), d.timeout())
}

// say prints one line about u; the output is a report, so a failure to
// write it does not stop the work.
func (d *Deployer) say(u *unstructured.Unstructured, what string) {
	_, _ = fmt.Fprintf(d.Out, "%s %s\n", ref(u), what)
}

func (d *Deployer) timeout() time.Duration {
	if d.Timeout <= 0 {
		return 2 * time.Minute
	}
	return d.Timeout
}
