package federatedresourcequota_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/components/controller-manager/internal/federatedresourcequota"
	"github.com/flotilla-io/flotilla/internal/controllertest"
	flotillaevents "github.com/flotilla-io/flotilla/internal/events"
	"github.com/flotilla-io/flotilla/internal/names"
)

var server *controllertest.APIServer

func TestMain(m *testing.M) { os.Exit(controllertest.Main(m, &server, nil)) }

func mustCreate(t *testing.T, objs ...client.Object) {
	t.Helper()
	for _, obj := range objs {
		if err := server.Client.Create(t.Context(), obj); err != nil {
			t.Fatalf("creating %T %s: %v", obj, obj.GetName(), err)
		}
	}
}

// namespace creates a namespace of the test's own.
func namespace(t *testing.T, name string) string {
	t.Helper()
	mustCreate(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
	return name
}

// cluster registers a Cluster and its execution namespace, as the cluster
// controller would.
func cluster(t *testing.T, name string) {
	t.Helper()
	mustCreate(t, &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: clusterv1alpha1.ClusterSpec{SyncMode: clusterv1alpha1.Push, APIEndpoint: "https://127.0.0.1:1"}})
	if err := server.Client.Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: names.ExecutionSpace(name)}}); err != nil &&
		!apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}

func cpu(q string) corev1.ResourceList {
	return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(q)}
}

func quota(ns, name, overall string, assignments ...policyv1alpha1.StaticClusterAssignment) *policyv1alpha1.FederatedResourceQuota {
	return &policyv1alpha1.FederatedResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       policyv1alpha1.FederatedResourceQuotaSpec{Overall: cpu(overall), StaticAssignments: assignments},
	}
}

func assign(cluster, hard string) policyv1alpha1.StaticClusterAssignment {
	return policyv1alpha1.StaticClusterAssignment{ClusterName: cluster, Hard: cpu(hard)}
}

// workOf reads the Work of quota q in cluster; nil when there is none.
func workOf(ctx context.Context, q *policyv1alpha1.FederatedResourceQuota, cluster string) (*workv1alpha1.Work, error) {
	w := &workv1alpha1.Work{}
	key := client.ObjectKey{Namespace: names.ExecutionSpace(cluster), Name: names.Work(q.Namespace, q.Name, "ResourceQuota")}
	if err := server.Client.Get(ctx, key, w); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, err
	}
	return w, nil
}

// hardOf decodes the ResourceQuota a Work carries and returns its
// spec.hard cpu.
func hardOf(t testing.TB, w *workv1alpha1.Work) string {
	t.Helper()
	var rq corev1.ResourceQuota
	if err := json.Unmarshal(w.Spec.Workload.Manifests[0].Raw, &rq); err != nil {
		t.Fatal(err)
	}
	q := rq.Spec.Hard[corev1.ResourceCPU]
	return q.String()
}

// gone reports whether the Work of q in cluster is deleted or being
// deleted (the execution controller, which would remove its finalizer,
// does not run here).
func gone(ctx context.Context, q *policyv1alpha1.FederatedResourceQuota, cluster string) (bool, error) {
	w, err := workOf(ctx, q, cluster)
	return w == nil || !w.DeletionTimestamp.IsZero(), err
}

func TestSync(t *testing.T) {
	controllertest.Start(t, server.Config, func(mgr ctrl.Manager, _ *controllertest.Env) error {
		return (&federatedresourcequota.SyncReconciler{
			Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder(federatedresourcequota.SyncControllerName),
		}).SetupWithManager(mgr)
	})
	ctx := t.Context()
	cluster(t, "sync-a")
	cluster(t, "sync-b")
	ns := namespace(t, "sync")
	q := quota(ns, "team", "10", assign("sync-a", "2"), assign("sync-late", "3"))
	mustCreate(t, q)

	controllertest.WaitFor(t, "the Work of sync-a carries the assignment", func(ctx context.Context) (bool, error) {
		w, err := workOf(ctx, q, "sync-a")
		return w != nil, err
	})
	w, err := workOf(ctx, q, "sync-a")
	if err != nil {
		t.Fatal(err)
	}
	var rq corev1.ResourceQuota
	if err := json.Unmarshal(w.Spec.Workload.Manifests[0].Raw, &rq); err != nil {
		t.Fatal(err)
	}
	wantLabels := map[string]string{
		policyv1alpha1.FederatedResourceQuotaNamespaceLabel: ns,
		policyv1alpha1.FederatedResourceQuotaNameLabel:      "team",
		workv1alpha1.ManagedByKarmadaLabel:                  "true",
		workv1alpha1.WorkPermanentIDLabel:                   w.Labels[workv1alpha1.WorkPermanentIDLabel],
	}
	if diff := cmp.Diff(wantLabels, w.Labels); diff != "" || w.Labels[workv1alpha1.WorkPermanentIDLabel] == "" {
		t.Errorf("Work labels (-want +got):\n%s", diff)
	}
	if rq.Namespace != ns || rq.Name != "team" || rq.Kind != "ResourceQuota" || hardOf(t, w) != "2" ||
		rq.Labels[workv1alpha1.WorkPermanentIDLabel] != w.Labels[workv1alpha1.WorkPermanentIDLabel] ||
		rq.Annotations[workv1alpha1.WorkNameAnnotation] != w.Name {
		t.Errorf("manifest %s", w.Spec.Workload.Manifests[0].Raw)
	}
	if len(w.Finalizers) != 1 || w.Finalizers[0] != workv1alpha1.ExecutionControllerFinalizer {
		t.Errorf("finalizers %v, want the execution controller's", w.Finalizers)
	}
	// An assignment to a cluster that does not exist waits for it.
	if w, err := workOf(ctx, q, "sync-late"); err != nil || w != nil {
		t.Fatalf("a Work for a cluster that does not exist: %v, %v", w, err)
	}
	controllertest.WaitFor(t, "a SyncWorkSucceed event", func(ctx context.Context) (bool, error) {
		return hasEvent(ctx, ns, "team", flotillaevents.ReasonSyncWorkSucceed)
	})

	// A changed limit is rewritten, a new assignment added, a removed one's
	// Work deleted.
	if err := server.Client.Get(ctx, client.ObjectKeyFromObject(q), q); err != nil {
		t.Fatal(err)
	}
	q.Spec.StaticAssignments = []policyv1alpha1.StaticClusterAssignment{assign("sync-b", "4"), assign("sync-late", "3")}
	if err := server.Client.Update(ctx, q); err != nil {
		t.Fatal(err)
	}
	controllertest.WaitFor(t, "the Work moves from sync-a to sync-b", func(ctx context.Context) (bool, error) {
		b, err := workOf(ctx, q, "sync-b")
		if err != nil || b == nil || hardOf(t, b) != "4" {
			return false, err
		}
		return gone(ctx, q, "sync-a")
	})

	// A cluster that joins gets its assignment.
	cluster(t, "sync-late")
	controllertest.WaitFor(t, "the cluster that joined gets its Work", func(ctx context.Context) (bool, error) {
		w, err := workOf(ctx, q, "sync-late")
		return w != nil && hardOf(t, w) == "3", err
	})

	// A Work removed by someone else comes back.
	late, err := workOf(ctx, q, "sync-late")
	if err != nil {
		t.Fatal(err)
	}
	late.Finalizers = nil
	if err := server.Client.Update(ctx, late); err != nil {
		t.Fatal(err)
	}
	if err := server.Client.Delete(ctx, late); err != nil {
		t.Fatal(err)
	}
	controllertest.WaitFor(t, "the deleted Work is written again", func(ctx context.Context) (bool, error) {
		w, err := workOf(ctx, q, "sync-late")
		return w != nil && w.UID != late.UID && w.DeletionTimestamp.IsZero(), err
	})

	// The quota deleted, its Works go.
	if err := server.Client.Delete(ctx, q); err != nil {
		t.Fatal(err)
	}
	controllertest.WaitFor(t, "the quota's Works go with it", func(ctx context.Context) (bool, error) {
		for _, c := range []string{"sync-b", "sync-late"} {
			if g, err := gone(ctx, q, c); !g || err != nil {
				return false, err
			}
		}
		return true, nil
	})
}

// appliedWork is a Work of quota q in cluster as the work-status controller
// leaves it once the member's ResourceQuota reports hard and used.
func appliedWork(t *testing.T, q *policyv1alpha1.FederatedResourceQuota, cluster, hard, used string) {
	t.Helper()
	ctx := t.Context()
	rq := corev1.ResourceQuota{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ResourceQuota"},
		ObjectMeta: metav1.ObjectMeta{Namespace: q.Namespace, Name: q.Name}}
	raw, err := json.Marshal(rq)
	if err != nil {
		t.Fatal(err)
	}
	w := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{
		Namespace: names.ExecutionSpace(cluster), Name: names.Work(q.Namespace, q.Name, "ResourceQuota"),
		Labels: map[string]string{
			policyv1alpha1.FederatedResourceQuotaNamespaceLabel: q.Namespace,
			policyv1alpha1.FederatedResourceQuotaNameLabel:      q.Name,
		},
	}}
	w.Spec.Workload.Manifests = []workv1alpha1.Manifest{{RawExtension: runtime.RawExtension{Raw: raw}}}
	mustCreate(t, w)
	status, err := json.Marshal(corev1.ResourceQuotaStatus{Hard: cpu(hard), Used: cpu(used)})
	if err != nil {
		t.Fatal(err)
	}
	w.Status.Conditions = []metav1.Condition{{Type: workv1alpha1.WorkApplied, Status: metav1.ConditionTrue, Reason: "AppliedSuccessful",
		LastTransitionTime: metav1.Now()}}
	w.Status.ManifestStatuses = []workv1alpha1.ManifestStatus{{
		Identifier: workv1alpha1.ResourceIdentifier{Version: "v1", Kind: "ResourceQuota", Resource: "resourcequotas", Namespace: q.Namespace, Name: q.Name},
		Status:     &runtime.RawExtension{Raw: status},
	}}
	if err := server.Client.Status().Update(ctx, w); err != nil {
		t.Fatal(err)
	}
}

// canonical renders a resource list for comparison.
func canonical(l corev1.ResourceList) map[corev1.ResourceName]string {
	out := map[corev1.ResourceName]string{}
	for k, q := range l {
		out[k] = q.String()
	}
	return out
}

type quotaStatus struct {
	Overall, OverallUsed map[corev1.ResourceName]string
	Clusters             map[string][2]string // cluster: hard cpu, used cpu
}

func statusOf(ctx context.Context, q *policyv1alpha1.FederatedResourceQuota) (quotaStatus, error) {
	got := &policyv1alpha1.FederatedResourceQuota{}
	if err := server.Client.Get(ctx, client.ObjectKeyFromObject(q), got); err != nil {
		return quotaStatus{}, err
	}
	s := quotaStatus{Overall: canonical(got.Status.Overall), OverallUsed: canonical(got.Status.OverallUsed), Clusters: map[string][2]string{}}
	for _, a := range got.Status.AggregatedStatus {
		h, u := a.Hard[corev1.ResourceCPU], a.Used[corev1.ResourceCPU]
		s.Clusters[a.ClusterName] = [2]string{h.String(), u.String()}
	}
	return s, nil
}

func waitForStatus(t *testing.T, q *policyv1alpha1.FederatedResourceQuota, want quotaStatus) {
	t.Helper()
	var last quotaStatus
	controllertest.WaitFor(t, fmt.Sprintf("the status of %s is %+v", q.Name, want), func(ctx context.Context) (bool, error) {
		var err error
		last, err = statusOf(ctx, q)
		return err == nil && cmp.Equal(want, last), err
	})
}

func TestStatus(t *testing.T) {
	for _, enforcement := range []bool{false, true} {
		t.Run(fmt.Sprintf("enforcement=%v", enforcement), func(t *testing.T) {
			controllertest.Start(t, server.Config, func(mgr ctrl.Manager, _ *controllertest.Env) error {
				return (&federatedresourcequota.StatusReconciler{
					Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder(federatedresourcequota.StatusControllerName),
					Enforcement: enforcement,
				}).SetupWithManager(mgr)
			})
			ns := namespace(t, fmt.Sprintf("status-%v", enforcement))
			cluster(t, "status-a-"+ns)
			cluster(t, "status-b-"+ns)
			q := quota(ns, "team", "10", assign("status-a-"+ns, "4"), assign("status-b-"+ns, "6"))
			mustCreate(t, q)
			appliedWork(t, q, "status-b-"+ns, "6", "1500m")
			appliedWork(t, q, "status-a-"+ns, "4", "2")

			want := quotaStatus{
				Overall: map[corev1.ResourceName]string{corev1.ResourceCPU: "10"}, OverallUsed: map[corev1.ResourceName]string{corev1.ResourceCPU: "3500m"},
				Clusters: map[string][2]string{"status-a-" + ns: {"4", "2"}, "status-b-" + ns: {"6", "1500m"}},
			}
			if enforcement {
				// overall and overallUsed are the enforcement controller's.
				want.Overall, want.OverallUsed = map[corev1.ResourceName]string{}, map[corev1.ResourceName]string{}
			}
			waitForStatus(t, q, want)
			got := &policyv1alpha1.FederatedResourceQuota{}
			if err := server.Client.Get(t.Context(), client.ObjectKeyFromObject(q), got); err != nil {
				t.Fatal(err)
			}
			if got.Status.AggregatedStatus[0].ClusterName != "status-a-"+ns {
				t.Errorf("aggregatedStatus not sorted by cluster: %+v", got.Status.AggregatedStatus)
			}
			controllertest.WaitFor(t, "an AggregateStatusSucceed event", func(ctx context.Context) (bool, error) {
				return hasEvent(ctx, ns, "team", flotillaevents.ReasonAggregateStatusSucceed)
			})
		})
	}
}

// scheduledBinding is the binding of Deployment name in ns asking cpu per
// replica with replicas in each listed cluster.
func scheduledBinding(ns, name, perReplica string, replicas ...int32) *workv1alpha2.ResourceBinding {
	rb := &workv1alpha2.ResourceBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: names.Binding(name, "Deployment")},
		Spec: workv1alpha2.ResourceBindingSpec{
			Resource:            workv1alpha2.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: ns, Name: name},
			ReplicaRequirements: &workv1alpha2.ReplicaRequirements{ResourceRequest: cpu(perReplica)},
		},
	}
	for i, r := range replicas {
		rb.Spec.Replicas += r
		rb.Spec.Clusters = append(rb.Spec.Clusters, workv1alpha2.TargetCluster{Name: fmt.Sprintf("member%d", i+1), Replicas: r})
	}
	return rb
}

func TestEnforcement(t *testing.T) {
	controllertest.Start(t, server.Config, func(mgr ctrl.Manager, _ *controllertest.Env) error {
		return (&federatedresourcequota.EnforcementReconciler{
			Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder(federatedresourcequota.EnforcementControllerName),
		}).SetupWithManager(mgr)
	})
	ctx := t.Context()
	ns := namespace(t, "enforcement")
	q := quota(ns, "team", "4")
	q.Spec.Overall[corev1.ResourceMemory] = resource.MustParse("8Gi")
	mustCreate(t, q)
	overall := map[corev1.ResourceName]string{corev1.ResourceCPU: "4", corev1.ResourceMemory: "8Gi"}
	// Nothing scheduled: nothing used, and a limit nothing requests is
	// left out, as in Karmada.
	waitForStatus(t, q, quotaStatus{Overall: overall, OverallUsed: map[corev1.ResourceName]string{}, Clusters: map[string][2]string{}})

	web := scheduledBinding(ns, "web", "500m", 2, 1)
	mustCreate(t, web, scheduledBinding(ns, "unscheduled", "1"))
	// Another namespace's bindings do not count.
	other := namespace(t, "enforcement-other")
	mustCreate(t, scheduledBinding(other, "web", "1", 3))
	waitForStatus(t, q, quotaStatus{Overall: overall, OverallUsed: map[corev1.ResourceName]string{corev1.ResourceCPU: "1500m"}, Clusters: map[string][2]string{}})
	controllertest.WaitFor(t, "a CollectOverallStatusSucceed event", func(ctx context.Context) (bool, error) {
		return hasEvent(ctx, ns, "team", flotillaevents.ReasonCollectOverallStatusSucceed)
	})

	// Scaling a placement moves the usage.
	if err := server.Client.Get(ctx, client.ObjectKeyFromObject(web), web); err != nil {
		t.Fatal(err)
	}
	web.Spec.Clusters[0].Replicas = 5
	if err := server.Client.Update(ctx, web); err != nil {
		t.Fatal(err)
	}
	waitForStatus(t, q, quotaStatus{Overall: overall, OverallUsed: map[corev1.ResourceName]string{corev1.ResourceCPU: "3"}, Clusters: map[string][2]string{}})

	// A binding that goes gives its usage back.
	if err := server.Client.Delete(ctx, web); err != nil {
		t.Fatal(err)
	}
	waitForStatus(t, q, quotaStatus{Overall: overall, OverallUsed: map[corev1.ResourceName]string{}, Clusters: map[string][2]string{}})

	// A new limit is reflected in status.overall.
	if err := server.Client.Get(ctx, client.ObjectKeyFromObject(q), q); err != nil {
		t.Fatal(err)
	}
	q.Spec.Overall = cpu("6")
	if err := server.Client.Update(ctx, q); err != nil {
		t.Fatal(err)
	}
	waitForStatus(t, q, quotaStatus{Overall: map[corev1.ResourceName]string{corev1.ResourceCPU: "6"}, OverallUsed: map[corev1.ResourceName]string{}, Clusters: map[string][2]string{}})
}

// hasEvent reports whether an event with reason was recorded on the quota
// name in ns.
func hasEvent(ctx context.Context, ns, name, reason string) (bool, error) {
	var list corev1.EventList
	if err := server.Client.List(ctx, &list, client.InNamespace(ns)); err != nil {
		return false, err
	}
	for _, e := range list.Items {
		if e.InvolvedObject.Name == name && e.InvolvedObject.Kind == "FederatedResourceQuota" && e.Reason == reason {
			return true, nil
		}
	}
	return false, nil
}
