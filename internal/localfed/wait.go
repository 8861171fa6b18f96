package localfed

import (
	"context"
	"errors"
	"fmt"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/log"
)

// pollInterval is short because every cluster's start is a chain of these
// waits, and a process that is ready a little earlier shortens all of it.
const pollInterval = 100 * time.Millisecond

// waitFor calls ready until it returns true, ctx ends, or one of procs exits.
// ready's last error is reported when ctx ends, since it is usually the reason.
func waitFor(ctx context.Context, what string, ready func(context.Context) (bool, error), procs ...*process) error {
	ticker := time.NewTicker(pollInterval)
	defer ticker.Stop()
	var lastErr error
	for {
		ok, err := ready(ctx)
		if ok {
			return nil
		}
		if err != nil && !errors.Is(err, ctx.Err()) {
			lastErr = err
		}
		for _, p := range procs {
			if p.hasExited() {
				return fmt.Errorf("waiting for %s: %w: %w", what, errExited, p.exitError())
			}
		}
		select {
		case <-ctx.Done():
			if lastErr != nil {
				return fmt.Errorf("waiting for %s: %w (last error: %w)", what, ctx.Err(), lastErr)
			}
			return fmt.Errorf("waiting for %s: %w", what, ctx.Err())
		case <-ticker.C:
		}
	}
}

// portRaceAttempts bounds retryPortRace. A port found free may be taken by
// another program (a parallel test package, say) before the child binds it;
// the child then exits, and a new attempt with new ports fixes it.
const portRaceAttempts = 3

// retryPortRace runs attempt again, up to portRaceAttempts times in all, while
// it fails because the process it started exited.
func retryPortRace(ctx context.Context, what string, attempt func() error) error {
	var err error
	for i := 1; i <= portRaceAttempts; i++ {
		err = attempt()
		if err == nil || !errors.Is(err, errExited) || ctx.Err() != nil {
			return err
		}
		log.FromContext(ctx).Info("Process exited while starting; retrying with new ports", "what", what, "attempt", i, "error", err.Error())
	}
	return err
}
