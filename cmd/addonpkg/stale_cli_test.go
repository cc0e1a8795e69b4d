package main

import (
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	ggcrregistry "github.com/google/go-containerregistry/pkg/registry"
)

// stalledUnpack is an `addonpkg unpack -o` process stopped inside its
// layer download, so its temp directory exists.
type stalledUnpack struct {
	cmd  *exec.Cmd
	done chan struct{}
}

// kill sends SIGKILL and waits for the process to be gone.
func (s *stalledUnpack) kill(t *testing.T) {
	t.Helper()
	if err := s.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-s.done
	if ws, ok := s.cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
		t.Fatalf("unpack was not killed: %v", s.cmd.ProcessState)
	}
}

func outTemps(t *testing.T, out string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(filepath.Dir(out), "."+filepath.Base(out)+".tmp-*"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// A SIGKILLed `unpack -o DIR` leaves .DIR.tmp-*; the next unpack to the
// same DIR removes it, but not the one of an unpack still running
// (issue 11, finding 12).
func TestCLIUnpackAfterKilledUnpack(t *testing.T) {
	t.Parallel()
	home := cliNewHome(t)
	var stallPath atomic.Value // a layer's URL path: requests for it hang
	stallPath.Store("")
	arrived := make(chan struct{}, 4)
	release := make(chan struct{})
	reg := ggcrregistry.New(ggcrregistry.Logger(log.New(io.Discard, "", 0)))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p := stallPath.Load().(string); p != "" && r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, p) {
			arrived <- struct{}{}
			select {
			case <-r.Context().Done():
			case <-release:
			}
			return
		}
		reg.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) }) // runs first: lets srv.Close finish

	ref := strings.TrimPrefix(srv.URL, "http://") + "/addons/coredns:1"
	cliMust(t, "build", cliExampleDir("coredns"), "-t", "coredns:1")
	want := filepath.Join(t.TempDir(), "want")
	cliMust(t, "unpack", "coredns:1", "-o", want)
	cliMust(t, "push", "-q", "coredns:1", ref)
	_, _, layer := storeCLIBlobs(t, home, "coredns:1")
	stallPath.Store("/blobs/" + layer.String())

	out := filepath.Join(t.TempDir(), "out")
	bin := binary(t)
	start := func() *stalledUnpack {
		t.Helper()
		before := outTemps(t, out)
		cmd := exec.Command(bin, "unpack", "--pull", "always", ref, "-o", out)
		cmd.Env = append(os.Environ(), "ADDONPKG_HOME="+home)
		s := &stalledUnpack{cmd: cmd, done: make(chan struct{})}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		go func() { _ = cmd.Wait(); close(s.done) }()
		select {
		case <-arrived:
		case <-s.done:
			t.Fatalf("unpack ended before it fetched the layer: %v", cmd.ProcessState)
		}
		if got := outTemps(t, out); len(got) != len(before)+1 {
			t.Fatalf("temp directories while unpacking: %q, had %q", got, before)
		}
		return s
	}

	// One unpack keeps running; another one is killed.
	live := start()
	t.Cleanup(func() { live.kill(t) })
	liveTemp := outTemps(t, out)
	killed := start()
	temps := outTemps(t, out)
	killed.kill(t)
	if got := outTemps(t, out); len(got) != 2 || !slices.Equal(got, temps) {
		t.Fatalf("temp directories after the kill: %q, want both %q", got, temps)
	}

	stallPath.Store("")
	cliMust(t, "unpack", "--pull", "always", ref, "-o", out)
	cliSameTree(t, want, out)
	if got := outTemps(t, out); !slices.Equal(got, liveTemp) {
		t.Errorf("temp directories after the next unpack: %q, want only the running unpack's %q", got, liveTemp)
	}
}
