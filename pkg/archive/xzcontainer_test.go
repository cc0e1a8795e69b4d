package archive_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"os/exec"
	"testing"

	"github.com/addonpkg/addonpkg/pkg/archive"
)

// xzParts locates the parts of a one-stream, one-block xz file: the
// block header at 12 (hsize bytes), the index at idx, the footer in the
// last 12 bytes.
func xzParts(t *testing.T, b []byte) (hsize, idx int) {
	t.Helper()
	back := int(binary.LittleEndian.Uint32(b[len(b)-8:]))
	return (int(b[12]) + 1) * 4, len(b) - 12 - (back+1)*4
}

// footerSum sets the CRC32 of the stream footer f.
func footerSum(f []byte) {
	binary.LittleEndian.PutUint32(f, crc32.ChecksumIEEE(f[4:10]))
}

// xzEnd ends the stream in b, of flags, with the index of one block and
// the footer.
func xzEnd(b, flags []byte, unpadded, uncompressed uint64) []byte {
	idx := len(b)
	b = xzVLI(xzVLI(xzVLI(append(b, 0), 1), unpadded), uncompressed)
	for (len(b)-idx)%4 != 0 {
		b = append(b, 0)
	}
	b = binary.LittleEndian.AppendUint32(b, crc32.ChecksumIEEE(b[idx:]))
	f := binary.LittleEndian.AppendUint32(nil, uint32((len(b)-idx)/4-1))
	f = append(f, flags...)
	b = binary.LittleEndian.AppendUint32(b, crc32.ChecksumIEEE(f))
	return append(append(b, f...), 'Y', 'Z')
}

// resum sets the little-endian CRC32 of b[from:to] at b[to:].
func resum(b []byte, from, to int) {
	binary.LittleEndian.PutUint32(b[to:], crc32.ChecksumIEEE(b[from:to]))
}

// The index and the footer of an xz stream were skipped unread: an index
// whose CRC32 fails, a footer that is not one (no "YZ", a wrong CRC32,
// another index size, other flags than the header's) and a stream
// header whose CRC32 fails were read as if right, where xz -t refuses
// each ("Compressed data is corrupt"), as it refuses a block header's
// non-zero padding or a compressed size it does not hold. Bytes after
// the last stream that are no stream padding were refused as
// "truncated". Each is ErrXzStructure, refused before a byte is read.
func TestDecompressArchiveXzContainerChecks(t *testing.T) {
	plain := sampleTar(t)
	x := runTool(t, plain, "xz", "-c", "-T1")
	hsize, idx := xzParts(t, x)
	if hsize != 12 || x[13] != 0 {
		t.Fatalf("xz -c wrote a %d-byte block header with flags %#x, want 12 bytes, no sizes", hsize, x[13])
	}
	foot := len(x) - 12
	edit := func(f func(b []byte)) []byte {
		b := bytes.Clone(x)
		f(b)
		return b
	}
	// The one block's record in the index: its unpadded size is its
	// header (12 bytes), its chunks and its CRC64 (8 bytes).
	unpadded, k := binary.Uvarint(x[idx+2:])
	uncompressed, _ := binary.Uvarint(x[idx+2+k:])
	chunks := unpadded - 12 - 8
	// The block again, with a header that states n compressed bytes,
	// padded and summed right, and an index and footer to match.
	withCompressedSize := func(n uint64) []byte {
		h := xzVLI([]byte{0, 0x40}, n)
		h = append(h, 0x21, 1, x[12+4])
		for len(h)%4 != 0 {
			h = append(h, 0)
		}
		h[0] = byte(len(h) / 4)
		h = append(h, 0, 0, 0, 0)
		resum(h, 0, len(h)-4)
		b := append(append(bytes.Clone(x[:12]), h...), x[12+hsize:idx]...)
		return xzEnd(b, x[6:8], unpadded-12+uint64(len(h)), uncompressed)
	}
	for _, c := range []struct {
		name string
		b    []byte
	}{
		{"stream header CRC32", edit(func(b []byte) { b[8] ^= 1 })},
		{"block header padding", edit(func(b []byte) { b[12+6] = 1; resum(b, 12, 12+hsize-4) })},
		{"block header compressed size", withCompressedSize(chunks + 1)},
		{"index padding", edit(func(b []byte) {
			if b[foot-5] != 0 {
				t.Fatal("the index has no padding to change")
			}
			b[foot-5] = 1
			resum(b, idx, foot-4)
		})},
		{"index CRC32", edit(func(b []byte) { b[foot-1] ^= 1 })},
		{"footer CRC32", edit(func(b []byte) { b[foot] ^= 1 })},
		{"footer magic", edit(func(b []byte) { b[len(b)-1] = 'Q' })},
		{"footer index size", edit(func(b []byte) { b[foot+4]++; footerSum(b[foot:]) })},
		{"footer flags", edit(func(b []byte) { b[foot+9] = 0x1; footerSum(b[foot:]) })},
		{"trailing bytes", append(bytes.Clone(x), "junk"...)},
		{"three trailing zeros", append(bytes.Clone(x), 0, 0, 0)},
	} {
		t.Run(c.name, func(t *testing.T) {
			cmd := exec.Command("xz", "-t")
			cmd.Stdin = bytes.NewReader(c.b)
			if out, err := cmd.CombinedOutput(); err == nil {
				t.Fatalf("xz -t accepts it (%s): the case is wrong", out)
			}
			zr, _, err := archive.DecompressArchive(bytes.NewReader(c.b), int64(len(c.b)))
			if err == nil {
				n, rerr := io.Copy(io.Discard, zr)
				t.Fatalf("read %d bytes (read error %v), want ErrXzStructure before any", n, rerr)
			}
			if !errors.Is(err, archive.ErrXzStructure) {
				t.Fatalf("err = %v, want ErrXzStructure", err)
			}
			t.Logf("err: %v", err)
		})
	}

	// Stream padding after the last stream is read, as xz -d reads it,
	// and so is a block header that states its compressed size right.
	for name, b := range map[string][]byte{
		"padded":                 append(bytes.Clone(x), make([]byte, 8)...),
		"compressed size stated": withCompressedSize(chunks),
	} {
		if got := runTool(t, b, "xz", "-dc"); !bytes.Equal(got, plain) {
			t.Fatalf("%s: xz -d reads %d bytes: the case is wrong", name, len(got))
		}
		zr, _, err := archive.DecompressArchive(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got, err := io.ReadAll(zr); err != nil || !bytes.Equal(got, plain) {
			t.Fatalf("%s: read %d bytes, %v; want the %d written", name, len(got), err, len(plain))
		}
	}
}
