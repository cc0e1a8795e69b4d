// Package retry is addonpkg's one retry policy. Two kinds of failure are
// tried again, each at one level only, so that their budgets never
// multiply:
//
//   - a request that fails in transport (a 429 or 5xx answer, a connection
//     that broke, a body that stopped) is retried by the registry's
//     transport, request by request, with Backoff and Retry-After (After),
//     and a body is resumed from where it stopped; when that budget is
//     spent the error wraps errdef.ErrRetriesExhausted, and nothing above retries it;
//   - bytes that arrive wrong (a digest or size mismatch: changed or cut
//     short on the way) are a Transient error of the whole operation, and
//     Do fetches the blob or manifest again, Attempts times at most. The
//     transport never retries those: it cannot tell, the digest is checked
//     above it.
//
// Transient errors are recognised by type (errors.Is), never by message.
package retry

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"strconv"
	"time"

	"github.com/addonpkg/addonpkg/pkg/errdef"
)

// Attempts bounds the tries of one operation (Do): the first and two more.
const Attempts = 3

// MaxAfter caps how long a Retry-After header can make a request wait.
const MaxAfter = 30 * time.Second

// Transient reports an error worth fetching again: bytes that did not
// match their digest or size (errdef.ErrDigestMismatch), unless a retry
// budget is already spent (errdef.ErrRetriesExhausted).
func Transient(err error) bool {
	return err != nil && !errors.Is(err, errdef.ErrRetriesExhausted) && errors.Is(err, errdef.ErrDigestMismatch)
}

// Do runs op until it succeeds, fails with an error that is not
// Transient, ctx ends, or it has run Attempts times; it returns op's last
// error.
func Do(ctx context.Context, op func() error) error {
	var err error
	for try := 0; try < Attempts; try++ {
		if err = op(); err == nil || !Transient(err) {
			return err
		}
		if ctx.Err() != nil {
			return err
		}
	}
	return err
}

// Backoff is the wait before retry number attempt (0 for the first):
// base doubled each time, with up to 20% jitter, at most 10 seconds.
func Backoff(base time.Duration, attempt int) time.Duration {
	const maxBackoff = 10 * time.Second
	// Doubled no further than the cap: base<<attempt overflows from
	// about the 36th retry of 200ms (--retries 1000000), turning
	// negative (a panic in rand.Int64N) and then 0 (retries with no wait).
	d := max(base, 0)
	for i := 0; i < attempt && d < maxBackoff; i++ {
		d *= 2
	}
	d += time.Duration(rand.Int64N(int64(d)/5 + 1))
	return min(d, maxBackoff)
}

// After parses a Retry-After value (seconds or an HTTP date) into a wait,
// at most MaxAfter; ok is false when there is none to parse.
func After(v string, now time.Time) (time.Duration, bool) {
	if v == "" {
		return 0, false
	}
	var d time.Duration
	if s, err := strconv.Atoi(v); err == nil {
		d = time.Duration(s) * time.Second
	} else if at, err := http.ParseTime(v); err == nil {
		d = at.Sub(now)
	} else {
		return 0, false
	}
	return min(max(d, 0), MaxAfter), true
}

// Sleep waits d, or until ctx ends (then it returns ctx's error).
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
