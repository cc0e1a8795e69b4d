package archive_test

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"runtime"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/addonpkg/addonpkg/pkg/archive"
	"github.com/addonpkg/addonpkg/pkg/filetree"
	"github.com/addonpkg/addonpkg/pkg/mediatypes"
)

// Gzip compresses on every core; its bytes must not depend on how many
// there are, or the same add-on would get another digest on another
// machine.
func TestGzipSameBytesOnAnyNumberOfCores(t *testing.T) {
	// Several blocks of compressible, non-repeating text.
	rng := rand.New(rand.NewPCG(1, 2))
	var in bytes.Buffer
	for in.Len() < 5<<20 {
		fmt.Fprintf(&in, "key-%d: value %d\n", rng.IntN(50_000), rng.IntN(1000))
	}
	compress := func() []byte {
		var out bytes.Buffer
		w, err := archive.Compressor(&out, mediatypes.Gzip)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(in.Bytes()); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		return out.Bytes()
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	var first []byte
	for _, procs := range []int{1, 2, 8} {
		runtime.GOMAXPROCS(procs)
		got := compress()
		if first == nil {
			first = got
			continue
		}
		if !bytes.Equal(got, first) {
			t.Errorf("GOMAXPROCS=%d: %d compressed bytes differ from GOMAXPROCS=1's %d", procs, len(got), len(first))
		}
	}
}

// A layer larger than SpillBytes waits in an unnamed temporary file: its
// bytes are those of the layer written in memory, readable more than
// once, and nothing is left in the temporary directory.
func TestBuildLayerSpills(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	// Incompressible, so the gzip layer is larger than SpillBytes.
	data := make([]byte, archive.SpillBytes+(1<<20))
	rand.NewChaCha8([32]byte{3}).Read(data)
	b := filetree.NewBuilder()
	if err := b.WriteFile("a.bin", data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := b.WriteFile("b.yaml", []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fsys := b.FS()
	opts := archive.TarOptions{Prefix: "addon"}
	l, err := archive.BuildLayer(fsys, opts, mediatypes.Gzip, mediatypes.ImageLayer(mediatypes.Gzip))
	if err != nil {
		t.Fatal(err)
	}
	if l.InMemory() {
		t.Errorf("a layer of more than %d bytes is held in memory", archive.SpillBytes)
	}
	if entries, err := os.ReadDir(tmp); err != nil || len(entries) != 0 {
		t.Errorf("temporary directory holds %v (%v)", entries, err)
	}
	var want bytes.Buffer
	zw, err := archive.Compressor(&want, mediatypes.Gzip)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := archive.WriteTar(zw, fsys, opts); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		rc, err := l.Compressed()
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want.Bytes()) {
			t.Fatalf("read %d: %d bytes differ from the %d written in memory", i, len(got), want.Len())
		}
	}
	d, _ := l.Digest()
	if h, _, _ := v1.SHA256(bytes.NewReader(want.Bytes())); d != h {
		t.Errorf("digest %s, want %s", d, h)
	}
	if size, _ := l.Size(); size != int64(want.Len()) {
		t.Errorf("size %d, want %d", size, want.Len())
	}
	small, err := archive.BuildLayer(filetree.NewBuilder().FS(), opts, mediatypes.Gzip, mediatypes.ImageLayer(mediatypes.Gzip))
	if err != nil {
		t.Fatal(err)
	}
	if !small.InMemory() {
		t.Error("a small layer went to a file")
	}
}
