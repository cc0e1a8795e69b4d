package registry_test

import (
	"context"
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	ggcrregistry "github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/addonpkg/addonpkg/internal/netguard"
	"github.com/addonpkg/addonpkg/internal/testing/testregistry"
	"github.com/addonpkg/addonpkg/pkg/registry"
)

// headerLog records the Authorization header of every request a server got.
type headerLog struct {
	mu   sync.Mutex
	seen []string
}

func (l *headerLog) add(r *http.Request) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seen = append(l.seen, r.URL.Path+" auth="+r.Header.Get("Authorization"))
}

func (l *headerLog) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.seen...)
}

// authRegistry is a registry on 127.0.0.1 that wants basic auth and
// answers blob GETs with a redirect to a blob server on another port (as
// registries do to their storage), which records what it receives.
type authRegistry struct {
	host  string // 127.0.0.1:PORT of the registry
	ref   string // an image in it
	image v1.Image
	blobs *headerLog
}

func newAuthRegistry(t *testing.T, blobScheme string) *authRegistry {
	t.Helper()
	inner := ggcrregistry.New(ggcrregistry.Logger(log.New(io.Discard, "", 0)))
	ar := &authRegistry{blobs: &headerLog{}}
	blobSrv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ar.blobs.add(r)
		r.Header.Del("Authorization")
		inner.ServeHTTP(w, r)
	}))
	if blobScheme == "https" {
		blobSrv.StartTLS()
	} else {
		blobSrv.Start()
	}
	t.Cleanup(blobSrv.Close)
	reg := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != "alice" || p != "s3cret" {
			w.Header().Set("WWW-Authenticate", `Basic realm="test"`)
			http.Error(w, `{"errors":[{"code":"UNAUTHORIZED"}]}`, http.StatusUnauthorized)
			return
		}
		if r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/blobs/sha256:") {
			http.Redirect(w, r, blobSrv.URL+r.URL.Path, http.StatusTemporaryRedirect)
			return
		}
		inner.ServeHTTP(w, r)
	}))
	t.Cleanup(reg.Close)
	ar.host = strings.TrimPrefix(reg.URL, "http://")
	ar.ref = ar.host + "/addons/x:1"

	// Seed the registry straight through the inner handler.
	seed := httptest.NewServer(inner)
	t.Cleanup(seed.Close)
	img, err := random.Image(256, 2)
	if err != nil {
		t.Fatal(err)
	}
	ar.image = img
	o := registry.Options{Keychain: authn.NewMultiKeychain()}
	sref, err := o.ParseReference(strings.TrimPrefix(seed.URL, "http://") + "/addons/x:1")
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(sref, img); err != nil {
		t.Fatal(err)
	}
	return ar
}

// aliceKeychain gives one user and password to every registry.
type aliceKeychain struct{}

func (aliceKeychain) Resolve(authn.Resource) (authn.Authenticator, error) {
	return &authn.Basic{Username: "alice", Password: "s3cret"}, nil
}

// pullAll fetches the manifest and every blob of ref.
func pullAll(t *testing.T, o registry.Options, refStr string) error {
	t.Helper()
	ref, err := o.ParseReference(refStr)
	if err != nil {
		t.Fatal(err)
	}
	ropts, err := o.Remote(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	img, err := remote.Image(ref, ropts...)
	if err != nil {
		return err
	}
	layers, err := img.Layers()
	if err != nil {
		return err
	}
	for _, l := range layers {
		rc, err := l.Compressed()
		if err != nil {
			return err
		}
		_, err = io.Copy(io.Discard, rc)
		rc.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// Registry credentials go to the registry only: a blob redirected to
// another port (plain http, or https) gets none. Go's client would copy
// the Authorization header to any port of the same host name.
func TestRegistryCredentialsStayWithTheirOrigin(t *testing.T) {
	for _, scheme := range []string{"http", "https"} {
		t.Run("redirect to "+scheme+" on another port", func(t *testing.T) {
			ar := newAuthRegistry(t, scheme)
			base := http.DefaultTransport.(*http.Transport).Clone()
			base.TLSClientConfig.InsecureSkipVerify = true //nolint:gosec // test server
			o := registry.Options{Keychain: aliceKeychain{}, Transport: base, Retries: -1}
			if err := pullAll(t, o, ar.ref); err != nil {
				t.Fatalf("pull: %v", err)
			}
			seen := ar.blobs.all()
			if len(seen) == 0 {
				t.Fatal("no blob was fetched through the redirect")
			}
			for _, s := range seen {
				if !strings.HasSuffix(s, "auth=") {
					t.Errorf("the blob server on another port got credentials: %s", s)
				}
			}
		})
	}
}

// fakeNet answers requests in memory, by origin, and records what each
// request carried: hosts that are not loopback, without a network.
type fakeNet struct {
	mu       sync.Mutex
	handlers map[string]http.Handler // "https://host:port"
	log      []string
}

func (f *fakeNet) RoundTrip(r *http.Request) (*http.Response, error) {
	origin := netguard.OriginOf(r.URL).String()
	f.mu.Lock()
	f.log = append(f.log, r.Method+" "+origin+r.URL.Path+" auth="+r.Header.Get("Authorization"))
	h := f.handlers[origin]
	f.mu.Unlock()
	if h == nil {
		return nil, errors.New("connection refused")
	}
	sr := r.Clone(r.Context()) // as a server sees it: a body, a Host
	if sr.Body == nil {
		sr.Body = http.NoBody
	}
	sr.Host = r.URL.Host
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, sr)
	resp := rec.Result()
	resp.Request = r
	return resp, nil
}

// leaks lists the requests to another origin than want that carried credentials.
func (f *fakeNet) leaks(want string) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, l := range f.log {
		if !strings.HasSuffix(l, "auth=") && !strings.Contains(l, " "+want+"/") {
			out = append(out, l)
		}
	}
	return out
}

// Registries that are not loopback, in memory: credentials never go over
// plain http, nor to another origin a blob is redirected to.
func TestRegistryCredentialsRules(t *testing.T) {
	inner := ggcrregistry.New(ggcrregistry.Logger(log.New(io.Discard, "", 0)))
	img, err := random.Image(256, 1)
	if err != nil {
		t.Fatal(err)
	}
	seed := &fakeNet{handlers: map[string]http.Handler{"https://seed.example.test:443": inner}}
	sref, _ := registry.Options{}.ParseReference("seed.example.test/addons/x:1")
	if err := remote.Write(sref, img, remote.WithTransport(seed)); err != nil {
		t.Fatal(err)
	}
	basic := func(redirect string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if u, p, ok := r.BasicAuth(); !ok || u != "alice" || p != "s3cret" {
				w.Header().Set("WWW-Authenticate", `Basic realm="test"`)
				w.WriteHeader(http.StatusUnauthorized)
				return
			}
			if redirect != "" && r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/blobs/sha256:") {
				http.Redirect(w, r, redirect+r.URL.Path, http.StatusTemporaryRedirect)
				return
			}
			inner.ServeHTTP(w, r)
		})
	}
	bearer := func(realm string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Authorization") != "Bearer tok" {
				w.Header().Set("WWW-Authenticate", `Bearer realm="`+realm+`",service="reg"`)
				w.WriteHeader(http.StatusUnauthorized)
				return
			}
			inner.ServeHTTP(w, r)
		})
	}
	token := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"token":"tok"}`)
	})
	const reg = "https://reg.example.test:443"
	for _, c := range []struct {
		name      string
		plainHTTP bool
		handlers  map[string]http.Handler
		cleartext bool // the pull must fail, sending nothing in clear
	}{
		{"blob redirected to plain http on another port", false, map[string]http.Handler{
			reg: basic("http://reg.example.test:8080"), "http://reg.example.test:8080": inner}, false},
		{"blob redirected to another port", false, map[string]http.Handler{
			reg: basic("https://reg.example.test:8443"), "https://reg.example.test:8443": inner}, false},
		{"blob redirected to another host", false, map[string]http.Handler{
			reg: basic("https://storage.example.test"), "https://storage.example.test:443": inner}, false},
		// go-containerregistry refuses this one itself.
		{"token service over plain http", false, map[string]http.Handler{
			reg: bearer("http://auth.example.test/token"), "http://auth.example.test:80": token}, true},
		{"registry and token service over plain http", true, map[string]http.Handler{
			"http://reg.example.test:80": bearer("http://auth.example.test/token"), "http://auth.example.test:80": token}, true},
		{"token service over https", false, map[string]http.Handler{
			reg: bearer("https://auth.example.test/token"), "https://auth.example.test:443": token}, false},
		{"registry over plain http", true, map[string]http.Handler{
			"http://reg.example.test:80": basic("")}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			fn := &fakeNet{handlers: c.handlers}
			o := registry.Options{Keychain: aliceKeychain{}, Transport: fn, Retries: -1, PlainHTTP: c.plainHTTP}
			err := pullAll(t, o, "reg.example.test/addons/x:1")
			switch {
			case c.cleartext && err == nil:
				t.Error("the pull succeeded")
			case c.cleartext && c.plainHTTP && !errors.Is(err, netguard.ErrCleartextCredentials):
				t.Errorf("want ErrCleartextCredentials, got %v", err)
			case !c.cleartext && err != nil:
				t.Errorf("pull: %v", err)
			}
			want := reg
			if c.name == "token service over https" {
				want = "https://auth.example.test:443"
			}
			for _, l := range fn.leaks(want) {
				if !strings.Contains(l, "Bearer tok") || !strings.Contains(l, reg) {
					t.Errorf("credentials sent where they do not belong: %s", l)
				}
			}
		})
	}
}

// A blob whose chunked body stops mid-way fails after the idle timeout
// with an error that names it, instead of hanging.
func TestRegistryChunkedBodyStall(t *testing.T) {
	host := testregistry.StallingBlobs(t)
	img, err := random.Image(256, 1)
	if err != nil {
		t.Fatal(err)
	}
	o := registry.Options{Keychain: authn.NewMultiKeychain(), Retries: -1, Timeout: time.Second}
	refStr := host + "/addons/x:1"
	ref, _ := o.ParseReference(refStr)
	if err := remote.Write(ref, img); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute) // a hang fails the test, not the suite
	defer cancel()
	ropts, _ := o.Remote(ctx)
	got, err := remote.Image(ref, ropts...)
	if err != nil {
		t.Fatal(err)
	}
	layers, _ := got.Layers()
	rc, err := layers[0].Compressed()
	if err == nil {
		_, err = io.Copy(io.Discard, rc)
		rc.Close()
	}
	var ie *netguard.IdleTimeoutError
	if !errors.As(err, &ie) || !errors.Is(err, netguard.ErrIdleTimeout) {
		t.Fatalf("want an idle timeout error, got %v", err)
	}
	if ie.Idle != time.Second || !strings.Contains(err.Error(), host) {
		t.Errorf("the error should name the source and the timeout: %v", err)
	}
}
