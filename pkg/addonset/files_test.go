package addonset_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/addonpkg/addonpkg/pkg/addonset"
	"github.com/addonpkg/addonpkg/pkg/layout"
)

// LockTo writes the lock beside the declaration and says what changed;
// CheckFile reads it back, and says when there is none.
func TestLockToAndCheckFile(t *testing.T) {
	ctx := context.Background()
	dir := declDir(t)
	s := writeDecl(t, dir, "- name: one\n  source: ./one\n")
	lock := filepath.Join(dir, "addons.lock")
	if _, err := addonset.CheckFile(ctx, s, "", addonset.Options{}); !errors.Is(err, addonset.ErrNoLock) {
		t.Fatalf("check without a lock: %v, want ErrNoLock", err)
	}
	l, changes, err := addonset.LockTo(ctx, s, "", addonset.LockOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Addons) != 1 || len(changes) != 1 {
		t.Errorf("lock %+v, changes %v", l.Addons, changes)
	}
	if _, err := os.Stat(lock); err != nil {
		t.Fatalf("no lock written: %v", err)
	}
	// Locked again, nothing changes.
	if _, changes, err = addonset.LockTo(ctx, s, "", addonset.LockOptions{}); err != nil || len(changes) != 0 {
		t.Errorf("relock: %v, %v", changes, err)
	}
	got, err := addonset.CheckFile(ctx, s, lock, addonset.Options{})
	if err != nil || len(got.Addons) != 1 {
		t.Errorf("check: %v, %v", got, err)
	}
	s2 := writeDecl(t, dir, "- name: one\n  source: ./one\n- name: two\n  source: ./two\n")
	if _, err := addonset.CheckFile(ctx, s2, "", addonset.Options{}); !errors.Is(err, addonset.ErrLockStale) {
		t.Errorf("check of a stale lock: %v", err)
	}
	// The lock never replaces the declaration.
	if _, _, err := addonset.LockTo(ctx, s, s.File, addonset.LockOptions{}); !errors.Is(err, addonset.ErrOutputIsInput) {
		t.Errorf("lock over the declaration: %v", err)
	}
}

// MirrorTo refuses to write over its inputs before it copies anything.
func TestMirrorToRefusesInputs(t *testing.T) {
	ctx := context.Background()
	dir := declDir(t)
	s := writeDecl(t, dir, "- name: one\n  source: ./one\n")
	_, files, err := addonset.MirrorTo(ctx, s, s.File, addonset.MirrorOptions{To: "oci-archive:" + filepath.Join(dir, "m.tar")})
	if !errors.Is(err, addonset.ErrOutputIsInput) || files.Declaration != s.File {
		t.Errorf("mirror over the declaration: %v (%+v)", err, files)
	}
	if _, err := os.Stat(filepath.Join(dir, "m.tar")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the archive was written: %v", err)
	}
}

// RenderLocked renders only from the lock beside the declaration: none is
// ErrNoLock (naming both files), a stale one a *StaleError.
func TestRenderLocked(t *testing.T) {
	ctx := context.Background()
	dir := declDir(t)
	s := writeDecl(t, dir, "- name: one\n  source: ./one\n")
	_, err := addonset.RenderLocked(ctx, s.File, addonset.RenderOptions{})
	if !errors.Is(err, addonset.ErrNoLock) {
		t.Fatalf("render without a lock: %v, want ErrNoLock", err)
	}
	if want := s.File + ": no lock file " + addonset.LockPath(s.File); err.Error() != want {
		t.Errorf("message %q, want %q", err, want)
	}
	if _, _, err := addonset.LockTo(ctx, s, "", addonset.LockOptions{}); err != nil {
		t.Fatal(err)
	}
	res, err := addonset.RenderLocked(ctx, s.File, addonset.RenderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Members) != 1 || res.Members[0].Name != "one" || res.Members[0].Pinned != "./one" {
		t.Errorf("members %+v", res.Members)
	}
	writeDecl(t, dir, "- name: one\n  source: ./one\n- name: two\n  source: ./two\n")
	var se *addonset.StaleError
	if _, err := addonset.RenderLocked(ctx, s.File, addonset.RenderOptions{}); !errors.As(err, &se) || se.Member != "two" {
		t.Errorf("render from a stale lock: %v, want a *StaleError for two", err)
	}
}

// A member's oci-archive is an input too: mirror --to oci-archive:FILE and
// lock -o FILE refuse it before anything is written, and it keeps its
// bytes (a mirror into it replaced it whole, losing what else it held).
func TestOutputsNeverOverwriteMemberArchive(t *testing.T) {
	ctx := context.Background()
	dir := declDir(t)
	src := filepath.Join(t.TempDir(), "layout")
	layoutOf(t, src, "one", "two")
	bundle := filepath.Join(dir, "bundle.tar")
	if err := layout.WriteArchive(src, bundle); err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(bundle)
	if err != nil {
		t.Fatal(err)
	}
	s := writeDecl(t, dir, "- name: one\n  source: oci-archive:bundle.tar:one\n")
	if _, _, err := addonset.LockTo(ctx, s, "", addonset.LockOptions{}); err != nil {
		t.Fatal(err)
	}
	_, _, err = addonset.MirrorTo(ctx, s, filepath.Join(t.TempDir(), "m.yaml"), addonset.MirrorOptions{To: "oci-archive:" + bundle})
	if !errors.Is(err, addonset.ErrOutputIsInput) || !strings.Contains(err.Error(), bundle) {
		t.Errorf("mirror into the member's archive: %v, want ErrOutputIsInput naming %s", err, bundle)
	}
	if _, _, err := addonset.LockTo(ctx, s, bundle, addonset.LockOptions{}); !errors.Is(err, addonset.ErrOutputIsInput) {
		t.Errorf("lock over the member's archive: %v, want ErrOutputIsInput", err)
	}
	if after, err := os.ReadFile(bundle); err != nil || !bytes.Equal(after, before) {
		t.Errorf("the member's archive changed (%d bytes, was %d): %v", len(after), len(before), err)
	}
}
