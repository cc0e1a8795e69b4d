package layout

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
)

func internalStore(t *testing.T) *Store {
	t.Helper()
	st, err := Init(filepath.Join(t.TempDir(), "store"))
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// lockWaiter reports whether some process or goroutine waits for a flock
// on the file with inode ino: Linux lists waiting requests in /proc/locks
// with "->". It makes "this call waits for GC" checkable without timing.
func lockWaiter(t *testing.T, ino uint64) bool {
	t.Helper()
	f, err := os.Open("/proc/locks")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		// 1: -> FLOCK  ADVISORY  READ 1234 fe:00:5678 0 EOF
		if len(fields) < 7 || fields[1] != "->" || fields[2] != "FLOCK" {
			continue
		}
		dev := strings.Split(fields[6], ":")
		if len(dev) == 3 && dev[2] == fmt.Sprint(ino) {
			return true
		}
	}
	return false
}

// waitsForGC runs op while the lock GC takes is held, and fails unless op
// waits for it: op must neither finish nor fail before the lock is
// released, and must succeed after.
func waitsForGC(t *testing.T, st *Store, op func() error) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("waiting flocks are visible in /proc/locks on Linux only")
	}
	unlock, err := st.writeLock(true) // what GC holds
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(st.dir, gcLock))
	if err != nil {
		unlock()
		t.Fatal(err)
	}
	ino := fi.Sys().(*syscall.Stat_t).Ino
	done := make(chan error, 1)
	go func() { done <- op() }()
	for !lockWaiter(t, ino) {
		select {
		case err := <-done:
			unlock()
			t.Fatalf("finished while GC held the store lock (err %v): the mutation does not take the lock", err)
		default:
			time.Sleep(time.Millisecond) // polling /proc/locks, not a timing assertion
		}
	}
	unlock()
	if err := <-done; err != nil {
		t.Fatalf("after GC let go: %v", err)
	}
}

// Every mutation of the store waits while GC runs.
func TestMutationsWaitForGC(t *testing.T) {
	ctx := context.Background()
	img, err := random.Image(512, 1)
	if err != nil {
		t.Fatal(err)
	}
	idx := mutate.AppendManifests(empty.Index, mutate.IndexAddendum{Add: img})
	blob := []byte("a blob")
	h, _, _ := v1.SHA256(bytes.NewReader(blob))
	for _, c := range []struct {
		name string
		op   func(st *Store) error
	}{
		{"WriteBlob", func(st *Store) error { return st.WriteBlob(h, int64(len(blob)), bytes.NewReader(blob)) }},
		{"WriteImage", func(st *Store) error { _, err := st.WriteImage(ctx, img, nil, "x:1"); return err }},
		{"WriteIndex", func(st *Store) error { _, err := st.WriteIndex(ctx, idx, nil, "x:1"); return err }},
		{"Tag", func(st *Store) error { _, err := st.Tag("base:1", "x:1"); return err }},
		{"Untag", func(st *Store) error { return st.Untag("base:1") }},
		{"Hold", func(st *Store) error {
			release, err := st.Hold()
			if err == nil {
				release()
			}
			return err
		}},
		{"Init of a store without index.json", func(st *Store) error { _, err := Init(st.dir); return err }},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := internalStore(t)
			if _, err := st.WriteImage(ctx, img, nil, "base:1"); err != nil {
				t.Fatal(err)
			}
			if strings.HasPrefix(c.name, "Init") {
				// Init writes only what is missing: make it write.
				if err := os.Remove(filepath.Join(st.dir, indexFile)); err != nil {
					t.Fatal(err)
				}
			}
			waitsForGC(t, st, func() error { return c.op(st) })
		})
	}
}

// A rename into the store is followed by an fsync of its directory, once
// the new name is there.
func TestRenameSyncsDirectory(t *testing.T) {
	st := internalStore(t)
	var (
		mu     sync.Mutex
		synced []string
	)
	blob := []byte("durable")
	h, _, _ := v1.SHA256(bytes.NewReader(blob))
	blobDir := filepath.Join(st.dir, "blobs", "sha256")
	orig := syncDir
	t.Cleanup(func() { syncDir = orig })
	// The hook sees the file in place: the rename came first.
	syncDir = func(dir string) error {
		if dir == blobDir {
			if _, err := os.Stat(filepath.Join(blobDir, h.Hex)); err != nil {
				t.Errorf("directory synced before the blob was renamed into it: %v", err)
			}
		}
		mu.Lock()
		synced = append(synced, dir)
		mu.Unlock()
		return orig(dir)
	}
	if err := st.WriteBlob(h, int64(len(blob)), bytes.NewReader(blob)); err != nil {
		t.Fatal(err)
	}
	if _, err := st.WriteImage(context.Background(), mustRandom(t), nil, "x:1"); err != nil {
		t.Fatal(err)
	}
	if err := st.Untag("x:1"); err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, d := range synced {
		count[d]++
	}
	// WriteBlob, then WriteImage's 2 layers, config and manifest.
	if count[blobDir] < 5 {
		t.Errorf("blobs directory synced %d times, want one per blob written (%q)", count[blobDir], synced)
	}
	// WriteImage's tag and Untag rewrite index.json.
	if count[st.dir] < 2 {
		t.Errorf("store directory synced %d times, want one per index.json write (%q)", count[st.dir], synced)
	}
	if err := syncDir(filepath.Join(st.dir, "nosuch")); err == nil {
		t.Error("syncDir of a missing directory succeeded")
	}
}

func mustRandom(t *testing.T) v1.Image {
	t.Helper()
	img, err := random.Image(256, 2)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// A caller that holds the store (Hold) and then writes does not deadlock
// when GC started waiting in between: the write's own shared lock is
// granted beside the held one, GC runs once release is called, and keeps
// what the write tagged.
func TestHoldThenWriteWhileGCWaits(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("waiting flocks are visible in /proc/locks on Linux only")
	}
	ctx := context.Background()
	st := internalStore(t)
	release, err := st.Hold()
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(st.dir, gcLock))
	if err != nil {
		t.Fatal(err)
	}
	ino := fi.Sys().(*syscall.Stat_t).Ino
	type gcResult struct {
		removed int
		err     error
	}
	gcDone := make(chan gcResult, 1)
	go func() {
		n, _, err := st.GC()
		gcDone <- gcResult{n, err}
	}()
	for !lockWaiter(t, ino) {
		select {
		case r := <-gcDone:
			t.Fatalf("GC ran while the store was held (removed %d, err %v)", r.removed, r.err)
		default:
			time.Sleep(time.Millisecond) // polling /proc/locks, not a timing assertion
		}
	}
	// GC waits now. Writes under the hold go through.
	img := mustRandom(t)
	if _, err := st.WriteImage(ctx, img, nil, "held:1"); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Tag("held:1", "held:2"); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-gcDone:
		t.Fatalf("GC ran before release (removed %d, err %v)", r.removed, r.err)
	default:
	}
	release()
	if r := <-gcDone; r.err != nil || r.removed != 0 {
		t.Fatalf("GC after release: removed %d, %v; want nothing removed", r.removed, r.err)
	}
	for _, name := range []string{"held:1", "held:2"} {
		d, err := st.Resolve(name)
		if err != nil {
			t.Fatal(err)
		}
		got, err := st.Image(d)
		if err != nil {
			t.Fatal(err)
		}
		ls, _ := got.Layers()
		for _, l := range ls {
			rc, err := l.Compressed()
			if err == nil {
				_, err = io.Copy(io.Discard, rc)
				rc.Close()
			}
			if err != nil {
				t.Errorf("%s: %v", name, err)
			}
		}
	}
}

// Init of a new store syncs the parent of every directory it creates,
// and of none that was there already.
func TestInitSyncsCreatedDirectories(t *testing.T) {
	var (
		mu     sync.Mutex
		synced []string
	)
	orig := syncDir
	t.Cleanup(func() { syncDir = orig })
	syncDir = func(dir string) error {
		mu.Lock()
		synced = append(synced, dir)
		mu.Unlock()
		return orig(dir) // the real sync runs
	}
	parent := t.TempDir()
	dir := filepath.Join(parent, "a", "store")
	if _, err := Init(dir); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{parent, filepath.Join(parent, "a"), dir, filepath.Join(dir, "blobs")} {
		if !slices.Contains(synced, want) {
			t.Errorf("%s not synced after a directory was created in it (synced %q)", want, synced)
		}
	}
	// Opening it again creates nothing, and syncs no directory.
	synced = nil
	if _, err := Init(dir); err != nil {
		t.Fatal(err)
	}
	if len(synced) != 0 {
		t.Errorf("Init of an existing store synced %q", synced)
	}
}

// A pinned Store syncs the blobs directory once, at done, after every
// rename into it and before index.json names what was renamed.
func TestPinSyncsBlobsBeforeIndex(t *testing.T) {
	st := internalStore(t)
	blobDir := filepath.Join(st.dir, "blobs", "sha256")
	var (
		mu     sync.Mutex
		synced []string
	)
	orig := syncDir
	t.Cleanup(func() { syncDir = orig })
	syncDir = func(dir string) error {
		mu.Lock()
		synced = append(synced, dir)
		mu.Unlock()
		return orig(dir)
	}
	done, err := st.Pin()
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := st.WriteImage(context.Background(), mustRandom(t), nil); err != nil {
			t.Fatal(err)
		}
	}
	if len(synced) != 0 {
		t.Errorf("synced %q before done", synced)
	}
	if err := done(); err != nil {
		t.Fatal(err)
	}
	if want := []string{blobDir, st.dir}; !slices.Equal(synced, want) {
		t.Errorf("done synced %q, want %q: the blobs, then index.json's directory", synced, want)
	}
}
