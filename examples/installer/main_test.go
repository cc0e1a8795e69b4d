package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/addonpkg/addonpkg/pkg/addonset"
)

// TestInstall runs the installer on examples/addon-set: the stream holds
// the three members in dependency order. A copy of the set with a changed
// entry is refused as stale, and one without a lock as unlocked, before
// anything is written.
func TestInstall(t *testing.T) {
	ctx := context.Background()
	var out bytes.Buffer
	if err := install(ctx, "../addon-set/addons.yaml", "", &out); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, line := range strings.Split(out.String(), "\n") {
		if n, ok := strings.CutPrefix(line, addonset.MemberMarker); ok {
			names = append(names, n)
		}
	}
	if got := strings.Join(names, " "); got != "coredns gateway-api-crds metrics-server" {
		t.Errorf("members %q, want coredns gateway-api-crds metrics-server", got)
	}

	// The declaration changed after it was locked.
	decl, err := os.ReadFile("../addon-set/addons.yaml")
	if err != nil {
		t.Fatal(err)
	}
	lock, err := os.ReadFile("../addon-set/addons.lock")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "addon-set")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	changed := strings.Replace(string(decl), "source: ../coredns", "source: ../coredns\n    platform: linux/amd64", 1)
	for name, b := range map[string][]byte{"addons.yaml": []byte(changed), "addons.lock": lock} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out.Reset()
	err = install(ctx, filepath.Join(dir, "addons.yaml"), "", &out)
	if !errors.Is(err, addonset.ErrLockStale) || out.Len() != 0 {
		t.Errorf("a changed declaration: error %v, %d bytes written", err, out.Len())
	}
	if msg := explain(err).Error(); !strings.Contains(msg, `member "coredns"`) || !strings.Contains(msg, "addonpkg lock") {
		t.Errorf("explained as %q", msg)
	}

	// No lock at all: nothing is resolved afresh.
	if err := os.Remove(filepath.Join(dir, "addons.lock")); err != nil {
		t.Fatal(err)
	}
	err = install(ctx, filepath.Join(dir, "addons.yaml"), "", &out)
	if !errors.Is(err, addonset.ErrNoLock) || out.Len() != 0 {
		t.Errorf("no lock: error %v, %d bytes written", err, out.Len())
	}
	if msg := explain(err).Error(); !strings.Contains(msg, "addons.lock") || !strings.Contains(msg, "addonpkg lock") {
		t.Errorf("explained as %q", msg)
	}
}
