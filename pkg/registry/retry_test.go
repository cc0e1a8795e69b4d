package registry

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/addonpkg/addonpkg/internal/netguard"
	"github.com/addonpkg/addonpkg/internal/retry"
	"github.com/addonpkg/addonpkg/pkg/errdef"
)

// A 429 with Retry-After is waited out (as told) and the request replayed.
func TestRetryAfterTransport(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) < 3 {
			w.Header().Set("Retry-After", "2")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		w.Write([]byte("ok"))
	}))
	defer srv.Close()
	var waited []time.Duration
	rt := &retryTransport{inner: http.DefaultTransport, retries: 4, base: time.Millisecond, sleep: func(_ context.Context, d time.Duration) error {
		waited = append(waited, d)
		return nil
	}}
	req, _ := http.NewRequest(http.MethodPut, srv.URL, strings.NewReader("body"))
	resp, err := rt.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || calls.Load() != 3 {
		t.Errorf("status %d after %d calls, want 200 after 3", resp.StatusCode, calls.Load())
	}
	if len(waited) != 2 || waited[0] != 2*time.Second {
		t.Errorf("waited %v, want [2s 2s]", waited)
	}
}

// A 5xx that lasts through every retry is reported with what the
// registry's error body says: Distribution answers a manifest whose
// nondistributable layer was not pushed with a 500 naming that blob.
func TestRetriesExhaustedSayWhatTheRegistrySaid(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		io.WriteString(w, `{"errors":[{"code":"UNKNOWN","message":"unknown error","detail":{}},{"code":"UNKNOWN","message":"unknown error","detail":{}},`+
			`{"code":"MANIFEST_BLOB_UNKNOWN","message":"blob unknown to registry","detail":"sha256:2837"}]}`)
	}))
	defer srv.Close()
	rt := &retryTransport{inner: http.DefaultTransport, retries: 2, base: time.Millisecond, sleep: func(context.Context, time.Duration) error { return nil }}
	req, _ := http.NewRequest(http.MethodPut, srv.URL+"/v2/x/manifests/1", strings.NewReader("{}"))
	_, err := rt.RoundTrip(req)
	if !errors.Is(err, errdef.ErrRetriesExhausted) {
		t.Fatalf("err %v, want ErrRetriesExhausted", err)
	}
	want := "after 3 tries: the registry said UNKNOWN: unknown error; MANIFEST_BLOB_UNKNOWN: blob unknown to registry (sha256:2837)"
	if !strings.HasSuffix(err.Error(), want) {
		t.Errorf("err %q, want it to end %q", err, want)
	}
}

// What the registry said is its text, not addonpkg's: one line, its
// control characters (a terminal escape) shown as '?', and cut, however
// long the body's message (the body is read up to 64 KiB).
func TestRetriesExhaustedRegistrySaidIsSanitized(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintf(w, `{"errors":[{"code":"UNAVAILABLE","message":"down\nfake: line\u001b[2J","detail":"%s"}]}`, strings.Repeat("x", 50000))
	}))
	defer srv.Close()
	rt := &retryTransport{inner: http.DefaultTransport, retries: 1, base: time.Millisecond, sleep: func(context.Context, time.Duration) error { return nil }}
	req, _ := http.NewRequest(http.MethodPut, srv.URL+"/v2/x/manifests/1", strings.NewReader("{}"))
	_, err := rt.RoundTrip(req)
	if !errors.Is(err, errdef.ErrRetriesExhausted) {
		t.Fatalf("err %v, want ErrRetriesExhausted", err)
	}
	msg := err.Error()
	if strings.ContainsAny(msg, "\n\x1b") || len(msg) > 2048 || !strings.Contains(msg, "the registry said UNAVAILABLE: down?fake: line?[2J (xxx") {
		t.Errorf("err %q (%d bytes), want one line of printable text, cut", msg[:min(len(msg), 200)], len(msg))
	}
}

// A body that breaks off is resumed with a Range request, and one that
// stalls is cut by the idle timeout and resumed too; so is a chunked one
// (unknown length) that breaks off.
func TestResumableBody(t *testing.T) {
	payload := strings.Repeat("0123456789", 10_000)
	for _, fault := range []string{"drop", "stall", "drop-chunked"} {
		t.Run(fault, func(t *testing.T) {
			var calls atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				n := calls.Add(1)
				if rng := r.Header.Get("Range"); rng != "" {
					var from int
					fmt.Sscanf(rng, "bytes=%d-", &from)
					w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", from, len(payload)-1, len(payload)))
					w.Header().Set("Content-Length", strconv.Itoa(len(payload)-from))
					w.WriteHeader(http.StatusPartialContent)
					w.Write([]byte(payload[from:]))
					return
				}
				if fault != "drop-chunked" {
					w.Header().Set("Content-Length", strconv.Itoa(len(payload)))
				}
				if n > 1 {
					w.Write([]byte(payload))
					return
				}
				w.Write([]byte(payload[:30_000]))
				w.(http.Flusher).Flush()
				if fault == "stall" {
					time.Sleep(2 * time.Second)
					return
				}
				conn, _, _ := w.(http.Hijacker).Hijack()
				conn.Close()
			}))
			defer srv.Close()
			rt := &retryTransport{inner: &netguard.Transport{Idle: 300 * time.Millisecond}, retries: 3, base: time.Millisecond, sleep: retry.Sleep}
			req, _ := http.NewRequest(http.MethodGet, srv.URL+"/v2/x/blobs/sha256:00", nil)
			resp, err := rt.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil {
				t.Fatalf("read: %v", err)
			}
			if string(got) != payload {
				t.Fatalf("got %d bytes, want the %d-byte payload", len(got), len(payload))
			}
			if calls.Load() != 2 {
				t.Errorf("%d requests, want 2 (one resume)", calls.Load())
			}
		})
	}
}
