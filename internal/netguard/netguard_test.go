package netguard_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/addonpkg/addonpkg/internal/netguard"
)

func TestOriginOf(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"https://Example.COM/x", "https://example.com:443"},
		{"https://example.com:443/x", "https://example.com:443"},
		{"https://example.com:0443/x", "https://example.com:443"},
		{"http://example.com/x", "http://example.com:80"},
		{"HTTP://example.com:8080", "http://example.com:8080"},
		{"https://[::1]:5000/v2/", "https://[::1]:5000"},
		{"https://[0:0:0:0:0:0:0:1]:5000/v2/", "https://[::1]:5000"},
		{"https://user:pw@127.0.0.1:5000/", "https://127.0.0.1:5000"},
	} {
		u, err := url.Parse(c.in)
		if err != nil {
			t.Fatal(err)
		}
		if got := netguard.OriginOf(u).String(); got != c.want {
			t.Errorf("OriginOf(%s) = %s, want %s", c.in, got, c.want)
		}
	}
}

func TestCheckCredentials(t *testing.T) {
	for _, c := range []struct {
		in string
		ok bool
	}{
		{"https://example.com/", true},
		{"http://example.com/", false},
		{"http://localhost:5000/", true},
		{"http://LOCALHOST./", true},
		{"http://127.0.0.1:5000/", true},
		{"http://127.8.9.10/", true},
		{"http://[::1]:5000/", true},
		{"http://[::ffff:127.0.0.1]/", true},
		{"http://10.0.0.1/", false},
		{"http://localhost.example.com/", false},
		{"http://127.0.0.1.example.com/", false},
		{"ftp://example.com/", false},
	} {
		u, _ := url.Parse(c.in)
		err := netguard.CheckCredentials(u)
		if (err == nil) != c.ok {
			t.Errorf("CheckCredentials(%s) = %v, want ok=%v", c.in, err, c.ok)
		}
		if err != nil && !errors.Is(err, netguard.ErrCleartextCredentials) {
			t.Errorf("CheckCredentials(%s) = %v, not ErrCleartextCredentials", c.in, err)
		}
	}
}

// recorder is a server on 127.0.0.1 that records the Authorization and
// Cookie headers it gets.
type recorder struct {
	*httptest.Server
	mu   sync.Mutex
	seen []string
}

func newRecorder(t *testing.T, tls bool, h http.HandlerFunc) *recorder {
	r := &recorder{}
	r.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.seen = append(r.seen, req.Header.Get("Authorization")+req.Header.Get("Cookie"))
		r.mu.Unlock()
		if h != nil {
			h(w, req)
			return
		}
		io.WriteString(w, "ok")
	}))
	if tls {
		r.StartTLS()
	} else {
		r.Start()
	}
	t.Cleanup(r.Close)
	return r
}

func (r *recorder) credentials() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, s := range r.seen {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// Through a client that follows redirects, credentials set on the first
// request reach the first origin only: not another port of the same host
// (which net/http alone allows), not plain http, not another host name.
func TestRedirectDropsCredentials(t *testing.T) {
	for _, c := range []struct {
		name    string
		fromTLS bool
		toTLS   bool
		toHost  string // host name the redirect names
	}{
		{"https to https on another port", true, true, "127.0.0.1"},
		{"https to http on another port", true, false, "127.0.0.1"},
		{"http to http on another port", false, false, "127.0.0.1"},
		{"to another host name", false, false, "localhost"},
	} {
		t.Run(c.name, func(t *testing.T) {
			to := newRecorder(t, c.toTLS, nil)
			target := strings.Replace(to.URL, "127.0.0.1", c.toHost, 1) + "/there"
			from := newRecorder(t, c.fromTLS, func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, target, http.StatusFound)
			})
			base := http.DefaultTransport.(*http.Transport).Clone()
			base.TLSClientConfig.InsecureSkipVerify = true //nolint:gosec // test servers
			client := &http.Client{Transport: &netguard.Transport{Base: base}}
			for _, kind := range []string{"basic", "cookie", "userinfo"} {
				u := from.URL + "/here"
				if kind == "userinfo" {
					u = strings.Replace(u, "://", "://alice:s3cret@", 1)
				}
				req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, u, nil)
				switch kind {
				case "basic":
					req.SetBasicAuth("alice", "s3cret")
				case "cookie":
					req.Header.Set("Cookie", "session=s3cret")
				}
				resp, err := client.Do(req)
				if err != nil {
					t.Fatalf("%s: %v", kind, err)
				}
				resp.Body.Close()
			}
			if got := from.credentials(); len(got) != 3 {
				t.Errorf("the origin got credentials %d times, want 3: %q", len(got), got)
			}
			if got := to.credentials(); len(got) != 0 {
				t.Errorf("the redirect target got credentials: %q", got)
			}
		})
	}
}

// Credentials to a host that is not loopback over plain http fail before
// anything is sent.
func TestNoCleartextCredentials(t *testing.T) {
	sent := 0
	base := roundTripFunc(func(*http.Request) (*http.Response, error) {
		sent++
		return &http.Response{StatusCode: 200, Body: http.NoBody}, nil
	})
	rt := &netguard.Transport{Base: base}
	for _, u := range []string{"http://example.test/x", "http://alice:pw@example.test/x"} {
		req, _ := http.NewRequest(http.MethodGet, u, nil)
		if !strings.Contains(u, "@") {
			req.SetBasicAuth("alice", "pw")
		}
		_, err := rt.RoundTrip(req)
		if !errors.Is(err, netguard.ErrCleartextCredentials) || !strings.Contains(err.Error(), "http://example.test:80") {
			t.Errorf("%s: want ErrCleartextCredentials naming the origin, got %v", u, err)
		}
	}
	// Without credentials, plain http is not the guard's business.
	req, _ := http.NewRequest(http.MethodGet, "http://example.test/x", nil)
	if _, err := rt.RoundTrip(req); err != nil {
		t.Errorf("anonymous request: %v", err)
	}
	if sent != 1 {
		t.Errorf("%d requests sent, want 1 (the anonymous one)", sent)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// A server that takes the connection, writes what it is given, and then
// says nothing more until the test ends.
func stallingServer(t *testing.T, first string) *httptest.Server {
	stop := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, bw, err := w.(http.Hijacker).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		bw.WriteString(first)
		bw.Flush()
		<-stop
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(stop) })
	return srv
}

// No headers, or a body (chunked, sized, or until close) that stops:
// each fails with an IdleTimeoutError naming the request and the timeout.
func TestIdleTimeout(t *testing.T) {
	for _, c := range []struct{ name, first string }{
		{"no headers", ""},
		{"chunked body", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nabcd\r\n"},
		{"sized body", "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nabcd"},
		{"body until close", "HTTP/1.0 200 OK\r\n\r\nabcd"},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := stallingServer(t, c.first)
			client := &http.Client{Transport: &netguard.Transport{Idle: 200 * time.Millisecond}}
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL+"/file.tar.gz", nil)
			resp, err := client.Do(req)
			var body []byte
			if err == nil {
				body, err = io.ReadAll(resp.Body)
				resp.Body.Close()
				if c.first != "" && string(body) != "abcd" {
					t.Errorf("got %q before the stall, want abcd", body)
				}
			}
			var ie *netguard.IdleTimeoutError
			if !errors.As(err, &ie) || !errors.Is(err, netguard.ErrIdleTimeout) {
				t.Fatalf("want an IdleTimeoutError, got %v", err)
			}
			if ie.Idle != 200*time.Millisecond || !strings.Contains(err.Error(), srv.URL+"/file.tar.gz") || !strings.Contains(err.Error(), "200ms") {
				t.Errorf("the error should name the request and the timeout: %v", err)
			}
		})
	}
}

// A body that keeps sending, slowly, is not cut: the timeout is idle time,
// not total time.
func TestIdleTimeoutSlowBody(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for range 12 {
			io.WriteString(w, "x")
			w.(http.Flusher).Flush()
			time.Sleep(100 * time.Millisecond)
		}
	}))
	defer srv.Close()
	client := &http.Client{Transport: &netguard.Transport{Idle: time.Second}}
	resp, err := client.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || string(b) != strings.Repeat("x", 12) {
		t.Fatalf("got %q, %v", b, err)
	}
}

// slowBody sends n bytes, one per read, pausing before each.
type slowBody struct {
	n     int
	pause time.Duration
}

func (b *slowBody) Read(p []byte) (int, error) {
	if b.n == 0 {
		return 0, io.EOF
	}
	time.Sleep(b.pause)
	b.n--
	p[0] = 'x'
	return 1, nil
}

// An upload that takes longer than the idle timeout is not cut: the wait
// for the answer starts when the request is sent.
func TestIdleTimeoutSlowUpload(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		io.WriteString(w, strconv.Itoa(len(b)))
	}))
	defer srv.Close()
	client := &http.Client{Transport: &netguard.Transport{Idle: 500 * time.Millisecond}}
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPut, srv.URL, io.NopCloser(&slowBody{n: 12, pause: 100 * time.Millisecond}))
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || string(b) != "12" {
		t.Fatalf("got %q, %v", b, err)
	}
}
