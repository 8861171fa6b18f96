package detector

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/components/controller-manager/internal/detector/policymatch"
)

var nsCounter atomic.Int32

// newNamespace makes a namespace for one test.
func newNamespace(t *testing.T) string {
	t.Helper()
	name := fmt.Sprintf("det-%s-%d", strings.ToLower(strings.NewReplacer("/", "-", "_", "-").Replace(t.Name())), nsCounter.Add(1))
	if len(name) > 63 {
		name = name[len(name)-63:]
		name = strings.TrimLeft(name, "-")
	}
	create(t, namespaceObj(name))
	return name
}

func namespaceObj(name string) *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
}

func create(t *testing.T, obj client.Object) {
	t.Helper()
	if err := testClient.Create(context.Background(), obj); err != nil {
		t.Fatalf("creating %T %s: %v", obj, obj.GetName(), err)
	}
}

// update reads obj again, applies mutate and writes it, retrying conflicts.
func update[T client.Object](t *testing.T, obj T, mutate func(T)) {
	t.Helper()
	waitFor(t, "updating "+obj.GetName(), func(ctx context.Context) (bool, error) {
		if err := testClient.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			return false, err
		}
		mutate(obj)
		return true, testClient.Update(ctx, obj)
	})
}

func selectDeployment(name string) policyv1alpha1.ResourceSelector {
	return policyv1alpha1.ResourceSelector{APIVersion: "apps/v1", Kind: "Deployment", Name: name}
}

func newPP(ns, name string, selectors ...policyv1alpha1.ResourceSelector) *policyv1alpha1.PropagationPolicy {
	return &policyv1alpha1.PropagationPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: policyv1alpha1.PropagationSpec{
			ResourceSelectors: selectors,
			Placement: policyv1alpha1.Placement{
				ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1"}},
			},
		},
	}
}

func newCPP(name string, selectors ...policyv1alpha1.ResourceSelector) *policyv1alpha1.ClusterPropagationPolicy {
	return &policyv1alpha1.ClusterPropagationPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       policyv1alpha1.PropagationSpec{ResourceSelectors: selectors},
	}
}

func newDeployment(ns, name string, replicas int32, labels map[string]string) *appsv1.Deployment {
	podLabels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: podLabels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: podLabels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name:  "app",
					Image: "nginx",
					Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
						corev1.ResourceCPU:    resource.MustParse("100m"),
						corev1.ResourceMemory: resource.MustParse("64Mi"),
					}},
				}}},
			},
		},
	}
}

func newClusterRole(name string, labels map[string]string) *rbacv1.ClusterRole {
	return &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get"}}},
	}
}

// permanentID waits for the policy's permanent id and returns it.
func permanentID(t *testing.T, obj client.Object) string {
	t.Helper()
	key := policyv1alpha1.PropagationPolicyPermanentIDLabel
	if _, ok := obj.(*policyv1alpha1.ClusterPropagationPolicy); ok {
		key = policyv1alpha1.ClusterPropagationPolicyPermanentIDLabel
	}
	var id string
	waitFor(t, obj.GetName()+" has a permanent id", func(ctx context.Context) (bool, error) {
		if err := testClient.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			return false, err
		}
		id = obj.GetLabels()[key]
		return id != "", nil
	})
	return id
}

// claimedBy waits until obj's labels and annotations say it is claimed by
// want (unclaimed when want.ID is empty).
func claimedBy(t *testing.T, obj client.Object, want claim) {
	t.Helper()
	waitFor(t, fmt.Sprintf("%s is claimed by %+v", obj.GetName(), want), func(ctx context.Context) (bool, error) {
		if err := testClient.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			return false, err
		}
		return claimChange(obj.GetLabels(), obj.GetAnnotations(), want).empty(), nil
	})
}

func ppClaim(p *policyv1alpha1.PropagationPolicy, id string) claim {
	return claim{Kind: policymatch.PropagationPolicy, ID: id, Namespace: p.Namespace, Name: p.Name}
}

// waitRB waits for the ResourceBinding ns/name to satisfy cond.
func waitRB(t *testing.T, ns, name, what string, cond func(*workv1alpha2.ResourceBinding) bool) *workv1alpha2.ResourceBinding {
	t.Helper()
	rb := &workv1alpha2.ResourceBinding{}
	waitFor(t, "ResourceBinding "+ns+"/"+name+" "+what, func(ctx context.Context) (bool, error) {
		if err := testClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, rb); err != nil {
			return false, err
		}
		return cond(rb), nil
	})
	return rb
}

// inDetectorCache waits until the detector's cache holds obj at least at
// the generation the API server has, so that a resync sees it.
func inDetectorCache(t *testing.T, obj client.Object) {
	t.Helper()
	if err := testClient.Get(context.Background(), client.ObjectKeyFromObject(obj), obj); err != nil {
		t.Fatal(err)
	}
	want := obj.GetGeneration()
	cached := obj.DeepCopyObject().(client.Object)
	waitFor(t, obj.GetName()+" is in the detector's cache", func(ctx context.Context) (bool, error) {
		if err := testDetector.client.Get(ctx, client.ObjectKeyFromObject(obj), cached); err != nil {
			return false, err
		}
		return cached.GetGeneration() >= want, nil
	})
}

var deploymentsGVR = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}

func deploymentKey(d *appsv1.Deployment) templateKey {
	return templateKey{GVR: deploymentsGVR, Namespace: d.Namespace, Name: d.Name}
}
