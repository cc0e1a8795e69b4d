package unpack_test

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/addonpkg/addonpkg/pkg/output"
	"github.com/addonpkg/addonpkg/pkg/unpack"
)

// countingSink is an output.Writer that counts what the unpack hands it:
// bytes given to File (held in memory on the way) and files it takes from
// the spill directory by moving them.
type countingSink struct {
	*output.Writer
	mu        sync.Mutex
	fileBytes map[string]int
	taken     map[string]bool
	// waitSpill, when set, makes the first File wait until a file shows
	// up in this directory: the merge stands still until the lower
	// layers' readers have spilled.
	waitSpill string
	sawSpill  bool
}

func newCountingSink(t *testing.T, dir string) *countingSink {
	t.Helper()
	w, err := output.NewWriter(dir)
	if err != nil {
		t.Fatal(err)
	}
	return &countingSink{Writer: w, fileBytes: map[string]int{}, taken: map[string]bool{}}
}

func (s *countingSink) File(name string, data []byte, mode fs.FileMode) {
	s.mu.Lock()
	first := len(s.fileBytes) == 0
	s.fileBytes[name] = len(data)
	s.mu.Unlock()
	if first && s.waitSpill != "" {
		for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			if held, _ := os.ReadDir(s.waitSpill); len(held) > 0 {
				s.sawSpill = true
				break
			}
		}
	}
	s.Writer.File(name, data, mode)
}

func (s *countingSink) TakeFile(name, path string, mode fs.FileMode) {
	s.mu.Lock()
	s.taken[name] = true
	s.mu.Unlock()
	s.Writer.TakeFile(name, path, mode)
}

var _ unpack.DiskSink = (*countingSink)(nil)
var _ unpack.Remover = (*countingSink)(nil)

// unpackToDir unpacks img as `unpack -o dir` does (a DiskSink, SinkOnly,
// the writer's spill directory) and returns the sink and the add-on.
func unpackToDir(t *testing.T, img v1.Image, dir string, waitSpill bool) (*countingSink, *unpack.Addon) {
	t.Helper()
	s := newCountingSink(t, dir)
	spill, err := s.SpillDir()
	if err != nil {
		s.Abort()
		t.Fatal(err)
	}
	if waitSpill {
		s.waitSpill = spill
	}
	ad, err := unpack.Image(context.Background(), img, unpack.Options{Sink: s, SinkOnly: true, SpillDir: spill})
	if err != nil {
		s.Abort()
		t.Fatal(err)
	}
	if err := s.Commit(ad.FS); err != nil {
		t.Fatal(err)
	}
	return s, ad
}

// hiddenLinksImage hides files of its lower layer that hard links later
// in the same layer still name, twice each, one of them executable.
func hiddenLinksImage(t *testing.T) v1.Image {
	t.Helper()
	lower := []ent{file("addon/pad", strings.Repeat("p", 64<<10))}
	for i := range 4 {
		lower = append(lower, file(fmt.Sprintf("addon/hid%d", i), fmt.Sprintf("hidden %d %s", i, strings.Repeat("h", 32<<10))))
	}
	lower = append(lower, ent{name: "addon/run", typ: tar.TypeReg, body: "#!/bin/sh\n", mode: 0o755})
	for i := range 4 {
		lower = append(lower, hardlink(fmt.Sprintf("addon/a%d", i), fmt.Sprintf("addon/hid%d", i)), hardlink(fmt.Sprintf("addon/b%d", i), fmt.Sprintf("addon/hid%d", i)))
	}
	lower = append(lower, hardlink("addon/run2", "addon/run"), hardlink("addon/run3", "addon/run"))
	upper := []ent{whiteout("addon", "run")}
	for i := range 4 {
		upper = append(upper, whiteout("addon", fmt.Sprintf("hid%d", i)))
	}
	return imageOf(t, imageOpts{}, ociLayer(lower...), ociLayer(upper...))
}

// What lower layers read ahead past the memory budget, and the hidden
// files held for hard links past theirs, go to the spill directory: the
// tree on disk is the one an in-memory unpack makes (whiteouts, opaque
// directories and hard links to hidden files, each named twice,
// included), whatever the budgets.
func TestSpillPastBudgets(t *testing.T) {
	ra, want := readAheadImage(t)
	for _, img := range []struct {
		name string
		img  v1.Image
		want map[string]string
	}{{"read-ahead", ra, want}, {"hidden links", hiddenLinksImage(t), nil}} {
		mem, err := unpack.Image(context.Background(), img.img, unpack.Options{})
		if err != nil {
			t.Fatal(err)
		}
		wantTree := treeOf(t, mem.FS)
		for _, budget := range []int64{1, 16 << 10, 1 << 30} {
			for _, shadow := range []int64{0, 1 << 30} {
				t.Run(fmt.Sprintf("%s/readahead=%d/shadow=%d", img.name, budget, shadow), func(t *testing.T) {
					defer unpack.SetReadAheadBudget(budget)()
					defer unpack.SetShadowMemBytes(shadow)()
					dir := filepath.Join(t.TempDir(), "out")
					s, ad := unpackToDir(t, img.img, dir, budget == 1 && img.name == "read-ahead")
					if d := diffTrees(wantTree, treeOf(t, os.DirFS(dir))); d != "" {
						t.Errorf("tree on disk differs from the in-memory unpack:\n%s", d)
					}
					if ad.Identity != mem.Identity {
						t.Errorf("identity %s, want %s", ad.Identity, mem.Identity)
					}
					for p, body := range img.want {
						if b, err := os.ReadFile(filepath.Join(dir, p)); err != nil || string(b) != body {
							t.Errorf("%s = %.20q (%v), want %.20q", p, b, err, body)
						}
					}
					if s.waitSpill != "" && !s.sawSpill {
						t.Error("nothing was read ahead to disk while the merge stood still")
					}
					if img.name == "hidden links" {
						for _, p := range []string{"run2", "run3"} {
							if st, err := os.Stat(filepath.Join(dir, p)); err != nil || st.Mode().Perm() != 0o755 {
								t.Errorf("%s: %v %v, want an executable file", p, st, err)
							}
						}
						if shadow == 0 && len(s.taken) == 0 {
							t.Error("no hidden file was held on disk: the test does not test spilling them")
						}
					}
				})
			}
		}
	}
}

// zeroFileLayer streams a gzip layer holding addon/a.yaml and addon/big.bin,
// size bytes of zeros, computing its DiffID on the way: only the
// compressed bytes (a few hundred KiB) are held.
func zeroFileLayer(t testing.TB, size int64) *testLayer {
	t.Helper()
	var out bytes.Buffer
	zw := &memberWriter{w: &out, member: gzipMember}
	diff := sha256.New()
	tw := tar.NewWriter(io.MultiWriter(zw, diff))
	doc := []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n")
	for _, h := range []*tar.Header{
		{Name: "addon/a.yaml", Typeflag: tar.TypeReg, Size: int64(len(doc)), Mode: 0o644},
		{Name: "addon/big.bin", Typeflag: tar.TypeReg, Size: size, Mode: 0o644},
	} {
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Size == int64(len(doc)) {
			if _, err := tw.Write(doc); err != nil {
				t.Fatal(err)
			}
			continue
		}
		for left := size; left > 0; left -= bombChunk {
			if _, err := tw.Write(zeroChunk[:min(left, bombChunk)]); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return &testLayer{blob: out.Bytes(), mt: types.OCILayer, diffID: v1.Hash{Algorithm: "sha256", Hex: hex.EncodeToString(diff.Sum(nil))}}
}

// Issue 16: unpack -o never holds a 64 MiB file in memory. The sink is
// never handed its bytes (it takes the file from the spill directory),
// and the whole unpack allocates less than half the file's size, so the
// file cannot have been in memory, whole or in pieces, at any time.
func TestUnpackToDirNeverHoldsBigFile(t *testing.T) {
	const size = 64 << 20
	img := imageOf(t, imageOpts{}, zeroFileLayer(t, size))
	dir := filepath.Join(t.TempDir(), "out")

	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	s, ad := unpackToDir(t, img, dir, false)
	runtime.ReadMemStats(&after)

	if n, ok := s.fileBytes["big.bin"]; ok {
		t.Errorf("the sink was handed big.bin's %d bytes in memory", n)
	}
	if !s.taken["big.bin"] {
		t.Error("big.bin was not taken from the spill directory")
	}
	allocated := after.TotalAlloc - before.TotalAlloc
	t.Logf("allocated %.1f MiB to unpack a %d MiB file", float64(allocated)/(1<<20), size>>20)
	if allocated > size/2 {
		t.Errorf("the unpack allocated %.1f MiB for a %d MiB file: its bytes went through memory", float64(allocated)/(1<<20), size>>20)
	}
	st, err := os.Stat(filepath.Join(dir, "big.bin"))
	if err != nil || st.Size() != size {
		t.Fatalf("big.bin on disk: %v %v", st, err)
	}
	if got, ok := ad.FS.SHA256("big.bin"); !ok || got != sha256.Sum256(make([]byte, size)) {
		t.Errorf("big.bin's digest in the tree: %x, %v", got, ok)
	}
}
