package source_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/addonpkg/addonpkg/pkg/build"
	"github.com/addonpkg/addonpkg/pkg/layout"
	"github.com/addonpkg/addonpkg/pkg/pack"
	"github.com/addonpkg/addonpkg/pkg/safetree"
	"github.com/addonpkg/addonpkg/pkg/source"
	"github.com/addonpkg/addonpkg/pkg/unpack"
)

// `docker save IMAGE | gzip > addon.tar.gz` is how Docker's docs compress
// a saved image, and docker load and skopeo read it back (docker load
// reads bzip2, xz and zstd too; xz and bzip2 were refused until they
// were added), as skopeo reads
// a compressed oci-archive. addonpkg reads an archive in place (a blob at
// its offset in the tar), so a compressed one is first decompressed into
// an unnamed temporary file (layout.OpenArchiveFile): it reads as the
// same add-on as the archive uncompressed. It was refused ("invalid tar
// header"). A compressed archive cut short is ErrCorruptArchive, one line
// naming the file.
func TestCompressedArchiveReadsAsUncompressed(t *testing.T) {
	ctx := context.Background()
	res := buildExample(t, build.Options{Name: "coredns", Format: pack.FormatImage})
	dir := t.TempDir()
	for _, kind := range []string{"docker-archive", "oci-archive"} {
		plain := filepath.Join(dir, kind+".tar")
		writeBuilt(t, kind+":"+plain, res)
		want, err := source.Resolve(ctx, kind+":"+plain, source.Options{}, unpack.Options{})
		if err != nil {
			t.Fatalf("%s uncompressed: %v", kind, err)
		}
		for ext, compress := range map[string]func(io.Writer) io.WriteCloser{
			".gz":  func(w io.Writer) io.WriteCloser { return gzip.NewWriter(w) },
			".zst": func(w io.Writer) io.WriteCloser { zw, _ := zstd.NewWriter(w); return zw },
			// docker load reads xz and bzip2 too; written by the real tools.
			".xz":  func(w io.Writer) io.WriteCloser { return pipeTo(t, w, "xz", "-c", "-T2") },
			".bz2": func(w io.Writer) io.WriteCloser { return pipeTo(t, w, "bzip2", "-c") },
		} {
			file := plain + ext
			compressFile(t, plain, file, compress)
			s := kind + ":" + file
			got, err := source.Resolve(ctx, s, source.Options{}, unpack.Options{})
			if err != nil {
				t.Errorf("%s: %v", s, err)
				continue
			}
			if got.Digest != want.Digest {
				t.Errorf("%s: %s, want the add-on of %s (%s)", s, got.Digest, plain, want.Digest)
			}

			b, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			cut := file + ".cut"
			if err := os.WriteFile(cut, b[:len(b)/2], 0o644); err != nil {
				t.Fatal(err)
			}
			_, err = source.Resolve(ctx, kind+":"+cut, source.Options{}, unpack.Options{})
			if !errors.Is(err, layout.ErrCorruptArchive) {
				t.Errorf("%s cut short: %v, want layout.ErrCorruptArchive", s, err)
				continue
			}
			checkOneLine(t, err, cut)
		}
	}
}

// pipeTo is a WriteCloser that compresses into w through a real command.
func pipeTo(t *testing.T, w io.Writer, name string, args ...string) io.WriteCloser {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Stdout = w
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return commandInput{in, cmd}
}

type commandInput struct {
	io.WriteCloser
	cmd *exec.Cmd
}

func (c commandInput) Close() error {
	if err := c.WriteCloser.Close(); err != nil {
		return err
	}
	return c.cmd.Wait()
}

// compressFile writes src compressed to dst, as gzip(1) or zstd(1) would.
// compressBytes is b compressed by compress.
func compressBytes(t *testing.T, b []byte, compress func(io.Writer) io.WriteCloser) []byte {
	t.Helper()
	var out bytes.Buffer
	w := compress(&out)
	if _, err := w.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

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

// A docker-archive's checks (entry sizes, layer count, one image) are
// made on the file as Open opened it, and its blobs are read from that
// same open file, compressed or not: a file replaced at its path after
// Open (another writer, or a swap between check and read) changes
// nothing of what the artifact reads. The uncompressed one was opened
// again by path for each read.
func TestDockerArchiveReadsTheFileItChecked(t *testing.T) {
	ctx := context.Background()
	res := buildExample(t, build.Options{Name: "coredns", Format: pack.FormatImage})
	file := filepath.Join(t.TempDir(), "addon.tar")
	ref := writeBuilt(t, "docker-archive:"+file, res)
	a, err := source.Open(ctx, ref, source.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if err := os.Remove(file); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte("not the archive that was checked"), 0o644); err != nil {
		t.Fatal(err)
	}
	layers, err := a.Image.Layers()
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range layers {
		rc, err := l.Compressed()
		if err != nil {
			t.Fatalf("layer %d after the file was replaced: %v", i, err)
		}
		_, err = io.Copy(io.Discard, rc)
		rc.Close()
		if err != nil {
			t.Fatalf("layer %d after the file was replaced: %v", i, err)
		}
	}
}

// The decompressed copy of a compressed archive is bounded by the
// unpack's own image-bytes limit (unpack.Options.Limits.MaxImageBytes,
// --max-image-bytes), as a downloaded archive's is: its LimitError says
// LimitImageBytes, so a command names that flag, which must then move
// it. It was bounded by the default whatever the limit.
func TestCompressedArchiveBoundByImageBytesLimit(t *testing.T) {
	ctx := context.Background()
	res := buildExample(t, build.Options{Name: "coredns", Format: pack.FormatImage})
	dir := t.TempDir()
	for _, kind := range []string{"docker-archive", "oci-archive"} {
		plain := filepath.Join(dir, kind+".tar")
		writeBuilt(t, kind+":"+plain, res)
		file := plain + ".gz"
		compressFile(t, plain, file, func(w io.Writer) io.WriteCloser { return gzip.NewWriter(w) })
		ref, err := source.Parse(kind + ":" + file)
		if err != nil {
			t.Fatal(err)
		}
		const max = 1024 // less than the archive's tar headers alone
		_, err = source.Unpack(ctx, ref, source.Options{}, unpack.Options{Limits: safetree.Limits{MaxImageBytes: max}})
		var le *safetree.LimitError
		if !errors.As(err, &le) || le.Which != safetree.LimitImageBytes || le.Name != "decompressed archive size" || le.Limit != max {
			t.Errorf("%s with MaxImageBytes %d: %v (%+v), want the decompressed archive's LimitError of %d", file, max, err, le, max)
		}
	}
}
