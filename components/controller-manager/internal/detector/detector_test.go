package detector

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/components/controller-manager/internal/detector/policymatch"
	flotillaevents "github.com/flotilla-io/flotilla/internal/events"
)

func TestDeploymentGetsAResourceBinding(t *testing.T) {
	needServer(t)
	ctx := context.Background()
	ns := newNamespace(t)
	pc := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: ns + "-high"}, Value: 1000}
	create(t, pc)
	t.Cleanup(func() { _ = testClient.Delete(context.Background(), pc) })

	pp := newPP(ns, "web", selectDeployment("web"))
	pp.Spec.PropagateDeps = true
	pp.Spec.SchedulePriority = &policyv1alpha1.SchedulePriority{PriorityClassSource: policyv1alpha1.KubePriorityClass, PriorityClassName: pc.Name}
	pp.Spec.Failover = &policyv1alpha1.FailoverBehavior{Application: &policyv1alpha1.ApplicationFailoverBehavior{
		DecisionConditions: policyv1alpha1.DecisionConditions{TolerationSeconds: ptr.To[int32](60)},
	}}
	pp.Spec.Suspension = &policyv1alpha1.Suspension{Dispatching: ptr.To(true)}
	pp.Spec.PreserveResourcesOnDeletion = ptr.To(true)
	create(t, pp)
	id := permanentID(t, pp)

	dep := newDeployment(ns, "web", 3, map[string]string{"app": "web"})
	create(t, dep)
	claimedBy(t, dep, ppClaim(pp, id))
	rb := waitRB(t, ns, "web-deployment", "refers to the claimed template", func(rb *workv1alpha2.ResourceBinding) bool {
		return rb.Spec.Resource.ResourceVersion == dep.ResourceVersion
	})

	if rb.Labels[policyv1alpha1.PropagationPolicyPermanentIDLabel] != id || rb.Labels[workv1alpha2.ResourceBindingPermanentIDLabel] == "" {
		t.Errorf("binding labels %v: want the policy's id %s and a permanent id", rb.Labels, id)
	}
	if diff := cmp.Diff(map[string]string{
		policyv1alpha1.PropagationPolicyNamespaceAnnotation: ns,
		policyv1alpha1.PropagationPolicyNameAnnotation:      "web",
	}, rb.Annotations); diff != "" {
		t.Errorf("binding annotations (-want +got):\n%s", diff)
	}
	wantOwner := []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: "web", UID: dep.UID, Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}
	if diff := cmp.Diff(wantOwner, rb.OwnerReferences); diff != "" {
		t.Errorf("binding owner references (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{workv1alpha2.BindingControllerFinalizer}, rb.Finalizers); diff != "" {
		t.Errorf("binding finalizers (-want +got):\n%s", diff)
	}
	want := workv1alpha2.ResourceBindingSpec{
		Resource: workv1alpha2.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: ns, Name: "web", UID: dep.UID, ResourceVersion: dep.ResourceVersion},
		Replicas: 3,
		ReplicaRequirements: &workv1alpha2.ReplicaRequirements{
			ResourceRequest: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("64Mi")},
			Namespace:       ns,
		},
		PropagateDeps:               true,
		Placement:                   &pp.Spec.Placement,
		SchedulerName:               policyv1alpha1.DefaultSchedulerName,
		Failover:                    pp.Spec.Failover,
		ConflictResolution:          policyv1alpha1.ConflictAbort,
		Suspension:                  &workv1alpha2.Suspension{Suspension: policyv1alpha1.Suspension{Dispatching: ptr.To(true)}},
		PreserveResourcesOnDeletion: ptr.To(true),
		SchedulePriority:            &workv1alpha2.SchedulePriority{Priority: 1000},
	}
	if !equality.Semantic.DeepEqual(want, rb.Spec) {
		t.Errorf("binding spec:\n got %+v\nwant %+v", rb.Spec, want)
	}
	for _, reason := range []string{flotillaevents.ReasonApplyPolicySucceed, flotillaevents.ReasonGetReplicasSucceed} {
		waitFor(t, "the template has a "+reason+" event", func(ctx context.Context) (bool, error) {
			return hasEvent(ctx, ns, "web", reason)
		})
	}

	// Other controllers can read the template from the detector's cache.
	waitFor(t, "the detector's cache has the claimed template", func(context.Context) (bool, error) {
		cached, known := testDetector.Template(appsv1.SchemeGroupVersion.WithKind("Deployment"), ns, "web")
		return known && cached != nil && cached.GetResourceVersion() == dep.ResourceVersion && cached.GetManagedFields() == nil, nil
	})
	if cached, known := testDetector.Template(appsv1.SchemeGroupVersion.WithKind("Deployment"), ns, "absent"); !known || cached != nil {
		t.Errorf("Template of an absent Deployment = %v, %v; want nil, true", cached, known)
	}
	if _, known := testDetector.Template(schema.GroupVersionKind{Group: "unknown.io", Version: "v1", Kind: "Thing"}, ns, "x"); known {
		t.Error("Template of an unwatched kind is known")
	}
	// The same through Get, as binding.TemplateReader reads it: a copy.
	got := &unstructured.Unstructured{}
	got.SetGroupVersionKind(appsv1.SchemeGroupVersion.WithKind("Deployment"))
	if err := testDetector.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, got); err != nil || got.GetResourceVersion() != dep.ResourceVersion {
		t.Errorf("Get web: resourceVersion %q, error %v; want %q", got.GetResourceVersion(), err, dep.ResourceVersion)
	}
	got.SetLabels(nil)
	if cached, _ := testDetector.Template(appsv1.SchemeGroupVersion.WithKind("Deployment"), ns, "web"); len(cached.GetLabels()) == 0 {
		t.Error("changing what Get returned changed the cache")
	}
	if err := testDetector.Get(ctx, client.ObjectKey{Namespace: ns, Name: "absent"}, got); !apierrors.IsNotFound(err) {
		t.Errorf("Get of an absent Deployment: %v, want NotFound", err)
	}
	unwatched := &unstructured.Unstructured{}
	unwatched.SetGroupVersionKind(schema.GroupVersionKind{Group: "unknown.io", Version: "v1", Kind: "Thing"})
	if err := testDetector.Get(ctx, client.ObjectKey{Namespace: ns, Name: "x"}, unwatched); err == nil || apierrors.IsNotFound(err) {
		t.Errorf("Get of an unwatched kind: %v, want a failure other than NotFound", err)
	}
	if err := testDetector.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, &appsv1.Deployment{}); err == nil {
		t.Error("Get into a typed object succeeded")
	}

	// A binding that says everything already is not written again.
	if err := resync(t, deploymentKey(dep)); err != nil {
		t.Fatalf("resync: %v", err)
	}
	again := &workv1alpha2.ResourceBinding{}
	if err := testClient.Get(ctx, client.ObjectKeyFromObject(rb), again); err != nil {
		t.Fatal(err)
	}
	if again.ResourceVersion != rb.ResourceVersion {
		t.Errorf("an up-to-date binding was written again: resourceVersion %s, then %s", rb.ResourceVersion, again.ResourceVersion)
	}

	// The scheduler's result survives template updates.
	rb.Spec.Clusters = []workv1alpha2.TargetCluster{{Name: "member1", Replicas: 3}}
	if err := testClient.Update(ctx, rb); err != nil {
		t.Fatal(err)
	}
	update(t, dep, func(d *appsv1.Deployment) { d.Spec.Replicas = ptr.To[int32](5) })
	rb = waitRB(t, ns, "web-deployment", "has 5 replicas", func(rb *workv1alpha2.ResourceBinding) bool {
		return rb.Spec.Replicas == 5 && rb.Spec.Resource.ResourceVersion == dep.ResourceVersion
	})
	if diff := cmp.Diff([]workv1alpha2.TargetCluster{{Name: "member1", Replicas: 3}}, rb.Spec.Clusters); diff != "" {
		t.Errorf("spec.clusters after a template update (-want +got):\n%s", diff)
	}
}

func TestConfigMapWithConflictResolutionAnnotation(t *testing.T) {
	needServer(t)
	ns := newNamespace(t)
	pp := newPP(ns, "config", policyv1alpha1.ResourceSelector{APIVersion: "v1", Kind: "ConfigMap"})
	pp.Spec.ConflictResolution = policyv1alpha1.ConflictAbort
	create(t, pp)
	id := permanentID(t, pp)
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "my-config", Annotations: map[string]string{"work.karmada.io/conflict-resolution": "overwrite"}},
		Data:       map[string]string{"k": "v"},
	}
	create(t, cm)
	claimedBy(t, cm, ppClaim(pp, id))
	rb := waitRB(t, ns, "my-config-configmap", "exists", func(*workv1alpha2.ResourceBinding) bool { return true })
	if rb.Spec.Replicas != 0 || rb.Spec.ReplicaRequirements != nil {
		t.Errorf("a ConfigMap's binding has replicas %d and requirements %+v, want none", rb.Spec.Replicas, rb.Spec.ReplicaRequirements)
	}
	if rb.Spec.ConflictResolution != policyv1alpha1.ConflictOverwrite {
		t.Errorf("conflictResolution %q, want the annotation's Overwrite", rb.Spec.ConflictResolution)
	}
	if rb.Spec.Resource.APIVersion != "v1" || rb.Spec.Resource.Kind != "ConfigMap" || rb.Spec.Resource.Name != "my-config" {
		t.Errorf("resource %+v", rb.Spec.Resource)
	}
}

func TestClusterRoleGetsAClusterResourceBinding(t *testing.T) {
	needServer(t)
	cpp := newCPP("det-reader", policyv1alpha1.ResourceSelector{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole", Name: "det:reader"})
	create(t, cpp)
	t.Cleanup(func() { _ = testClient.Delete(context.Background(), cpp) })
	id := permanentID(t, cpp)
	cr := newClusterRole("det:reader", nil)
	create(t, cr)
	t.Cleanup(func() { _ = testClient.Delete(context.Background(), cr) })

	want := claim{Kind: policymatch.ClusterPropagationPolicy, ID: id, Name: cpp.Name}
	claimedBy(t, cr, want)
	crb := &workv1alpha2.ClusterResourceBinding{}
	waitFor(t, "the ClusterResourceBinding refers to the claimed ClusterRole", func(ctx context.Context) (bool, error) {
		if err := testClient.Get(ctx, client.ObjectKey{Name: "det.reader-clusterrole"}, crb); err != nil {
			return false, err
		}
		return crb.Spec.Resource.ResourceVersion == cr.ResourceVersion, nil
	})
	if !claimChange(crb.Labels, crb.Annotations, want).empty() || crb.Labels[workv1alpha2.ClusterResourceBindingPermanentIDLabel] == "" {
		t.Errorf("binding labels %v, annotations %v: want the claim of %s and a permanent id", crb.Labels, crb.Annotations, cpp.Name)
	}
	if diff := cmp.Diff([]string{workv1alpha2.ClusterResourceBindingControllerFinalizer}, crb.Finalizers); diff != "" {
		t.Errorf("finalizers (-want +got):\n%s", diff)
	}
	if owner := metav1.GetControllerOf(crb); owner == nil || owner.UID != cr.UID || !ptr.Deref(owner.BlockOwnerDeletion, false) {
		t.Errorf("owner %+v, want the ClusterRole %s blocking deletion", owner, cr.UID)
	}
	if r := crb.Spec.Resource; r.Namespace != "" || r.Kind != "ClusterRole" || r.Name != "det:reader" || r.UID != cr.UID {
		t.Errorf("resource %+v", r)
	}
	// Events on cluster-scoped objects go to the default namespace.
	waitFor(t, "the ClusterRole has an ApplyPolicySucceed event", func(ctx context.Context) (bool, error) {
		return hasEvent(ctx, metav1.NamespaceAll, "det:reader", flotillaevents.ReasonApplyPolicySucceed)
	})
}

func TestExplicitPriority(t *testing.T) {
	needServer(t)
	ns := newNamespace(t)
	kind := policyv1alpha1.ResourceSelector{APIVersion: "apps/v1", Kind: "Deployment"}
	low, high := newPP(ns, "a-low", kind), newPP(ns, "b-high", kind)
	low.Spec.Priority, high.Spec.Priority = ptr.To[int32](1), ptr.To[int32](2)
	for _, p := range []*policyv1alpha1.PropagationPolicy{low, high} {
		create(t, p)
		permanentID(t, p)
		inDetectorCache(t, p)
	}
	dep := newDeployment(ns, "web", 1, nil)
	create(t, dep)
	claimedBy(t, dep, ppClaim(high, high.Labels[policyv1alpha1.PropagationPolicyPermanentIDLabel]))
}

func TestImplicitPriority(t *testing.T) {
	needServer(t)
	ns := newNamespace(t)
	kind := policyv1alpha1.ResourceSelector{APIVersion: "apps/v1", Kind: "Deployment"}
	byLabel := kind
	byLabel.LabelSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "web"}}
	policies := map[string]*policyv1alpha1.PropagationPolicy{
		"z-kind":  newPP(ns, "z-kind", kind),
		"a-kind":  newPP(ns, "a-kind", kind),
		"b-label": newPP(ns, "b-label", byLabel),
		"c-name":  newPP(ns, "c-name", selectDeployment("web")),
	}
	for _, p := range policies {
		create(t, p)
		permanentID(t, p)
		inDetectorCache(t, p)
	}
	for _, tt := range []struct {
		name, want string
		labels     map[string]string
	}{
		{"web", "c-name", map[string]string{"tier": "web"}},
		{"api", "b-label", map[string]string{"tier": "web"}},
		{"db", "a-kind", nil},
	} {
		dep := newDeployment(ns, tt.name, 1, tt.labels)
		create(t, dep)
		p := policies[tt.want]
		claimedBy(t, dep, ppClaim(p, p.Labels[policyv1alpha1.PropagationPolicyPermanentIDLabel]))
	}
}

func TestPreemption(t *testing.T) {
	needServer(t)
	ns := newNamespace(t)
	kind := policyv1alpha1.ResourceSelector{APIVersion: "apps/v1", Kind: "Deployment"}
	low := newPP(ns, "low", kind)
	low.Spec.Priority = ptr.To[int32](1)
	create(t, low)
	lowID := permanentID(t, low)
	dep := newDeployment(ns, "web", 2, nil)
	create(t, dep)
	claimedBy(t, dep, ppClaim(low, lowID))
	waitRB(t, ns, "web-deployment", "is claimed by low", func(rb *workv1alpha2.ResourceBinding) bool {
		return rb.Labels[policyv1alpha1.PropagationPolicyPermanentIDLabel] == lowID
	})

	// Higher priority without preemption: the claim stays.
	never := newPP(ns, "never", selectDeployment("web"))
	never.Spec.Priority, never.Spec.Preemption = ptr.To[int32](5), policyv1alpha1.PreemptNever
	create(t, never)
	permanentID(t, never)
	inDetectorCache(t, never)
	if err := resync(t, deploymentKey(dep)); err != nil {
		t.Fatalf("resync: %v", err)
	}
	claimedBy(t, dep, ppClaim(low, lowID))

	// Preemption Always with a higher priority than the claim's takes over.
	always := newPP(ns, "always", kind)
	always.Spec.Priority, always.Spec.Preemption = ptr.To[int32](3), policyv1alpha1.PreemptAlways
	create(t, always)
	alwaysID := permanentID(t, always)
	claimedBy(t, dep, ppClaim(always, alwaysID))
	waitRB(t, ns, "web-deployment", "is claimed by always", func(rb *workv1alpha2.ResourceBinding) bool {
		return claimChange(rb.Labels, rb.Annotations, ppClaim(always, alwaysID)).empty()
	})
	waitFor(t, "the template has a PreemptPolicySucceed event", func(ctx context.Context) (bool, error) {
		return hasEvent(ctx, ns, "web", flotillaevents.ReasonPreemptPolicySucceed)
	})
	// ... and "never", of even higher priority, still cannot.
	if err := resync(t, deploymentKey(dep)); err != nil {
		t.Fatalf("resync: %v", err)
	}
	claimedBy(t, dep, ppClaim(always, alwaysID))
}

func TestPropagationPolicyWinsOverClusterPolicyAndPreemptsIt(t *testing.T) {
	needServer(t)
	ns := newNamespace(t)
	byLabel := policyv1alpha1.ResourceSelector{APIVersion: "apps/v1", Kind: "Deployment",
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"det-cpp": ns}}}
	cpp := newCPP(ns, byLabel)
	cpp.Spec.Priority = ptr.To[int32](100)
	create(t, cpp)
	t.Cleanup(func() { _ = testClient.Delete(context.Background(), cpp) })
	cppID := permanentID(t, cpp)
	cppClaim := claim{Kind: policymatch.ClusterPropagationPolicy, ID: cppID, Name: cpp.Name}
	labels := map[string]string{"det-cpp": ns}

	// Only the ClusterPropagationPolicy selects it: a ResourceBinding in
	// the template's namespace, claimed by the cluster policy.
	first := newDeployment(ns, "first", 1, labels)
	create(t, first)
	claimedBy(t, first, cppClaim)
	waitRB(t, ns, "first-deployment", "is claimed by the ClusterPropagationPolicy", func(rb *workv1alpha2.ResourceBinding) bool {
		return claimChange(rb.Labels, rb.Annotations, cppClaim).empty()
	})

	// Both select it: the PropagationPolicy wins, whatever the priorities.
	pp := newPP(ns, "second", selectDeployment("second"))
	create(t, pp)
	ppID := permanentID(t, pp)
	inDetectorCache(t, pp)
	second := newDeployment(ns, "second", 1, labels)
	create(t, second)
	claimedBy(t, second, ppClaim(pp, ppID))

	// A PropagationPolicy with preemption takes over from the cluster policy.
	preempting := newPP(ns, "preempting", selectDeployment("first"))
	preempting.Spec.Preemption = policyv1alpha1.PreemptAlways
	create(t, preempting)
	preemptingID := permanentID(t, preempting)
	claimedBy(t, first, ppClaim(preempting, preemptingID))
	waitRB(t, ns, "first-deployment", "is claimed by the PropagationPolicy only", func(rb *workv1alpha2.ResourceBinding) bool {
		return claimChange(rb.Labels, rb.Annotations, ppClaim(preempting, preemptingID)).empty()
	})
	waitFor(t, "the template has a PreemptPolicySucceed event", func(ctx context.Context) (bool, error) {
		return hasEvent(ctx, ns, "first", flotillaevents.ReasonPreemptPolicySucceed)
	})
}

func TestDeletedOrNarrowedPolicyReleasesTemplates(t *testing.T) {
	needServer(t)
	ctx := context.Background()
	ns := newNamespace(t)
	pp := newPP(ns, "web", selectDeployment("web"))
	create(t, pp)
	id := permanentID(t, pp)
	web := newDeployment(ns, "web", 1, nil)
	create(t, web)
	claimedBy(t, web, ppClaim(pp, id))
	waitRB(t, ns, "web-deployment", "is claimed", func(rb *workv1alpha2.ResourceBinding) bool {
		return rb.Labels[policyv1alpha1.PropagationPolicyPermanentIDLabel] == id
	})

	// Deleted: the claim goes from template and binding; the binding stays
	// (Karmada keeps it until the template goes or another policy claims it).
	if err := testClient.Delete(ctx, pp); err != nil {
		t.Fatal(err)
	}
	claimedBy(t, web, claim{})
	rb := waitRB(t, ns, "web-deployment", "is released", func(rb *workv1alpha2.ResourceBinding) bool {
		return !hasClaimMetadata(rb.Labels, rb.Annotations)
	})
	if rb.Labels[workv1alpha2.ResourceBindingPermanentIDLabel] == "" || metav1.GetControllerOf(rb) == nil {
		t.Errorf("the released binding lost its permanent id or owner: %+v", rb.ObjectMeta)
	}

	// Narrowed: what it no longer selects is released.
	narrow := newPP(ns, "narrow", selectDeployment("api"))
	create(t, narrow)
	narrowID := permanentID(t, narrow)
	api := newDeployment(ns, "api", 1, nil)
	create(t, api)
	claimedBy(t, api, ppClaim(narrow, narrowID))
	update(t, narrow, func(p *policyv1alpha1.PropagationPolicy) {
		p.Spec.ResourceSelectors = []policyv1alpha1.ResourceSelector{selectDeployment("other")}
	})
	claimedBy(t, api, claim{})
	waitRB(t, ns, "api-deployment", "is released", func(rb *workv1alpha2.ResourceBinding) bool {
		return !hasClaimMetadata(rb.Labels, rb.Annotations)
	})

	// Another policy claims released templates, and their bindings again.
	all := newPP(ns, "all", policyv1alpha1.ResourceSelector{APIVersion: "apps/v1", Kind: "Deployment"})
	create(t, all)
	allID := permanentID(t, all)
	for _, d := range []*appsv1.Deployment{web, api} {
		claimedBy(t, d, ppClaim(all, allID))
		waitRB(t, ns, d.Name+"-deployment", "is claimed by all", func(rb *workv1alpha2.ResourceBinding) bool {
			return claimChange(rb.Labels, rb.Annotations, ppClaim(all, allID)).empty()
		})
	}
}

func TestPolicyDeletedWithItsNamespaceLeavesTemplatesClaimed(t *testing.T) {
	needServer(t)
	ctx := context.Background()
	ns := newNamespace(t)
	pp := newPP(ns, "web", selectDeployment("web"))
	create(t, pp)
	id := permanentID(t, pp)
	web := newDeployment(ns, "web", 1, nil)
	create(t, web)
	claimedBy(t, web, ppClaim(pp, id))
	waitRB(t, ns, "web-deployment", "is claimed", func(rb *workv1alpha2.ResourceBinding) bool {
		return rb.Labels[policyv1alpha1.PropagationPolicyPermanentIDLabel] == id
	})

	// No namespace controller runs here: the namespace stays Terminating
	// with everything in it, as while kube-controller-manager works
	// through it, here having deleted the policy first.
	if err := testClient.Delete(ctx, namespaceObj(ns)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the detector sees namespace "+ns+" terminating", func(ctx context.Context) (bool, error) {
		var got corev1.Namespace
		err := testDetector.client.Get(ctx, client.ObjectKey{Name: ns}, &got)
		return err == nil && got.DeletionTimestamp != nil, err
	})
	if err := testClient.Delete(ctx, pp); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the policy is gone from the detector's cache", func(ctx context.Context) (bool, error) {
		err := testDetector.client.Get(ctx, client.ObjectKeyFromObject(pp), &policyv1alpha1.PropagationPolicy{})
		return apierrors.IsNotFound(err), nil
	})
	if err := resync(t, deploymentKey(web)); err != nil {
		t.Fatalf("reconciling the template: %v", err)
	}
	claimedBy(t, web, ppClaim(pp, id))
	rb := &workv1alpha2.ResourceBinding{}
	if err := testClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web-deployment"}, rb); err != nil {
		t.Fatal(err)
	}
	if rb.Labels[policyv1alpha1.PropagationPolicyPermanentIDLabel] != id {
		t.Errorf("the binding was released on its way out: %v", rb.Labels)
	}
}

func TestLazyActivation(t *testing.T) {
	needServer(t)
	ns := newNamespace(t)
	pp := newPP(ns, "lazy", selectDeployment("web"))
	pp.Spec.ActivationPreference = policyv1alpha1.LazyActivation
	create(t, pp)
	id := permanentID(t, pp)
	dep := newDeployment(ns, "web", 1, nil)
	create(t, dep)
	claimedBy(t, dep, ppClaim(pp, id))
	onMember := func(cluster string) func(*workv1alpha2.ResourceBinding) bool {
		return func(rb *workv1alpha2.ResourceBinding) bool {
			return rb.Spec.Placement != nil && rb.Spec.Placement.ClusterAffinity != nil &&
				cmp.Equal([]string{cluster}, rb.Spec.Placement.ClusterAffinity.ClusterNames)
		}
	}
	waitRB(t, ns, "web-deployment", "places on member1", onMember("member1"))

	// A change of the policy alone waits...
	update(t, pp, func(p *policyv1alpha1.PropagationPolicy) {
		p.Spec.Placement.ClusterAffinity.ClusterNames = []string{"member2"}
	})
	inDetectorCache(t, pp)
	if err := resync(t, deploymentKey(dep)); err != nil {
		t.Fatalf("resync: %v", err)
	}
	waitRB(t, ns, "web-deployment", "still places on member1", onMember("member1"))

	// ... for the next change of the template.
	update(t, dep, func(d *appsv1.Deployment) { d.Labels = map[string]string{"touched": "yes"} })
	waitRB(t, ns, "web-deployment", "places on member2", onMember("member2"))
}

func TestCustomResourceDefinedAfterStart(t *testing.T) {
	needServer(t)
	ctx := context.Background()
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets.det.flotilla.io"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "det.flotilla.io",
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Singular: "widget", Kind: "Widget", ListKind: "WidgetList"},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: ptr.To(true),
				}},
			}},
		},
	}
	create(t, crd)
	gvr := schema.GroupVersionResource{Group: "det.flotilla.io", Version: "v1", Resource: "widgets"}
	waitFor(t, "the detector watches widgets", func(context.Context) (bool, error) {
		return testDetector.informers.get(gvr) != nil, nil
	})

	ns := newNamespace(t)
	pp := newPP(ns, "widgets", policyv1alpha1.ResourceSelector{APIVersion: "det.flotilla.io/v1", Kind: "Widget"})
	create(t, pp)
	id := permanentID(t, pp)
	widget := &unstructured.Unstructured{}
	widget.SetAPIVersion("det.flotilla.io/v1")
	widget.SetKind("Widget")
	widget.SetNamespace(ns)
	widget.SetName("w1")
	if err := unstructured.SetNestedField(widget.Object, int64(2), "spec", "size"); err != nil {
		t.Fatal(err)
	}
	create(t, widget)
	claimedBy(t, widget, ppClaim(pp, id))
	rb := waitRB(t, ns, "w1-widget", "exists", func(*workv1alpha2.ResourceBinding) bool { return true })
	if r := rb.Spec.Resource; r.APIVersion != "det.flotilla.io/v1" || r.Kind != "Widget" || r.UID != widget.GetUID() {
		t.Errorf("resource %+v", r)
	}

	// The type going away stops its informer.
	if err := testClient.Delete(ctx, crd); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the detector stops watching widgets", func(context.Context) (bool, error) {
		return testDetector.informers.get(gvr) == nil, nil
	})
}

func TestDependentOverridesAreWaitedFor(t *testing.T) {
	needServer(t)
	ctx := context.Background()
	ns := newNamespace(t)
	pp := newPP(ns, "web", selectDeployment("web"))
	pp.Spec.DependentOverrides = []string{"registry"}
	create(t, pp)
	id := permanentID(t, pp)
	inDetectorCache(t, pp)
	dep := newDeployment(ns, "web", 1, nil)
	create(t, dep)
	if err := resync(t, deploymentKey(dep)); !errors.Is(err, errWaiting) {
		t.Fatalf("reconcile without the dependent override: %v, want a wait", err)
	}
	err := testClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web-deployment"}, &workv1alpha2.ResourceBinding{})
	if !apierrors.IsNotFound(err) {
		t.Fatalf("binding before the dependent override exists: %v, want not found", err)
	}
	op := &policyv1alpha1.OverridePolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "registry"}}
	create(t, op)
	claimedBy(t, dep, ppClaim(pp, id))
	waitRB(t, ns, "web-deployment", "exists", func(*workv1alpha2.ResourceBinding) bool { return true })
}

func TestUpToDateBindingMergesToNoChange(t *testing.T) {
	needServer(t)
	ctx := context.Background()
	ns := newNamespace(t)
	pp := newPP(ns, "web", selectDeployment("web"))
	pp.Spec.Placement.ReplicaScheduling = &policyv1alpha1.ReplicaSchedulingStrategy{
		ReplicaSchedulingType:     policyv1alpha1.ReplicaSchedulingTypeDivided,
		ReplicaDivisionPreference: policyv1alpha1.ReplicaDivisionPreferenceWeighted,
	}
	create(t, pp)
	id := permanentID(t, pp)
	dep := newDeployment(ns, "web", 2, nil)
	dep.Spec.Template.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = resource.MustParse("0.25")
	create(t, dep)
	claimedBy(t, dep, ppClaim(pp, id))
	rb := waitRB(t, ns, "web-deployment", "refers to the claimed template", func(rb *workv1alpha2.ResourceBinding) bool {
		return rb.Spec.Resource.ResourceVersion == dep.ResourceVersion
	})

	// What the API server stored, merged with what the detector computes
	// now, is no change: defaulting and normalization do not cause writes.
	tmpl := &unstructured.Unstructured{}
	tmpl.SetGroupVersionKind(appsv1.SchemeGroupVersion.WithKind("Deployment"))
	if err := testClient.Get(ctx, client.ObjectKeyFromObject(dep), tmpl); err != nil {
		t.Fatal(err)
	}
	if err := testClient.Get(ctx, client.ObjectKeyFromObject(pp), pp); err != nil {
		t.Fatal(err)
	}
	p, _ := policyFrom(pp)
	res := resourceType{GVR: deploymentsGVR, Kind: "Deployment", Namespaced: true}
	intent, _, err := testDetector.bindingIntent(ctx, res, tmpl, p)
	if err != nil {
		t.Fatal(err)
	}
	if mergeBinding(&rb.ObjectMeta, &rb.Spec, intent, newPermanentID) {
		t.Errorf("merging into the stored binding changed it: %+v", rb.Spec)
	}
}

func TestPolicyChangeUpdatesBindings(t *testing.T) {
	needServer(t)
	ns := newNamespace(t)
	pp := newPP(ns, "web", selectDeployment("web"))
	create(t, pp)
	id := permanentID(t, pp)
	dep := newDeployment(ns, "web", 1, nil)
	create(t, dep)
	claimedBy(t, dep, ppClaim(pp, id))
	waitRB(t, ns, "web-deployment", "exists", func(*workv1alpha2.ResourceBinding) bool { return true })
	update(t, pp, func(p *policyv1alpha1.PropagationPolicy) {
		p.Spec.Placement.ClusterAffinity.ClusterNames = []string{"member3"}
		p.Spec.SchedulerName = "other-scheduler"
	})
	waitRB(t, ns, "web-deployment", "follows the policy", func(rb *workv1alpha2.ResourceBinding) bool {
		return rb.Spec.SchedulerName == "other-scheduler" && rb.Spec.Placement != nil &&
			cmp.Equal([]string{"member3"}, rb.Spec.Placement.ClusterAffinity.ClusterNames)
	})
}
