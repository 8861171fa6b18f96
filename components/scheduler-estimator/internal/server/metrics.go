package server

import (
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics count the estimator's answers under the names Karmada's estimator
// uses, so that its dashboards read either.
type Metrics struct {
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
}

// NewMetrics registers the metrics with reg. Each estimator has a registry
// of its own: several run in one process in tests and local federations.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Subsystem: "karmada_scheduler_estimator",
			Name:      "estimating_request_total",
			Help:      "Number of scheduler estimator requests, by result and type.",
		}, []string{"result", "type"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Subsystem: "karmada_scheduler_estimator",
			Name:      "estimating_algorithm_duration_seconds",
			Help:      "Latency of the scheduler estimator's answers in seconds, by result, type and step.",
			Buckets:   prometheus.ExponentialBuckets(0.0001, 2, 16),
		}, []string{"result", "type", "step"}),
	}
	for _, c := range []prometheus.Collector{m.requests, m.latency} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("registering the estimator metrics: %w", err)
		}
	}
	return m, nil
}

func (m *Metrics) observe(method string, err error, elapsed time.Duration) {
	if m == nil {
		return
	}
	result := "success"
	if err != nil {
		result = "error"
	}
	m.requests.WithLabelValues(result, method).Inc()
	m.latency.WithLabelValues(result, method, "Total").Observe(elapsed.Seconds())
}
