package archive_test

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"io"
	"runtime"
	"testing"

	"github.com/addonpkg/addonpkg/pkg/archive"
)

// hideBlock builds an xz file in which a block with a dictionary of dict
// bytes is where the container walk sees compressed data: the first
// block's LZMA chunk claims more packed bytes than its range coder reads.
// The walk skips what the chunk header claims; a decoder that reads the
// chunk by its range coder, as ulikunitz/xz does, goes on after the bytes
// it read and finds the hidden block's header there.
func hideBlock(t *testing.T, one []byte, size int, dict int64) []byte {
	t.Helper()
	const start = 12 // the first block, after the stream header
	hsize := (int(one[start]) + 1) * 4
	c := start + hsize // its first chunk
	if one[c] < 0xe0 {
		t.Fatalf("first chunk %#x is not an LZMA chunk with a dictionary reset", one[c])
	}
	packed := int(binary.BigEndian.Uint16(one[c+3:c+5])) + 1
	chunk := one[c : c+6+packed]
	if one[c+6+packed] != 0 {
		t.Fatalf("the block has more than one chunk")
	}
	pad := func(b []byte, from int) []byte {
		for (len(b)-from)%4 != 0 {
			b = append(b, 0)
		}
		return b
	}

	// What the decoder reads after the chunk's real data: the end of the
	// first block, then a second block, whose header claims dict.
	hidden := []byte{0}
	hidden = pad(hidden, -(hsize + len(chunk)))
	second := len(hidden)
	hidden = append(hidden, one[start:start+hsize]...)
	hidden = withDict(t, hidden, second, dict)
	hidden = append(hidden, chunk...)
	hidden = append(hidden, 0)
	hidden = pad(hidden, second)

	// What the walk reads: one chunk whose packed data runs over the
	// hidden bytes, the end of the block, an index that lists that block
	// as the walk sees it, and a footer.
	b := bytes.Clone(one[:c])
	b = append(b, chunk[:6]...)
	binary.BigEndian.PutUint16(b[c+3:], uint16(packed+len(hidden)-1))
	b = append(b, chunk[6:]...)
	b = append(b, hidden...)
	b = append(b, 0)
	unpadded := len(b) - start
	b = pad(b, start)
	index := len(b)
	b = append(b, 0, 1)
	b = binary.AppendUvarint(b, uint64(unpadded))
	b = binary.AppendUvarint(b, uint64(size))
	b = pad(b, 0)
	b = binary.LittleEndian.AppendUint32(b, crc32.ChecksumIEEE(b[index:]))
	f := binary.LittleEndian.AppendUint32(nil, uint32((len(b)-index)/4-1))
	f = append(f, one[6:8]...) // the stream's flags
	b = binary.LittleEndian.AppendUint32(b, crc32.ChecksumIEEE(f))
	b = append(b, f...)
	return append(b, 'Y', 'Z')
}

// The dictionary bound holds for a block that only the decoder sees: an
// LZMA chunk whose header claims more packed bytes than its data takes
// must not let the decoder read a block the bound never checked.
func TestDecompressArchiveBoundsHiddenXzBlock(t *testing.T) {
	plain := bytes.Repeat([]byte("apiVersion: v1\nkind: ConfigMap\n"), 200)
	one := runTool(t, plain, "xz", "-c", "-1", "--check=none")
	dict := int64(archive.MaxDecoderWindow) * 4
	b := hideBlock(t, one, len(plain), dict)

	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	zr, _, err := archive.DecompressArchive(bytes.NewReader(b), int64(len(b)))
	if err == nil {
		_, err = io.ReadAll(zr)
	}
	runtime.ReadMemStats(&after)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > uint64(archive.MaxDecoderWindow) {
		t.Errorf("the decoder allocated %d MiB, more than the %d MiB bound", grew>>20, archive.MaxDecoderWindow>>20)
	}
	if err == nil {
		t.Fatalf("a chunk that claims bytes it does not take: read, want an error")
	}
	t.Logf("err: %v", err)
}
