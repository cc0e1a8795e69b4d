package registry_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/addonpkg/addonpkg/internal/testing/testregistry"
	"github.com/addonpkg/addonpkg/pkg/errdef"
	"github.com/addonpkg/addonpkg/pkg/registry"
)

// staticKeychain answers every registry with the same credentials.
type staticKeychain struct{ user, pass string }

func (k staticKeychain) Resolve(authn.Resource) (authn.Authenticator, error) {
	if k.user == "" {
		return authn.Anonymous, nil
	}
	return &authn.Basic{Username: k.user, Password: k.pass}, nil
}

// pushTags pushes one small random image under each tag of repo.
func pushTags(t *testing.T, r *testregistry.Registry, repo string, tags ...string) {
	t.Helper()
	img, err := random.Image(64, 1)
	if err != nil {
		t.Fatal(err)
	}
	auth := authn.Anonymous
	if r.Username != "" {
		auth = &authn.Basic{Username: r.Username, Password: r.Password}
	}
	for _, tag := range tags {
		ref, err := name.ParseReference(r.Host + "/" + repo + ":" + tag)
		if err != nil {
			t.Fatal(err)
		}
		if err := remote.Write(ref, img, remote.WithTransport(r.Transport()), remote.WithAuth(auth)); err != nil {
			t.Fatal(err)
		}
	}
}

// get does what pull does first: resolve the reference, then list tags
// on a miss, and returns the explained error.
func get(ctx context.Context, o registry.Options, ref string) error {
	r, err := o.ParseReference(ref)
	if err != nil {
		return err
	}
	ropts, err := o.Remote(ctx)
	if err != nil {
		return err
	}
	_, err = remote.Head(r, ropts...)
	return o.ExplainTags(ctx, ref, err)
}

// NoDNS is a transport whose resolver asks a DNS server on a closed
// 127.0.0.1 port: every host name fails to resolve, and no query leaves
// the machine.
func NoDNS() http.RoundTripper {
	d := &net.Dialer{}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.Proxy = nil
	t.DialContext = (&net.Dialer{Resolver: &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return d.DialContext(ctx, "tcp", "127.0.0.1:1")
	}}}).DialContext
	return t
}

// closedPort is a 127.0.0.1 port nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

func TestExplainAgainstARealRegistry(t *testing.T) {
	ctx := context.Background()
	plain := testregistry.Start(t, testregistry.Options{})
	pushTags(t, plain, "addons/coredns", "1.10", "1.11", "latest")
	pushTags(t, plain, "addons/empty", "only")
	auth := testregistry.Start(t, testregistry.Options{Mode: testregistry.BasicAuth})
	pushTags(t, auth, "addons/x", "1")
	tlsReg := testregistry.Start(t, testregistry.Options{Mode: testregistry.TLS})
	down := closedPort(t)

	for _, tc := range []struct {
		name  string
		ref   string
		opts  registry.Options
		kind  error
		wants []string
		not   []string
	}{
		{"wrong tag", plain.Host + "/addons/coredns:1.12", registry.Options{}, errdef.ErrNotFound,
			[]string{plain.Host + "/addons/coredns:1.12: tag 1.12 not found in " + plain.Host + "/addons/coredns; tags there: latest, 1.11, 1.10"},
			[]string{"HEAD", "status code"}},
		{"wrong repository", plain.Host + "/addons/nosuch:1", registry.Options{}, errdef.ErrNotFound,
			[]string{"repository " + plain.Host + "/addons/nosuch not found", "check the registry and repository name"}, nil},
		{"wrong digest", plain.Host + "/addons/coredns@sha256:" + strings.Repeat("0", 64), registry.Options{}, errdef.ErrNotFound,
			[]string{"manifest sha256:000", "not found in " + plain.Host + "/addons/coredns", "'addonpkg ls " + plain.Host + "/addons/coredns' lists its tags"}, nil},
		{"no tag, latest missing", plain.Host + "/addons/empty", registry.Options{}, errdef.ErrNotFound,
			[]string{plain.Host + "/addons/empty: tag latest not found in " + plain.Host + "/addons/empty; tags there: only"}, []string{"repository"}},
		{"missing repository, no tag", plain.Host + "/addons/nosuch", registry.Options{}, errdef.ErrNotFound,
			[]string{plain.Host + "/addons/nosuch: repository " + plain.Host + "/addons/nosuch not found"}, []string{"latest"}},
		{"no credentials", auth.Host + "/addons/x:1", registry.Options{Keychain: staticKeychain{}}, registry.ErrUnauthorized,
			[]string{auth.Host + "/addons/x:1: authentication required; run 'addonpkg login " + auth.Host + "'"}, []string{"map["}},
		{"wrong password", auth.Host + "/addons/x:1", registry.Options{Keychain: staticKeychain{auth.Username, "wrong"}}, registry.ErrUnauthorized,
			[]string{"authentication required; run 'addonpkg login " + auth.Host + "'"}, []string{"wrong"}},
		{"unreachable port", down + "/addons/x:1", registry.Options{Retries: -1}, registry.ErrUnreachable,
			[]string{down + "/addons/x:1: cannot connect to " + down + " (connection refused); check the host and port"}, nil},
		{"wrong host", "nosuchhost.example/addons/x:1", registry.Options{Retries: -1, Transport: NoDNS()}, registry.ErrUnreachable,
			[]string{"cannot resolve host nosuchhost.example; check the registry's host name"}, nil},
		{"untrusted certificate", tlsReg.Host + "/addons/x:1", registry.Options{Retries: -1}, registry.ErrUntrustedCertificate,
			[]string{"the TLS certificate of " + tlsReg.Host + " is not trusted; trust the registry's CA"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := get(ctx, tc.opts, tc.ref)
			if !errors.Is(err, tc.kind) {
				t.Fatalf("errors.Is(%v, %v) = false", err, tc.kind)
			}
			var re *registry.Error
			if !errors.As(err, &re) || re.Detail() == "" {
				t.Errorf("no *registry.Error with the registry's own answer as Detail: %#v", err)
			}
			msg := err.Error()
			if strings.ContainsAny(msg, "\n\r\x1b") {
				t.Errorf("not one clean line: %q", msg)
			}
			for _, w := range tc.wants {
				if !strings.Contains(msg, w) {
					t.Errorf("%q\ndoes not contain %q", msg, w)
				}
			}
			for _, n := range tc.not {
				if strings.Contains(msg, n) {
					t.Errorf("%q\ncontains %q", msg, n)
				}
			}
		})
	}
}

// A repository with more tags than MaxTagsShown lists the newest and
// counts the rest.
func TestExplainTagsMany(t *testing.T) {
	r := testregistry.Start(t, testregistry.Options{})
	var tags []string
	for i := 1; i <= registry.MaxTagsShown+3; i++ {
		tags = append(tags, fmt.Sprintf("0.%d.0", i))
	}
	pushTags(t, r, "many", tags...)
	err := get(context.Background(), registry.Options{}, r.Host+"/many:9.9")
	want := fmt.Sprintf("tags there: 0.13.0, 0.12.0, 0.11.0, 0.10.0, 0.9.0, 0.8.0, 0.7.0, 0.6.0, 0.5.0, 0.4.0 (and 3 more: 'addonpkg ls %s/many')", r.Host)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("got %v\nwant it to contain %q", err, want)
	}
}

// Logger sees every request and response line, never a credential: not
// the password, not the basic-auth header, not the bearer token.
func TestLoggerRedactsCredentials(t *testing.T) {
	r := testregistry.Start(t, testregistry.Options{Mode: testregistry.BasicAuth})
	pushTags(t, r, "addons/x", "1")
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	o := registry.Options{Keychain: staticKeychain{r.Username, r.Password}, Logger: log}
	if err := get(context.Background(), o, r.Host+"/addons/x:1"); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, w := range []string{
		`"> GET http://` + r.Host + `/v2/"`,
		`"< 401 Unauthorized GET http://` + r.Host + `/v2/`,
		`"> HEAD http://` + r.Host + `/v2/addons/x/manifests/1"`,
		`"< 200 OK HEAD http://` + r.Host + `/v2/addons/x/manifests/1`,
	} {
		if !strings.Contains(out, w) {
			t.Errorf("log does not contain %s:\n%s", w, out)
		}
	}
	basic := base64.StdEncoding.EncodeToString([]byte(r.Username + ":" + r.Password))
	for _, secret := range []string{r.Password, basic, "Authorization", "Basic "} {
		if strings.Contains(out, secret) {
			t.Errorf("log contains %q:\n%s", secret, out)
		}
	}
}

// A plain HTTP server asked over HTTPS is ErrPlainHTTP, recognised by
// net/http's http.ErrSchemeMismatch (not its text), through the url.Error
// and the wrapping a caller adds.
func TestExplainPlainHTTP(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	_, err := (&http.Client{Transport: &http.Transport{}}).Get("https://" + host + "/v2/")
	if !errors.Is(err, http.ErrSchemeMismatch) {
		t.Fatalf("the HTTPS client's error %v is not http.ErrSchemeMismatch", err)
	}
	got := registry.Explain(host+"/addons/x:1", fmt.Errorf("HEAD: %w", err))
	if !errors.Is(got, registry.ErrPlainHTTP) || !strings.Contains(got.Error(), "speaks plain HTTP") {
		t.Errorf("Explain = %v, want ErrPlainHTTP", got)
	}
	// The same words in an error of another kind are not the scheme
	// mismatch.
	if got := registry.Explain(host+"/addons/x:1", errors.New("server gave HTTP response to HTTPS client; x509: connection refused")); errors.Is(got, registry.ErrPlainHTTP) || errors.Is(got, registry.ErrUntrustedCertificate) {
		t.Errorf("Explain matched a text: %v", got)
	}
}

// A registry that fails (5xx) or accepts the connection and then sends
// nothing is one line saying so, not go-containerregistry's two
// attempts (HTTPS, then plain HTTP for a local registry) side by side.
func TestExplainFailingAndSilentRegistries(t *testing.T) {
	ctx := context.Background()
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	t.Cleanup(failing.Close)
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { silent.Close() })
	go func() {
		var held []net.Conn
		for {
			c, err := silent.Accept()
			if err != nil {
				for _, c := range held {
					c.Close()
				}
				return
			}
			held = append(held, c)
		}
	}()
	for _, c := range []struct {
		host, want string
		kind, not  error
	}{
		{strings.TrimPrefix(failing.URL, "http://"), "answered 503 Service Unavailable; the registry is failing: try again later, or ask its operator", registry.ErrServer, registry.ErrUnreachable},
		{silent.Addr().String(), "sent nothing for 300ms; check the registry, or allow more time", registry.ErrUnreachable, registry.ErrServer},
	} {
		err := get(ctx, registry.Options{Retries: -1, Timeout: 300 * time.Millisecond}, c.host+"/x:1")
		if !errors.Is(err, c.kind) || errors.Is(err, c.not) || err.Error() != c.host+"/x:1: "+c.host+" "+c.want {
			t.Errorf("%s: %v, want %v (not %v) and %q", c.host, err, c.kind, c.not, c.want)
		}
	}
}

// A registry that answers and fails is reached: its 5xx, and a 5xx or
// 429 still given after the retries, match ErrServer, not
// ErrUnreachable, so a Go caller can tell "the registry is down or far"
// from "the registry is there and failing" (where a write may have been
// done). A refused connection stays ErrUnreachable.
func TestExplainServerFailure(t *testing.T) {
	ctx := context.Background()
	status := func(code int) string {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(code) }))
		t.Cleanup(srv.Close)
		return strings.TrimPrefix(srv.URL, "http://")
	}
	down := func() string {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close()
		return addr
	}
	for _, c := range []struct {
		name      string
		host      string
		retries   int
		kind, not error
	}{
		{"500, no retries", status(http.StatusInternalServerError), -1, registry.ErrServer, registry.ErrUnreachable},
		{"502 after a retry", status(http.StatusBadGateway), 1, registry.ErrServer, registry.ErrUnreachable},
		{"429 after a retry", status(http.StatusTooManyRequests), 1, registry.ErrServer, registry.ErrUnreachable},
		{"connection refused", down(), 1, registry.ErrUnreachable, registry.ErrServer},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := get(ctx, registry.Options{Retries: c.retries}, c.host+"/x:1")
			var re *registry.Error
			if !errors.As(err, &re) || re.Kind != c.kind || !errors.Is(err, c.kind) || errors.Is(err, c.not) {
				t.Fatalf("err = %v, want a *registry.Error of kind %v, not %v", err, c.kind, c.not)
			}
			t.Log(err)
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q holds more than one line", err)
			}
		})
	}
}

// A request retried to the end is explained by what kept failing and
// what the registry said, not cut after net/url's "Put URL" at the
// 200 runes of a name: the registry's words are the part to read.
func TestExplainRetriesExhausted(t *testing.T) {
	said := "the registry said MANIFEST_BLOB_UNKNOWN: blob unknown to registry (sha256:" + strings.Repeat("ab", 32) + ")"
	u := "http://127.0.0.1:5000/v2/" + strings.Repeat("long/", 20) + "x/manifests/1"
	err := registry.Explain("127.0.0.1:5000/x:1", &url.Error{Op: "Put", URL: u,
		Err: fmt.Errorf("%w: HTTP 500 Internal Server Error after 5 tries: %s", errdef.ErrRetriesExhausted, said)})
	if !errors.Is(err, errdef.ErrRetriesExhausted) {
		t.Errorf("%v is not ErrRetriesExhausted", err)
	}
	msg := err.Error()
	if !strings.HasSuffix(msg, said) || strings.Contains(msg, u) {
		t.Errorf("%q\nwant it to end with %q, without the request's URL", msg, said)
	}
	var re *registry.Error
	if !errors.As(err, &re) || !strings.Contains(re.Detail(), "Put") {
		t.Errorf("the request is not in the detail: %#v", err)
	}
}
