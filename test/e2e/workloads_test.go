package e2e

import (
	"context"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
)

// deployment is a small kwok-schedulable Deployment.
func deployment(ns, name string, replicas int32, image string) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: image}}},
			},
		},
	}
}

func newDeployment() *appsv1.Deployment { return &appsv1.Deployment{} }

// TestDuplicatedDeploymentLifecycle: a Deployment duplicated to every
// member runs there with the template's replicas, its template shows the
// ready replicas summed over members, and an image change, a scale and the
// delete reach every member; the binding and its Works go with the
// template.
func TestDuplicatedDeploymentLifecycle(t *testing.T) {
	t.Parallel()
	ns := namespace(t, "e2e-duplicated")
	create(t, propagationPolicy(ns, "web", nil, policyv1alpha1.ResourceSelector{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}))
	d := deployment(ns, "web", 2, "registry.example/web:1")
	create(t, d)
	key := client.ObjectKeyFromObject(d)

	running := func(replicas int32, image string) func(*appsv1.Deployment) bool {
		return func(got *appsv1.Deployment) bool {
			return *got.Spec.Replicas == replicas && got.Spec.Template.Spec.Containers[0].Image == image &&
				got.Status.AvailableReplicas == replicas && got.Status.ObservedGeneration == got.Generation
		}
	}
	inMembers(t, allMembers(), key, newDeployment, "web 2/2 Available", running(2, "registry.example/web:1"))
	readySummed := func(want int32) {
		t.Helper()
		eventually(t, "the template's readyReplicas summed", func(ctx context.Context) (bool, error) {
			var got appsv1.Deployment
			if err := cp.Get(ctx, key, &got); err != nil {
				return false, err
			}
			return got.Status.ReadyReplicas == want && got.Status.Replicas == want, nil
		})
	}
	readySummed(6)

	update(t, d, func(d *appsv1.Deployment) {
		d.Spec.Replicas = ptr.To[int32](3)
		d.Spec.Template.Spec.Containers[0].Image = "registry.example/web:2"
	})
	inMembers(t, allMembers(), key, newDeployment, "web:2 3/3 Available", running(3, "registry.example/web:2"))
	readySummed(9)

	var rb workv1alpha2.ResourceBinding
	if err := cp.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "web-deployment"}, &rb); err != nil {
		t.Fatalf("binding web-deployment: %v", err)
	}
	remove(t, d)
	goneFrom(t, allMembers(), key, &appsv1.Deployment{})
	eventually(t, "the binding and its Works removed", func(ctx context.Context) (bool, error) {
		if err := cp.Get(ctx, client.ObjectKeyFromObject(&rb), &workv1alpha2.ResourceBinding{}); client.IgnoreNotFound(err) != nil || err == nil {
			return false, client.IgnoreNotFound(err)
		}
		var works workv1alpha1.WorkList
		if err := cp.List(ctx, &works, client.MatchingLabels{workv1alpha2.ResourceBindingPermanentIDLabel: rb.Labels[workv1alpha2.ResourceBindingPermanentIDLabel]}); err != nil {
			return false, err
		}
		return len(works.Items) == 0, nil
	})
}

// TestEverydayKinds: a Service, a Secret, a Role and a Job, selected by
// kind, reach the members their policy names; the member assigns the
// Service its own cluster IP; a Job divided over two members runs half of
// its completions in each and completes there.
func TestEverydayKinds(t *testing.T) {
	t.Parallel()
	ns := namespace(t, "e2e-kinds")
	targets := []string{"member2", "member3"}
	create(t, propagationPolicy(ns, "everyday", targets,
		policyv1alpha1.ResourceSelector{APIVersion: "v1", Kind: "Service"},
		policyv1alpha1.ResourceSelector{APIVersion: "v1", Kind: "Secret", LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"e2e": "yes"}}},
		policyv1alpha1.ResourceSelector{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "Role"},
	))
	jobPolicy := propagationPolicy(ns, "batch", targets, policyv1alpha1.ResourceSelector{APIVersion: "batch/v1", Kind: "Job"})
	jobPolicy.Spec.Placement.ReplicaScheduling = &policyv1alpha1.ReplicaSchedulingStrategy{
		ReplicaSchedulingType:     policyv1alpha1.ReplicaSchedulingTypeDivided,
		ReplicaDivisionPreference: policyv1alpha1.ReplicaDivisionPreferenceWeighted,
		WeightPreference: &policyv1alpha1.ClusterPreferences{StaticWeightList: []policyv1alpha1.StaticClusterWeight{
			{TargetCluster: policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member2"}}, Weight: 1},
			{TargetCluster: policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member3"}}, Weight: 1},
		}},
	}
	create(t, jobPolicy)

	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "api"},
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{"app": "api"},
			Ports:    []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080)}},
		},
	}
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "token", Labels: map[string]string{"e2e": "yes"}},
		StringData: map[string]string{"token": "s3cr3t"},
	}
	unselected := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "local-only"},
		StringData: map[string]string{"token": "stays"},
	}
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "reader"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get"}}},
	}
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "migrate"},
		Spec: batchv1.JobSpec{
			Parallelism: ptr.To[int32](4),
			Completions: ptr.To[int32](4),
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers:    []corev1.Container{{Name: "migrate", Image: "registry.example/migrate:1"}},
			}},
		},
	}
	for _, obj := range []client.Object{svc, secret, unselected, role, job} {
		create(t, obj)
	}

	var cpService corev1.Service
	if err := cp.Get(t.Context(), client.ObjectKeyFromObject(svc), &cpService); err != nil {
		t.Fatal(err)
	}
	inMembers(t, targets, client.ObjectKeyFromObject(svc), func() *corev1.Service { return &corev1.Service{} }, "the Service",
		func(got *corev1.Service) bool {
			// Each member allocates from its own range; the control plane's
			// address means nothing there.
			return len(got.Spec.Ports) == 1 && got.Spec.Ports[0].TargetPort.IntValue() == 8080 &&
				got.Spec.ClusterIP != "" && got.Labels[workv1alpha1.ManagedByKarmadaLabel] == workv1alpha1.ManagedByKarmadaLabelValue
		})
	inMembers(t, targets, client.ObjectKeyFromObject(secret), func() *corev1.Secret { return &corev1.Secret{} }, "the Secret",
		func(got *corev1.Secret) bool { return string(got.Data["token"]) == "s3cr3t" })
	inMembers(t, targets, client.ObjectKeyFromObject(role), func() *rbacv1.Role { return &rbacv1.Role{} }, "the Role",
		func(got *rbacv1.Role) bool { return len(got.Rules) == 1 && got.Rules[0].Resources[0] == "configmaps" })
	inMembers(t, targets, client.ObjectKeyFromObject(job), func() *batchv1.Job { return &batchv1.Job{} }, "half the Job, complete",
		func(got *batchv1.Job) bool {
			return *got.Spec.Parallelism == 2 && *got.Spec.Completions == 2 && got.Status.Succeeded == 2
		})
	absentFrom(t, []string{"member1"}, client.ObjectKeyFromObject(svc), &corev1.Service{})
	absentFrom(t, targets, client.ObjectKeyFromObject(unselected), &corev1.Secret{})
	eventually(t, "the template Job's status summed over members", func(ctx context.Context) (bool, error) {
		var got batchv1.Job
		if err := cp.Get(ctx, client.ObjectKeyFromObject(job), &got); err != nil {
			return false, err
		}
		return got.Status.Succeeded == 4, nil
	})
}
