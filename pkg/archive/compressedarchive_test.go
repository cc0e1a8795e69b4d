package archive_test

import (
	"archive/tar"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os/exec"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/ulikunitz/xz/lzma"

	"github.com/addonpkg/addonpkg/pkg/archive"
	"github.com/addonpkg/addonpkg/pkg/mediatypes"
)

// sampleTar is a tar of a few files, some of them large enough to make
// several xz blocks at a small block size.
func sampleTar(t *testing.T) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for i := range 4 {
		body := bytes.Repeat([]byte(fmt.Sprintf("line %d of a manifest\n", i)), 2000)
		if err := tw.WriteHeader(&tar.Header{Name: fmt.Sprintf("f%d.yaml", i), Mode: 0o644, Size: int64(len(body))}); err != nil {
			t.Fatal(err)
		}
		tw.Write(body)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// runTool pipes in through the real command (xz, bzip2), as a user's
// `docker save x | xz > a.tar.xz` does.
func runTool(t *testing.T, in []byte, name string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Stdin = bytes.NewReader(in)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %v: %v", name, args, err)
	}
	return out
}

// docker load reads archives compressed with gzip, bzip2, xz and zstd;
// DecompressArchive reads what the real xz and bzip2 write, in every
// shape they have: xz's presets up to -9e (a 64 MiB dictionary), its
// multi-threaded output (several blocks with their sizes in their
// headers), concatenated streams (xz -d reads them), bzip2 at any block
// size. They were read as uncompressed tars and refused.
func TestDecompressArchiveReadsXzAndBzip2(t *testing.T) {
	plain := sampleTar(t)
	xz1 := runTool(t, plain, "xz", "-c")
	for _, c := range []struct {
		name string
		blob []byte
		want mediatypes.Compression
	}{
		{"xz", xz1, mediatypes.Xz},
		{"xz -9e", runTool(t, plain, "xz", "-c", "-9e"), mediatypes.Xz},
		{"xz -0 --check=sha256", runTool(t, plain, "xz", "-c", "-0", "--check=sha256"), mediatypes.Xz},
		{"xz -T2 --block-size=8KiB", runTool(t, plain, "xz", "-c", "-T2", "--block-size=8KiB"), mediatypes.Xz},
		{"xz --check=none", runTool(t, plain, "xz", "-c", "--check=none"), mediatypes.Xz},
		{"two xz streams with padding", append(append(runTool(t, plain[:len(plain)/2], "xz", "-c"), 0, 0, 0, 0), runTool(t, plain[len(plain)/2:], "xz", "-c")...), mediatypes.Xz},
		{"bzip2", runTool(t, plain, "bzip2", "-c"), mediatypes.Bzip2},
		{"bzip2 -1", runTool(t, plain, "bzip2", "-c", "-1"), mediatypes.Bzip2},
		{"gzip", runTool(t, plain, "gzip", "-c"), mediatypes.Gzip},
		{"zstd", runTool(t, plain, "zstd", "-c", "-q"), mediatypes.Zstd},
		{"none", plain, mediatypes.None},
	} {
		t.Run(c.name, func(t *testing.T) {
			zr, got, err := archive.DecompressArchive(bytes.NewReader(c.blob), int64(len(c.blob)))
			if err != nil {
				t.Fatal(err)
			}
			defer zr.Close()
			b, err := io.ReadAll(zr)
			if err != nil || got != c.want || !bytes.Equal(b, plain) {
				t.Errorf("%s, %d bytes, %v; want %s, the %d bytes of the tar", got, len(b), err, c.want, len(plain))
			}
		})
	}

	// Cut short anywhere, an xz archive is an error, never a shorter tar.
	for _, n := range []int{11, 20, len(xz1) / 2, len(xz1) - 1} {
		zr, _, err := archive.DecompressArchive(bytes.NewReader(xz1[:n]), int64(n))
		if err == nil {
			_, err = io.ReadAll(zr)
		}
		if err == nil {
			t.Errorf("xz cut at %d of %d bytes: read", n, len(xz1))
		}
	}
}

// withDict sets the LZMA2 dictionary of the xz block whose header starts
// at off (one filter, no sizes: what single-threaded xz writes) to dict,
// and fixes the header's CRC32, as a hostile writer would.
func withDict(t *testing.T, b []byte, off int, dict int64) []byte {
	t.Helper()
	b = bytes.Clone(b)
	hsize := (int(b[off]) + 1) * 4
	if b[off+1] != 0 || b[off+2] != 0x21 || b[off+3] != 1 {
		t.Fatalf("block header at %d is not one LZMA2 filter without sizes: % x", off, b[off:off+hsize])
	}
	b[off+4] = lzma.EncodeDictCap(dict)
	binary.LittleEndian.PutUint32(b[off+hsize-4:], crc32.ChecksumIEEE(b[off:off+hsize-4]))
	return b
}

// A decoder allocates an xz block's dictionary from its header, before it
// reads the block's data: a 3 kB file could claim 1.5 GiB. Every block
// of every stream is checked against MaxDecoderWindow first, not only the first
// one. Without the check both files decoded, after allocating 128 MiB.
func TestDecompressArchiveBoundsXzDictionaries(t *testing.T) {
	plain := sampleTar(t)
	one := runTool(t, plain, "xz", "-c", "-1")
	if _, _, err := archive.DecompressArchive(bytes.NewReader(one), int64(len(one))); err != nil {
		t.Fatalf("the unpatched file: %v", err)
	}
	big := int64(archive.MaxDecoderWindow) * 2
	for name, b := range map[string][]byte{
		"first block":                 withDict(t, one, 12, big),
		"first block of a 2nd stream": append(bytes.Clone(one), withDict(t, one, 12, big)...),
	} {
		zr, _, err := archive.DecompressArchive(bytes.NewReader(b), int64(len(b)))
		if err == nil {
			_, err = io.ReadAll(zr)
		}
		if !errors.Is(err, archive.ErrCompressionBounds) {
			t.Errorf("%s with a %d MiB dictionary: %v, want ErrCompressionBounds", name, big>>20, err)
		}
	}
}

// The image specification defines gzip, zstd and uncompressed layers
// only. A layer in xz or bzip2 is refused as such (ErrLayerCompression),
// whatever its media type says: read as an uncompressed tar it failed on
// "invalid tar header", which names no cause.
func TestDecompressRefusesXzAndBzip2Layers(t *testing.T) {
	plain := sampleTar(t)
	for name, b := range map[string][]byte{
		"xz":    runTool(t, plain, "xz", "-c"),
		"bzip2": runTool(t, plain, "bzip2", "-c"),
	} {
		for _, want := range []mediatypes.Compression{mediatypes.Gzip, mediatypes.None} {
			if _, err := archive.Decompress(bytes.NewReader(b), want); !errors.Is(err, archive.ErrLayerCompression) {
				t.Errorf("%s layer typed %s: %v, want ErrLayerCompression", name, want, err)
			}
		}
	}
}

// bzip2 is told by ten bytes, not docker's three: a tar whose first entry
// is named "BZh9..." is still a tar.
func TestDetectBzip2NeedsItsBlockMagic(t *testing.T) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	tw.WriteHeader(&tar.Header{Name: "BZh9.yaml", Mode: 0o644})
	tw.Close()
	if got := archive.Detect(buf.Bytes()); got != mediatypes.None {
		t.Errorf("a tar whose first entry is BZh9.yaml: %s, want none", got)
	}
}

// FuzzDecompressArchive: whatever the bytes, the xz container walk and
// the decoders return an error or a stream, never panic, never loop.
func FuzzDecompressArchive(f *testing.F) {
	f.Add([]byte("\xfd7zXZ\x00\x00\x01"))
	f.Add([]byte("BZh91AY&SY"))
	f.Add([]byte{0xfd, '7', 'z', 'X', 'Z', 0, 0, 4, 0xe6, 0xd6, 0xb4, 0x46, 0x02, 0x00, 0x21, 0x01, 0x16, 0, 0, 0, 0x74, 0x2f, 0xe5, 0xa3, 0x01, 0x00, 0x04, 'a', 'b', 'c', 'd', 0x0a, 0x00})
	f.Fuzz(func(t *testing.T, b []byte) {
		zr, _, err := archive.DecompressArchive(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			return
		}
		io.Copy(io.Discard, io.LimitReader(zr, 1<<20))
		zr.Close()
	})
}

// Zero bytes after the last member of a gzip stream (a tool that pads its
// output to a block) end the stream, as they do for gzip -d and Python's
// gzip; Go's gzip reader refused them ("invalid header"). Members still
// follow one another, and any other trailing byte is still refused, as
// a gzip.ErrHeader.
func TestDecompressGzipZeroPadding(t *testing.T) {
	plain := sampleTar(t)
	gz := runTool(t, plain, "gzip", "-c", "-n")
	half := len(plain) / 2
	twoMembers := append(runTool(t, plain[:half], "gzip", "-c", "-n"), runTool(t, plain[half:], "gzip", "-c", "-n")...)
	pad := func(b []byte, n int) []byte { return append(bytes.Clone(b), make([]byte, n)...) }
	read := func(b []byte) ([]byte, error) {
		zr, err := archive.Decompress(bytes.NewReader(b), mediatypes.Gzip)
		if err != nil {
			return nil, err
		}
		defer zr.Close()
		return io.ReadAll(zr)
	}
	for name, b := range map[string][]byte{
		"no padding":                gz,
		"one zero":                  pad(gz, 1),
		"to a 10240-byte record":    pad(gz, 10240-len(gz)%10240),
		"two members, then zeros":   pad(twoMembers, 512),
		"two members, no padding":   twoMembers,
		"a megabyte of zero blocks": pad(gz, 1<<20),
	} {
		if got, err := read(b); err != nil || !bytes.Equal(got, plain) {
			t.Errorf("%s: %d bytes, %v; want the %d bytes of the tar", name, len(got), err, len(plain))
		}
	}
	for name, b := range map[string][]byte{
		"zeros then a byte": append(pad(gz, 100), 1),
		"text":              append(bytes.Clone(gz), "junk"...),
		"zeros then a gzip": append(pad(gz, 4), gz...),
	} {
		_, err := read(b)
		if !errors.Is(err, archive.ErrGzipTrailingData) || !errors.Is(err, gzip.ErrHeader) {
			t.Errorf("%s after the stream: %v, want ErrGzipTrailingData (a gzip.ErrHeader)", name, err)
		}
	}
}
