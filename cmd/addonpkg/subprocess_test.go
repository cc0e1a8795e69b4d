package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/addonpkg/addonpkg/internal/testing/addonpkgbin"
	"github.com/addonpkg/addonpkg/internal/testing/kubeenv"
	"github.com/addonpkg/addonpkg/pkg/signature"
)

var (
	binOnce sync.Once
	binDir  string // what binary made, removed by TestMain
	binPath string
	binErr  error
)

// binary is the addonpkg binary for tests that need a real process (peak
// memory, peers reading what it writes): make test's prebuilt one
// (addonpkgbin.Env), or else one built once, which TestMain removes
// once every test ran.
//
// It points klog where the command does first: the tests run the command
// in this process (run), whose first run sets klog's logger, which klog
// lets be set only while nothing logs, and the shared API server's
// namespace finalizer (kubeenv.Shared) logs through client-go from a
// goroutine of its own. A cluster test before the first in-process run
// (-run picking them, -shuffle) made that first run a data race, which
// fails the test under -race.
//
// SOURCE_DATE_EPOCH, which sets the times build writes, and the signing
// key's password (the tests' keys have none) are cleared for every test,
// once, rather than by each: t.Setenv would keep a test serial.
func TestMain(m *testing.M) {
	routeKlog()
	os.Unsetenv("SOURCE_DATE_EPOCH")
	os.Unsetenv(signature.PasswordEnv)
	code := m.Run()
	kubeenv.StopShared()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

func binary(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "addonpkg-bin-")
		if err != nil {
			binErr = err
			return
		}
		binDir = dir
		binPath, binErr = addonpkgbin.Path(filepath.Join("..", ".."), dir)
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

// lookTool finds a peer tool in the repository's bin/ or on PATH. Missing
// tools fail the test under CI and skip it elsewhere.
func lookTool(t *testing.T, name string) string {
	t.Helper()
	if p, err := filepath.Abs(filepath.Join("..", "..", "bin", name)); err == nil {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	msg := name + " is not installed: run hack/install-deps.sh"
	if os.Getenv("CI") != "" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

func runTool(t *testing.T, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, stderr.String())
	}
	return stdout.String()
}
