package archive_test

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"io"
	"runtime"
	"testing"
	"time"

	"github.com/addonpkg/addonpkg/pkg/archive"
)

// xzVLI appends v as an xz variable-length integer.
func xzVLI(b []byte, v uint64) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

// emptyXzBlocks is one xz stream (check type None) of n blocks that each
// hold nothing: a 12-byte block header stating the smallest LZMA2
// dictionary, the end marker, padding; 16 bytes a block. xz -d reads it.
func emptyXzBlocks(n int) []byte {
	b := []byte("\xfd7zXZ\x00\x00\x00")
	b = binary.LittleEndian.AppendUint32(b, crc32.ChecksumIEEE(b[6:8]))
	for range n {
		h := []byte{2, 0, 0x21, 1, 0, 0, 0, 0}
		h = binary.LittleEndian.AppendUint32(h, crc32.ChecksumIEEE(h))
		b = append(b, h...)
		b = append(b, 0, 0, 0, 0) // the end marker, padding
	}
	return xzIndexAndFooter(b, n, 13, 0)
}

// xzIndexAndFooter ends the stream in b (check type None, whose blocks
// all measure unpadded and hold uncompressed bytes) with its index and
// footer.
func xzIndexAndFooter(b []byte, n int, unpadded, uncompressed uint64) []byte {
	idx := len(b)
	b = append(b, 0)
	b = xzVLI(b, uint64(n))
	for range n {
		b = xzVLI(xzVLI(b, unpadded), uncompressed)
	}
	for (len(b)-idx)%4 != 0 {
		b = append(b, 0)
	}
	b = binary.LittleEndian.AppendUint32(b, crc32.ChecksumIEEE(b[idx:]))
	f := binary.LittleEndian.AppendUint32(nil, uint32((len(b)-idx)/4-1))
	f = append(f, 0, 0)
	b = binary.LittleEndian.AppendUint32(b, crc32.ChecksumIEEE(f))
	b = append(b, f...)
	return append(b, 'Y', 'Z')
}

// Each xz block was decoded through a new 64 KiB read buffer, whatever
// its size: a 295 kB file of 16,384 empty blocks, which xz -d reads,
// took 1.1 GiB of allocations (4.4 GiB and 4 s for 1.1 MB). One buffer
// serves every block; what is left is the decoder's own state, a few KiB
// a block.
func TestDecompressArchiveXzManyEmptyBlocks(t *testing.T) {
	const n = 16384
	b := emptyXzBlocks(n)
	if out := runTool(t, b, "xz", "-dc"); len(out) != 0 {
		t.Fatalf("xz -d read %d bytes, want none", len(out))
	}

	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	zr, _, err := archive.DecompressArchive(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(zr)
	if err != nil || len(got) != 0 {
		t.Fatalf("read %d bytes, %v; want none, no error", len(got), err)
	}
	runtime.ReadMemStats(&after)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > n*16<<10 {
		t.Errorf("%d empty blocks (%d bytes) took %d MiB of allocations and %v, over 16 KiB a block", n, len(b), grew>>20, time.Since(start))
	}
}

// countingReaderAt counts the reads of a file: each is a system call.
type countingReaderAt struct {
	r     io.ReaderAt
	reads int
}

func (c *countingReaderAt) ReadAt(p []byte, off int64) (int, error) {
	c.reads++
	return c.r.ReadAt(p, off)
}

// The walk that checks an xz file before it is decoded kept every block
// it found, 56 bytes for each 16-byte empty block: 3.5 times the file's
// size, held while the archive is read (a 2 GiB file, 7 GiB). The
// blocks are walked again as they are decoded, and nothing is held per
// block. The walk read the file a few bytes at a time, a ReadAt (from a
// file, a system call) for each header byte and integer: 11 s for the
// 4.7 MB of 262,144 empty blocks from a file. It reads a window at a
// time.
func TestDecompressArchiveXzWalkHoldsNoBlocks(t *testing.T) {
	const n = 1 << 18
	b := emptyXzBlocks(n)
	f := &countingReaderAt{r: bytes.NewReader(b)}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	zr, _, err := archive.DecompressArchive(f, int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	if held := int64(after.HeapAlloc) - int64(before.HeapAlloc); held > 1<<20 {
		t.Errorf("after the walk of %d empty blocks (%d bytes), the reader holds %d KiB", n, len(b), held>>10)
	}
	if f.reads > len(b)/1024 {
		t.Errorf("the walk of %d bytes read the file %d times, more than once a KiB", len(b), f.reads)
	}
	if n, err := io.Copy(io.Discard, zr); n != 0 || err != nil {
		t.Fatalf("read %d bytes, %v; want none, no error", n, err)
	}
	zr.Close()
}

// Many empty streams one after another (xz -d reads them all) made the
// walks read the file six times a stream (three in each walk: its
// stream header, its index and a window of its own): 788,000 reads
// (from a file, system calls) and 6 s for 4 MB. Each walk's window
// follows into the next stream.
func TestDecompressArchiveXzManyStreams(t *testing.T) {
	const n = 1 << 17
	b := bytes.Repeat(emptyXzBlocks(0), n)
	if out := runTool(t, b, "xz", "-dc"); len(out) != 0 {
		t.Fatalf("xz -d read %d bytes, want none", len(out))
	}
	f := &countingReaderAt{r: bytes.NewReader(b)}
	zr, _, err := archive.DecompressArchive(f, int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := io.Copy(io.Discard, zr); got != 0 || err != nil {
		t.Fatalf("read %d bytes, %v; want none, no error", got, err)
	}
	zr.Close()
	if f.reads > len(b)/1024 {
		t.Errorf("%d empty streams (%d bytes) took %d reads of the file, more than one a KiB", n, len(b), f.reads)
	}
}
