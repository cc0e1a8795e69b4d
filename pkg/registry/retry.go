package registry

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"time"
)

// maxRetryAfter caps how long a Retry-After header can make us wait.
const maxRetryAfter = 30 * time.Second

// retryAfterTransport honours Retry-After on 429 and 503 answers, which
// go-containerregistry's own retries ignore: it waits as told (capped,
// and never past the request's context) and sends the request again when
// its body can be replayed. Other failures pass up to the backoff retries.
type retryAfterTransport struct {
	inner   http.RoundTripper
	retries int
	sleep   func(context.Context, time.Duration) error
}

func (t *retryAfterTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	for attempt := 0; ; attempt++ {
		resp, err := t.inner.RoundTrip(req)
		if err != nil || attempt >= t.retries {
			return resp, err
		}
		if resp.StatusCode != http.StatusTooManyRequests && resp.StatusCode != http.StatusServiceUnavailable {
			return resp, nil
		}
		wait, ok := retryAfter(resp.Header.Get("Retry-After"), time.Now())
		if !ok {
			return resp, nil
		}
		body, replayable := rewind(req)
		if !replayable {
			return resp, nil
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		if err := t.sleep(req.Context(), wait); err != nil {
			return nil, err
		}
		if body != nil {
			req = req.Clone(req.Context())
			req.Body = body
		}
	}
}

// rewind returns a fresh body for a retry; ok is false when the body
// cannot be sent twice.
func rewind(req *http.Request) (io.ReadCloser, bool) {
	if req.Body == nil || req.Body == http.NoBody {
		return nil, true
	}
	if req.GetBody == nil {
		return nil, false
	}
	b, err := req.GetBody()
	return b, err == nil
}

// retryAfter parses a Retry-After value: seconds or an HTTP date.
func retryAfter(v string, now time.Time) (time.Duration, bool) {
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
	if d < 0 {
		d = 0
	}
	return min(d, maxRetryAfter), true
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
