package execution

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
)

// deadlineRecorder is a member resource that records whether each request
// had a deadline, and how far off.
type deadlineRecorder struct {
	dynamic.ResourceInterface
	got map[string]time.Duration
}

func (d *deadlineRecorder) record(ctx context.Context, verb string) {
	if deadline, ok := ctx.Deadline(); ok {
		d.got[verb] = time.Until(deadline)
	} else {
		d.got[verb] = -1
	}
}

func (d *deadlineRecorder) Get(ctx context.Context, _ string, _ metav1.GetOptions, _ ...string) (*unstructured.Unstructured, error) {
	d.record(ctx, "get")
	return nil, nil
}

func (d *deadlineRecorder) Apply(ctx context.Context, _ string, _ *unstructured.Unstructured, _ metav1.ApplyOptions, _ ...string) (*unstructured.Unstructured, error) {
	d.record(ctx, "apply")
	return nil, nil
}

func (d *deadlineRecorder) Patch(ctx context.Context, _ string, _ types.PatchType, _ []byte, _ metav1.PatchOptions, _ ...string) (*unstructured.Unstructured, error) {
	d.record(ctx, "patch")
	return nil, nil
}

func (d *deadlineRecorder) Delete(ctx context.Context, _ string, _ metav1.DeleteOptions, _ ...string) error {
	d.record(ctx, "delete")
	return nil
}

func TestMemberRequestsHaveDeadlines(t *testing.T) {
	rec := &deadlineRecorder{got: map[string]time.Duration{}}
	res := timedResource{rec}
	ctx := context.Background()
	_, _ = res.Get(ctx, "a", metav1.GetOptions{})
	_, _ = res.Apply(ctx, "a", &unstructured.Unstructured{}, metav1.ApplyOptions{})
	_, _ = res.Patch(ctx, "a", types.MergePatchType, nil, metav1.PatchOptions{})
	_ = res.Delete(ctx, "a", metav1.DeleteOptions{})
	for _, verb := range []string{"get", "apply", "patch", "delete"} {
		left, ok := rec.got[verb]
		if !ok || left <= 0 || left > memberRequestTimeout {
			t.Errorf("%s: time left %v, want a deadline within %v", verb, left, memberRequestTimeout)
		}
	}

	// A caller's earlier deadline stays.
	short, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	_, _ = res.Get(short, "a", metav1.GetOptions{})
	if left := rec.got["get"]; left > time.Second {
		t.Errorf("get: time left %v, want the caller's 1s deadline kept", left)
	}
}
