// Package promote brings an object that already runs in a member cluster
// under the control plane without touching it, as `karmadactl promote`
// does: the object becomes a resource template in the control plane, with
// a PropagationPolicy (or ClusterPropagationPolicy) that places it on that
// member only and takes the member's object over (conflict resolution
// Overwrite). The member's object is then updated in place by the
// execution controller, not recreated, so a Deployment's pods keep running.
package promote

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/rand"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
)

// Options say what to promote and how.
type Options struct {
	// Cluster is the member the object runs in.
	Cluster string
	// GVK, Namespace and Name name the object; Namespace is empty for a
	// cluster-scoped one.
	GVK       schema.GroupVersionKind
	Namespace string
	Name      string
	// PolicyName names the created policy; empty generates one from the
	// object, as karmadactl does.
	PolicyName string
	// NoPolicy creates the template only: an existing policy is to claim it.
	NoPolicy bool
}

// Result is what Promote created.
type Result struct {
	Template *unstructured.Unstructured
	// Policy is a *PropagationPolicy or *ClusterPropagationPolicy, nil
	// with Options.NoPolicy.
	Policy client.Object
}

// Promote reads the object from member (a client of the member, e.g.
// through the control plane's cluster proxy) and creates its template and
// policy in the control plane cp. A template that already exists is an
// error: the object is federated already.
func Promote(ctx context.Context, cp, member client.Client, opts Options) (*Result, error) {
	if opts.Cluster == "" {
		return nil, errors.New("no cluster given")
	}
	obj, err := Read(ctx, member, opts)
	if err != nil {
		return nil, err
	}
	res := Plan(obj, opts)
	return res, Create(ctx, cp, res, opts)
}

// Create creates what Plan gave in the control plane.
func Create(ctx context.Context, cp client.Client, res *Result, opts Options) error {
	if opts.Namespace != "" {
		if err := ensureNamespace(ctx, cp, opts.Namespace); err != nil {
			return err
		}
	}
	if err := cp.Create(ctx, res.Template); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("%s %s is already in the control plane: it is federated, nothing to promote", opts.GVK.Kind, key(opts.Namespace, opts.Name))
		}
		return fmt.Errorf("creating the template %s %s: %w", opts.GVK.Kind, key(opts.Namespace, opts.Name), err)
	}
	if res.Policy == nil {
		return nil
	}
	if err := cp.Create(ctx, res.Policy); err != nil {
		return fmt.Errorf("creating the policy %s (the template %s %s was created; delete it to start over): %w",
			key(opts.Namespace, res.Policy.GetName()), opts.GVK.Kind, key(opts.Namespace, opts.Name), err)
	}
	return nil
}

// Read reads the object to promote from the member.
func Read(ctx context.Context, member client.Reader, opts Options) (*unstructured.Unstructured, error) {
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(opts.GVK)
	if err := member.Get(ctx, client.ObjectKey{Namespace: opts.Namespace, Name: opts.Name}, obj); err != nil {
		return nil, fmt.Errorf("reading %s %s in cluster %s: %w", opts.GVK.Kind, key(opts.Namespace, opts.Name), opts.Cluster, err)
	}
	return obj, nil
}

// Plan is what Promote creates for obj, the member's object.
func Plan(obj *unstructured.Unstructured, opts Options) *Result {
	res := &Result{Template: Template(obj)}
	if opts.NoPolicy {
		return res
	}
	name := opts.PolicyName
	if name == "" {
		name = PolicyName(opts.Namespace, opts.Name, opts.GVK)
	}
	spec := policyv1alpha1.PropagationSpec{
		ResourceSelectors: []policyv1alpha1.ResourceSelector{{
			APIVersion: opts.GVK.GroupVersion().String(), Kind: opts.GVK.Kind, Namespace: opts.Namespace, Name: opts.Name,
		}},
		Placement:          policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{opts.Cluster}}},
		ConflictResolution: policyv1alpha1.ConflictOverwrite,
	}
	if opts.Namespace != "" {
		res.Policy = &policyv1alpha1.PropagationPolicy{
			TypeMeta:   metav1.TypeMeta{APIVersion: policyv1alpha1.GroupVersion.String(), Kind: "PropagationPolicy"},
			ObjectMeta: metav1.ObjectMeta{Namespace: opts.Namespace, Name: name}, Spec: spec}
	} else {
		res.Policy = &policyv1alpha1.ClusterPropagationPolicy{
			TypeMeta:   metav1.TypeMeta{APIVersion: policyv1alpha1.GroupVersion.String(), Kind: "ClusterPropagationPolicy"},
			ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: spec}
	}
	return res
}

// Template is the member's object as a resource template: without what the
// member's API server and controllers own (identity, versions, status,
// owners) and with the conflict resolution that lets the control plane
// take the member's object over.
func Template(obj *unstructured.Unstructured) *unstructured.Unstructured {
	t := obj.DeepCopy()
	for _, f := range []string{"uid", "resourceVersion", "generation", "creationTimestamp", "deletionTimestamp",
		"deletionGracePeriodSeconds", "managedFields", "ownerReferences", "selfLink", "finalizers"} {
		unstructured.RemoveNestedField(t.Object, "metadata", f)
	}
	unstructured.RemoveNestedField(t.Object, "status")
	annotations := t.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	// The member's last-applied configuration describes the member's
	// object, not the template's.
	delete(annotations, corev1.LastAppliedConfigAnnotation)
	annotations[workv1alpha1.ConflictResolutionAnnotation] = workv1alpha1.ConflictResolutionOverwrite
	t.SetAnnotations(annotations)
	if t.GroupVersionKind().GroupKind() == (schema.GroupKind{Kind: "Service"}) {
		// The control plane allocates its own addresses; the member keeps
		// its own (the interpreter retains them).
		for _, f := range []string{"clusterIP", "clusterIPs", "healthCheckNodePort"} {
			unstructured.RemoveNestedField(t.Object, "spec", f)
		}
	}
	return t
}

// PolicyName is the generated name of a promoted object's policy: the
// object's name and a hash of its namespace and kind, so that objects of
// one name in different namespaces or of different kinds do not collide.
func PolicyName(namespace, name string, gvk schema.GroupVersionKind) string {
	h := fnv.New32a()
	_, _ = h.Write([]byte(namespace + gvk.String()))
	suffix := rand.SafeEncodeString(fmt.Sprint(h.Sum32()))
	const maxLen = 63
	if len(name)+1+len(suffix) > maxLen {
		name = strings.TrimRight(name[:maxLen-1-len(suffix)], "-.")
	}
	return name + "-" + suffix
}

func ensureNamespace(ctx context.Context, cp client.Client, name string) error {
	ns := &corev1.Namespace{}
	err := cp.Get(ctx, client.ObjectKey{Name: name}, ns)
	if err == nil || !apierrors.IsNotFound(err) {
		if err != nil {
			return fmt.Errorf("reading namespace %s in the control plane: %w", name, err)
		}
		return nil
	}
	ns = &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := cp.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s in the control plane: %w", name, err)
	}
	return nil
}

func key(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}
