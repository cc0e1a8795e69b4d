package main

import (
	"archive/tar"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// zeroFilesLayer writes a gzip layer holding count files of size zero
// bytes under addon/ (plus addon/a.yaml), compressed as hostileCLIZeroBomb
// does; its DiffID is computed, so a layer that is read whole checks out.
func zeroFilesLayer(t *testing.T, dir string, count int, size int64) *hostileCLILayer {
	t.Helper()
	f, err := os.CreateTemp(dir, "zeros-*.gz")
	must(t, err)
	defer f.Close()
	h, diff := sha256.New(), sha256.New()
	zw := &hostileCLIMembers{w: io.MultiWriter(f, h)}
	tw := tar.NewWriter(io.MultiWriter(zw, diff))
	doc := []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n")
	must(t, tw.WriteHeader(&tar.Header{Name: "addon/a.yaml", Typeflag: tar.TypeReg, Size: int64(len(doc)), Mode: 0o644}))
	_, err = tw.Write(doc)
	must(t, err)
	zero := make([]byte, hostileCLIChunk)
	for i := range count {
		must(t, tw.WriteHeader(&tar.Header{Name: fmt.Sprintf("addon/z%02d.bin", i), Typeflag: tar.TypeReg, Size: size, Mode: 0o644}))
		for left := size; left > 0; left -= hostileCLIChunk {
			_, err := tw.Write(zero[:min(left, hostileCLIChunk)])
			must(t, err)
		}
	}
	must(t, tw.Close())
	must(t, zw.flush())
	st, err := f.Stat()
	must(t, err)
	return &hostileCLILayer{
		file:   f.Name(),
		digest: v1.Hash{Algorithm: "sha256", Hex: hex.EncodeToString(h.Sum(nil))},
		size:   st.Size(),
		diffID: v1.Hash{Algorithm: "sha256", Hex: hex.EncodeToString(diff.Sum(nil))},
		mt:     types.OCILayer,
	}
}

// Issue 11, finding 11, and issue 16: an image whose layer holds 40 files
// of 128 MiB of zeros is refused by the add-on size limit with a peak RSS
// under 96 MiB, with -o and to stdout: large files stream to disk as they
// arrive.
func TestHostileZeroFilesMemory(t *testing.T) {
	bigData(t, "reads 640 MiB of layer")
	binary(t)
	work := t.TempDir()
	layoutDir := hostileCLIWrite(t, filepath.Join(work, "layout"), hostileCLIImage(t, zeroFilesLayer(t, work, 40, 128<<20)))
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"-o", []string{"unpack", "oci:" + layoutDir + ":t", "-o", "out"}},
		{"stdout", []string{"unpack", "oci:" + layoutDir + ":t"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			r := runPeak(t, dir, []string{"ADDONPKG_HOME=" + filepath.Join(dir, "home"), "TMPDIR=" + dir}, tc.args...)
			checkRefused(t, r, 96<<20, "add-on size limit of 536870912 exceeded", "--max-addon-bytes")
			if entries, _ := os.ReadDir(dir); len(entries) != 0 {
				t.Errorf("left behind in %s: %v", dir, entries)
			}
		})
	}
}

// Issue 16: unpack -o never holds a large file in memory: a 64 MiB file
// is written with a peak RSS under 64 MiB, and arrives intact.
func TestUnpackLargeFileNotHeld(t *testing.T) {
	bigData(t, "writes a 64 MiB file")
	binary(t)
	work := t.TempDir()
	layoutDir := hostileCLIWrite(t, filepath.Join(work, "layout"), hostileCLIImage(t, zeroFilesLayer(t, work, 1, 64<<20)))
	dir := t.TempDir()
	r := runPeak(t, dir, []string{"ADDONPKG_HOME=" + filepath.Join(dir, "home")}, "unpack", "oci:"+layoutDir+":t", "-o", "out")
	t.Logf("exit %d, peak RSS %.1f MiB, %s", r.code, float64(r.peak)/(1<<20), r.stderr)
	if r.code != 0 {
		t.Fatalf("unpack: exit %d: %s", r.code, r.stderr)
	}
	if r.peak >= 64<<20 {
		t.Errorf("peak RSS %.1f MiB: the 64 MiB file was held in memory", float64(r.peak)/(1<<20))
	}
	st, err := os.Stat(filepath.Join(dir, "out", "z00.bin"))
	if err != nil || st.Size() != 64<<20 || st.Mode().Perm() != 0o644 {
		t.Fatalf("z00.bin: %v %v", st, err)
	}
	entries, _ := os.ReadDir(filepath.Join(dir, "out"))
	if len(entries) != 2 {
		t.Errorf("out holds %v, want a.yaml and z00.bin", entries)
	}
}
