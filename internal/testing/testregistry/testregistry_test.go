package testregistry

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
)

var allModes = []Mode{Plain, TLS, BasicAuth, TLSBasicAuth}

// TestModes starts one registry per mode (in parallel, which also exercises
// the free-port handling) and checks /v2/ plus a full push/pull round trip.
func TestModes(t *testing.T) {
	Require(t)
	for _, mode := range allModes {
		t.Run(mode.String(), func(t *testing.T) {
			t.Parallel()
			r := Start(t, Options{Mode: mode})
			checkRegistryFields(t, r, mode)
			checkV2(t, r, mode)
			pushPull(t, r, mode)
		})
	}
}

func checkRegistryFields(t *testing.T, r *Registry, mode Mode) {
	t.Helper()
	host, _, err := net.SplitHostPort(r.Host)
	if err != nil || host != "127.0.0.1" {
		t.Errorf("Host = %q, want 127.0.0.1:PORT", r.Host)
	}
	wantURL := "http://" + r.Host
	if mode.useTLS() {
		wantURL = "https://" + r.Host
	}
	if r.URL != wantURL {
		t.Errorf("URL = %q, want %q", r.URL, wantURL)
	}
	if mode.useTLS() {
		if r.CAFile == "" || r.CertPool == nil {
			t.Errorf("TLS mode: CAFile = %q, CertPool = %v; want both set", r.CAFile, r.CertPool)
		} else if _, err := os.Stat(r.CAFile); err != nil {
			t.Errorf("CAFile: %v", err)
		}
	} else if r.CAFile != "" || r.CertPool != nil {
		t.Errorf("plain mode: CAFile = %q, CertPool = %v; want empty", r.CAFile, r.CertPool)
	}
	if mode.useAuth() {
		if r.Username != DefaultUsername || r.Password != DefaultPassword {
			t.Errorf("credentials = %q/%q, want defaults %q/%q", r.Username, r.Password, DefaultUsername, DefaultPassword)
		}
	} else if r.Username != "" || r.Password != "" {
		t.Errorf("no-auth mode: credentials = %q/%q, want empty", r.Username, r.Password)
	}
	if fi, err := os.Stat(r.Dir); err != nil || !fi.IsDir() {
		t.Errorf("Dir %q is not a directory: %v", r.Dir, err)
	}
}

func getV2(t *testing.T, r *Registry, user, pass string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, r.URL+"/v2/", nil)
	if err != nil {
		t.Fatal(err)
	}
	if user != "" {
		req.SetBasicAuth(user, pass)
	}
	resp, err := (&http.Client{Transport: r.Transport(), Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		t.Fatalf("GET /v2/: %v", err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}

func checkV2(t *testing.T, r *Registry, mode Mode) {
	t.Helper()
	if !mode.useAuth() {
		if got := getV2(t, r, "", ""); got != http.StatusOK {
			t.Errorf("GET /v2/ = %d, want 200", got)
		}
	} else {
		if got := getV2(t, r, "", ""); got != http.StatusUnauthorized {
			t.Errorf("GET /v2/ without credentials = %d, want 401", got)
		}
		if got := getV2(t, r, r.Username, "wrong-"+r.Password); got != http.StatusUnauthorized {
			t.Errorf("GET /v2/ with wrong password = %d, want 401", got)
		}
		if got := getV2(t, r, r.Username, r.Password); got != http.StatusOK {
			t.Errorf("GET /v2/ with credentials = %d, want 200", got)
		}
	}
	if mode.useTLS() {
		// Without the CA the handshake must fail: proves TLS is really on
		// and that Transport is what makes it trusted.
		c := &http.Client{Transport: &http.Transport{Proxy: nil}, Timeout: 10 * time.Second}
		if resp, err := c.Get(r.URL + "/v2/"); err == nil {
			resp.Body.Close()
			t.Errorf("GET %s/v2/ without CA succeeded, want certificate error", r.URL)
		}
	}
}

func refOptions(r *Registry) []name.Option {
	if r.CertPool == nil {
		return []name.Option{name.Insecure}
	}
	return nil
}

func remoteOptions(r *Registry) []remote.Option {
	opts := []remote.Option{remote.WithTransport(r.Transport())}
	if r.Username != "" {
		opts = append(opts, remote.WithAuth(&authn.Basic{Username: r.Username, Password: r.Password}))
	}
	return opts
}

func pushPull(t *testing.T, r *Registry, mode Mode) {
	t.Helper()
	img, err := random.Image(1024, 2)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := name.ParseReference(r.Host+"/testregistry/"+strings.ToLower(mode.String())+":v1", refOptions(r)...)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(ref, img, remoteOptions(r)...); err != nil {
		t.Fatalf("push %s: %v", ref, err)
	}

	pulled, err := remote.Image(ref, remoteOptions(r)...)
	if err != nil {
		t.Fatalf("pull %s: %v", ref, err)
	}
	want, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	got, err := pulled.Digest()
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Errorf("pulled digest %s, pushed %s", got, want)
	}
	checkLayers(t, img, pulled)

	if mode.useAuth() {
		// Pulling without credentials must be refused.
		_, err := remote.Image(ref, remote.WithTransport(r.Transport()))
		var terr *transport.Error
		if !errors.As(err, &terr) || terr.StatusCode != http.StatusUnauthorized {
			t.Errorf("anonymous pull: err = %v, want 401", err)
		}
	}
}

// checkLayers downloads every pulled layer and verifies its content against
// the pushed layer digests, so the blobs (not just the manifest) round-trip.
func checkLayers(t *testing.T, pushed, pulled v1.Image) {
	t.Helper()
	wantLayers, err := pushed.Layers()
	if err != nil {
		t.Fatal(err)
	}
	gotLayers, err := pulled.Layers()
	if err != nil {
		t.Fatal(err)
	}
	if len(gotLayers) != len(wantLayers) {
		t.Fatalf("pulled %d layers, pushed %d", len(gotLayers), len(wantLayers))
	}
	for i, l := range gotLayers {
		want, err := wantLayers[i].Digest()
		if err != nil {
			t.Fatal(err)
		}
		rc, err := l.Compressed()
		if err != nil {
			t.Fatalf("layer %d: %v", i, err)
		}
		h := sha256.New()
		_, err = io.Copy(h, rc)
		rc.Close()
		if err != nil {
			t.Fatalf("layer %d: reading: %v", i, err)
		}
		if got := "sha256:" + hex.EncodeToString(h.Sum(nil)); got != want.String() {
			t.Errorf("layer %d content digest %s, want %s", i, got, want)
		}
	}
}

// TestCustomCredentials checks that Options.Username/Password override the
// defaults.
func TestCustomCredentials(t *testing.T) {
	Require(t)
	t.Parallel()
	r := Start(t, Options{Mode: BasicAuth, Username: "alice", Password: "correct horse"})
	if r.Username != "alice" || r.Password != "correct horse" {
		t.Fatalf("credentials = %q/%q", r.Username, r.Password)
	}
	if got := getV2(t, r, "alice", "correct horse"); got != http.StatusOK {
		t.Errorf("GET /v2/ with custom credentials = %d, want 200", got)
	}
	if got := getV2(t, r, DefaultUsername, DefaultPassword); got != http.StatusUnauthorized {
		t.Errorf("GET /v2/ with default credentials = %d, want 401", got)
	}
}

// TestDeleteEnabled checks that Options.DeleteEnabled toggles
// storage.delete.enabled.
func TestDeleteEnabled(t *testing.T) {
	Require(t)
	for _, enabled := range []bool{false, true} {
		t.Run(map[bool]string{false: "disabled", true: "enabled"}[enabled], func(t *testing.T) {
			t.Parallel()
			r := Start(t, Options{DeleteEnabled: enabled})
			img, err := random.Image(256, 1)
			if err != nil {
				t.Fatal(err)
			}
			ref, err := name.ParseReference(r.Host+"/testregistry/delete:v1", refOptions(r)...)
			if err != nil {
				t.Fatal(err)
			}
			if err := remote.Write(ref, img, remoteOptions(r)...); err != nil {
				t.Fatalf("push: %v", err)
			}
			d, err := img.Digest()
			if err != nil {
				t.Fatal(err)
			}
			err = remote.Delete(ref.Context().Digest(d.String()), remoteOptions(r)...)
			if enabled {
				if err != nil {
					t.Fatalf("delete: %v", err)
				}
				if _, err := remote.Image(ref, remoteOptions(r)...); err == nil {
					t.Errorf("pull after delete succeeded")
				}
			} else {
				var terr *transport.Error
				if !errors.As(err, &terr) || terr.StatusCode != http.StatusMethodNotAllowed {
					t.Errorf("delete with deletes disabled: err = %v, want 405", err)
				}
			}
		})
	}
}

// TestCleanup checks that the registry is stopped and its files removed when
// the test that started it ends.
func TestCleanup(t *testing.T) {
	Require(t)
	var r *Registry
	t.Run("start", func(t *testing.T) {
		r = Start(t, Options{Mode: TLSBasicAuth})
	})
	if r == nil {
		t.Fatal("Start did not return a registry")
	}
	if c, err := net.DialTimeout("tcp", r.Host, time.Second); err == nil {
		c.Close()
		t.Errorf("registry at %s still accepts connections after cleanup", r.Host)
	}
	for _, p := range []string{r.Dir, r.CAFile} {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s still exists after cleanup (err = %v)", p, err)
		}
	}
}

// TestStop checks that Stop stops the registry while the test runs (the
// air gap of e2e's TestAirgapWithImages), keeps its files, and that the
// cleanup's own stop after it is harmless.
func TestStop(t *testing.T) {
	Require(t)
	r := Start(t, Options{})
	if c, err := net.DialTimeout("tcp", r.Host, time.Second); err != nil {
		t.Fatalf("registry at %s does not accept connections: %v", r.Host, err)
	} else {
		c.Close()
	}
	r.Stop()
	if c, err := net.DialTimeout("tcp", r.Host, time.Second); err == nil {
		c.Close()
		t.Errorf("registry at %s still accepts connections after Stop", r.Host)
	}
	if _, err := os.Stat(r.Dir); err != nil {
		t.Errorf("storage gone after Stop: %v", err)
	}
	r.Stop() // a second Stop, then the cleanup's, do nothing
}

// helperDies names the variable that makes TestHelperDies start a
// registry, print its host and die without its cleanups.
const helperDies = "TESTREGISTRY_HELPER_DIES"

// TestHelperDies is the test binary of TestDiesWithTestBinary.
func TestHelperDies(t *testing.T) {
	if os.Getenv(helperDies) == "" {
		t.Skip("run by TestDiesWithTestBinary")
	}
	r := Start(t, Options{})
	fmt.Println("host", r.Host)
	os.Exit(1) // as a test binary killed mid-test: no cleanup runs
}

// TestDiesWithTestBinary: a registry does not outlive the test binary
// that started it when that binary dies without stopping it.
func TestDiesWithTestBinary(t *testing.T) {
	Require(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperDies$")
	// The helper dies before its cleanups: what it leaves is under this
	// test's own temporary directory.
	cmd.Env = append(os.Environ(), helperDies+"=1", "TMPDIR="+t.TempDir())
	out, _ := cmd.Output()
	host, ok := strings.CutPrefix(strings.TrimSpace(string(out)), "host ")
	if !ok || strings.Contains(host, "\n") {
		t.Fatalf("the helper printed %q", out)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", host, time.Second)
		if err != nil {
			return
		}
		c.Close()
		if time.Now().After(deadline) {
			t.Fatalf("the registry at %s outlived the test binary that started it", host)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestStartFailureOutput checks that a registry that cannot start is
// reported with its output instead of a bare timeout; the broken "binary"
// is a shell script so no real registry is involved.
func TestStartFailureOutput(t *testing.T) {
	t.Setenv(binEnv, fakeRegistry(t, "echo 'fake registry: configuration error' >&2; exit 1"))
	ft := &fakeTB{TB: t}
	ft.run(func(tb testing.TB) { Start(tb, Options{}) })
	if !ft.failed {
		t.Fatal("Start with a failing binary did not fail the test")
	}
	if want := "fake registry: configuration error"; !strings.Contains(ft.msg, want) {
		t.Errorf("failure message %q does not contain registry output %q", ft.msg, want)
	}
}

// TestStartRetriesPortInUse checks that Start picks a new port when the
// registry reports the port as taken, and gives up after startAttempts.
func TestStartRetriesPortInUse(t *testing.T) {
	t.Setenv(binEnv, fakeRegistry(t, "echo 'listen tcp 127.0.0.1:1: bind: address already in use' >&2; exit 1"))
	ft := &fakeTB{TB: t}
	ft.run(func(tb testing.TB) { Start(tb, Options{}) })
	if !ft.failed || !strings.Contains(ft.msg, "attempts") {
		t.Fatalf("failed = %v, msg = %q; want failure after retries", ft.failed, ft.msg)
	}
	if got, want := len(ft.logs), startAttempts; got != want {
		t.Errorf("logged %d retries, want %d: %q", got, want, ft.logs)
	}
}

// TestRequireMissing checks that a missing binary skips locally but fails
// in CI, with the install hint in both cases.
func TestRequireMissing(t *testing.T) {
	t.Setenv(binEnv, "")
	t.Setenv("PATH", t.TempDir())
	for _, ci := range []string{"", "true"} {
		t.Setenv("CI", ci)
		ft := &fakeTB{TB: t}
		ft.run(Require)
		if ci == "" && (!ft.skipped || ft.failed) {
			t.Errorf("CI=%q: skipped = %v, failed = %v; want skip", ci, ft.skipped, ft.failed)
		}
		if ci != "" && (!ft.failed || ft.skipped) {
			t.Errorf("CI=%q: skipped = %v, failed = %v; want failure", ci, ft.skipped, ft.failed)
		}
		if ft.msg != missingMsg {
			t.Errorf("CI=%q: message %q, want %q", ci, ft.msg, missingMsg)
		}
	}
}

// fakeRegistry writes a shell script standing in for the registry binary.
func fakeRegistry(t *testing.T, body string) string {
	t.Helper()
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("needs /bin/sh")
	}
	path := filepath.Join(t.TempDir(), "fake-registry")
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// fakeTB records failures instead of failing the real test, so that
// Start's failure path can itself be tested.
type fakeTB struct {
	testing.TB
	mu       sync.Mutex
	failed   bool
	skipped  bool
	msg      string
	logs     []string
	cleanups []func()
}

func (f *fakeTB) Helper() {}

func (f *fakeTB) Logf(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.logs = append(f.logs, fmt.Sprintf(format, args...))
}

func (f *fakeTB) Fatalf(format string, args ...any) {
	f.mu.Lock()
	f.failed = true
	f.msg = fmt.Sprintf(format, args...)
	f.mu.Unlock()
	runtime.Goexit()
}

func (f *fakeTB) Skip(args ...any) {
	f.mu.Lock()
	f.skipped = true
	f.msg = fmt.Sprint(args...)
	f.mu.Unlock()
	runtime.Goexit()
}

// run calls fn with f in a separate goroutine, because Fatalf and Skip end
// the calling goroutine like the real ones do, then runs the cleanups.
func (f *fakeTB) run(fn func(testing.TB)) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn(f)
	}()
	<-done
	f.runCleanups()
}

func (f *fakeTB) Failed() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.failed
}

func (f *fakeTB) Cleanup(fn func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cleanups = append(f.cleanups, fn)
}

func (f *fakeTB) runCleanups() {
	f.mu.Lock()
	fns := f.cleanups
	f.cleanups = nil
	f.mu.Unlock()
	for i := len(fns) - 1; i >= 0; i-- {
		fns[i]()
	}
}
