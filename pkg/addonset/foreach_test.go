package addonset

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
)

// TestForEach: the error reported is the cause, not a failure the
// cancellation caused in a member with a lower index; the limit holds.
func TestForEach(t *testing.T) {
	cause := errors.New("the cause")
	err := forEach(context.Background(), 3, 3, func(ctx context.Context, i int) error {
		if i == 2 {
			return cause
		}
		<-ctx.Done()
		return fmt.Errorf("member %d: %w", i, context.Cause(ctx))
	})
	if !errors.Is(err, cause) {
		t.Errorf("forEach returned %v, want the cause", err)
	}

	var running, most atomic.Int32
	err = forEach(context.Background(), 20, 3, func(ctx context.Context, i int) error {
		n := running.Add(1)
		defer running.Add(-1)
		for {
			m := most.Load()
			if n <= m || most.CompareAndSwap(m, n) {
				break
			}
		}
		return nil
	})
	if err != nil || most.Load() > 3 {
		t.Errorf("forEach: %v, %d at once with a limit of 3", err, most.Load())
	}

	// A failure after the cancellation does not displace the one that
	// caused it, even from a lower index.
	// Member 0 fails only once member 1's failure has cancelled it: the
	// wait is on the context, not on member 1 returning, because member
	// 1's error is recorded after it returns (waiting on its return let
	// member 0 record first, a race the test used to lose under load).
	first, second := errors.New("first"), errors.New("second")
	err = forEach(context.Background(), 2, 2, func(ctx context.Context, i int) error {
		if i == 1 {
			return second
		}
		<-ctx.Done()
		return first
	})
	if err != second {
		t.Errorf("forEach returned %v, want %v", err, second)
	}
}
