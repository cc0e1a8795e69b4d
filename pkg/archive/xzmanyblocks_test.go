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
