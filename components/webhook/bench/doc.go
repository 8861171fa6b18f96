// Package bench measures the webhook's admission latency: every endpoint
// served over TLS, as the API server calls it, under 200 concurrent
// requests (BenchmarkAdmission).
package bench
