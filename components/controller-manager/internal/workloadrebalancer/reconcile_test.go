package workloadrebalancer_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	appsv1alpha1 "github.com/flotilla-io/flotilla/api/apps/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/components/controller-manager/internal/workloadrebalancer"
)

// TestReconcilePasses runs passes of the reconciler against a fake API
// whose binding reads or writes fail a few times: a workload whose binding
// could not be read or written stays without a result, the rebalancer
// unfinished, and the pass returns an error for a retry; once they pass it
// is Successful and the rebalancer finished.
func TestReconcilePasses(t *testing.T) {
	unavailable := apierrors.NewServiceUnavailable("etcd is down")
	conflict := apierrors.NewConflict(schema.GroupResource{Group: "work.karmada.io", Resource: "resourcebindings"}, "web-deployment", nil)
	type pass struct {
		wantErr bool
		want    []appsv1alpha1.ObservedWorkload
		done    bool // finishTime set
	}
	tests := []struct {
		name         string
		getErrs      []error // returned by the binding reads, in turn
		patchErrs    []error // returned by the binding writes, in turn
		ttl          *int32
		passes       []pass
		wantTrigger  bool
		wantDeletion bool
	}{{
		name:    "binding unreadable, then readable",
		getErrs: []error{unavailable},
		passes: []pass{
			{wantErr: true, want: observed(pending(deploy("default", "web")))},
			{want: observed(succeeded(deploy("default", "web"))), done: true},
		},
		wantTrigger: true,
	}, {
		name:      "binding write conflicts, then passes",
		patchErrs: []error{conflict},
		passes: []pass{
			{wantErr: true, want: observed(pending(deploy("default", "web")))},
			{want: observed(succeeded(deploy("default", "web"))), done: true},
		},
		wantTrigger: true,
	}, {
		name:      "binding gone between read and write",
		patchErrs: []error{apierrors.NewNotFound(schema.GroupResource{Group: "work.karmada.io", Resource: "resourcebindings"}, "web-deployment")},
		passes: []pass{
			{want: observed(notFound(deploy("default", "web"))), done: true},
		},
	}, {
		name:         "TTL 0: deleted in the pass that finishes it",
		ttl:          ptr.To[int32](0),
		passes:       []pass{{want: observed(succeeded(deploy("default", "web"))), done: true}},
		wantTrigger:  true,
		wantDeletion: true,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			scheme := runtime.NewScheme()
			for _, add := range []func(*runtime.Scheme) error{appsv1alpha1.AddToScheme, workv1alpha2.AddToScheme} {
				if err := add(scheme); err != nil {
					t.Fatal(err)
				}
			}
			created := metav1.NewTime(time.Now().Truncate(time.Second))
			rebalancer := &appsv1alpha1.WorkloadRebalancer{
				ObjectMeta: metav1.ObjectMeta{Name: "r", Generation: 1, CreationTimestamp: created},
				Spec:       appsv1alpha1.WorkloadRebalancerSpec{Workloads: refs(deploy("default", "web")), TTLSecondsAfterFinished: tc.ttl},
			}
			getErrs, patchErrs := tc.getErrs, tc.patchErrs
			next := func(errs *[]error) error {
				if len(*errs) == 0 {
					return nil
				}
				err := (*errs)[0]
				*errs = (*errs)[1:]
				return err
			}
			c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(rebalancer, resourceBinding("web")).
				WithStatusSubresource(&appsv1alpha1.WorkloadRebalancer{}).
				WithInterceptorFuncs(interceptor.Funcs{
					Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
						if _, ok := obj.(*workv1alpha2.ResourceBinding); ok {
							if err := next(&getErrs); err != nil {
								return err
							}
						}
						return c.Get(ctx, key, obj, opts...)
					},
					Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, p client.Patch, opts ...client.PatchOption) error {
						if _, ok := obj.(*workv1alpha2.ResourceBinding); ok {
							if err := next(&patchErrs); err != nil {
								return err
							}
						}
						return c.Patch(ctx, obj, p, opts...)
					},
				}).Build()
			r := &workloadrebalancer.Reconciler{Client: c}
			req := ctrl.Request{NamespacedName: client.ObjectKeyFromObject(rebalancer)}

			for i, p := range tc.passes {
				_, err := r.Reconcile(t.Context(), req)
				if (err != nil) != p.wantErr {
					t.Fatalf("pass %d: error %v, want one: %v", i, err, p.wantErr)
				}
				got := &appsv1alpha1.WorkloadRebalancer{}
				err = c.Get(t.Context(), req.NamespacedName, got)
				if tc.wantDeletion && i == len(tc.passes)-1 {
					if !apierrors.IsNotFound(err) {
						t.Fatalf("pass %d: want the rebalancer deleted, got err %v", i, err)
					}
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(p.want, got.Status.ObservedWorkloads); diff != "" {
					t.Errorf("pass %d: observedWorkloads (-want +got):\n%s", i, diff)
				}
				if done := got.Status.FinishTime != nil; done != p.done || got.Status.ObservedGeneration != 1 {
					t.Errorf("pass %d: finished %v (want %v), observedGeneration %d", i, done, p.done, got.Status.ObservedGeneration)
				}
			}

			rb := &workv1alpha2.ResourceBinding{}
			if err := c.Get(t.Context(), client.ObjectKeyFromObject(resourceBinding("web")), rb); err != nil {
				t.Fatal(err)
			}
			if triggered := rb.Spec.RescheduleTriggeredAt != nil && rb.Spec.RescheduleTriggeredAt.Equal(&created); triggered != tc.wantTrigger {
				t.Errorf("binding triggered at the rebalancer's creation: %v, want %v (rescheduleTriggeredAt %v)", triggered, tc.wantTrigger, rb.Spec.RescheduleTriggeredAt)
			}
		})
	}
}
