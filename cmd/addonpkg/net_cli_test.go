package main

import (
	"encoding/base64"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/addonpkg/addonpkg/internal/testing/testregistry"
	"github.com/addonpkg/addonpkg/pkg/registry"
)

// checkCLIOneLine asserts a failed run: exit 1, one line on stderr that
// says every want.
func checkCLIOneLine(t *testing.T, r cliOutcome, wants ...string) {
	t.Helper()
	if r.code != 1 {
		t.Errorf("exit %d, want 1", r.code)
	}
	if strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 || r.stderr == "" {
		t.Errorf("stderr is not one line: %q", r.stderr)
	}
	for _, w := range wants {
		if !strings.Contains(r.stderr, w) {
			t.Errorf("stderr does not say %q: %q", w, r.stderr)
		}
	}
}

// An http source's credentials (user:password in the URL) reach its
// origin, and not the other port it redirects to.
func TestCLIHTTPCredentialsOrigin(t *testing.T) {
	cliNewHome(t)
	var mu sync.Mutex
	var leaked []string
	other := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if a := r.Header.Get("Authorization"); a != "" {
			mu.Lock()
			leaked = append(leaked, a)
			mu.Unlock()
		}
		io.WriteString(w, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n")
	}))
	defer other.Close()
	origin := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != "alice" || p != "s3cret" {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		http.Redirect(w, r, other.URL+"/addon.yaml", http.StatusFound)
	}))
	defer origin.Close()
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: origin.Certificate().Raw}), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("NETRC", filepath.Join(t.TempDir(), "none"))
	src := strings.Replace(origin.URL, "https://", "https://alice:s3cret@", 1) + "/private/addon.yaml"
	out := cliMust(t, "unpack", "--ca-file", ca, src)
	if !strings.Contains(out, "kind: ConfigMap") {
		t.Errorf("unexpected output: %q", out)
	}
	if len(leaked) != 0 {
		t.Errorf("the server on another port got credentials: %q", leaked)
	}

	// In clear to a host that is not loopback: refused, nothing sent.
	r := cliRun(t, "unpack", "--plain-http", "http://alice:s3cret@addons.example.test/addon.yaml")
	checkCLIOneLine(t, r, "http://addons.example.test/addon.yaml", "refused")
	if strings.Contains(r.stderr, "s3cret") {
		t.Errorf("stderr shows the password: %q", r.stderr)
	}
}

// A registry blob whose chunked body stalls fails the pull after
// --timeout, with one line naming the blob, the timeout and the flag.
func TestCLIRegistryChunkedStall(t *testing.T) {
	cliNewHome(t)
	host := testregistry.StallingBlobs(t)
	img, err := random.Image(512, 1)
	if err != nil {
		t.Fatal(err)
	}
	ref, _ := registry.Options{}.ParseReference(host + "/addons/x:1")
	if err := remote.Write(ref, img, remote.WithAuthFromKeychain(authn.NewMultiKeychain())); err != nil {
		t.Fatal(err)
	}
	t.Setenv("DOCKER_CONFIG", t.TempDir())
	r := cliRun(t, "pull", "--timeout", "1s", "--retries", "-1", host+"/addons/x:1")
	checkCLIOneLine(t, r, host, "timed out after 1s", "--timeout")
}

// A real registry (CNCF Distribution) that wants basic auth, behind a
// front on 127.0.0.1 that redirects blob GETs to a storage server on
// another port, as registries backed by object storage do: pull with the
// docker config's credentials works, and the storage server never sees
// them (net/http would copy them to any port of the same host name).
func TestCLIRegistryCredentialsNotRedirected(t *testing.T) {
	cliNewHome(t)
	reg := testregistry.Start(t, testregistry.Options{Mode: testregistry.BasicAuth})
	target, err := url.Parse(reg.URL)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var storageAuth []string
	storage := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		storageAuth = append(storageAuth, r.Header.Get("Authorization"))
		mu.Unlock()
		// Storage has its own access to the blobs.
		r.SetBasicAuth(testregistry.DefaultUsername, testregistry.DefaultPassword)
		httputil.NewSingleHostReverseProxy(target).ServeHTTP(w, r)
	}))
	defer storage.Close()
	proxy := httputil.NewSingleHostReverseProxy(target)
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, _, ok := r.BasicAuth(); ok && r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/blobs/sha256:") {
			http.Redirect(w, r, storage.URL+r.URL.Path, http.StatusTemporaryRedirect)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	defer front.Close()
	frontHost := strings.TrimPrefix(front.URL, "http://")

	img, err := random.Image(2048, 2)
	if err != nil {
		t.Fatal(err)
	}
	auth := &authn.Basic{Username: testregistry.DefaultUsername, Password: testregistry.DefaultPassword}
	ref, _ := registry.Options{}.ParseReference(reg.Host + "/addons/x:1")
	if err := remote.Write(ref, img, remote.WithAuth(auth)); err != nil {
		t.Fatal(err)
	}
	cfg := t.TempDir()
	basic := base64.StdEncoding.EncodeToString([]byte(testregistry.DefaultUsername + ":" + testregistry.DefaultPassword))
	if err := os.WriteFile(filepath.Join(cfg, "config.json"), []byte(`{"auths":{"`+frontHost+`":{"auth":"`+basic+`"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("DOCKER_CONFIG", cfg)
	want, _ := img.Digest()
	out := cliMust(t, "pull", "-q", frontHost+"/addons/x:1")
	if !strings.Contains(out, want.String()) {
		t.Errorf("pull printed %q, want %s", out, want)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(storageAuth) == 0 {
		t.Fatal("no blob went through the storage redirect")
	}
	for _, a := range storageAuth {
		if a != "" {
			t.Errorf("the storage server on another port got credentials: %q", a)
		}
	}
}

// --retries 0 sends a request once, as the count says (the registry
// options read 0 as their default: it retried 4 times, 5 requests); a
// --timeout of 0 or less, which waited 60s or forever, and a --retries
// below -1 are usage errors naming the flag.
func TestCLIRetriesAndTimeoutFlags(t *testing.T) {
	cliNewHome(t)
	t.Setenv("DOCKER_CONFIG", t.TempDir())
	var mu sync.Mutex
	n := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		n++
		mu.Unlock()
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	for retries, want := range map[string]int{"0": 1, "-1": 1, "1": 2} {
		mu.Lock()
		n = 0
		mu.Unlock()
		r := cliRun(t, "ls", "--retries", retries, host+"/addons/x")
		mu.Lock()
		got := n
		mu.Unlock()
		if r.code != 1 || got != want {
			t.Errorf("ls --retries %s: exit %d, %d requests, want exit 1 and %d (stderr %q)", retries, r.code, got, want, r.stderr)
		}
	}
	for _, args := range [][]string{
		{"--timeout", "0"}, {"--timeout", "-1s"}, {"--timeout", "soon"}, {"--retries", "-2"},
	} {
		r := cliRun(t, append([]string{"ls", host + "/addons/x"}, args...)...)
		want := "addonpkg: ls: invalid argument \"" + args[1] + "\" for \"" + args[0] + "\" flag: "
		if r.code != 1 || !strings.HasPrefix(r.stderr, want) || strings.Count(r.stderr, "\n") != 2 {
			t.Errorf("ls %s: exit %d, stderr %q; want a usage error starting %q", strings.Join(args, " "), r.code, r.stderr, want)
		}
	}
}

// A plain-HTTP registry on 127.0.0.1 that keeps answering 503 is
// reported as failing, not as "speaks plain HTTP, not HTTPS; add
// --plain-http": plain HTTP is automatic there and was used (the HTTPS
// attempt before it got an HTTP answer), and the advice was given even
// with --plain-http.
func TestCLIFailingPlainRegistryNotAskedForPlainHTTP(t *testing.T) {
	cliNewHome(t)
	t.Setenv("DOCKER_CONFIG", t.TempDir())
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	for _, args := range [][]string{
		{"ls", host + "/addons/x", "--retries", "1"},
		{"ls", host + "/addons/x", "--retries", "1", "--plain-http"},
		{"pull", host + "/addons/x:1", "--retries", "1"},
	} {
		r := cliRun(t, args...)
		if strings.Contains(r.stderr, "plain-http") || strings.Contains(r.stderr, "speaks plain HTTP") || !strings.Contains(r.stderr, "503") {
			t.Errorf("addonpkg %s: stderr %q: want the 503, not plain HTTP", strings.Join(args, " "), r.stderr)
		}
		checkCLIOneLine(t, r, host)
	}
}
