package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// evilRegistry is a registry on 127.0.0.1 that serves what a test crafted:
// manifests by tag or digest, and blobs that may be endless.
type evilRegistry struct {
	mu        sync.Mutex        // the server reads what the test writes
	manifests map[string][]byte // "repo/tag" or "repo/sha256:..." -> manifest
	blobs     map[string]http.HandlerFunc
	srv       *httptest.Server
}

// blob serves h for digest d.
func (r *evilRegistry) blob(d string, h http.HandlerFunc) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.blobs[d] = h
}

func newEvilRegistry(t *testing.T) *evilRegistry {
	r := &evilRegistry{manifests: map[string][]byte{}, blobs: map[string]http.HandlerFunc{}}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.srv.Close)
	return r
}

// host is the registry's host:port.
func (r *evilRegistry) host() string { return strings.TrimPrefix(r.srv.URL, "http://") }

// manifest serves m as repo:tag and by digest.
func (r *evilRegistry) manifest(repo, tag string, m any) {
	b, err := json.Marshal(m)
	if err != nil {
		panic(err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.manifests[repo+"/"+tag] = b
	r.manifests[repo+"/"+sha(b).String()] = b
}

func (r *evilRegistry) serve(w http.ResponseWriter, req *http.Request) {
	p := strings.TrimPrefix(req.URL.Path, "/v2/")
	switch {
	case req.URL.Path == "/v2/":
		w.WriteHeader(http.StatusOK)
	case strings.Contains(p, "/manifests/"):
		repo, ref, _ := strings.Cut(p, "/manifests/")
		r.mu.Lock()
		b, ok := r.manifests[repo+"/"+ref]
		r.mu.Unlock()
		if !ok {
			http.Error(w, `{"errors":[{"code":"MANIFEST_UNKNOWN"}]}`, http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", string(types.OCIManifestSchema1))
		w.Header().Set("Docker-Content-Digest", sha(b).String())
		w.Header().Set("Content-Length", fmt.Sprint(len(b)))
		if req.Method != http.MethodHead {
			w.Write(b)
		}
	case strings.Contains(p, "/blobs/"):
		_, d, _ := strings.Cut(p, "/blobs/")
		r.mu.Lock()
		h, ok := r.blobs[d]
		r.mu.Unlock()
		if !ok {
			http.Error(w, `{"errors":[{"code":"BLOB_UNKNOWN"}]}`, http.StatusNotFound)
			return
		}
		h(w, req)
	default:
		http.NotFound(w, req)
	}
}

// endless answers with a chunked body that never ends (until the client
// goes, or 8 GiB, so that a broken test cannot fill the machine).
func endless(w http.ResponseWriter, req *http.Request) {
	w.Header().Set("Content-Type", "application/octet-stream")
	chunk := bytes.Repeat([]byte("{"), 1<<20)
	for i := 0; i < 8<<10; i++ {
		if req.Context().Err() != nil {
			return
		}
		if _, err := w.Write(chunk); err != nil {
			return
		}
	}
}

func sha(b []byte) v1.Hash {
	s := sha256.Sum256(b)
	return v1.Hash{Algorithm: "sha256", Hex: hex.EncodeToString(s[:])}
}

// fakeHash is a digest that no blob has, for descriptors nobody should fetch.
func fakeHash(i int) v1.Hash { return sha([]byte(fmt.Sprint("fake", i))) }

type peakResult struct {
	hostileCLIResult
	peak int64 // bytes above the start-up RSS (startupRSS)
}

// runPeak runs the binary and reads its peak RSS from /proc while it runs.
func runPeak(t *testing.T, dir string, env []string, args ...string) peakResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary(t), args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	status := fmt.Sprintf("/proc/%d/status", cmd.Process.Pid)
	var r peakResult
	var err error
	for waiting := true; waiting; {
		select {
		case err = <-done:
			waiting = false
		case <-time.After(5 * time.Millisecond):
			r.peak = max(r.peak, vmHWM(status))
		}
	}
	r.stdout, r.stderr, r.took = stdout.String(), stderr.String(), time.Since(start)
	// What the input cost: the budgets are above the start-up RSS.
	r.peak = max(0, r.peak-startupRSS(t))
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	default:
		t.Fatalf("addonpkg %v: %v", args, err)
	}
	return r
}

// checkRefused asserts exit 1, one line on stderr holding every want,
// nothing on stdout, and a peak RSS under maxRSS.
func checkRefused(t *testing.T, r peakResult, maxRSS int64, want ...string) {
	t.Helper()
	t.Logf("exit %d in %v, peak RSS %.1f MiB: %s", r.code, r.took.Round(time.Millisecond), float64(r.peak)/(1<<20), strings.TrimSpace(r.stderr))
	if r.code != 1 {
		t.Errorf("exit %d, want 1", r.code)
	}
	if strings.Count(r.stderr, "\n") != 1 || !strings.HasPrefix(r.stderr, "addonpkg: ") {
		t.Errorf("stderr is not one line: %q", r.stderr)
	}
	for _, w := range want {
		if !strings.Contains(r.stderr, w) {
			t.Errorf("stderr does not mention %q", w)
		}
	}
	if r.stdout != "" {
		t.Errorf("stdout %q", r.stdout)
	}
	if r.peak > maxRSS {
		t.Errorf("peak RSS %.1f MiB, want under %.1f MiB", float64(r.peak)/(1<<20), float64(maxRSS)/(1<<20))
	}
}

// Issue 11, findings 1 and 3: sizes from a registry decide no allocation,
// and a manifest's layer count is bounded before any per-layer work.
func TestHostileRegistry(t *testing.T) {
	t.Parallel()
	binary(t)
	reg := newEvilRegistry(t)
	cfg := []byte(`{"architecture":"amd64","os":"linux","rootfs":{"type":"layers","diff_ids":[]},"config":{}}`)
	reg.blob(sha(cfg).String(), func(w http.ResponseWriter, _ *http.Request) { w.Write(cfg) })
	endlessCfg := fakeHash(-1)
	reg.blob(endlessCfg.String(), endless)
	real := hostileCLIOne(t, hostileCLIFile("addon/a.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n"))
	reg.blob(real.digest.String(), func(w http.ResponseWriter, _ *http.Request) { w.Write(real.blob) })
	layer := v1.Descriptor{MediaType: types.OCILayer, Digest: real.digest, Size: real.size}
	for _, size := range []int64{-1, 1 << 30, 7 << 20} {
		reg.manifest("evil", fmt.Sprintf("cfg%d", size), v1.Manifest{
			SchemaVersion: 2, MediaType: types.OCIManifestSchema1,
			Config: v1.Descriptor{MediaType: types.OCIConfigJSON, Digest: endlessCfg, Size: size},
			Layers: []v1.Descriptor{layer},
		})
	}
	many := make([]v1.Descriptor, 100_000)
	for i := range many {
		many[i] = v1.Descriptor{MediaType: types.OCILayer, Digest: fakeHash(i), Size: 100}
	}
	reg.manifest("evil", "layers", v1.Manifest{
		SchemaVersion: 2, MediaType: types.OCIManifestSchema1,
		Config: v1.Descriptor{MediaType: types.OCIConfigJSON, Digest: sha(cfg), Size: int64(len(cfg))},
		Layers: many,
	})

	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"config of unknown size, endless body", []string{"unpack", "/evil:cfg-1", "-o", "out"}, []string{"config size limit of 8388608 exceeded"}},
		{"config claiming 1 GiB", []string{"unpack", "/evil:cfg1073741824", "-o", "out"}, []string{"config size limit of 8388608 exceeded (1073741824 bytes)"}},
		{"config claiming 7 MiB, endless body", []string{"unpack", "/evil:cfg7340032"}, []string{"config", "sha256"}},
		{"pull: config of unknown size", []string{"pull", "/evil:cfg-1"}, []string{"config size limit of 8388608 exceeded"}},
		{"inspect: config of unknown size", []string{"inspect", "/evil:cfg-1"}, []string{"config size limit of 8388608 exceeded"}},
		{"unpack: 100,000 layers", []string{"unpack", "/evil:layers", "-o", "out"}, []string{"layer count limit of 1000 exceeded", "--max-layers"}},
		{"pull: 100,000 layers", []string{"pull", "/evil:layers"}, []string{"layer count limit of 1000 exceeded", "--max-layers"}},
		{"inspect-free copy: 100,000 layers", []string{"copy", "/evil:layers", "oci:copy:1"}, []string{"layer count limit of 1000 exceeded"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			args := append([]string(nil), tc.args...)
			args[1] = reg.host() + args[1]
			r := runPeak(t, dir, []string{"ADDONPKG_HOME=" + filepath.Join(dir, "home")}, args...)
			checkRefused(t, r, 256<<20, tc.want...)
			for _, leftover := range []string{"out", "copy"} {
				if _, err := os.Stat(filepath.Join(dir, leftover)); err == nil {
					t.Errorf("%s was written", leftover)
				}
			}
		})
	}
}
