package testlog

import "testing"

// TestLogAfterCompletion: a line logged after the test ended is dropped,
// where testing.T would panic.
func TestLogAfterCompletion(t *testing.T) {
	var late func()
	t.Run("inner", func(t *testing.T) {
		log := New(t)
		log.Info("during the test")
		late = func() { log.Info("after the test") }
	})
	late()
}
