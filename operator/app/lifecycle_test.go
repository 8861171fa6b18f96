package app

import (
	"context"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorv1alpha1 "github.com/flotilla-io/flotilla/api/operator/v1alpha1"
)

// installToContents creates a Karmada and plays etcd's and the API
// server's rollouts, so that the instance waits at the contents phase.
func installToContents(t *testing.T, k *operatorv1alpha1.Karmada) {
	t.Helper()
	if err := k8s.Create(context.Background(), k); err != nil {
		t.Fatal(err)
	}
	waitCondition(t, k.Namespace, k.Name, operatorv1alpha1.ConditionProgressing, operatorv1alpha1.ReasonEtcdProgressing)
	rollOut(t, k.Namespace, "StatefulSet", k.Name+"-etcd")
	waitCondition(t, k.Namespace, k.Name, operatorv1alpha1.ConditionProgressing, operatorv1alpha1.ReasonAPIServerProgressing)
	rollOut(t, k.Namespace, "Deployment", k.Name+"-apiserver")
	waitCondition(t, k.Namespace, k.Name, operatorv1alpha1.ConditionProgressing, operatorv1alpha1.ReasonContentsProgressing)
}

// TestDriftRepaired: what a person deletes or changes is put back.
func TestDriftRepaired(t *testing.T) {
	startOperator(t, oldRelease)
	ns := newNamespace(t)
	ctx := context.Background()
	installToContents(t, newKarmada(ns, "drift"))

	if err := k8s.Delete(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "drift-apiserver"}}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the deleted Service back", func() (bool, error) {
		svc := &corev1.Service{}
		err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "drift-apiserver"}, svc)
		return err == nil && svc.DeletionTimestamp.IsZero(), err
	})

	s := &appsv1.StatefulSet{}
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "drift-etcd"}, s); err != nil {
		t.Fatal(err)
	}
	s.Spec.Template.Spec.Containers[0].Image = "example.com/someone-elses/etcd:latest"
	if err := k8s.Update(ctx, s); err != nil {
		t.Fatal(err)
	}
	eventually(t, "etcd's image put back", func() (bool, error) {
		return image(t, ns, "StatefulSet", "drift-etcd") == "registry.k8s.io/etcd:3.6.16-0", nil
	})
	// The edit made etcd's rollout start over: the instance says it waits
	// for it, and that it is degraded rather than merely progressing only
	// once it had been Ready (it never was here).
	waitCondition(t, ns, "drift", operatorv1alpha1.ConditionProgressing, operatorv1alpha1.ReasonEtcdProgressing)
	rollOut(t, ns, "StatefulSet", "drift-etcd")
	waitCondition(t, ns, "drift", operatorv1alpha1.ConditionProgressing, operatorv1alpha1.ReasonContentsProgressing)
}

// TestSuspend: a suspended instance is left alone, and resumes when
// unsuspended.
func TestSuspend(t *testing.T) {
	startOperator(t, oldRelease)
	ns := newNamespace(t)
	ctx := context.Background()
	installToContents(t, newKarmada(ns, "sus"))

	k := getKarmada(t, ns, "sus")
	k.Spec.Suspend = ptr.To(true)
	if err := k8s.Update(ctx, k); err != nil {
		t.Fatal(err)
	}
	waitCondition(t, ns, "sus", operatorv1alpha1.ConditionProgressing, operatorv1alpha1.ReasonSuspended)
	if err := k8s.Delete(ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "sus-apiserver"}}); err != nil {
		t.Fatal(err)
	}
	// The deletion's watch event reaches the operator within moments; a
	// suspended instance must ignore it. Give it several seconds to act.
	time.Sleep(3 * time.Second)
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "sus-apiserver"}, &appsv1.Deployment{}); !apierrors.IsNotFound(err) {
		t.Fatalf("a suspended instance's Deployment was put back (get: %v)", err)
	}

	k = getKarmada(t, ns, "sus")
	k.Spec.Suspend = nil
	if err := k8s.Update(ctx, k); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the API server back after resuming", func() (bool, error) {
		err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "sus-apiserver"}, &appsv1.Deployment{})
		return err == nil, err
	})
}

// TestCertificateRotation: once two thirds of a certificate's validity
// passed it is reissued, and the pods that mount it roll.
func TestCertificateRotation(t *testing.T) {
	startOperator(t, oldRelease)
	ns := newNamespace(t)
	ctx := context.Background()
	k := newKarmada(ns, "rot")
	k.Spec.CustomCertificate = &operatorv1alpha1.CustomCertificate{LeafCertValidityDays: ptr.To[int32](1)}
	installToContents(t, k)

	hash := func() string {
		s := &appsv1.StatefulSet{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "rot-etcd"}, s); err != nil {
			t.Fatal(err)
		}
		return s.Spec.Template.Annotations[operatorv1alpha1.AnnotationCertificateHash]
	}
	secretCert := func() string {
		sec := &corev1.Secret{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "rot-pki-etcd-server"}, sec); err != nil {
			t.Fatal(err)
		}
		return string(sec.Data["tls.crt"])
	}
	before, beforeCert := hash(), secretCert()
	if before == "" {
		t.Fatal("etcd's pod template has no certificate hash")
	}

	// Seventeen hours into a one-day certificate: past two thirds.
	testClock.set(17 * time.Hour)
	t.Cleanup(func() { testClock.set(0) })
	// Any event makes the operator look; the requeue for the renewal is
	// real time away.
	k = getKarmada(t, ns, "rot")
	k.Annotations = map[string]string{"poke": "1"}
	if err := k8s.Update(ctx, k); err != nil {
		t.Fatal(err)
	}
	eventually(t, "etcd's certificate reissued", func() (bool, error) { return secretCert() != beforeCert, nil })
	testClock.set(0)
	eventually(t, "etcd's pods rolled by the new hash", func() (bool, error) { return hash() != before, nil })
}

// TestUpgradeAndDowngrade: an operator of a newer release upgrades an
// unpinned instance phase by phase — etcd first, the API server only once
// etcd rolled out — leaves a pinned one alone, and refuses a downgrade.
func TestUpgradeAndDowngrade(t *testing.T) {
	stopOld := startOperator(t, oldRelease)
	ns := newNamespace(t)
	ctx := context.Background()
	installToContents(t, newKarmada(ns, "up"))
	pinned := newKarmada(ns, "pinned")
	pinned.Spec.Version = "v0.1.0"
	installToContents(t, pinned)
	stopOld()

	startOperator(t, newRelease, oldRelease)
	eventually(t, "etcd upgraded", func() (bool, error) {
		return image(t, ns, "StatefulSet", "up-etcd") == "registry.k8s.io/etcd:3.6.17-0", nil
	})
	waitCondition(t, ns, "up", operatorv1alpha1.ConditionProgressing, operatorv1alpha1.ReasonEtcdProgressing)
	if got := image(t, ns, "Deployment", "up-apiserver"); got != "registry.k8s.io/kube-apiserver:v1.37.2" {
		t.Fatalf("the API server was upgraded to %s before etcd rolled out", got)
	}
	rollOut(t, ns, "StatefulSet", "up-etcd")
	eventually(t, "API server upgraded", func() (bool, error) {
		return image(t, ns, "Deployment", "up-apiserver") == "registry.k8s.io/kube-apiserver:v1.37.3", nil
	})
	if got := image(t, ns, "StatefulSet", "pinned-etcd"); got != "registry.k8s.io/etcd:3.6.16-0" {
		t.Errorf("a pinned instance was upgraded: etcd image %s", got)
	}

	// A version older than what runs is refused, naming both.
	k := getKarmada(t, ns, "pinned")
	k.Status.KarmadaVersion = "v0.2.0"
	if err := k8s.Status().Update(ctx, k); err != nil {
		t.Fatal(err)
	}
	k = waitCondition(t, ns, "pinned", operatorv1alpha1.ConditionReady, operatorv1alpha1.ReasonDowngradeRefused)
	if msg := meta.FindStatusCondition(k.Status.Conditions, operatorv1alpha1.ConditionReady).Message; !strings.Contains(msg, "v0.1.0 is older than the running v0.2.0") {
		t.Errorf("downgrade message %q", msg)
	}

	// A version the table does not know names the field.
	k = getKarmada(t, ns, "up")
	k.Spec.Version = "v9.9.9"
	if err := k8s.Update(ctx, k); err != nil {
		t.Fatal(err)
	}
	k = waitCondition(t, ns, "up", operatorv1alpha1.ConditionReady, operatorv1alpha1.ReasonUnknownVersion)
	if msg := meta.FindStatusCondition(k.Status.Conditions, operatorv1alpha1.ConditionReady).Message; !strings.Contains(msg, "spec.version") {
		t.Errorf("unknown version message %q does not name spec.version", msg)
	}
}

// TestDelete: deleting a Karmada removes everything the operator made,
// unless it asked to keep its data.
func TestDelete(t *testing.T) {
	startOperator(t, oldRelease)
	ns := newNamespace(t)
	ctx := context.Background()
	installToContents(t, newKarmada(ns, "gone"))
	kept := newKarmada(ns, "kept")
	kept.Spec.PreserveDataOnDeletion = true
	installToContents(t, kept)

	for _, name := range []string{"gone", "kept"} {
		if err := k8s.Delete(ctx, getKarmada(t, ns, name)); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"gone", "kept"} {
		eventually(t, "Karmada "+name+" gone", func() (bool, error) {
			err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &operatorv1alpha1.Karmada{})
			return apierrors.IsNotFound(err), err
		})
	}
	left := func(instance string) []string {
		var out []string
		sel := client.MatchingLabels{operatorv1alpha1.LabelKarmadaName: instance}
		lists := map[string]client.ObjectList{"Secret": &corev1.SecretList{}, "Service": &corev1.ServiceList{},
			"Deployment": &appsv1.DeploymentList{}, "StatefulSet": &appsv1.StatefulSetList{}}
		for kind, l := range lists {
			if err := k8s.List(ctx, l, client.InNamespace(ns), sel); err != nil {
				t.Fatal(err)
			}
			items, _ := meta.ExtractList(l)
			for _, it := range items {
				o := it.(client.Object)
				if o.GetDeletionTimestamp().IsZero() {
					out = append(out, kind+"/"+o.GetName())
				}
			}
		}
		return out
	}
	if l := left("gone"); len(l) > 0 {
		t.Errorf("left behind after deleting Karmada gone: %v", l)
	}
	l := left("kept")
	for _, o := range l {
		if !strings.HasPrefix(o, "Secret/kept-") {
			t.Errorf("left behind after deleting Karmada kept: %s", o)
		}
	}
	if !containsString(l, "Secret/kept-pki-ca") || !containsString(l, "Secret/kept-pki-sa") {
		t.Errorf("preserveDataOnDeletion did not keep the CA and service-account key: %v", l)
	}
}

func containsString(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}
