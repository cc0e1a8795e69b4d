package source_test

import (
	"compress/gzip"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/addonpkg/addonpkg/pkg/build"
	"github.com/addonpkg/addonpkg/pkg/layout"
	"github.com/addonpkg/addonpkg/pkg/pack"
	"github.com/addonpkg/addonpkg/pkg/source"
	"github.com/addonpkg/addonpkg/pkg/transfer"
	"github.com/addonpkg/addonpkg/pkg/unpack"
)

// `docker save IMAGE | gzip > addon.tar.gz` is how Docker's docs compress
// a saved image, and docker load reads it back; skopeo reads a gzipped
// oci-archive too. addonpkg reads an archive in place (a blob at its
// offset in the tar), so it cannot read one compressed: such a file was
// "invalid archive: archive/tar: invalid tar header", or "invalid tar
// header (not an uncompressed tar?)". Now it is refused as what it is
// (layout.ErrCompressedArchive), naming the command that makes it
// readable; the same archive uncompressed reads.
func TestCompressedArchiveRefusedSayingWhatToRun(t *testing.T) {
	ctx := context.Background()
	res := buildExample(t, build.Options{Name: "coredns", Format: pack.FormatImage})
	dir := t.TempDir()
	for _, kind := range []string{"docker-archive", "oci-archive"} {
		plain := filepath.Join(dir, kind+".tar")
		dst, err := source.Parse(kind + ":" + plain)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := transfer.Write(ctx, &source.Artifact{Image: res.Image, Digest: res.Digest}, dst, transfer.Options{}); err != nil {
			t.Fatal(err)
		}
		if _, err := source.Resolve(ctx, kind+":"+plain, source.Options{}, unpack.Options{}); err != nil {
			t.Fatalf("%s uncompressed: %v", kind, err)
		}
		for ext, compress := range map[string]func(io.Writer) io.WriteCloser{
			".gz":  func(w io.Writer) io.WriteCloser { return gzip.NewWriter(w) },
			".zst": func(w io.Writer) io.WriteCloser { zw, _ := zstd.NewWriter(w); return zw },
		} {
			file := plain + ext
			compressFile(t, plain, file, compress)
			s := kind + ":" + file
			_, err := source.Resolve(ctx, s, source.Options{}, unpack.Options{})
			if !errors.Is(err, layout.ErrCompressedArchive) {
				t.Errorf("%s: %v, want layout.ErrCompressedArchive", s, err)
				continue
			}
			tool := map[string]string{".gz": "gunzip -k ", ".zst": "unzstd -k "}[ext]
			checkOneLine(t, err, file, tool+file)
		}
	}
}

// compressFile writes src compressed to dst, as gzip(1) or zstd(1) would.
func compressFile(t *testing.T, src, dst string, compress func(io.Writer) io.WriteCloser) {
	t.Helper()
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	w := compress(out)
	if _, err := io.Copy(w, in); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}
