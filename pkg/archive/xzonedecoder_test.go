package archive_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os/exec"
	"testing"

	"github.com/addonpkg/addonpkg/pkg/archive"
)

// oneByteXzBlocks is one xz stream (check type None) of n blocks that
// each hold one byte of out in an uncompressed chunk that resets the
// dictionary: what xz --block-size=1 writes, 20 bytes a block. first is
// the control byte of each block's chunk: 1 (with a dictionary reset)
// is valid.
func oneByteXzBlocks(out []byte, first byte) []byte {
	b := []byte("\xfd7zXZ\x00\x00\x00")
	b = binary.LittleEndian.AppendUint32(b, crc32.ChecksumIEEE(b[6:8]))
	for _, c := range out {
		h := []byte{2, 0, 0x21, 1, 0, 0, 0, 0}
		h = binary.LittleEndian.AppendUint32(h, crc32.ChecksumIEEE(h))
		b = append(b, h...)
		b = append(b, first, 0, 0, c, 0, 0, 0, 0) // the chunk, the end marker, padding
	}
	return xzIndexAndFooter(b, len(out), 17, 1)
}

// Each xz block got a new LZMA2 decoder (ulikunitz/xz's Reader2 cannot
// be reset): 22 µs a block, 40 times xz -d, so 131,072 one-byte blocks
// took 3 s for 128 KiB of output, and a 512 MiB download of them many
// minutes that no bound on the output limits. One decoder reads every
// block while the dictionaries it needs are the same size; what xz
// writes at any block size reads back the same.
func TestDecompressArchiveXzOneDecoderForManyBlocks(t *testing.T) {
	want := bytes.Repeat([]byte("addonpkg"), 1024)
	var plain bytes.Buffer
	for i := range 3000 {
		fmt.Fprintf(&plain, "line %d of a manifest\n", i*7919%100003)
	}
	for _, tc := range []struct {
		name     string
		in       []byte
		decoders int
	}{
		{"8192 one-byte blocks", oneByteXzBlocks(want, 1), 1},
		{"xz --block-size=1", runTool(t, want[:2000], "xz", "-c", "-T1", "--block-size=1"), 1},
		{"xz --block-size=100", runTool(t, plain.Bytes(), "xz", "-c", "-T1", "--block-size=100"), 1},
		{"xz -9 --block-size=4KiB", runTool(t, plain.Bytes(), "xz", "-c", "-9", "-T1", "--block-size=4KiB"), 1},
		// 8 KiB blocks need an 8 KiB dictionary, the last (smaller) one
		// the smallest: two decoders.
		{"xz --block-size=8KiB", runTool(t, plain.Bytes(), "xz", "-c", "-T1", "--block-size=8KiB"), 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantOut := runTool(t, tc.in, "xz", "-dc")
			got, decoders, err := archive.XzDecoders(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, wantOut) {
				t.Fatalf("read %d bytes, xz -d reads %d", len(got), len(wantOut))
			}
			if decoders != tc.decoders {
				t.Errorf("made %d decoders, want %d", decoders, tc.decoders)
			}
		})
	}
}

// One decoder carries its dictionary from block to block, so a block
// whose first chunk does not reset it could reach back into the block
// before. xz -t refuses such a block; so does the walk.
func TestDecompressArchiveXzBlockMustResetDictionary(t *testing.T) {
	b := oneByteXzBlocks([]byte("ab"), 2) // uncompressed, no reset
	if err := runToolErr(b, "xz", "-t"); err == nil {
		t.Fatal("xz -t reads blocks that do not reset the dictionary")
	}
	_, _, err := archive.DecompressArchive(bytes.NewReader(b), int64(len(b)))
	if !errors.Is(err, archive.ErrXzStructure) {
		t.Fatalf("DecompressArchive: %v, want ErrXzStructure", err)
	}
}

// A block's chunk headers must say what the index does: the reader
// reads a block up to that size and relies on it being the end of its
// last chunk.
func TestDecompressArchiveXzChunksMatchIndex(t *testing.T) {
	b := oneByteXzBlocks([]byte("a"), 1)
	b = xzIndexAndFooter(b[:len(b)-12-8], 1, 17, 0) // the index (8 bytes) says it holds nothing
	if err := runToolErr(b, "xz", "-t"); err == nil {
		t.Fatal("xz -t reads a block that holds more than its index says")
	}
	_, _, err := archive.DecompressArchive(bytes.NewReader(b), int64(len(b)))
	if !errors.Is(err, archive.ErrXzStructure) {
		t.Fatalf("DecompressArchive: %v, want ErrXzStructure", err)
	}
}

// runToolErr runs the real command on in and returns its error.
func runToolErr(in []byte, name string, args ...string) error {
	cmd := exec.Command(name, args...)
	cmd.Stdin = bytes.NewReader(in)
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	return cmd.Run()
}

// BenchmarkDecompressArchiveXzTinyBlocks reads, without the bound on
// LZMA2 chunks (which refuses the first), 131,072 one-byte blocks
// (2.5 MiB, uncompressed chunks) and what xz --block-size=64 writes of
// 2 MiB of text (32,768 blocks of LZMA chunks). With a decoder a block,
// 22 µs a block, 40 times xz -d. What is left for one-byte blocks is
// mostly ulikunitz/xz's copy of each uncompressed chunk (a new 4 KiB
// buffer a chunk, whatever the block).
func BenchmarkDecompressArchiveXzTinyBlocks(b *testing.B) {
	var text bytes.Buffer
	for i := 0; text.Len() < 2<<20; i++ {
		fmt.Fprintf(&text, "line %d\n", i*7919%100003)
	}
	cmd := exec.Command("xz", "-c", "-T1", "--block-size=64")
	cmd.Stdin = bytes.NewReader(text.Bytes())
	lzmaBlocks, err := cmd.Output()
	if err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name string
		in   []byte
		out  int64
	}{
		{"one-byte blocks", oneByteXzBlocks(bytes.Repeat([]byte{'x'}, 1<<17), 1), 1 << 17},
		{"xz --block-size=64", lzmaBlocks, int64(text.Len())},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(bc.in)))
			for b.Loop() {
				out, _, err := archive.XzDecoders(bc.in)
				if int64(len(out)) != bc.out || err != nil {
					b.Fatalf("read %d bytes, %v", len(out), err)
				}
			}
		})
	}
}
