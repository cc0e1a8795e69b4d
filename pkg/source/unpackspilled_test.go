package source_test

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/addonpkg/addonpkg/pkg/layout"
	"github.com/addonpkg/addonpkg/pkg/source"
	"github.com/addonpkg/addonpkg/pkg/unpack"
)

// UnpackSpilled holds at most SpilledMemoryBudget of the tree's file bytes
// in memory: an add-on of files each under unpack.SpillThreshold, larger
// in all than the budget, has the rest waiting on disk, and reads the same.
// release removes it all.
func TestUnpackSpilledMemoryBudget(t *testing.T) {
	const files, size = 20, 1 << 20 // 20 MiB, past the budget
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	body := func(i int) []byte { return bytes.Repeat([]byte{byte('a' + i%26)}, size) }
	var tb bytes.Buffer
	tw := tar.NewWriter(&tb)
	must(tw.WriteHeader(&tar.Header{Name: "addon/", Typeflag: tar.TypeDir, Mode: 0o755}))
	for i := range files {
		must(tw.WriteHeader(&tar.Header{Name: fmt.Sprintf("addon/f%02d", i), Typeflag: tar.TypeReg, Mode: 0o644, Size: size}))
		_, err := tw.Write(body(i))
		must(err)
	}
	must(tw.Close())
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(tb.Bytes())), nil },
		tarball.WithMediaType(types.OCILayer), tarball.WithCompressionLevel(1))
	must(err)
	img := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	img, err = mutate.AppendLayers(img, layer)
	must(err)
	dir := filepath.Join(t.TempDir(), "layout")
	st, err := layout.Init(dir)
	must(err)
	_, err = st.WriteImage(context.Background(), img, nil, "1")
	must(err)

	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	ref, err := source.Parse("oci:" + dir + ":1")
	must(err)
	ad, release, err := source.UnpackSpilled(context.Background(), ref, source.Options{}, unpack.Options{})
	must(err)
	packs, err := filepath.Glob(filepath.Join(tmp, "addonpkg-unpack-*", "pack-*"))
	must(err)
	// Files of exactly SpillThreshold stay in memory until the budget;
	// the rest go to one pack file on disk. (When the merge falls behind
	// the layer's reader, a file read ahead may also wait in a spill-*
	// file of its own, depending on timing: not counted.)
	if ad.FS.InMemory() != source.SpilledMemoryBudget || len(packs) != 1 {
		t.Errorf("%d bytes in memory and %d pack files on disk, want the budget's %d and one", ad.FS.InMemory(), len(packs), source.SpilledMemoryBudget)
	}
	for i := range files {
		b, err := fs.ReadFile(ad.FS, fmt.Sprintf("f%02d", i))
		if err != nil || !bytes.Equal(b, body(i)) {
			t.Fatalf("f%02d: %d bytes, %v", i, len(b), err)
		}
	}
	release()
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("release left %d entries in the temp directory", len(left))
	}
}
