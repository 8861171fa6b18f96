package operator

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorv1alpha1 "github.com/flotilla-io/flotilla/api/operator/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/release"
)

// TestDescheduler: spec.components.karmadaDescheduler, as Karmada's
// operator takes it, makes the operator run Flotilla's descheduler — its
// Deployment Ready on the node agent, in place of the Karmada image the
// resource names, holding its leader lease in the new API server as its own
// identity — and removing the field uninstalls it while the rest keeps
// running.
func TestDescheduler(t *testing.T) {
	ctx := context.Background()
	host := fed.Host.Client
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "flotilla-e2e-descheduler"}}
	if err := host.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	runOperator(t, oldRelease)

	k := &operatorv1alpha1.Karmada{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "desched"},
		Spec: operatorv1alpha1.KarmadaSpec{Components: &operatorv1alpha1.KarmadaComponents{
			Etcd: &operatorv1alpha1.Etcd{Local: &operatorv1alpha1.LocalEtcd{}},
			KarmadaDescheduler: &operatorv1alpha1.KarmadaDescheduler{
				CommonSettings: operatorv1alpha1.CommonSettings{
					Image:    operatorv1alpha1.Image{ImageRepository: "docker.io/karmada/karmada-descheduler", ImageTag: "v1.14.0"},
					Replicas: ptr.To[int32](1),
				},
				ExtraArgs: map[string]string{"descheduling-interval": "30s"},
			},
		}},
	}
	if err := host.Create(ctx, k); err != nil {
		t.Fatal(err)
	}
	// Deleting the instance while the operator runs (cleanups run last
	// first) leaves the host to the tests after this one.
	t.Cleanup(func() { deleteKarmada(t, client.ObjectKeyFromObject(k)) })

	key := client.ObjectKeyFromObject(k)
	k = waitReady(t, key, oldRelease.Version)
	name := k.Name + "-descheduler"
	d := &appsv1.Deployment{}
	if err := host.Get(ctx, client.ObjectKey{Namespace: ns.Name, Name: name}, d); err != nil {
		t.Fatalf("the descheduler's Deployment: %v", err)
	}
	if d.Status.ReadyReplicas != 1 || d.Status.AvailableReplicas != 1 || d.Status.UpdatedReplicas != 1 {
		t.Errorf("Deployment %s: %d ready, %d available, %d updated of 1", name, d.Status.ReadyReplicas, d.Status.AvailableReplicas, d.Status.UpdatedReplicas)
	}
	ctr := d.Spec.Template.Spec.Containers[0]
	if want := oldRelease.Image(release.Descheduler, ""); ctr.Image != want {
		t.Errorf("the descheduler runs %s, want Flotilla's %s", ctr.Image, want)
	}
	if !strings.Contains(strings.Join(ctr.Args, " "), "--descheduling-interval=30s") {
		t.Errorf("args %v lack the extraArgs flag", ctr.Args)
	}
	unsupported := meta.FindStatusCondition(k.Status.Conditions, operatorv1alpha1.ConditionUnsupportedFields)
	if unsupported == nil || !strings.Contains(unsupported.Message, "spec.components.karmadaDescheduler.imageRepository") ||
		strings.Contains(unsupported.Message, "karmadaDescheduler (") {
		t.Errorf("UnsupportedFields %+v: want the Karmada image listed and the descheduler itself not", unsupported)
	}

	// The lease can only be written with the descheduler's own
	// credentials and RBAC: system:flotilla:descheduler, bound to
	// flotilla-descheduler in the new API server.
	cp := adminClient(t, k)
	poll(t, 2*time.Minute, "the descheduler's leader lease", func(ctx context.Context) (bool, error) {
		lease := &coordinationv1.Lease{}
		if err := cp.Get(ctx, client.ObjectKey{Namespace: "karmada-system", Name: "descheduler.flotilla.io"}, lease); err != nil {
			return false, err
		}
		return ptr.Deref(lease.Spec.HolderIdentity, "") != "", fmt.Errorf("lease has no holder")
	})

	// Removing the field uninstalls the release; the instance stays Ready.
	if err := host.Get(ctx, key, k); err != nil {
		t.Fatal(err)
	}
	k.Spec.Components.KarmadaDescheduler = nil
	if err := host.Update(ctx, k); err != nil {
		t.Fatal(err)
	}
	k = waitReady(t, key, oldRelease.Version)
	poll(t, 2*time.Minute, "the descheduler uninstalled", func(ctx context.Context) (bool, error) {
		switch err := host.Get(ctx, client.ObjectKey{Namespace: ns.Name, Name: name}, &appsv1.Deployment{}); {
		case err == nil:
			return false, fmt.Errorf("deployment %s is still there", name)
		case !apierrors.IsNotFound(err):
			return false, err
		}
		records := &corev1.SecretList{}
		if err := host.List(ctx, records, client.InNamespace(ns.Name), client.MatchingLabels{"owner": "helm", "name": name}); err != nil {
			return false, err
		}
		return len(records.Items) == 0, fmt.Errorf("%d Helm records of release %s left", len(records.Items), name)
	})
	for _, other := range []string{"-controller-manager", "-scheduler", "-webhook"} {
		if err := host.Get(ctx, client.ObjectKey{Namespace: ns.Name, Name: k.Name + other}, &appsv1.Deployment{}); err != nil {
			t.Errorf("after removing the descheduler: %v", err)
		}
	}
}

// deleteKarmada deletes an instance and waits until its finalizer has
// removed the control plane.
func deleteKarmada(t *testing.T, key client.ObjectKey) {
	t.Helper()
	k := &operatorv1alpha1.Karmada{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}
	if err := fed.Host.Client.Delete(context.Background(), k); client.IgnoreNotFound(err) != nil {
		t.Fatal(err)
	}
	poll(t, 2*time.Minute, "Karmada "+key.Name+" deleted", func(ctx context.Context) (bool, error) {
		err := fed.Host.Client.Get(ctx, key, &operatorv1alpha1.Karmada{})
		return apierrors.IsNotFound(err), err
	})
}
