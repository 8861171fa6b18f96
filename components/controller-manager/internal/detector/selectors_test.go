package detector

import (
	"context"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/components/controller-manager/internal/detector/policymatch"
)

// Editing a ClusterPropagationPolicy's resourceSelectors claims and
// releases namespaced templates in every namespace: an added selector
// claims what it selects, a changed one releases what it no longer does.
func TestClusterPolicySelectorEditsReachEveryNamespace(t *testing.T) {
	needServer(t)
	namespaces := make([]string, 0, 2)
	byName := map[string][]*appsv1.Deployment{}
	for range 2 {
		ns := newNamespace(t)
		namespaces = append(namespaces, ns)
		for _, name := range []string{"sel-edit-a", "sel-edit-b", "sel-edit-c"} {
			dep := newDeployment(ns, name, 1, map[string]string{"tier": name})
			create(t, dep)
			byName[name] = append(byName[name], dep)
		}
	}
	cpp := newCPP("selector-edits", selectDeployment("sel-edit-a"))
	create(t, cpp)
	t.Cleanup(func() { _ = testClient.Delete(context.Background(), cpp) })
	id := permanentID(t, cpp)
	want := claim{Kind: policymatch.ClusterPropagationPolicy, ID: id, Name: cpp.Name}
	for _, dep := range byName["sel-edit-a"] {
		claimedBy(t, dep, want)
	}

	// Added: a selector by label, in every namespace.
	update(t, cpp, func(p *policyv1alpha1.ClusterPropagationPolicy) {
		p.Spec.ResourceSelectors = append(p.Spec.ResourceSelectors, policyv1alpha1.ResourceSelector{
			APIVersion: "apps/v1", Kind: "Deployment",
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "sel-edit-b"}},
		})
	})
	for _, dep := range byName["sel-edit-b"] {
		claimedBy(t, dep, want)
		waitRB(t, dep.Namespace, "sel-edit-b-deployment", "is claimed by the policy", func(rb *workv1alpha2.ResourceBinding) bool {
			return claimChange(rb.Labels, rb.Annotations, want).empty()
		})
	}

	// Changed: the first selector names another Deployment; what it named
	// is released, what it names now is claimed.
	update(t, cpp, func(p *policyv1alpha1.ClusterPropagationPolicy) {
		p.Spec.ResourceSelectors[0] = selectDeployment("sel-edit-c")
	})
	for _, dep := range byName["sel-edit-c"] {
		claimedBy(t, dep, want)
	}
	for _, dep := range byName["sel-edit-a"] {
		claimedBy(t, dep, claim{})
	}
	for _, dep := range byName["sel-edit-b"] {
		claimedBy(t, dep, want)
	}

	// Changed again: the label selector moves to a namespace of its own.
	update(t, cpp, func(p *policyv1alpha1.ClusterPropagationPolicy) {
		p.Spec.ResourceSelectors[1].Namespace = namespaces[1]
	})
	claimedBy(t, byName["sel-edit-b"][0], claim{})
	claimedBy(t, byName["sel-edit-b"][1], want)
}

// A template claimed for a policy whose permanent id comes later (no
// webhook gives it one on creation) ends up, with its binding, labelled
// with that id: the template created right after its policy, and one that
// already carries the policy's name but no id.
func TestLatePermanentIDReachesTemplateAndBinding(t *testing.T) {
	needServer(t)
	ns := newNamespace(t)
	cpp := newCPP("late-id-"+ns, selectDeployment("late-id"), selectDeployment("named-only"))
	named := newDeployment(ns, "named-only", 1, nil)
	named.Annotations = map[string]string{policyv1alpha1.ClusterPropagationPolicyAnnotation: cpp.Name}
	create(t, named)
	create(t, cpp)
	t.Cleanup(func() { _ = testClient.Delete(context.Background(), cpp) })
	dep := newDeployment(ns, "late-id", 1, nil)
	create(t, dep)

	id := permanentID(t, cpp)
	want := claim{Kind: policymatch.ClusterPropagationPolicy, ID: id, Name: cpp.Name}
	for _, d := range []*appsv1.Deployment{dep, named} {
		claimedBy(t, d, want)
		waitRB(t, ns, d.Name+"-deployment", "carries the policy's permanent id", func(rb *workv1alpha2.ResourceBinding) bool {
			return rb.Labels[policyv1alpha1.ClusterPropagationPolicyPermanentIDLabel] == id
		})
	}
}
