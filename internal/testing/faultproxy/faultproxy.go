// Package faultproxy is a fault-injecting HTTP reverse proxy for tests. It
// listens on 127.0.0.1, forwards every request to one upstream registry
// (an OCI Distribution API server) and, for the requests a fault targets,
// breaks the exchange the way real networks and registries do: a connection
// dropped in the middle of a blob, a 500, 503 or 429 answer, a body cut
// short, a lying Content-Length, bytes that no longer match their digest,
// or a server that stalls past the client's timeout.
//
// A fault fires for the first Times requests it matches (so a client that
// retries succeeds afterwards), or for every one of them when Times is 0.
// Where a fault needs a position (the byte after which a body is cut, the
// byte that is flipped), it is drawn from a generator seeded by
// Config.Seed, so a run can be reproduced exactly.
//
// The proxy keeps the client's Host header when it forwards, so the
// registry's upload Location URLs point back at the proxy and every step
// of a push goes through it.
package faultproxy

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Kind classifies a registry request. Kinds are bits, so a fault can
// target several with |.
type Kind uint

// The request kinds of the Distribution API.
const (
	// BlobGet is GET /v2/NAME/blobs/DIGEST.
	BlobGet Kind = 1 << iota
	// BlobHead is HEAD /v2/NAME/blobs/DIGEST (a push's existence check).
	BlobHead
	// ManifestGet is GET /v2/NAME/manifests/REFERENCE.
	ManifestGet
	// ManifestHead is HEAD /v2/NAME/manifests/REFERENCE.
	ManifestHead
	// UploadStart is POST /v2/NAME/blobs/uploads/ (starts or mounts an upload).
	UploadStart
	// BlobUpload is PATCH or PUT /v2/NAME/blobs/uploads/UUID: the bytes of a
	// blob and the final commit.
	BlobUpload
	// ManifestPut is PUT /v2/NAME/manifests/REFERENCE.
	ManifestPut
	// Other is everything else: the /v2/ ping, tag lists, deletes.
	Other

	// AnyKind matches every request.
	AnyKind = BlobGet | BlobHead | ManifestGet | ManifestHead | UploadStart | BlobUpload | ManifestPut | Other
)

var kindNames = []string{"blob-get", "blob-head", "manifest-get", "manifest-head", "upload-start", "blob-upload", "manifest-put", "other"}

// String names the kinds set in k, joined by "|".
func (k Kind) String() string {
	var parts []string
	for i, n := range kindNames {
		if k&(1<<i) != 0 {
			parts = append(parts, n)
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, "|")
}

// Classify returns the kind of a request, from its method and path.
func Classify(r *http.Request) Kind {
	p := r.URL.Path
	if !strings.HasPrefix(p, "/v2/") {
		return Other
	}
	switch {
	case strings.Contains(p, "/blobs/uploads"):
		switch r.Method {
		case http.MethodPost:
			return UploadStart
		case http.MethodPatch, http.MethodPut:
			return BlobUpload
		}
	case strings.Contains(p, "/blobs/"):
		switch r.Method {
		case http.MethodGet:
			return BlobGet
		case http.MethodHead:
			return BlobHead
		}
	case strings.Contains(p, "/manifests/"):
		switch r.Method {
		case http.MethodGet:
			return ManifestGet
		case http.MethodHead:
			return ManifestHead
		case http.MethodPut:
			return ManifestPut
		}
	}
	return Other
}

// Action is what a fault does to the exchange it fires on.
type Action int

// The actions.
const (
	// Status answers Fault.Code itself, with a registry-style JSON error
	// body, without forwarding the request. 429 and 503 answers carry
	// "Retry-After: 1".
	Status Action = iota + 1
	// Drop breaks the connection. On a GET the upstream's status line,
	// headers (with the true Content-Length) and the first bytes of the
	// body are sent, then the connection is hijacked and closed; the
	// client sees an unexpected EOF mid-body. On any other request the
	// connection is closed before the request is forwarded: the client
	// gets no answer at all.
	Drop
	// Truncate cuts a body short but keeps the HTTP exchange well formed:
	// on a GET the response body ends early with a Content-Length that
	// matches the short body; on a request with a body (uploads, manifest
	// PUTs) the body forwarded upstream is cut.
	Truncate
	// WrongLength sends the whole response body under a Content-Length
	// that claims more bytes than follow; the connection is closed after
	// the body. It changes responses only.
	WrongLength
	// Corrupt flips one bit of one byte: of the response body on a GET,
	// of the request body forwarded upstream otherwise. The bytes then
	// no longer match their digest.
	Corrupt
	// Stall waits Fault.Stall (at most Config.MaxStall) before forwarding
	// the request, or until the client gives up, whichever comes first.
	// With Fault.Bytes > 0 on a GET it forwards at once and stalls after
	// sending that many body bytes instead: a server that hangs mid-body.
	Stall
)

var actionNames = map[Action]string{Status: "status", Drop: "drop", Truncate: "truncate", WrongLength: "wrong-length", Corrupt: "corrupt", Stall: "stall"}

func (a Action) String() string {
	if n, ok := actionNames[a]; ok {
		return n
	}
	return "action(" + strconv.Itoa(int(a)) + ")"
}

// Fault is one kind of breakage and the requests it targets.
type Fault struct {
	// Action is what happens.
	Action Action
	// Kinds are the request kinds the fault targets; 0 means AnyKind.
	Kinds Kind
	// PathContains, when set, narrows the fault to requests whose path
	// contains it (a digest, to aim at one blob; a repository name).
	PathContains string
	// Times is how many matching requests the fault fires for, the first
	// ones; 0 means every one.
	Times int
	// Code is the status a Status fault answers (500, 503, 429, ...).
	Code int
	// Bytes is, for Drop and Truncate, how many body bytes get through
	// and, for Corrupt, the offset of the flipped byte. When the body's
	// length is known it is clamped below it, so that the fault always
	// changes something. 0 draws it from the seed (within the first 64
	// bytes when the length is not known).
	// For Stall it is the number of body bytes sent before stalling (0:
	// stall before forwarding).
	Bytes int64
	// Stall is how long a Stall fault waits; 0 means Config.MaxStall.
	Stall time.Duration
}

func (f Fault) String() string {
	s := f.Action.String()
	if f.Action == Status {
		s += "-" + strconv.Itoa(f.Code)
	}
	kinds := f.Kinds
	if kinds == 0 {
		kinds = AnyKind
	}
	s += " on " + kinds.String()
	if f.Times == 0 {
		return s + " always"
	}
	return s + " x" + strconv.Itoa(f.Times)
}

// Config configures a Proxy.
type Config struct {
	// Seed seeds the positions faults draw; the same seed, faults and
	// requests give the same bytes on the wire.
	Seed uint64
	// Faults are tried in order; the first one that targets a request and
	// has not used up its Times fires. A request fires at most one fault.
	Faults []Fault
	// MaxStall bounds every stall, so that a test can never hang on the
	// proxy; 0 means 10 s.
	MaxStall time.Duration
	// Logf, when set, receives one line per fired fault.
	Logf func(format string, args ...any)
}

// Event records one request the proxy saw.
type Event struct {
	Method string
	Path   string
	Kind   Kind
	// Fault is the index in Config.Faults of the fault that fired, or -1.
	Fault int
}

// Proxy is a running fault-injecting proxy. Its methods are safe for
// concurrent use.
type Proxy struct {
	// URL is "http://127.0.0.1:PORT".
	URL string
	// Host is "127.0.0.1:PORT", for image references.
	Host string

	cfg      Config
	upstream *url.URL
	rp       *httputil.ReverseProxy
	srv      *http.Server
	ln       net.Listener

	mu     sync.Mutex
	rng    *rand.Rand
	fired  []int
	events []Event
	done   chan struct{}
	wg     sync.WaitGroup
}

// New starts a proxy on 127.0.0.1 in front of upstream (for example
// "http://127.0.0.1:5000"). Close stops it.
func New(upstream string, cfg Config) (*Proxy, error) {
	u, err := url.Parse(upstream)
	if err != nil {
		return nil, fmt.Errorf("faultproxy: upstream %q: %w", upstream, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("faultproxy: upstream %q: want http://HOST:PORT or https://HOST:PORT", upstream)
	}
	for i, f := range cfg.Faults {
		if f.Action < Status || f.Action > Stall {
			return nil, fmt.Errorf("faultproxy: fault %d: unknown action %d", i, f.Action)
		}
		if f.Action == Status && (f.Code < 100 || f.Code > 599) {
			return nil, fmt.Errorf("faultproxy: fault %d: status code %d", i, f.Code)
		}
		if f.Times < 0 || f.Bytes < 0 || f.Stall < 0 {
			return nil, fmt.Errorf("faultproxy: fault %d: negative Times, Bytes or Stall", i)
		}
	}
	if cfg.MaxStall <= 0 {
		cfg.MaxStall = 10 * time.Second
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("faultproxy: %w", err)
	}
	p := &Proxy{
		URL:      "http://" + ln.Addr().String(),
		Host:     ln.Addr().String(),
		cfg:      cfg,
		upstream: u,
		ln:       ln,
		rng:      rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x9e3779b97f4a7c15)),
		fired:    make([]int, len(cfg.Faults)),
		done:     make(chan struct{}),
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = nil
	// Faults must reach the client as they are: no transparent gzip.
	tr.DisableCompression = true
	p.rp = &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(u)
			// Keep the client's Host: the registry builds upload Location
			// URLs from it, and those must lead back through the proxy.
			r.Out.Host = r.In.Host
		},
		Transport:      tr,
		ModifyResponse: p.modifyResponse,
		ErrorLog:       log.New(io.Discard, "", 0),
	}
	p.srv = &http.Server{Handler: p, ReadHeaderTimeout: 10 * time.Second, ErrorLog: log.New(io.Discard, "", 0)}
	go func() { _ = p.srv.Serve(ln) }()
	return p, nil
}

// Close stops the proxy: it stops listening, ends stalls and closes every
// connection.
func (p *Proxy) Close() error {
	select {
	case <-p.done:
		return nil
	default:
	}
	close(p.done)
	err := p.srv.Close()
	p.wg.Wait()
	return err
}

// Fired returns how many times the fault at index i of Config.Faults fired.
func (p *Proxy) Fired(i int) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if i < 0 || i >= len(p.fired) {
		return 0
	}
	return p.fired[i]
}

// Events returns a copy of the requests seen so far, in arrival order.
func (p *Proxy) Events() []Event {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Event(nil), p.events...)
}

// Count returns how many requests of the given kinds the proxy saw.
func (p *Proxy) Count(kinds Kind) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, e := range p.events {
		if e.Kind&kinds != 0 {
			n++
		}
	}
	return n
}

// pick finds the fault that fires for a request, records the request and
// returns the fault's index (-1: none).
func (p *Proxy) pick(r *http.Request, kind Kind) (int, *Fault) {
	p.mu.Lock()
	defer p.mu.Unlock()
	idx := -1
	for i := range p.cfg.Faults {
		f := &p.cfg.Faults[i]
		kinds := f.Kinds
		if kinds == 0 {
			kinds = AnyKind
		}
		if kinds&kind == 0 || (f.PathContains != "" && !strings.Contains(r.URL.Path, f.PathContains)) {
			continue
		}
		if f.Times != 0 && p.fired[i] >= f.Times {
			continue
		}
		p.fired[i]++
		idx = i
		break
	}
	p.events = append(p.events, Event{Method: r.Method, Path: r.URL.Path, Kind: kind, Fault: idx})
	if idx < 0 {
		return -1, nil
	}
	f := p.cfg.Faults[idx]
	return idx, &f
}

// position draws where in a body of n bytes (n < 0: unknown) a fault
// acts: want when set, clamped below n, else a seeded draw.
func (p *Proxy) position(want, n int64) int64 {
	if n == 0 {
		return 0
	}
	if want > 0 {
		if n > 0 && want >= n {
			return n - 1
		}
		return want
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if n < 0 {
		return p.rng.Int64N(64)
	}
	return p.rng.Int64N(n)
}

func (p *Proxy) logf(format string, args ...any) {
	if p.cfg.Logf != nil {
		p.cfg.Logf(format, args...)
	}
}

// state travels with a request from ServeHTTP to modifyResponse and the
// response writer.
type state struct {
	fault *Fault
	// cut is where a Drop or mid-body Stall acts, set by modifyResponse
	// once the body's length is known; -1 means no cut.
	cut int64
}

type stateKey struct{}

// ServeHTTP implements http.Handler.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.wg.Add(1)
	defer p.wg.Done()
	kind := Classify(r)
	i, f := p.pick(r, kind)
	if f == nil {
		p.rp.ServeHTTP(w, r)
		return
	}
	p.logf("faultproxy: %s %s (%s): %s", r.Method, r.URL.Path, kind, f)
	isGet := r.Method == http.MethodGet
	switch f.Action {
	case Status:
		_, _ = io.Copy(io.Discard, io.LimitReader(r.Body, 64<<20))
		writeStatus(w, f.Code, i)
		return
	case Stall:
		if f.Bytes == 0 || !isGet {
			if !p.sleep(r.Context(), f.Stall) {
				return
			}
			p.rp.ServeHTTP(w, r)
			return
		}
	case Drop:
		if !isGet {
			hijackClose(w)
			return
		}
	case Truncate, Corrupt:
		if !isGet && r.Body != nil && r.Body != http.NoBody {
			p.alterRequestBody(r, f)
			p.rp.ServeHTTP(w, r)
			return
		}
	case WrongLength:
		if !isGet {
			p.rp.ServeHTTP(w, r)
			return
		}
	}
	// A GET whose response is altered: by modifyResponse (Truncate,
	// WrongLength, Corrupt) or by the writer (Drop, mid-body Stall).
	st := &state{fault: f, cut: -1}
	r = r.WithContext(context.WithValue(r.Context(), stateKey{}, st))
	if f.Action == Drop || f.Action == Stall {
		w = &cutWriter{ResponseWriter: w, st: st, p: p, ctx: r.Context()}
	}
	p.rp.ServeHTTP(w, r)
}

// sleep waits d (bounded by MaxStall) and reports whether the client is
// still there.
func (p *Proxy) sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 || d > p.cfg.MaxStall {
		d = p.cfg.MaxStall
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return ctx.Err() == nil
	case <-ctx.Done():
		return false
	case <-p.done:
		return false
	}
}

func writeStatus(w http.ResponseWriter, code, fault int) {
	errCode := "UNKNOWN"
	switch code {
	case http.StatusTooManyRequests:
		errCode = "TOOMANYREQUESTS"
	case http.StatusServiceUnavailable:
		errCode = "UNAVAILABLE"
	}
	if code == http.StatusTooManyRequests || code == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", "1")
	}
	body, _ := json.Marshal(map[string]any{"errors": []map[string]string{{
		"code": errCode, "message": fmt.Sprintf("faultproxy: injected %d (fault %d)", code, fault),
	}}})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(code)
	_, _ = w.Write(body)
}

// hijackClose closes the client's connection without an answer.
func hijackClose(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		// Not hijackable (HTTP/2): abort the stream instead.
		panic(http.ErrAbortHandler)
	}
	_ = conn.Close()
}

// alterRequestBody truncates or corrupts the body forwarded upstream.
func (p *Proxy) alterRequestBody(r *http.Request, f *Fault) {
	n := r.ContentLength
	pos := p.position(f.Bytes, n)
	switch f.Action {
	case Truncate:
		r.Body = readCloser{io.LimitReader(r.Body, pos), r.Body}
		if n >= 0 {
			r.ContentLength = pos
			r.Header.Set("Content-Length", strconv.FormatInt(pos, 10))
		}
	case Corrupt:
		r.Body = readCloser{&flipReader{r: r.Body, at: pos}, r.Body}
	}
}

// modifyResponse applies the response faults of a GET.
func (p *Proxy) modifyResponse(resp *http.Response) error {
	st, _ := resp.Request.Context().Value(stateKey{}).(*state)
	if st == nil || resp.StatusCode != http.StatusOK || resp.Body == nil {
		return nil
	}
	n := resp.ContentLength
	if n < 0 {
		// Learn the length: registries send it for blobs and manifests,
		// but a fault must not depend on that.
		b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
		resp.Body.Close()
		if err != nil {
			return err
		}
		n = int64(len(b))
		resp.Body = io.NopCloser(bytes.NewReader(b))
		resp.ContentLength = n
		resp.Header.Set("Content-Length", strconv.FormatInt(n, 10))
		resp.Header.Del("Transfer-Encoding")
	}
	f := st.fault
	switch f.Action {
	case Drop, Stall:
		st.cut = p.position(f.Bytes, n)
	case Truncate:
		cut := p.position(f.Bytes, n)
		resp.Body = readCloser{io.LimitReader(resp.Body, cut), resp.Body}
		resp.ContentLength = cut
		resp.Header.Set("Content-Length", strconv.FormatInt(cut, 10))
	case WrongLength:
		p.mu.Lock()
		extra := 1 + p.rng.Int64N(1024)
		p.mu.Unlock()
		resp.Header.Set("Content-Length", strconv.FormatInt(n+extra, 10))
		resp.ContentLength = n + extra
	case Corrupt:
		resp.Body = readCloser{&flipReader{r: resp.Body, at: p.position(f.Bytes, n)}, resp.Body}
	}
	return nil
}

// cutWriter passes a response through until st.cut body bytes are out,
// then drops the connection (Drop) or stalls (Stall).
type cutWriter struct {
	http.ResponseWriter
	st      *state
	p       *Proxy
	ctx     context.Context
	written int64
	done    bool
}

var errDropped = errors.New("faultproxy: connection dropped")

func (c *cutWriter) Write(b []byte) (int, error) {
	if c.done {
		return 0, errDropped
	}
	if c.st.cut < 0 || c.written+int64(len(b)) <= c.st.cut {
		n, err := c.ResponseWriter.Write(b)
		c.written += int64(n)
		return n, err
	}
	k := c.st.cut - c.written
	n, err := c.ResponseWriter.Write(b[:k])
	c.written += int64(n)
	if err != nil {
		return n, err
	}
	rc := http.NewResponseController(c.ResponseWriter)
	_ = rc.Flush()
	if c.st.fault.Action == Stall {
		if !c.p.sleep(c.ctx, c.st.fault.Stall) {
			c.done = true
			return n, errDropped
		}
		c.st.cut = -1
		m, err := c.ResponseWriter.Write(b[k:])
		c.written += int64(m)
		return n + m, err
	}
	c.done = true
	conn, _, err := rc.Hijack()
	if err == nil {
		_ = conn.Close()
	}
	return n, errDropped
}

// WriteHeader keeps the upstream's headers; a Drop with nothing to send
// before the cut still sends them.
func (c *cutWriter) WriteHeader(code int) { c.ResponseWriter.WriteHeader(code) }

// Unwrap lets http.ResponseController reach the real writer.
func (c *cutWriter) Unwrap() http.ResponseWriter { return c.ResponseWriter }

// Hijack is here for callers that assert http.Hijacker directly.
func (c *cutWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	return http.NewResponseController(c.ResponseWriter).Hijack()
}

// flipReader flips the lowest bit of the byte at offset at.
type flipReader struct {
	r   io.Reader
	at  int64
	off int64
}

func (f *flipReader) Read(b []byte) (int, error) {
	n, err := f.r.Read(b)
	if f.at >= f.off && f.at < f.off+int64(n) {
		b[f.at-f.off] ^= 0x01
	}
	f.off += int64(n)
	return n, err
}

type readCloser struct {
	io.Reader
	io.Closer
}
