package ratelimiter

import (
	"flag"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func parse(t *testing.T, args ...string) Options {
	t.Helper()
	var o Options
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	o.BindFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return o
}

func TestFlags(t *testing.T) {
	tests := []struct {
		args    []string
		want    Options
		wantErr string
	}{
		{nil, Options{BaseDelay: 5 * time.Millisecond, MaxDelay: 1000 * time.Second, QPS: 10, BucketSize: 100}, ""},
		{[]string{"--rate-limiter-base-delay=1s", "--rate-limiter-max-delay=1m", "--rate-limiter-qps=3", "--rate-limiter-bucket-size=7"},
			Options{BaseDelay: time.Second, MaxDelay: time.Minute, QPS: 3, BucketSize: 7}, ""},
		{[]string{"--rate-limiter-base-delay=0s"}, Options{}, "--rate-limiter-base-delay must be positive"},
		{[]string{"--rate-limiter-base-delay=2s", "--rate-limiter-max-delay=1s"}, Options{}, "--rate-limiter-max-delay (1s) must be at least"},
		{[]string{"--rate-limiter-qps=0"}, Options{}, "--rate-limiter-qps must be positive"},
		{[]string{"--rate-limiter-bucket-size=-1"}, Options{}, "--rate-limiter-bucket-size must be positive"},
	}
	for _, tt := range tests {
		o := parse(t, tt.args...)
		err := o.Validate()
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%v: error %v, want one saying %q", tt.args, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%v: %v", tt.args, err)
		}
		if diff := cmp.Diff(tt.want, o); diff != "" {
			t.Errorf("%v (-want +got):\n%s", tt.args, diff)
		}
	}
}

// TestBackoff: an item's delays double from the base delay and stop at the
// max delay; the bucket, large enough here, adds nothing.
func TestBackoff(t *testing.T) {
	l := New[string](Options{BaseDelay: 10 * time.Millisecond, MaxDelay: 50 * time.Millisecond, QPS: 1000, BucketSize: 1000})
	var got []time.Duration
	for range 5 {
		got = append(got, l.When("a"))
	}
	want := []time.Duration{10 * time.Millisecond, 20 * time.Millisecond, 40 * time.Millisecond, 50 * time.Millisecond, 50 * time.Millisecond}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("delays (-want +got):\n%s", diff)
	}
	if d := l.When("b"); d != 10*time.Millisecond {
		t.Errorf("another item's first delay = %s, want the base delay", d)
	}
	l.Forget("a")
	if d := l.When("a"); d != 10*time.Millisecond {
		t.Errorf("delay after Forget = %s, want the base delay", d)
	}
}

// TestBucket: past the bucket, retries wait for the queue's rate whatever
// an item's own backoff says.
func TestBucket(t *testing.T) {
	l := New[int](Options{BaseDelay: time.Millisecond, MaxDelay: time.Millisecond, QPS: 1, BucketSize: 2})
	for i := range 2 {
		if d := l.When(i); d > time.Millisecond {
			t.Fatalf("item %d within the bucket waits %s", i, d)
		}
	}
	if d := l.When(2); d < 500*time.Millisecond {
		t.Errorf("item past the bucket waits %s, want about a second at 1 qps", d)
	}
}

func TestZeroOptionsAreKarmadaDefaults(t *testing.T) {
	if d := New[string](Options{}).When("x"); d != DefaultBaseDelay {
		t.Errorf("first delay = %s, want %s", d, DefaultBaseDelay)
	}
}
