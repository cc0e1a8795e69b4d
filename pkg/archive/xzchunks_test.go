package archive_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"slices"
	"testing"

	"github.com/addonpkg/addonpkg/pkg/archive"
)

// xzUncompressedChunks is one xz stream (check type None) of one block
// (an 8 MiB dictionary) whose LZMA2 chunks are uncompressed and hold
// chunks, the first resetting the dictionary.
func xzUncompressedChunks(chunks [][]byte) []byte {
	b := []byte("\xfd7zXZ\x00\x00\x00")
	b = binary.LittleEndian.AppendUint32(b, crc32.ChecksumIEEE(b[6:8]))
	h := []byte{2, 0, 0x21, 1, 0x16, 0, 0, 0}
	h = binary.LittleEndian.AppendUint32(h, crc32.ChecksumIEEE(h))
	b = append(b, h...)
	var total int
	for i, c := range chunks {
		ctrl := byte(2)
		if i == 0 {
			ctrl = 1
		}
		b = append(b, ctrl)
		b = binary.BigEndian.AppendUint16(b, uint16(len(c)-1))
		b = append(b, c...)
		total += len(c)
	}
	b = append(b, 0) // the end marker
	unpadded := len(b) - 12
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	return xzIndexAndFooter(b, 1, uint64(unpadded), uint64(total))
}

// ulikunitz/xz spends tens of µs and a new buffer of up to 32 KiB on
// each LZMA2 chunk, whatever it holds: a 512 KiB file of 131,072
// one-byte chunks (xz -d reads it) took 6 s, a 512 MiB download of them
// 100 minutes, for output far under MaxImageBytes. XzChunkSlack chunks
// are free, each one after them must follow a KiB of output, checked
// chunk by chunk: chunks that hold much at the end do not excuse tiny
// ones before them, which a caller's bound on the output never reaches.
func TestDecompressArchiveXzChunksBoundByOutput(t *testing.T) {
	tiny := make([][]byte, 1<<17)
	for i := range tiny {
		tiny[i] = []byte{'x'}
	}
	big := bytes.Repeat([]byte{'y'}, 64<<10)
	for _, tc := range []struct {
		name   string
		chunks [][]byte
	}{
		{"131072 one-byte chunks", tiny},
		{"2000 one-byte chunks, then 2 MiB in 64 KiB chunks", append(append([][]byte{}, tiny[:2000]...), slices.Repeat([][]byte{big}, 32)...)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := xzUncompressedChunks(tc.chunks)
			if len(tc.chunks) == len(tiny) {
				if out := runTool(t, b, "xz", "-dc"); len(out) != len(tiny) {
					t.Fatalf("xz -d read %d bytes, want %d", len(out), len(tiny))
				}
			}
			_, _, err := archive.DecompressArchive(bytes.NewReader(b), int64(len(b)))
			var ce *archive.XzChunksError
			if !errors.As(err, &ce) || !errors.Is(err, archive.ErrCompressionBounds) {
				t.Fatalf("DecompressArchive: %v, want an *XzChunksError", err)
			}
			want := archive.XzChunksError{Offset: 12 + 12 + 1025*4, Chunks: 1026, Bytes: 1025, Limit: 1025}
			if *ce != want {
				t.Errorf("got %+v, want %+v", *ce, want)
			}
		})
	}

	// What xz writes at a block size of 1 KiB, a chunk a block, and
	// chunks of 1 KiB after the free ones, read back.
	var plain bytes.Buffer
	for i := 0; plain.Len() < 4<<20; i++ {
		plain.WriteString("line of a manifest\n")
		plain.WriteByte(byte(i))
	}
	plain.Truncate(4 << 20)
	kib := make([][]byte, 4096)
	for i := range kib {
		kib[i] = plain.Bytes()[i<<10 : (i+1)<<10]
	}
	for name, b := range map[string][]byte{
		"xz --block-size=1KiB": runTool(t, plain.Bytes(), "xz", "-c", "-T1", "--block-size=1KiB"),
		"4096 chunks of 1 KiB": xzUncompressedChunks(kib),
	} {
		zr, _, err := archive.DecompressArchive(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got, err := io.ReadAll(zr)
		if err != nil || !bytes.Equal(got, plain.Bytes()) {
			t.Fatalf("%s: read %d bytes, %v; want the %d written", name, len(got), err, plain.Len())
		}
	}
}
