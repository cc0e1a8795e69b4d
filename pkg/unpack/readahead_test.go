package unpack_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/addonpkg/addonpkg/pkg/filetree"
	"github.com/addonpkg/addonpkg/pkg/output"
	"github.com/addonpkg/addonpkg/pkg/unpack"
)

// readAheadImage is eight layers (more than are read at once), each
// writing files over the ones below, whiting some out and making a
// directory opaque, so that what lower layers read ahead is often hidden.
// want is the tree the layers make when applied bottom-up, one by one.
func readAheadImage(t *testing.T) (v1.Image, map[string]string) {
	t.Helper()
	want := map[string]string{}
	var layers []v1.Layer
	for l := 1; l <= 8; l++ {
		var es []ent
		if l > 1 {
			// Hide a file and a whole directory of the layer below.
			es = append(es, whiteout("addon/shared", fmt.Sprintf("f%02d", l-1)), opaque(fmt.Sprintf("addon/own%d", l-1)))
			delete(want, fmt.Sprintf("shared/f%02d", l-1))
			for p := range want {
				if strings.HasPrefix(p, fmt.Sprintf("own%d/", l-1)) {
					delete(want, p)
				}
			}
		}
		for i := range 30 {
			body := fmt.Sprintf("layer %d file %d %s", l, i, strings.Repeat("x", 4<<10))
			name := fmt.Sprintf("shared/f%02d", i)
			es = append(es, file("addon/"+name, body))
			want[name] = body
			own := fmt.Sprintf("own%d/g%02d", l, i)
			es = append(es, file("addon/"+own, body))
			want[own] = body
		}
		layers = append(layers, ociLayer(es...))
	}
	return imageOf(t, imageOpts{}, layers...), want
}

// recordingSink keeps what an unpack hands its sink.
type recordingSink struct {
	t     *testing.T
	mu    sync.Mutex
	files map[string]string
}

func (s *recordingSink) File(name string, data []byte, mode fs.FileMode) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, dup := s.files[name]; dup {
		s.t.Errorf("File(%s) twice", name)
	}
	s.files[name] = string(data)
}

func (s *recordingSink) Copy(name, target string, mode fs.FileMode) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.files[name] = s.files[target]
}

// Whatever the read-ahead budget, the tree is what applying the layers
// in order makes, and the sink gets exactly its files.
func TestReadAheadBudgets(t *testing.T) {
	img, want := readAheadImage(t)
	for _, budget := range []int64{1, 16 << 10, 1 << 30} {
		t.Run(fmt.Sprint(budget), func(t *testing.T) {
			defer unpack.SetReadAheadBudget(budget)()
			sink := &recordingSink{t: t, files: map[string]string{}}
			ad, err := unpack.Image(context.Background(), img, unpack.Options{Sink: sink})
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			err = fs.WalkDir(ad.FS, ".", func(p string, d fs.DirEntry, err error) error {
				if err != nil || !d.Type().IsRegular() {
					return err
				}
				b, err := fs.ReadFile(ad.FS, p)
				got[p] = string(b)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range []struct {
				what string
				tree map[string]string
			}{{"tree", got}, {"Sink", sink.files}} {
				if len(m.tree) != len(want) {
					t.Errorf("%s has %d files, want %d", m.what, len(m.tree), len(want))
				}
				for p, body := range want {
					if m.tree[p] != body {
						t.Errorf("%s: %s = %.20q, want %.20q", m.what, p, m.tree[p], body)
					}
				}
			}
		})
	}
}

// A corrupt layer at the bottom fails the unpack whatever was read above
// it, and no reader is left behind, also when the context is cancelled.
func TestReadAheadFailures(t *testing.T) {
	defer unpack.SetReadAheadBudget(1)()
	before := runtime.NumGoroutine()

	bad := ociLayer(file("addon/a", "a"))
	bad.body = append([]byte(nil), bad.blob...)
	bad.body[len(bad.body)-5] ^= 0xff
	var layers []v1.Layer
	layers = append(layers, bad)
	for i := range 6 {
		layers = append(layers, ociLayer(file(fmt.Sprintf("addon/f%d", i), strings.Repeat("y", 8<<10))))
	}
	_, err := unpack.Image(context.Background(), imageOf(t, imageOpts{}, layers...), unpack.Options{})
	if err == nil || !strings.Contains(err.Error(), "layer 1 ") {
		t.Errorf("corrupt bottom layer: err = %v, want an error naming layer 1", err)
	}

	img, _ := readAheadImage(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := unpack.Image(ctx, img, unpack.Options{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: err = %v", err)
	}

	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Errorf("%d goroutines left behind", n-before)
	}
}

// With SinkOnly the tree keeps no bytes, yet the identity is the same and
// the files, hardlinks included, reach the disk through output.Writer.
func TestSinkOnlyWritesEverything(t *testing.T) {
	img := imageOf(t, imageOpts{},
		ociLayer(file("addon/a.yaml", "a"), hardlink("addon/b.yaml", "addon/a.yaml"),
			file("addon/hidden", "h"), hardlink("addon/h2", "addon/hidden"), file("addon/sub/c", "c")),
		ociLayer(whiteout("addon", "hidden"), file("addon/sub/c", "c2")),
	)
	full, err := unpack.Image(context.Background(), img, unpack.Options{})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "out")
	w, err := output.NewWriter(dir)
	if err != nil {
		t.Fatal(err)
	}
	ad, err := unpack.Image(context.Background(), img, unpack.Options{Sink: w, SinkOnly: true})
	if err != nil {
		w.Abort()
		t.Fatal(err)
	}
	if err := w.Commit(ad.FS); err != nil {
		t.Fatal(err)
	}
	if ad.Identity != full.Identity {
		t.Errorf("identity %s, want %s", ad.Identity, full.Identity)
	}
	if _, err := fs.ReadFile(ad.FS, "a.yaml"); !errors.Is(err, filetree.ErrDropped) {
		t.Errorf("reading a dropped file: %v", err)
	}
	if st, err := fs.Stat(ad.FS, "sub/c"); err != nil || st.Size() != 2 {
		t.Errorf("stat of a dropped file: %v %v", st, err)
	}
	for name, want := range map[string]string{"a.yaml": "a", "b.yaml": "a", "h2": "h", "sub/c": "c2"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || string(b) != want {
			t.Errorf("%s = %q, %v; want %q", name, b, err, want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "hidden")); !os.IsNotExist(err) {
		t.Errorf("hidden file written: %v", err)
	}
}
