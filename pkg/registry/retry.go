package registry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"

	"github.com/addonpkg/addonpkg/internal/retry"
	"github.com/addonpkg/addonpkg/internal/verify"
	"github.com/addonpkg/addonpkg/pkg/errdef"
	"github.com/addonpkg/addonpkg/pkg/safetree"
)

// retryTransport is the one retry budget of every registry request:
//   - 429 and 5xx answers are retried with exponential backoff and jitter,
//     waiting as long as Retry-After says when it says (capped), for
//     requests whose body can be sent again;
//   - a response body that breaks off (dropped connection, short body, or
//     a stall cut by the idle timeout of the netguard.Transport below) is
//     resumed with a Range request from where it stopped.
//
// go-containerregistry's own status retries are turned off (see Remote),
// so a failing request is tried at most retries+1 times. It is hand-written
// because what it must do is what the libraries lack:
// hashicorp/go-retryablehttp retries a whole request but never resumes a
// body that broke off after its headers (a 100 MiB layer cut at 99 MiB
// starts over), and go-containerregistry's transport.NewRetry neither
// honours Retry-After nor resumes; the backoff and budget are internal/retry's.
type retryTransport struct {
	inner   http.RoundTripper
	retries int
	base    time.Duration // first backoff step
	sleep   func(context.Context, time.Duration) error
	// callerVerifies leaves the check of a blob or manifest fetched by
	// digest to the caller, which hashes what it reads itself (Blobs).
	callerVerifies bool
}

func (t *retryTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.roundTrip(req)
	if err != nil || req.Method != http.MethodGet || resp.StatusCode != http.StatusOK {
		return resp, err
	}
	if resp.ContentLength != 0 {
		resp.Body = &resumableBody{t: t, req: req, body: resp.Body, size: resp.ContentLength}
	}
	// A blob or manifest asked for by digest is verified here, below
	// go-containerregistry's own (untyped) check, so that bytes that
	// arrive wrong fail with errdef.ErrDigestMismatch, which retry.Transient and
	// library users recognise without reading the message.
	if d, ok := requestedDigest(req); ok && req.Header.Get("Range") == "" && !t.callerVerifies {
		vr, err := verify.NewReader(resp.Body, d, resp.ContentLength)
		if err != nil {
			return nil, err
		}
		resp.Body = vr
		// go-containerregistry compares Content-Length with the
		// descriptor's size before reading, and reports a difference
		// untyped; a body cut short under a Content-Length that says so
		// would never be fetched again. Its length is checked here
		// instead, as part of the digest.
		resp.ContentLength = -1
	}
	return resp, nil
}

// requestedDigest is the digest a GET of /v2/NAME/blobs/DIGEST or
// /v2/NAME/manifests/DIGEST asks for, taken from the first request of
// its redirect chain (a blob redirected to storage is still that blob).
func requestedDigest(req *http.Request) (v1.Hash, bool) {
	first := req
	for r := req.Response; r != nil && r.Request != nil; r = r.Request.Response {
		first = r.Request
	}
	p := first.URL.Path
	i := strings.LastIndexByte(p, '/')
	if i < 0 || !strings.HasPrefix(p[i+1:], "sha256:") {
		return v1.Hash{}, false
	}
	kind := p[:i]
	if !strings.HasSuffix(kind, "/blobs") && !strings.HasSuffix(kind, "/manifests") {
		return v1.Hash{}, false
	}
	h, err := v1.NewHash(p[i+1:])
	if err != nil || len(h.Hex) != 64 {
		return v1.Hash{}, false
	}
	return h, true
}

// exhaustedError is a retryable answer (a 5xx or 429) still given after
// the retries: it matches errdef.ErrRetriesExhausted and, the registry
// being there and failing, ErrServer.
type exhaustedError struct {
	status, tries int
	said          string // what the registry's body said, if anything
}

func (e *exhaustedError) Error() string {
	s := fmt.Sprintf("%v: HTTP %d %s after %d tries", errdef.ErrRetriesExhausted, e.status, http.StatusText(e.status), e.tries)
	if e.said != "" {
		s += ": the registry said " + e.said
	}
	return s
}

func (e *exhaustedError) Is(target error) bool {
	return target == errdef.ErrRetriesExhausted || target == ErrServer
}

// roundTrip sends req, retrying answers that say "try again".
func (t *retryTransport) roundTrip(req *http.Request) (*http.Response, error) {
	for attempt := 0; ; attempt++ {
		resp, err := t.inner.RoundTrip(req)
		if err != nil {
			// A connection that broke before the answer: send the request
			// again if it can be (registry requests are idempotent or, for
			// an upload's POST, harmless to repeat).
			body, replayable := rewind(req)
			if attempt >= t.retries || !replayable || !connectionError(err) || req.Context().Err() != nil {
				return nil, err
			}
			if err := t.sleep(req.Context(), retry.Backoff(t.base, attempt)); err != nil {
				return nil, err
			}
			if body != nil {
				req = req.Clone(req.Context())
				req.Body = body
			}
			continue
		}
		if !retryable(resp.StatusCode) {
			return resp, nil
		}
		body, replayable := rewind(req)
		if !replayable {
			return resp, nil // go-containerregistry redoes the whole upload
		}
		if attempt >= t.retries {
			if t.retries == 0 {
				return resp, nil
			}
			said := registrySaid(resp.Body)
			resp.Body.Close()
			return nil, &exhaustedError{status: resp.StatusCode, tries: attempt + 1, said: said}
		}
		wait, ok := retry.After(resp.Header.Get("Retry-After"), time.Now())
		if !ok {
			wait = retry.Backoff(t.base, attempt)
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

// registrySaid is what a registry's error body ({"errors":[{"code",
// "message","detail"}]}, the distribution spec's) says, in one line of
// printable text cut at 1024 runes (safetree.SanitizeN: it is the
// registry's text), or "" when it says nothing readable. A 5xx is retried as if it were
// transient, but Distribution answers 500 to a manifest whose layer it
// lacks (a nondistributable layer that was not pushed), and its body is
// the only word on why.
func registrySaid(body io.Reader) string {
	b, err := io.ReadAll(io.LimitReader(body, 64<<10))
	if err != nil {
		return ""
	}
	var e struct {
		Errors []struct {
			Code    string
			Message string
			Detail  any
		}
	}
	if json.Unmarshal(b, &e) != nil {
		return ""
	}
	var parts []string
	for _, d := range e.Errors {
		s := strings.TrimPrefix(d.Code+": "+d.Message, ": ")
		if detail, ok := d.Detail.(string); ok && detail != "" {
			s += " (" + detail + ")"
		}
		if s != "" && !slices.Contains(parts, s) {
			parts = append(parts, s)
		}
	}
	return safetree.SanitizeN(strings.Join(parts, "; "), 1024)
}

func retryable(code int) bool {
	switch code {
	case http.StatusTooManyRequests, http.StatusInternalServerError, http.StatusBadGateway,
		http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

// resumableBody continues a GET body that broke off, with a Range request
// from the first missing byte. Digests are checked above this layer, so a
// resumed body that differs is still caught. A body of unknown length
// (chunked) is complete at a clean EOF: chunked framing ends with a
// terminator, so one cut short ends with an error, and is resumed too.
type resumableBody struct {
	t       *retryTransport
	req     *http.Request
	body    io.ReadCloser
	size    int64 // -1: unknown
	off     int64
	resumes int
}

func (r *resumableBody) Read(p []byte) (int, error) {
	for {
		n, err := r.body.Read(p)
		r.off += int64(n)
		if err == nil || (err == io.EOF && (r.size < 0 || r.off >= r.size)) {
			return n, err
		}
		if r.size >= 0 && r.off > r.size {
			return n, fmt.Errorf("%s: body longer than its Content-Length", r.req.URL.Redacted())
		}
		if n > 0 {
			return n, nil // deliver what we have; the error comes back on the next read
		}
		if ctxErr := r.req.Context().Err(); ctxErr != nil {
			return 0, ctxErr
		}
		// A cap refused the body (manifestCap): the rest, asked for
		// again, would be refused again.
		if errors.Is(err, safetree.ErrLimit) {
			return 0, err
		}
		if r.resumes >= r.t.retries {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			of := "?"
			if r.size >= 0 {
				of = strconv.FormatInt(r.size, 10)
			}
			return 0, fmt.Errorf("%s: body broke off at byte %d of %s: %w", r.req.URL.Redacted(), r.off, of, err)
		}
		r.resumes++
		if rerr := r.resume(); rerr != nil {
			return 0, rerr
		}
	}
}

func (r *resumableBody) resume() error {
	r.body.Close()
	if err := r.t.sleep(r.req.Context(), retry.Backoff(r.t.base, r.resumes-1)); err != nil {
		return err
	}
	req := r.req.Clone(r.req.Context())
	req.Header.Set("Range", fmt.Sprintf("bytes=%d-", r.off))
	resp, err := r.t.roundTrip(req)
	if err != nil {
		return fmt.Errorf("resume %s: %w", r.req.URL.Redacted(), err)
	}
	switch {
	case resp.StatusCode == http.StatusPartialContent && strings.HasPrefix(resp.Header.Get("Content-Range"), fmt.Sprintf("bytes %d-", r.off)):
		r.body = resp.Body
	case resp.StatusCode == http.StatusOK:
		// No range support: skip what we already have.
		body := resp.Body
		if _, err := io.CopyN(io.Discard, body, r.off); err != nil {
			body.Close()
			return fmt.Errorf("resume %s: %w", r.req.URL.Redacted(), err)
		}
		r.body = body
	default:
		resp.Body.Close()
		return fmt.Errorf("resume %s: HTTP %d", r.req.URL.Redacted(), resp.StatusCode)
	}
	return nil
}

func (r *resumableBody) Close() error { return r.body.Close() }

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

// connectionError reports a connection that closed or reset under a request.
func connectionError(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// shouldRetry is go-containerregistry's retry predicate: only what this
// transport could not retry itself, a broken connection or a streamed
// upload refused with a temporary status, is worth a whole new attempt.
func shouldRetry(err error) bool {
	if err == nil || errors.Is(err, errdef.ErrRetriesExhausted) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	if connectionError(err) || errors.Is(err, net.ErrClosed) {
		return true
	}
	// A connection that failed under a streamed upload (reset, broken
	// pipe, closed while writing the body).
	var oe *net.OpError
	if errors.As(err, &oe) {
		return true
	}
	var te *transport.Error
	if errors.As(err, &te) {
		return retryable(te.StatusCode)
	}
	var tmp interface{ Temporary() bool }
	return errors.As(err, &tmp) && tmp.Temporary()
}
