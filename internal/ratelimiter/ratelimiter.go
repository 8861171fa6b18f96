// Package ratelimiter is the retry rate of controllers' work queues as
// Karmada's components set it with --rate-limiter-base-delay,
// --rate-limiter-max-delay, --rate-limiter-qps and
// --rate-limiter-bucket-size: each item backs off exponentially from the
// base delay up to the max delay, and the queue as a whole admits qps
// retries a second with bursts of the bucket size, whichever is slower.
package ratelimiter

import (
	"errors"
	"flag"
	"fmt"
	"time"

	"golang.org/x/time/rate"
	"k8s.io/client-go/util/workqueue"
)

// Karmada's defaults.
const (
	DefaultBaseDelay  = 5 * time.Millisecond
	DefaultMaxDelay   = 1000 * time.Second
	DefaultQPS        = 10
	DefaultBucketSize = 100
)

// Options are the rate limiter's settings.
type Options struct {
	BaseDelay  time.Duration
	MaxDelay   time.Duration
	QPS        int
	BucketSize int
}

// BindFlags registers Karmada's flags on fs with their defaults.
func (o *Options) BindFlags(fs *flag.FlagSet) {
	fs.DurationVar(&o.BaseDelay, "rate-limiter-base-delay", DefaultBaseDelay, "Delay before an item that failed once is retried; it doubles at every further failure.")
	fs.DurationVar(&o.MaxDelay, "rate-limiter-max-delay", DefaultMaxDelay, "Longest delay before an item is retried.")
	fs.IntVar(&o.QPS, "rate-limiter-qps", DefaultQPS, "Retries a second a work queue admits overall.")
	fs.IntVar(&o.BucketSize, "rate-limiter-bucket-size", DefaultBucketSize, "Burst of retries a work queue admits above --rate-limiter-qps.")
}

// Validate names the flag of a value the limiter cannot work with.
func (o Options) Validate() error {
	var errs []error
	if o.BaseDelay <= 0 {
		errs = append(errs, fmt.Errorf("--rate-limiter-base-delay must be positive, got %s", o.BaseDelay))
	}
	if o.MaxDelay < o.BaseDelay {
		errs = append(errs, fmt.Errorf("--rate-limiter-max-delay (%s) must be at least --rate-limiter-base-delay (%s)", o.MaxDelay, o.BaseDelay))
	}
	if o.QPS <= 0 {
		errs = append(errs, fmt.Errorf("--rate-limiter-qps must be positive, got %d", o.QPS))
	}
	if o.BucketSize <= 0 {
		errs = append(errs, fmt.Errorf("--rate-limiter-bucket-size must be positive, got %d", o.BucketSize))
	}
	return errors.Join(errs...)
}

// New returns the rate limiter of a work queue of T; an Options left at
// its zero value gives Karmada's defaults.
func New[T comparable](o Options) workqueue.TypedRateLimiter[T] {
	if o == (Options{}) {
		o = Options{BaseDelay: DefaultBaseDelay, MaxDelay: DefaultMaxDelay, QPS: DefaultQPS, BucketSize: DefaultBucketSize}
	}
	return workqueue.NewTypedMaxOfRateLimiter(
		workqueue.NewTypedItemExponentialFailureRateLimiter[T](o.BaseDelay, o.MaxDelay),
		&workqueue.TypedBucketRateLimiter[T]{Limiter: rate.NewLimiter(rate.Limit(o.QPS), o.BucketSize)},
	)
}
