package main

import (
	"encoding/pem"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	ggcrregistry "github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"

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
	inner := ggcrregistry.New(ggcrregistry.Logger(log.New(io.Discard, "", 0)))
	stop := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/blobs/sha256:") {
			conn, bw, err := w.(http.Hijacker).Hijack()
			if err != nil {
				return
			}
			defer conn.Close()
			bw.WriteString("HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nabcd\r\n")
			bw.Flush()
			<-stop
			return
		}
		inner.ServeHTTP(w, r)
	}))
	defer srv.Close()
	defer close(stop)
	img, err := random.Image(512, 1)
	if err != nil {
		t.Fatal(err)
	}
	host := strings.TrimPrefix(srv.URL, "http://")
	ref, _ := registry.Options{}.ParseReference(host + "/addons/x:1")
	if err := remote.Write(ref, img, remote.WithAuthFromKeychain(authn.NewMultiKeychain())); err != nil {
		t.Fatal(err)
	}
	t.Setenv("DOCKER_CONFIG", t.TempDir())
	r := cliRun(t, "pull", "--timeout", "1s", "--retries", "-1", host+"/addons/x:1")
	checkCLIOneLine(t, r, host, "timed out after 1s", "--timeout")
}
