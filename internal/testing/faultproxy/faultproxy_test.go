package faultproxy

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

const blobPath = "/v2/repo/blobs/sha256:0000000000000000000000000000000000000000000000000000000000000001"

// upstream is a stand-in registry: GETs of any path answer body, other
// requests record what they received.
type upstream struct {
	*httptest.Server
	body []byte

	mu       sync.Mutex
	received [][]byte
	hosts    []string
}

func newUpstream(t *testing.T, size int) *upstream {
	t.Helper()
	u := &upstream{body: make([]byte, size)}
	for i := range u.body {
		u.body[i] = byte(i*7 + 3)
	}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.mu.Lock()
		u.hosts = append(u.hosts, r.Host)
		u.mu.Unlock()
		if r.Method == http.MethodGet || r.Method == http.MethodHead {
			w.Header().Set("Content-Length", strconv.Itoa(len(u.body)))
			w.Header().Set("Location", "http://"+r.Host+"/v2/repo/blobs/uploads/abc")
			_, _ = w.Write(u.body)
			return
		}
		b, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		u.mu.Lock()
		u.received = append(u.received, b)
		u.mu.Unlock()
		w.WriteHeader(http.StatusCreated)
	}))
	t.Cleanup(u.Close)
	return u
}

func (u *upstream) got() [][]byte {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([][]byte(nil), u.received...)
}

func start(t *testing.T, u *upstream, cfg Config) *Proxy {
	t.Helper()
	p, err := New(u.URL, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// client never reuses connections, so every request sees a fresh one.
func client() *http.Client {
	return &http.Client{Transport: &http.Transport{DisableKeepAlives: true, DisableCompression: true}, Timeout: 20 * time.Second}
}

func get(t *testing.T, p *Proxy, path string) (*http.Response, []byte, error) {
	t.Helper()
	resp, err := client().Get(p.URL + path)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp, b, err
}

func TestClassify(t *testing.T) {
	for _, c := range []struct {
		method, path string
		want         Kind
	}{
		{"GET", "/v2/", Other},
		{"GET", "/v2/a/b/tags/list", Other},
		{"GET", "/v2/a/b/blobs/sha256:abc", BlobGet},
		{"HEAD", "/v2/a/b/blobs/sha256:abc", BlobHead},
		{"GET", "/v2/a/manifests/1.0", ManifestGet},
		{"HEAD", "/v2/a/manifests/sha256:abc", ManifestHead},
		{"PUT", "/v2/a/manifests/1.0", ManifestPut},
		{"POST", "/v2/a/blobs/uploads/", UploadStart},
		{"PATCH", "/v2/a/blobs/uploads/uuid", BlobUpload},
		{"PUT", "/v2/a/blobs/uploads/uuid", BlobUpload},
		{"DELETE", "/v2/a/manifests/sha256:abc", Other},
		{"GET", "/metrics", Other},
	} {
		r := httptest.NewRequest(c.method, c.path, nil)
		if got := Classify(r); got != c.want {
			t.Errorf("Classify(%s %s) = %s, want %s", c.method, c.path, got, c.want)
		}
	}
	if s := (BlobGet | ManifestPut).String(); s != "blob-get|manifest-put" {
		t.Errorf("String = %q", s)
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	for _, cfg := range []Config{
		{Faults: []Fault{{Action: 99}}},
		{Faults: []Fault{{Action: Status}}},
		{Faults: []Fault{{Action: Drop, Times: -1}}},
	} {
		if p, err := New("http://127.0.0.1:1", cfg); err == nil {
			p.Close()
			t.Errorf("New(%+v) succeeded", cfg.Faults)
		}
	}
	if _, err := New("127.0.0.1:1", Config{}); err == nil {
		t.Error("New without a scheme succeeded")
	}
}

func TestPassThroughKeepsHost(t *testing.T) {
	u := newUpstream(t, 1000)
	p := start(t, u, Config{})
	resp, b, err := get(t, p, blobPath)
	if err != nil || !bytes.Equal(b, u.body) {
		t.Fatalf("pass-through GET: err %v, %d bytes", err, len(b))
	}
	// The upstream builds URLs from Host: they must point at the proxy.
	if loc := resp.Header.Get("Location"); !strings.HasPrefix(loc, p.URL+"/") {
		t.Errorf("Location %q does not lead back through the proxy %s", loc, p.URL)
	}
	if ev := p.Events(); len(ev) != 1 || ev[0].Kind != BlobGet || ev[0].Fault != -1 {
		t.Errorf("events %+v", ev)
	}
}

func TestStatusOnceThenPassThrough(t *testing.T) {
	u := newUpstream(t, 100)
	p := start(t, u, Config{Faults: []Fault{
		{Action: Status, Code: 429, Kinds: BlobGet, Times: 1},
		{Action: Status, Code: 503, Kinds: ManifestGet},
	}})
	resp, _, err := get(t, p, blobPath)
	if err != nil || resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "1" {
		t.Fatalf("first blob GET: %v %v %v", err, resp.StatusCode, resp.Header)
	}
	resp, b, err := get(t, p, blobPath)
	if err != nil || resp.StatusCode != 200 || !bytes.Equal(b, u.body) {
		t.Fatalf("second blob GET should pass: %v %d", err, resp.StatusCode)
	}
	for range 3 {
		resp, b, err = get(t, p, "/v2/repo/manifests/1")
		if err != nil || resp.StatusCode != 503 || !strings.Contains(string(b), "UNAVAILABLE") {
			t.Fatalf("manifest GET: %v %d %s", err, resp.StatusCode, b)
		}
	}
	if p.Fired(0) != 1 || p.Fired(1) != 3 {
		t.Errorf("fired %d, %d; want 1, 3", p.Fired(0), p.Fired(1))
	}
}

func TestDropMidBody(t *testing.T) {
	u := newUpstream(t, 100_000)
	p := start(t, u, Config{Faults: []Fault{{Action: Drop, Kinds: BlobGet, Bytes: 5000, Times: 1}}})
	resp, b, err := get(t, p, blobPath)
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("want an unexpected EOF, got %v (%d bytes)", err, len(b))
	}
	if resp.ContentLength != int64(len(u.body)) || len(b) != 5000 || !bytes.Equal(b, u.body[:5000]) {
		t.Errorf("Content-Length %d, got %d bytes", resp.ContentLength, len(b))
	}
	if _, b, err = get(t, p, blobPath); err != nil || len(b) != len(u.body) {
		t.Errorf("after the one drop: %v, %d bytes", err, len(b))
	}
}

func TestDropRequestNeverForwarded(t *testing.T) {
	u := newUpstream(t, 10)
	p := start(t, u, Config{Faults: []Fault{{Action: Drop, Kinds: ManifestPut}}})
	req, _ := http.NewRequest(http.MethodPut, p.URL+"/v2/repo/manifests/1", strings.NewReader("{}"))
	if resp, err := client().Do(req); err == nil {
		resp.Body.Close()
		t.Fatalf("dropped PUT answered %d", resp.StatusCode)
	}
	if len(u.got()) != 0 {
		t.Error("a dropped request reached the upstream")
	}
}

func TestTruncateResponse(t *testing.T) {
	u := newUpstream(t, 4096)
	p := start(t, u, Config{Faults: []Fault{{Action: Truncate, Kinds: BlobGet, Bytes: 100}}})
	resp, b, err := get(t, p, blobPath)
	if err != nil || resp.ContentLength != 100 || !bytes.Equal(b, u.body[:100]) {
		t.Fatalf("want a clean 100-byte body: %v, CL %d, %d bytes", err, resp.ContentLength, len(b))
	}
}

func TestTruncateAndCorruptRequestBody(t *testing.T) {
	u := newUpstream(t, 10)
	p := start(t, u, Config{Faults: []Fault{
		{Action: Truncate, Kinds: BlobUpload, Times: 1, Bytes: 10},
		{Action: Corrupt, Kinds: BlobUpload, Times: 1, Bytes: 3},
	}})
	body := []byte("0123456789abcdefghij")
	for range 2 {
		req, _ := http.NewRequest(http.MethodPatch, p.URL+"/v2/repo/blobs/uploads/x", bytes.NewReader(body))
		resp, err := client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	got := u.got()
	if len(got) != 2 || string(got[0]) != "0123456789" || string(got[1]) != "012"+string('3'^1)+"456789abcdefghij" {
		t.Fatalf("upstream received %q", got)
	}
}

func TestWrongLength(t *testing.T) {
	u := newUpstream(t, 2000)
	p := start(t, u, Config{Faults: []Fault{{Action: WrongLength, Kinds: BlobGet}}})
	resp, b, err := get(t, p, blobPath)
	if !errors.Is(err, io.ErrUnexpectedEOF) || resp.ContentLength <= 2000 || !bytes.Equal(b, u.body) {
		t.Fatalf("want the whole body under a longer Content-Length then EOF: %v, CL %d, %d bytes", err, resp.ContentLength, len(b))
	}
}

func TestCorruptFlipsOneByte(t *testing.T) {
	u := newUpstream(t, 50_000)
	p := start(t, u, Config{Seed: 7, Faults: []Fault{{Action: Corrupt, Kinds: BlobGet}}})
	_, b, err := get(t, p, blobPath)
	if err != nil || len(b) != len(u.body) {
		t.Fatalf("%v, %d bytes", err, len(b))
	}
	diff := 0
	for i := range b {
		if b[i] != u.body[i] {
			diff++
		}
	}
	if diff != 1 {
		t.Errorf("%d bytes differ, want 1", diff)
	}
}

func TestSeedReproducible(t *testing.T) {
	u := newUpstream(t, 50_000)
	cut := func(seed uint64) int {
		p := start(t, u, Config{Seed: seed, Faults: []Fault{{Action: Drop, Kinds: BlobGet}}})
		_, b, err := get(t, p, blobPath)
		if err == nil {
			t.Fatal("no drop")
		}
		return len(b)
	}
	a, b, c := cut(1), cut(1), cut(2)
	if a != b {
		t.Errorf("same seed cut at %d and %d", a, b)
	}
	if a == c {
		t.Logf("seeds 1 and 2 cut at the same byte %d (possible, unlikely)", a)
	}
}

func TestStallIsBoundedAndEndsWithClient(t *testing.T) {
	u := newUpstream(t, 1000)
	p := start(t, u, Config{MaxStall: 3 * time.Second, Faults: []Fault{{Action: Stall, Kinds: ManifestGet, Stall: time.Hour, Times: 1}}})
	c := &http.Client{Transport: &http.Transport{ResponseHeaderTimeout: 200 * time.Millisecond}}
	t0 := time.Now()
	resp, err := c.Get(p.URL + "/v2/repo/manifests/1")
	if err == nil {
		resp.Body.Close()
		t.Fatal("a stalled request answered in time")
	}
	if d := time.Since(t0); d > 2*time.Second {
		t.Errorf("client timeout took %v", d)
	}
	// Bounded: the stall of an hour ends at MaxStall for a patient client.
	p2 := start(t, u, Config{MaxStall: 300 * time.Millisecond, Faults: []Fault{{Action: Stall, Stall: time.Hour}}})
	t0 = time.Now()
	if _, b, err := get(t, p2, blobPath); err != nil || len(b) != 1000 {
		t.Fatalf("after the stall: %v", err)
	}
	if d := time.Since(t0); d < 300*time.Millisecond || d > 5*time.Second {
		t.Errorf("stall lasted %v, want about 300ms", d)
	}
}

func TestStallMidBody(t *testing.T) {
	u := newUpstream(t, 10_000)
	p := start(t, u, Config{MaxStall: 400 * time.Millisecond, Faults: []Fault{{Action: Stall, Kinds: BlobGet, Bytes: 1000}}})
	t0 := time.Now()
	_, b, err := get(t, p, blobPath)
	if err != nil || !bytes.Equal(b, u.body) {
		t.Fatalf("%v, %d bytes", err, len(b))
	}
	if d := time.Since(t0); d < 400*time.Millisecond {
		t.Errorf("no stall: %v", d)
	}
}

func TestCloseEndsStalls(t *testing.T) {
	u := newUpstream(t, 10)
	p, err := New(u.URL, Config{MaxStall: time.Minute, Faults: []Fault{{Action: Stall}}})
	if err != nil {
		t.Fatal(err)
	}
	go func() { _, _, _ = get(t, p, blobPath) }()
	for p.Count(AnyKind) == 0 {
		time.Sleep(10 * time.Millisecond)
	}
	t0 := time.Now()
	p.Close()
	if d := time.Since(t0); d > 5*time.Second {
		t.Errorf("Close took %v", d)
	}
}
