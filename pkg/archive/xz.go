package archive

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/ulikunitz/xz/lzma"
)

// MaxDecoderWindow bounds the memory a decoder of untrusted bytes may
// claim from a header: a zstd frame's window, an xz block's LZMA2
// dictionary. 64 MiB is what xz -9e and zstd up to level 19 use; larger
// ones come only from --long or a hand-set dictionary.
const MaxDecoderWindow = 64 << 20

// errXzStructure marks an xz file whose container does not parse.
var errXzStructure = errors.New("xz: bad container structure")

// checkXzDicts walks the xz container of r (every stream, every block
// header, every LZMA2 chunk header, skipping the compressed data) and
// refuses a block whose dictionary is larger than maxDict. The decoder
// allocates each block's dictionary from its header before it reads a
// byte of data, so the claim is checked before it becomes an allocation,
// for every block: a checked first block says nothing of the others.
func checkXzDicts(r io.ReaderAt, size, maxDict int64) error {
	x := xzWalker{r: r, size: size}
	for x.pos < size {
		if err := x.stream(maxDict); err != nil {
			return err
		}
		// Stream padding: zeros in groups of four, then maybe another stream.
		for x.pos < size {
			var pad [4]byte
			if err := x.read(pad[:]); err != nil {
				return err
			}
			if pad != [4]byte{} {
				x.pos -= 4
				break
			}
		}
	}
	return nil
}

type xzWalker struct {
	r         io.ReaderAt
	size, pos int64
}

func (x *xzWalker) read(p []byte) error {
	if x.pos+int64(len(p)) > x.size {
		return fmt.Errorf("%w: truncated at byte %d", errXzStructure, x.pos)
	}
	if _, err := x.r.ReadAt(p, x.pos); err != nil {
		return err
	}
	x.pos += int64(len(p))
	return nil
}

func (x *xzWalker) byte() (byte, error) {
	var b [1]byte
	err := x.read(b[:])
	return b[0], err
}

// vli reads a variable-length integer of the xz format (at most 9 bytes).
func (x *xzWalker) vli() (uint64, error) {
	var v uint64
	for i := 0; i < 9; i++ {
		b, err := x.byte()
		if err != nil {
			return 0, err
		}
		v |= uint64(b&0x7f) << (7 * i)
		if b&0x80 == 0 {
			return v, nil
		}
	}
	return 0, fmt.Errorf("%w: integer too long at byte %d", errXzStructure, x.pos)
}

// checkSizes are the lengths of the xz check types the decoder knows.
var checkSizes = map[byte]int64{0x0: 0, 0x1: 4, 0x4: 8, 0xa: 32}

func (x *xzWalker) stream(maxDict int64) error {
	var h [12]byte
	if err := x.read(h[:]); err != nil {
		return err
	}
	if string(h[:6]) != "\xfd7zXZ\x00" || h[6] != 0 {
		return fmt.Errorf("%w: no stream header at byte %d", errXzStructure, x.pos-12)
	}
	check, ok := checkSizes[h[7]]
	if !ok {
		return fmt.Errorf("%w: unknown check type %#x", errXzStructure, h[7])
	}
	for {
		start := x.pos
		b, err := x.byte()
		if err != nil {
			return err
		}
		if b == 0 { // the index
			break
		}
		if err := x.blockHeader(start, int64(b)*4+4, maxDict); err != nil {
			return err
		}
		if err := x.lzma2Chunks(); err != nil {
			return err
		}
		x.pos += (4-(x.pos-start)%4)%4 + check
	}
	// The index: its records, padding to four bytes, a CRC32; then the
	// stream footer.
	n, err := x.vli()
	if err != nil {
		return err
	}
	for i := uint64(0); i < 2*n; i++ {
		if _, err := x.vli(); err != nil {
			return err
		}
	}
	x.pos += (4-x.pos%4)%4 + 4 + 12
	if x.pos > x.size {
		return fmt.Errorf("%w: truncated index or footer", errXzStructure)
	}
	return nil
}

// blockHeader reads the header of the block at start, hsize bytes long
// (its first byte already read), and checks its LZMA2 dictionary.
func (x *xzWalker) blockHeader(start, hsize, maxDict int64) error {
	flags, err := x.byte()
	if err != nil {
		return err
	}
	for _, present := range []bool{flags&0x40 != 0, flags&0x80 != 0} { // compressed, uncompressed size
		if present {
			if _, err := x.vli(); err != nil {
				return err
			}
		}
	}
	for i := 0; i <= int(flags&3); i++ {
		id, err := x.vli()
		if err != nil {
			return err
		}
		n, err := x.vli()
		if err != nil {
			return err
		}
		if n > uint64(hsize) {
			return fmt.Errorf("%w: filter properties longer than their block header", errXzStructure)
		}
		props := make([]byte, n)
		if err := x.read(props); err != nil {
			return err
		}
		if id == 0x21 && n == 1 { // LZMA2
			dict, err := lzma.DecodeDictCap(props[0])
			if err != nil {
				return fmt.Errorf("%w: %w", errXzStructure, err)
			}
			if dict > maxDict {
				return fmt.Errorf("xz block at byte %d: %w: a %d MiB dictionary, more than the %d MiB allowed", start, ErrCompressionBounds, dict>>20, maxDict>>20)
			}
		}
	}
	if x.pos > start+hsize {
		return fmt.Errorf("%w: block header longer than it says", errXzStructure)
	}
	x.pos = start + hsize
	return nil
}

// lzma2Chunks skips the LZMA2 chunks of a block by their headers, up to
// and including the end marker.
func (x *xzWalker) lzma2Chunks() error {
	for {
		c, err := x.byte()
		if err != nil {
			return err
		}
		var h [5]byte
		switch {
		case c == 0:
			return nil
		case c == 1 || c == 2: // uncompressed: its size - 1
			if err := x.read(h[:2]); err != nil {
				return err
			}
			x.pos += int64(binary.BigEndian.Uint16(h[:2])) + 1
		case c >= 0x80: // LZMA: unpacked size - 1, packed size - 1, maybe properties
			n := 4
			if (c>>5)&3 >= 2 {
				n = 5
			}
			if err := x.read(h[:n]); err != nil {
				return err
			}
			x.pos += int64(binary.BigEndian.Uint16(h[2:4])) + 1
		default:
			return fmt.Errorf("%w: bad LZMA2 chunk %#x at byte %d", errXzStructure, c, x.pos-1)
		}
	}
}
