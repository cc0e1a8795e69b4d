package archive

import (
	"bufio"
	"bytes"
	"compress/bzip2"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"runtime"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/klauspost/pgzip"

	"github.com/addonpkg/addonpkg/pkg/mediatypes"
)

// Layer is a built layer: its compressed bytes (in memory, or beyond
// SpillBytes in an unnamed temporary file) and the digests computed while
// writing them. It implements v1.Layer.
type Layer struct {
	compressed  *spillBuffer
	digest      v1.Hash
	diffID      v1.Hash
	mediaType   types.MediaType
	compression mediatypes.Compression
	// Tar tells what the tarball holds.
	Tar *TarResult
}

// BuildLayer writes fsys as a reproducible tar, compresses it with c and
// returns the layer with media type mt.
func BuildLayer(fsys fs.FS, opts TarOptions, c mediatypes.Compression, mt mediatypes.MediaType) (*Layer, error) {
	buf := &spillBuffer{limit: SpillBytes}
	digester := newDigestWriter(buf)
	zw, err := Compressor(digester, c)
	if err != nil {
		return nil, err
	}
	res, err := WriteTar(zw, fsys, opts)
	if err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("compress layer: %w", err)
	}
	if buf.err != nil {
		return nil, fmt.Errorf("write layer: %w", buf.err)
	}
	return &Layer{compressed: buf, digest: digester.digest(), diffID: res.DiffID, mediaType: mt, compression: c, Tar: res}, nil
}

// Digest is the digest of the compressed bytes.
func (l *Layer) Digest() (v1.Hash, error) { return l.digest, nil }

// DiffID is the digest of the uncompressed tar.
func (l *Layer) DiffID() (v1.Hash, error) { return l.diffID, nil }

// Compressed returns the layer's blob.
func (l *Layer) Compressed() (io.ReadCloser, error) {
	return io.NopCloser(l.compressed.reader()), nil
}

// Uncompressed returns the tar stream.
func (l *Layer) Uncompressed() (io.ReadCloser, error) {
	return Decompress(l.compressed.reader(), l.compression)
}

// Size is the blob's size.
func (l *Layer) Size() (int64, error) { return l.compressed.size, nil }

// InMemory reports whether the layer's compressed bytes are held in
// memory rather than in a temporary file (SpillBytes).
func (l *Layer) InMemory() bool { return l.compressed.file == nil }

// SpillBytes is how many compressed bytes of a layer BuildLayer holds in
// memory: a larger layer goes to a temporary file, unlinked as soon as it
// is created (it goes away with the Layer, whatever happens), so that
// building a large add-on does not hold its layer. Where no temporary
// file can be made, the layer stays in memory.
const SpillBytes = 8 << 20

// spillBuffer holds bytes in memory up to limit, then in an unnamed
// temporary file.
type spillBuffer struct {
	limit int64
	mem   chunks
	file  *os.File
	size  int64
	err   error // of the file, once written to
}

func (b *spillBuffer) Write(p []byte) (int, error) {
	if b.file == nil && b.mem.size+int64(len(p)) > b.limit {
		b.spill()
	}
	if b.file == nil {
		b.size += int64(len(p))
		return b.mem.Write(p)
	}
	n, err := b.file.Write(p)
	b.size += int64(n)
	if err != nil {
		b.err = err
	}
	return n, err
}

// spill moves the bytes held so far to a new temporary file, if one can
// be made and unlinked while open.
func (b *spillBuffer) spill() {
	f, err := os.CreateTemp("", "addonpkg-layer-*")
	if err != nil {
		b.limit = math.MaxInt64 // no file: stay in memory
		return
	}
	if err := os.Remove(f.Name()); err != nil {
		// A system that cannot unlink an open file would leave it behind.
		f.Close()
		os.Remove(f.Name())
		b.limit = math.MaxInt64
		return
	}
	for _, p := range b.mem.parts {
		if _, err := f.Write(p); err != nil {
			f.Close()
			b.limit = math.MaxInt64
			return
		}
	}
	b.file, b.mem = f, chunks{}
}

func (b *spillBuffer) reader() io.Reader {
	if b.file != nil {
		return io.NewSectionReader(b.file, 0, b.size)
	}
	return b.mem.reader()
}

// chunks holds a layer's compressed bytes in pieces of up to 4 MiB: a
// single growing buffer would copy (and clear) the bytes over and over on
// the way to a large layer's size.
type chunks struct {
	parts [][]byte
	size  int64
}

const chunkSize = 4 << 20

func (c *chunks) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		if len(c.parts) == 0 || len(c.parts[len(c.parts)-1]) == cap(c.parts[len(c.parts)-1]) {
			// Start small: most layers are small.
			c.parts = append(c.parts, make([]byte, 0, min(chunkSize, max(len(p), 64<<10))))
		}
		last := &c.parts[len(c.parts)-1]
		k := min(len(p), cap(*last)-len(*last))
		*last = append(*last, p[:k]...)
		p = p[k:]
	}
	c.size += int64(n)
	return n, nil
}

func (c *chunks) reader() io.Reader {
	rs := make([]io.Reader, len(c.parts))
	for i, p := range c.parts {
		rs[i] = bytes.NewReader(p)
	}
	return io.MultiReader(rs...)
}

// MediaType is the layer's media type.
func (l *Layer) MediaType() (types.MediaType, error) { return l.mediaType, nil }

// nopWriteCloser lets an uncompressed stream share the compressor's shape.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// Compressor wraps w in the compressor for c. Its output is deterministic:
// gzip headers carry no name and no time; gzip compresses 1 MiB blocks on
// every core, each block primed with the tail of the one before, so the
// bytes depend on the block size and never on the number of cores or on
// timing; zstd runs single-threaded.
func Compressor(w io.Writer, c mediatypes.Compression) (io.WriteCloser, error) {
	switch c {
	case mediatypes.Gzip:
		zw, err := pgzip.NewWriterLevel(w, pgzip.DefaultCompression)
		if err != nil {
			return nil, err
		}
		// pgzip writes the zero time.Time as a non-zero MTIME; RFC 1952
		// says 0 means "no time".
		zw.ModTime = time.Unix(0, 0)
		if err := zw.SetConcurrency(gzipBlockSize, max(2, runtime.GOMAXPROCS(0))); err != nil {
			return nil, err
		}
		return zw, nil
	case mediatypes.Zstd:
		return zstd.NewWriter(w, zstd.WithEncoderConcurrency(1), zstd.WithEncoderLevel(zstd.SpeedDefault))
	case mediatypes.None:
		return nopWriteCloser{w}, nil
	}
	return nil, fmt.Errorf("unknown compression %q (want gzip, zstd or none)", c)
}

// gzipBlockSize is part of what the compressed bytes of a layer depend on:
// changing it changes every layer digest.
const gzipBlockSize = 1 << 20

// ParseCompression parses the name of a compression ("gzip", "zstd", "none").
func ParseCompression(s string) (mediatypes.Compression, error) {
	switch c := mediatypes.Compression(s); c {
	case mediatypes.Gzip, mediatypes.Zstd, mediatypes.None:
		return c, nil
	}
	return "", fmt.Errorf("unknown compression %q (want gzip, zstd or none)", s)
}

// Detect tells a stream's compression from its first bytes; anything that
// is neither gzip nor zstd is taken as an uncompressed tar
// (mediatypes.DetectCompression).
func Detect(head []byte) mediatypes.Compression { return mediatypes.DetectCompression(head) }

// Decompress returns the tar stream inside r (a layer, an archive). The
// magic bytes decide, so a mislabelled layer still reads; want is only
// what the media type claims. An xz or bzip2 stream is refused
// (ErrLayerCompression): no layer media type has them, and read as a tar
// they would fail on a "bad header" that names no cause.
func Decompress(r io.Reader, want mediatypes.Compression) (io.ReadCloser, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	head, err := br.Peek(mediatypes.DetectLen)
	if err != nil && err != io.EOF {
		return nil, fmt.Errorf("read: %w", err)
	}
	switch c := Detect(head); c {
	case mediatypes.Gzip:
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("open gzip stream: %w", err)
		}
		zr.Multistream(false)
		return &gzipMembers{br: br, zr: zr}, nil
	case mediatypes.Zstd:
		// A small window cap keeps a hostile frame from claiming memory.
		zr, err := zstd.NewReader(br, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxWindow(MaxDecoderWindow), zstd.WithDecoderLowmem(true))
		if err != nil {
			return nil, fmt.Errorf("open zstd stream: %w", err)
		}
		return zr.IOReadCloser(), nil
	case mediatypes.Xz, mediatypes.Bzip2:
		return nil, fmt.Errorf("%w: the bytes are %s-compressed; a layer is gzip, zstd or an uncompressed tar", ErrLayerCompression, c)
	}
	return io.NopCloser(br), nil
}

// gzipMembers reads the members of a gzip stream one after another, as
// gzip -d does, and ends at zero bytes after the last member: tools that
// write to block devices pad the compressed stream to a block with zeros,
// and gzip(1) and Python's gzip read past them silently. Go's gzip reader
// refuses them ("invalid header"), and so does containerd's applier, which
// drains the decompressor after the tar. Any other byte after a member is
// still refused (gzip(1) warns and exits 2). The padding is read, not
// skipped: a layer's bytes are hashed as they are read, so the zeros
// count in its digest and size like every other byte.
type gzipMembers struct {
	br   *bufio.Reader
	zr   *gzip.Reader
	done bool
}

// ErrGzipTrailingData marks bytes other than zeros after the last member
// of a gzip stream. It matches gzip.ErrHeader, what it was before.
var ErrGzipTrailingData error = gzipTrailing{}

type gzipTrailing struct{}

func (gzipTrailing) Error() string {
	return "gzip: data after the last member that is neither a member nor zero padding"
}
func (gzipTrailing) Is(t error) bool { return t == gzip.ErrHeader }

func (g *gzipMembers) Read(p []byte) (int, error) {
	for !g.done {
		n, err := g.zr.Read(p)
		if err != io.EOF {
			return n, err
		}
		if err := g.next(); err != nil {
			return n, err
		}
		if n > 0 {
			return n, nil
		}
	}
	return 0, io.EOF
}

// next starts the member that follows one that ended, or reads the zero
// padding to the end.
func (g *gzipMembers) next() error {
	head, err := g.br.Peek(2)
	if len(head) == 0 && err == io.EOF {
		g.done = true
		return nil
	}
	if len(head) == 2 && head[0] == 0x1f && head[1] == 0x8b {
		if err := g.zr.Reset(g.br); err != nil {
			return err
		}
		g.zr.Multistream(false)
		return nil
	}
	for {
		b, err := g.br.ReadByte()
		if err == io.EOF {
			g.done = true
			return nil
		}
		if err != nil {
			return err
		}
		if b != 0 {
			return ErrGzipTrailingData
		}
	}
}

func (g *gzipMembers) Close() error { return g.zr.Close() }

// ErrLayerCompression marks a layer compressed in a way that no layer
// media type allows: xz or bzip2, which compress whole archives
// (DecompressArchive), never layers.
var ErrLayerCompression = errors.New("not a layer compression")

// ErrCompressionBounds marks a compressed stream whose decoder would need
// more memory or work than allowed: an xz block with a dictionary over
// MaxDecoderWindow, an xz archive of more LZMA2 chunks than its output
// justifies (*XzChunksError).
var ErrCompressionBounds = errors.New("compressed stream over the decoder's memory bound")

// DecompressArchive returns the tar stream inside the size bytes of r, an
// archive (docker save or an oci-archive, compressed or not) and the
// compression its first bytes name. docker load reads archives
// compressed with gzip, bzip2, xz or zstd, so DecompressArchive does too:
// xz and bzip2 are refused only in layers (Decompress). Every block
// header of an xz archive is checked against MaxDecoderWindow before the
// decoder allocates a dictionary for it, and each block is decoded from
// the bytes a walk like the check's finds (xzReader). The caller bounds the output.
func DecompressArchive(r io.ReaderAt, size int64) (io.ReadCloser, mediatypes.Compression, error) {
	head := make([]byte, mediatypes.DetectLen)
	n, err := r.ReadAt(head, 0)
	if err != nil && err != io.EOF {
		return nil, "", fmt.Errorf("read: %w", err)
	}
	c := Detect(head[:n])
	sr := io.NewSectionReader(r, 0, size)
	switch c {
	case mediatypes.Xz:
		if err := walkXz(sr, size, MaxDecoderWindow); err != nil {
			return nil, c, err
		}
		return io.NopCloser(newXzReader(sr, size)), c, nil
	case mediatypes.Bzip2:
		// bzip2 blocks are at most 900 kB: the decoder's memory is bounded.
		return io.NopCloser(bzip2.NewReader(bufio.NewReaderSize(sr, 64<<10))), c, nil
	}
	zr, err := Decompress(sr, c)
	return zr, c, err
}
