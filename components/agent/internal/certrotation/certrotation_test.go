package certrotation

import (
	"testing"
	"time"
)

func TestDue(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	end := start.Add(100 * time.Minute)
	tests := []struct {
		name      string
		now       time.Time
		threshold float64
		want      bool
	}{
		{"fresh", start.Add(time.Minute), 0.2, false},
		{"just above the threshold", start.Add(79 * time.Minute), 0.2, false},
		{"below the threshold", start.Add(81 * time.Minute), 0.2, true},
		{"expired", end.Add(time.Minute), 0.2, true},
		{"a high threshold renews early", start.Add(2 * time.Minute), 0.99, true},
	}
	for _, tt := range tests {
		if got := Due(tt.now, start, end, tt.threshold); got != tt.want {
			t.Errorf("%s: Due = %v, want %v", tt.name, got, tt.want)
		}
	}
	if !Due(start, end, start, 0.2) {
		t.Error("a certificate that ends before it starts is due")
	}
}
