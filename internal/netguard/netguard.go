// Package netguard holds the rules every network request of addonpkg
// follows, in one RoundTripper (Transport) that registry, http and git
// requests all go through:
//
//   - Credentials stay with their origin. A request that carries
//     credentials (an Authorization or Cookie header, or user:password in
//     its URL) keeps them only while it goes to the origin (scheme, host
//     and port) of the first request of its redirect chain. A redirect to
//     another origin, another port of the same host included, is sent
//     without them. net/http alone would forward them to every port and
//     scheme of the same host name.
//   - Credentials never travel in clear. A request that would send
//     credentials over plain http to a host that is not loopback
//     (localhost, 127.0.0.0/8, ::1) fails with ErrCleartextCredentials
//     before anything is sent.
//   - Every read has an idle timeout. Waiting for the response headers
//     (from the moment the request, body included, is sent) and every read
//     of the body fail with an *IdleTimeoutError (errors.Is ErrIdleTimeout)
//     when no byte arrives for Transport.Idle, whatever the body's framing
//     (Content-Length, chunked, or until close). A slow transfer that keeps
//     sending is never cut.
//
// A registry's token service is the one other origin that receives
// registry credentials: the registry names it in its challenge, and the
// token request is a request of its own (not a redirect), so it is
// allowed, over https or to loopback only, as docker does.
package netguard

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"time"
)

// ErrCleartextCredentials is returned for a request that would send
// credentials over plain http to a host that is not loopback.
var ErrCleartextCredentials = errors.New("credentials are never sent over plain http, except to loopback hosts")

// ErrIdleTimeout matches every *IdleTimeoutError.
var ErrIdleTimeout = errors.New("idle timeout")

// IdleTimeoutError is a request or body read that received nothing for
// Idle. Source names the request (method and URL, credentials removed).
type IdleTimeoutError struct {
	Source string
	Idle   time.Duration
}

func (e *IdleTimeoutError) Error() string {
	if e.Source == "" {
		return fmt.Sprintf("timed out after %v without receiving data", e.Idle)
	}
	return fmt.Sprintf("%s: timed out after %v without receiving data", e.Source, e.Idle)
}

// Is makes errors.Is(err, ErrIdleTimeout) true.
func (e *IdleTimeoutError) Is(target error) bool { return target == ErrIdleTimeout }

// Origin is what credentials are bound to: scheme, host (lowercase,
// addresses in canonical form) and port (the scheme's default when the
// URL names none).
type Origin struct {
	Scheme, Host, Port string
}

// OriginOf returns the origin of u.
func OriginOf(u *url.URL) Origin {
	scheme := strings.ToLower(u.Scheme)
	host := strings.ToLower(u.Hostname())
	if a, err := netip.ParseAddr(host); err == nil {
		host = a.String()
	}
	port := strings.TrimLeft(u.Port(), "0")
	if u.Port() != "" && port == "" {
		port = "0"
	}
	if port == "" {
		switch scheme {
		case "http":
			port = "80"
		case "https":
			port = "443"
		}
	}
	return Origin{Scheme: scheme, Host: host, Port: port}
}

func (o Origin) String() string {
	return o.Scheme + "://" + net.JoinHostPort(o.Host, o.Port)
}

// IsLoopback reports whether host (without a port) is this machine:
// localhost or a loopback address.
func IsLoopback(host string) bool {
	host = strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
	if host == "localhost" {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && a.Unmap().IsLoopback()
}

// CredentialsAllowed reports whether credentials may be sent to u at all:
// https, or plain http to a loopback host. CheckCredentials says why not.
func CredentialsAllowed(u *url.URL) bool {
	return CheckCredentials(u) == nil
}

// CheckCredentials returns nil if credentials may be sent to u, else an
// error that names u's origin and wraps ErrCleartextCredentials.
func CheckCredentials(u *url.URL) error {
	s := strings.ToLower(u.Scheme)
	if s == "https" || (s == "http" && IsLoopback(u.Hostname())) {
		return nil
	}
	return fmt.Errorf("%s: %w", OriginOf(u), ErrCleartextCredentials)
}

// credentialHeaders are the headers that carry credentials to an origin.
// Proxy-Authorization is for the proxy, not the origin, and stays.
var credentialHeaders = []string{"Authorization", "Cookie"}

func hasCredentials(req *http.Request) bool {
	if req.URL != nil && req.URL.User != nil {
		return true
	}
	for _, h := range credentialHeaders {
		if _, ok := req.Header[h]; ok {
			return true
		}
	}
	return false
}

// chainOrigin is the origin of the first request of req's redirect chain
// (net/http links each redirected request to the response that caused it).
func chainOrigin(req *http.Request) (Origin, bool) {
	first := req
	for r := req.Response; r != nil && r.Request != nil; r = r.Request.Response {
		first = r.Request
	}
	if first == req || first.URL == nil {
		return Origin{}, false
	}
	return OriginOf(first.URL), true
}

// Transport is the RoundTripper that applies the package's rules to every
// request sent through it. Put it below everything that adds credentials
// and everything that follows redirects (directly above the network), so
// that it sees each request as it goes out.
type Transport struct {
	// Base sends the requests; nil means http.DefaultTransport.
	Base http.RoundTripper
	// Idle is how long a request may wait for its response headers, and a
	// body read for its next byte; 0 means no idle timeout.
	Idle time.Duration
	// CredentialOrigin, if set, is the one origin the credentials were
	// given for: a request to any other origin is sent without them, even
	// one that is not a redirect (go-git, for one, moves its endpoint
	// after a redirect and sends its next requests there directly). Nil
	// means the origin of each redirect chain's first request, which
	// leaves a registry free to name its token service.
	CredentialOrigin *Origin
}

// RoundTrip sends req under the package's rules.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	base := t.Base
	if base == nil {
		base = http.DefaultTransport
	}
	if hasCredentials(req) {
		o, ok := chainOrigin(req)
		if t.CredentialOrigin != nil {
			o, ok = *t.CredentialOrigin, true
		}
		if ok && o != OriginOf(req.URL) {
			req = withoutCredentials(req)
		}
	}
	if hasCredentials(req) {
		if err := CheckCredentials(req.URL); err != nil {
			if req.Body != nil {
				req.Body.Close()
			}
			return nil, err
		}
	}
	if t.Idle <= 0 {
		return base.RoundTrip(req)
	}
	ie := &IdleTimeoutError{Source: req.Method + " " + req.URL.Redacted(), Idle: t.Idle}
	ctx, cancel := context.WithCancelCause(req.Context())
	w := &headerWatch{idle: t.Idle, fire: func() { cancel(ie) }}
	out := req.WithContext(ctx)
	if req.Body != nil && req.Body != http.NoBody {
		// The wait for the answer starts once the request is sent: an
		// upload may take longer than the idle timeout.
		out.Body = &sentBody{rc: req.Body, sent: w.start}
	} else {
		w.start()
	}
	resp, err := base.RoundTrip(out)
	fired := w.stop()
	if err != nil {
		cancel(nil)
		if fired || errors.Is(context.Cause(ctx), ErrIdleTimeout) {
			return nil, ie
		}
		return nil, err
	}
	if fired {
		resp.Body.Close()
		cancel(nil)
		return nil, ie
	}
	resp.Body = &idleBody{rc: resp.Body, idle: t.Idle, cancel: cancel, err: ie}
	return resp, nil
}

// headerWatch times the wait for response headers, from start to stop.
type headerWatch struct {
	idle    time.Duration
	fire    func()
	mu      sync.Mutex
	timer   *time.Timer
	stopped bool
}

func (w *headerWatch) start() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.timer == nil && !w.stopped {
		w.timer = time.AfterFunc(w.idle, w.fire)
	}
}

// stop ends the wait and reports whether the timeout fired.
func (w *headerWatch) stop() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stopped = true
	return w.timer != nil && !w.timer.Stop()
}

// sentBody calls sent when the request body has been read to its end or
// closed.
type sentBody struct {
	rc   io.ReadCloser
	sent func()
}

func (b *sentBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if err != nil {
		b.sent()
	}
	return n, err
}

func (b *sentBody) Close() error {
	b.sent()
	return b.rc.Close()
}

// withoutCredentials is a copy of req without credential headers or URL
// user information.
func withoutCredentials(req *http.Request) *http.Request {
	r := req.Clone(req.Context())
	for _, h := range credentialHeaders {
		r.Header.Del(h)
	}
	if r.URL.User != nil {
		u := *r.URL
		u.User = nil
		r.URL = &u
	}
	return r
}

// idleBody fails a read that receives nothing for idle: it cancels the
// request (which unblocks net/http's read) and closes the body (which
// unblocks any other reader).
type idleBody struct {
	rc     io.ReadCloser
	idle   time.Duration
	cancel context.CancelCauseFunc
	err    *IdleTimeoutError

	mu    sync.Mutex
	timer *time.Timer
	cut   bool
}

func (b *idleBody) Read(p []byte) (int, error) {
	b.mu.Lock()
	if b.cut {
		b.mu.Unlock()
		return 0, b.err
	}
	if b.timer == nil {
		b.timer = time.AfterFunc(b.idle, b.fire)
	} else {
		b.timer.Reset(b.idle)
	}
	b.mu.Unlock()
	n, err := b.rc.Read(p)
	b.mu.Lock()
	b.timer.Stop()
	cut := b.cut
	b.mu.Unlock()
	if cut && err != nil {
		return n, b.err
	}
	if err != nil {
		b.cancel(nil) // done with the request (EOF or failure)
	}
	return n, err
}

func (b *idleBody) fire() {
	b.mu.Lock()
	b.cut = true
	b.mu.Unlock()
	b.cancel(b.err)
	b.rc.Close()
}

func (b *idleBody) Close() error {
	b.mu.Lock()
	if b.timer != nil {
		b.timer.Stop()
	}
	b.mu.Unlock()
	err := b.rc.Close()
	b.cancel(nil)
	return err
}
