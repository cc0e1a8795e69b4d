package retry_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/addonpkg/addonpkg/internal/retry"
	"github.com/addonpkg/addonpkg/pkg/errdef"
)

func TestAfter(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"", 0, false},
		{"3", 3 * time.Second, true},
		{"0", 0, true},
		{"-5", 0, true},
		{"9999", retry.MaxAfter, true},
		{now.Add(5 * time.Second).Format(http.TimeFormat), 5 * time.Second, true},
		{"soon", 0, false},
	} {
		got, ok := retry.After(tc.in, now)
		if got != tc.want || ok != tc.ok {
			t.Errorf("After(%q) = %v, %v; want %v, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestTransient(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{nil, false},
		{errdef.ErrSizeMismatch, true},
		{fmt.Errorf("layer: %w", errdef.ErrDigestMismatch), true},
		// Retried or resumed by the transport already, within its budget.
		{io.ErrUnexpectedEOF, false},
		{fmt.Errorf("%w: %w", errdef.ErrRetriesExhausted, errdef.ErrDigestMismatch), false},
		{errors.New("sha256 does not match"), false}, // messages are not read
	} {
		if got := retry.Transient(c.err); got != c.want {
			t.Errorf("Transient(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}

// Do tries a transient failure Attempts times in all, and anything else
// once.
func TestDo(t *testing.T) {
	for _, c := range []struct {
		err  error
		want int
	}{
		{nil, 1},
		{errdef.ErrDigestMismatch, retry.Attempts},
		{errors.New("unauthorized"), 1},
	} {
		n := 0
		err := retry.Do(context.Background(), func() error { n++; return c.err })
		if n != c.want || !errors.Is(err, c.err) {
			t.Errorf("Do(%v): %d tries, err %v; want %d tries", c.err, n, err, c.want)
		}
	}
	// A failure that turns into success stops the tries.
	n := 0
	if err := retry.Do(context.Background(), func() error {
		if n++; n < 2 {
			return errdef.ErrDigestMismatch
		}
		return nil
	}); err != nil || n != 2 {
		t.Errorf("Do: %d tries, %v; want success on the second", n, err)
	}
}

func TestBackoff(t *testing.T) {
	for attempt, lo := range []time.Duration{100, 200, 400} {
		lo *= time.Millisecond
		if d := retry.Backoff(100*time.Millisecond, attempt); d < lo || d > lo+lo/5 {
			t.Errorf("Backoff(100ms, %d) = %v, want %v plus at most 20%%", attempt, d, lo)
		}
	}
	if d := retry.Backoff(time.Second, 20); d != 10*time.Second {
		t.Errorf("Backoff(1s, 20) = %v, want the 10s cap", d)
	}
	// Far retries (--retries 1000000) wait the cap too: 200ms<<36
	// overflowed into a negative wait (rand.Int64N panicked) and from 64
	// on into none.
	for _, attempt := range []int{35, 36, 40, 62, 63, 64, 100, 1_000_000} {
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("Backoff(200ms, %d) panicked: %v", attempt, r)
				}
			}()
			if d := retry.Backoff(200*time.Millisecond, attempt); d != 10*time.Second {
				t.Errorf("Backoff(200ms, %d) = %v, want the 10s cap", attempt, d)
			}
		}()
	}
}
