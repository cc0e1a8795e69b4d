package archive

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"hash/crc64"
	"io"

	"github.com/ulikunitz/xz/lzma"
)

// MaxDecoderWindow bounds the memory a decoder of untrusted bytes may
// claim from a header: a zstd frame's window, an xz block's LZMA2
// dictionary. 64 MiB is what xz -9e and zstd up to level 19 use; larger
// ones come only from --long or a hand-set dictionary.
const MaxDecoderWindow = 64 << 20

// ErrXzStructure marks an xz file whose container does not parse or
// fails one of its own checks (a header's, the index's or the footer's
// CRC32, the index against the blocks), or that has bytes after its
// last stream that are neither stream padding nor a stream: what xz -t
// refuses.
var ErrXzStructure = errors.New("xz: bad container structure")

// walkXz walks the xz container of r (every stream, every block
// header, every LZMA2 chunk header, skipping the compressed data, every
// index and footer) and refuses a block whose dictionary is larger than
// maxDict, or a container xz -t would refuse. A decoder allocates each
// block's dictionary from its header before it reads a byte of data, so
// the claim is checked before it becomes an allocation, for every block:
// a checked first block says nothing of the others. The blocks are then
// decoded where a second walk finds them (xzReader's xzCursor), never
// where a decoder would go on reading: an LZMA chunk's header claims its
// packed size, and its range coder may take fewer bytes, so a decoder
// reading the whole stream could find a block header inside what the
// walk skipped as data. Neither walk holds the blocks: a file of many
// empty 16-byte blocks would otherwise hold 3.5 times its size.
//
// The walk also bounds the decoder's work by its output
// (xzChunkBudget): ulikunitz/xz spends tens of µs and up to 32 KiB of
// allocation on each LZMA2 chunk, however little it holds.
func walkXz(r io.ReaderAt, size, maxDict int64) error {
	return walkXzBudget(r, size, maxDict, &xzChunkBudget{})
}

// walkXzBudget is walkXz with the chunks counted in budget, none if nil.
func walkXzBudget(r io.ReaderAt, size, maxDict int64, budget *xzChunkBudget) error {
	c := xzCursor{blocks: xzWalker{r: r, size: size, budget: budget}, maxDict: maxDict}
	for {
		if _, err := c.next(); err == io.EOF {
			return nil
		} else if err != nil {
			return err
		}
	}
}

// xzCursor gives the blocks of an xz file one at a time, each with what
// its stream's index says it holds: it walks each stream's blocks to
// find its index, then again beside the index's records.
type xzCursor struct {
	maxDict int64
	// blocks walks the blocks, index the current stream's index.
	blocks, index xzWalker
	// in: a stream is open; left of its blocks are still to come.
	in    bool
	left  uint64
	start int64   // of the current stream's index
	head  [2]byte // the current stream's flags
}

// next returns the next block, io.EOF after the end of the last stream.
func (c *xzCursor) next() (xzBlock, error) {
	for c.left == 0 {
		if c.in {
			if err := c.index.indexEnd(c.start, c.head[:]); err != nil {
				return xzBlock{}, err
			}
			c.in = false
			c.blocks.walkFrom(&c.index, c.index.pos)
			if err := c.blocks.padding(); err != nil {
				return xzBlock{}, err
			}
		}
		if c.blocks.pos >= c.blocks.size {
			return xzBlock{}, io.EOF
		}
		if c.blocks.pos > 0 && !c.blocks.streamHeaderAt(c.blocks.pos) {
			return xzBlock{}, fmt.Errorf("%w: %d bytes after the last stream at byte %d are neither stream padding nor a stream", ErrXzStructure, c.blocks.size-c.blocks.pos, c.blocks.pos)
		}
		if err := c.open(); err != nil {
			return xzBlock{}, err
		}
	}
	start := c.blocks.pos
	b, err := c.blocks.byte()
	if err != nil {
		return xzBlock{}, err
	}
	if b == 0 {
		return xzBlock{}, fmt.Errorf("%w: the stream's index at byte %d lists blocks that are not there", ErrXzStructure, start)
	}
	blk, err := c.blocks.block(start, b, c.head[1], c.maxDict)
	if err != nil {
		return xzBlock{}, err
	}
	if err := c.index.record(&blk); err != nil {
		return xzBlock{}, err
	}
	c.left--
	return blk, nil
}

// open reads the header of the stream at the block walk's position and
// walks its blocks to its index, whose count of records it reads.
func (c *xzCursor) open() error {
	x := &c.blocks
	var h [12]byte
	if err := x.read(h[:]); err != nil {
		return err
	}
	if string(h[:6]) != streamMagic || h[6] != 0 {
		return fmt.Errorf("%w: no stream header at byte %d", ErrXzStructure, x.pos-12)
	}
	if crc32.ChecksumIEEE(h[6:8]) != binary.LittleEndian.Uint32(h[8:12]) {
		return fmt.Errorf("%w: the stream header at byte %d fails its CRC32", ErrXzStructure, x.pos-12)
	}
	if _, ok := checkSizes[h[7]]; !ok {
		return fmt.Errorf("%w: unknown check type %#x", ErrXzStructure, h[7])
	}
	copy(c.head[:], h[6:8])
	c.index.walkFrom(x, x.pos)
	var n uint64
	for {
		start := c.index.pos
		b, err := c.index.byte()
		if err != nil {
			return err
		}
		if b == 0 { // the index
			c.start = start
			break
		}
		if _, err := c.index.block(start, b, h[7], c.maxDict); err != nil {
			return err
		}
		n++
	}
	// The index: a record of each block (its size unpadded, what it
	// holds), padding to four bytes, a CRC32; then the stream footer.
	// The records must name the blocks walked, as xz -t checks.
	count, err := c.index.vli()
	if err != nil {
		return err
	}
	if count != n {
		return fmt.Errorf("%w: the index at byte %d lists %d blocks, the stream has %d", ErrXzStructure, c.start, count, n)
	}
	c.in, c.left = true, n
	return nil
}

// padding reads stream padding (zeros in groups of four) up to what is
// not: maybe another stream.
func (x *xzWalker) padding() error {
	for x.pos+4 <= x.size {
		var pad [4]byte
		if err := x.read(pad[:]); err != nil {
			return err
		}
		if pad != [4]byte{} {
			x.pos -= 4
			break
		}
	}
	return nil
}

// xzWalker reads an xz file's container from pos. Its reads are small
// (a header byte, an integer) and many (a block can be 16 bytes): they
// are served from a window of the file read ahead, one ReadAt a window,
// not a ReadAt (a system call, from a file) each.
type xzWalker struct {
	r         io.ReaderAt
	size, pos int64
	// win holds the file's bytes from winAt.
	win   []byte
	winAt int64
	// budget counts the LZMA2 chunks walked, if set.
	budget *xzChunkBudget
}

// XzChunkSlack LZMA2 chunks of an xz archive are free; each one after
// them must follow a KiB of output from the chunks before it. Every
// chunk costs ulikunitz/xz's decoder tens of µs and a new buffer (up to
// 32 KiB for an uncompressed chunk, 12 KiB of probabilities for one
// that resets the properties), whatever it holds: a 512 KiB file of
// 131,072 one-byte chunks took 6 s, so a 512 MiB download 100 minutes,
// while its output stayed far under MaxImageBytes. xz writes chunks of
// up to 2 MiB (64 KiB when the data does not compress), and a smaller
// one only at the end of a block: only --block-size under 1 KiB or
// --flush-timeout make more. The bound is checked chunk by chunk, as
// they are decoded, so that chunks holding much at the end do not
// excuse many tiny ones before them that a caller's bound on the
// output would never reach.
const (
	XzChunkSlack = 1024
	xzChunkBytes = 1 << 10
)

// XzChunksError says an xz archive holds more LZMA2 chunks than the
// output before them justifies (XzChunkSlack). It matches
// ErrCompressionBounds.
type XzChunksError struct {
	// Offset is where the chunk over the bound starts in the archive.
	Offset int64
	// Chunks is its number, counted from 1, Bytes what the chunks before
	// it hold and Limit the most chunks those bytes allow.
	Chunks, Bytes, Limit int64
}

func (e *XzChunksError) Error() string {
	return fmt.Sprintf("xz: the LZMA2 chunk at byte %d is chunk %d after %d bytes of output, more than the %d chunks allowed (%d, and one a KiB): %s", e.Offset, e.Chunks, e.Bytes, e.Limit, XzChunkSlack, ErrCompressionBounds)
}

func (e *XzChunksError) Unwrap() error { return ErrCompressionBounds }

// xzChunkBudget counts the LZMA2 chunks of an xz file and what they hold.
type xzChunkBudget struct{ chunks, bytes int64 }

// add counts the chunk at off, which holds n bytes.
func (b *xzChunkBudget) add(off, n int64) error {
	b.chunks++
	if limit := b.bytes/xzChunkBytes + XzChunkSlack; b.chunks > limit {
		return &XzChunksError{Offset: off, Chunks: b.chunks, Bytes: b.bytes, Limit: limit}
	}
	b.bytes += n
	return nil
}

// xzWindow is how much of the file a walker reads ahead.
const xzWindow = 4 << 10

// walkFrom points w at pos of the file x walks, with a window of its
// own (its buffer kept from one stream to the next) that starts with
// what x's holds from pos: many tiny streams cost no read each.
func (w *xzWalker) walkFrom(x *xzWalker, pos int64) {
	if cap(w.win) < xzWindow {
		w.win = make([]byte, 0, xzWindow)
	}
	w.r, w.size, w.pos, w.win, w.winAt = x.r, x.size, pos, w.win[:0], pos
	if pos >= x.winAt && pos < x.winAt+int64(len(x.win)) {
		w.win = append(w.win, x.win[pos-x.winAt:]...)
	}
}

// xzBlock is where the walk found a block: its header at start, its
// LZMA2 chunks from data up to end (the end marker included), then its
// check (of check type) at end rounded up to four bytes from start.
type xzBlock struct {
	start, data, end int64
	dict             int64
	check            byte
	// uncompressed is the size its header and the index state.
	uncompressed int64
	// compressed is the size of its LZMA2 chunks its header states, -1
	// when it states none.
	compressed int64
	// chunked is what its LZMA2 chunk headers say they hold, together.
	chunked int64
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// streamMagic begins an xz stream's header; footerMagic ends its footer.
const (
	streamMagic = "\xfd7zXZ\x00"
	footerMagic = "YZ"
)

// streamHeaderAt says whether a stream's magic bytes are at pos.
func (x *xzWalker) streamHeaderAt(pos int64) bool {
	var m [len(streamMagic)]byte
	defer func(at int64) { x.pos = at }(x.pos)
	x.pos = pos
	return x.read(m[:]) == nil && string(m[:]) == streamMagic
}

func (x *xzWalker) read(p []byte) error {
	n := int64(len(p))
	if x.pos+n > x.size {
		return fmt.Errorf("%w: truncated at byte %d", ErrXzStructure, x.pos)
	}
	if x.pos < x.winAt || x.pos+n > x.winAt+int64(len(x.win)) {
		if n > xzWindow {
			if k, err := x.r.ReadAt(p, x.pos); k < len(p) {
				if err == nil || err == io.EOF {
					err = io.ErrUnexpectedEOF
				}
				return err
			}
			x.pos += n
			return nil
		}
		if cap(x.win) < xzWindow {
			x.win = make([]byte, xzWindow)
		}
		x.win = x.win[:min(xzWindow, x.size-x.pos)]
		if k, err := x.r.ReadAt(x.win, x.pos); k < len(x.win) {
			x.win = x.win[:0]
			if err == nil || err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return err
		}
		x.winAt = x.pos
	}
	copy(p, x.win[x.pos-x.winAt:])
	x.pos += n
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
	return 0, fmt.Errorf("%w: integer too long at byte %d", ErrXzStructure, x.pos)
}

// checkSizes are the lengths of the xz check types the decoder knows.
var checkSizes = map[byte]int64{0x0: 0, 0x1: 4, 0x4: 8, 0xa: 32}

// block walks the block at start, whose first byte b was read, of a
// stream of check type check, up to the end of its check.
func (x *xzWalker) block(start int64, b, check byte, maxDict int64) (xzBlock, error) {
	blk := xzBlock{start: start, check: check}
	if err := x.blockHeader(&blk, int64(b)*4+4, maxDict); err != nil {
		return blk, err
	}
	blk.data = x.pos
	if err := x.lzma2Chunks(&blk); err != nil {
		return blk, err
	}
	blk.end = x.pos
	if blk.compressed >= 0 && blk.compressed != blk.end-blk.data {
		return blk, fmt.Errorf("%w: the block at byte %d holds %d compressed bytes, its header says %d", ErrXzStructure, start, blk.end-blk.data, blk.compressed)
	}
	x.pos += (4-(x.pos-start)%4)%4 + checkSizes[check]
	return blk, nil
}

// record reads the index record of the block b, which must match it,
// and sets what it holds.
func (x *xzWalker) record(b *xzBlock) error {
	unpadded, err := x.vli()
	if err != nil {
		return err
	}
	uncompressed, err := x.vli()
	if err != nil {
		return err
	}
	if unpadded != uint64(b.end-b.start+checkSizes[b.check]) || b.uncompressed >= 0 && uint64(b.uncompressed) != uncompressed || uncompressed > 1<<62 {
		return fmt.Errorf("%w: the index does not match the block at byte %d", ErrXzStructure, b.start)
	}
	// A block decodes to what its chunk headers say (each chunk to its
	// own size, or the decoder fails), so xz -t refuses a block whose
	// chunks say otherwise than the index. Checked here, it lets one
	// decoder read a block's output up to its size and know it stopped
	// at the end of its last chunk (xzReader).
	if uint64(b.chunked) != uncompressed {
		return fmt.Errorf("%w: the LZMA2 chunks of the block at byte %d hold %d bytes, the index says %d", ErrXzStructure, b.start, b.chunked, uncompressed)
	}
	b.uncompressed = int64(uncompressed)
	return nil
}

// indexEnd reads what follows the index records that begin at index:
// their padding (zeros), the index's CRC32, then the stream footer,
// whose CRC32, index size and flags (those of the stream header) must
// be right, as xz -t checks: an index or footer no one checks could
// carry anything.
func (x *xzWalker) indexEnd(index int64, flags []byte) error {
	var pad [3]byte
	if err := x.read(pad[:(4-(x.pos-index)%4)%4]); err != nil {
		return err
	}
	if pad != [3]byte{} {
		return fmt.Errorf("%w: the index at byte %d has non-zero padding", ErrXzStructure, index)
	}
	// The CRC32 of the index, read again in pieces (most often from the
	// window still): an index of many blocks is not held whole.
	end, size, sum := x.pos, x.pos-index, crc32.NewIEEE()
	var piece [512]byte
	for x.pos = index; x.pos < end; {
		p := piece[:min(int64(len(piece)), end-x.pos)]
		if err := x.read(p); err != nil {
			return err
		}
		sum.Write(p)
	}
	var tail [4 + 12]byte
	if err := x.read(tail[:]); err != nil {
		return err
	}
	if sum.Sum32() != binary.LittleEndian.Uint32(tail[:4]) {
		return fmt.Errorf("%w: the index at byte %d fails its CRC32", ErrXzStructure, index)
	}
	f := tail[4:]
	switch {
	case string(f[10:]) != footerMagic:
		return fmt.Errorf("%w: no stream footer at byte %d", ErrXzStructure, x.pos-12)
	case crc32.ChecksumIEEE(f[4:10]) != binary.LittleEndian.Uint32(f[:4]):
		return fmt.Errorf("%w: the stream footer at byte %d fails its CRC32", ErrXzStructure, x.pos-12)
	case int64(binary.LittleEndian.Uint32(f[4:8]))*4+4 != size+4:
		return fmt.Errorf("%w: the stream footer at byte %d gives the index another size", ErrXzStructure, x.pos-12)
	case !bytes.Equal(f[8:10], flags):
		return fmt.Errorf("%w: the stream footer at byte %d has other flags than its header", ErrXzStructure, x.pos-12)
	}
	return nil
}

// blockHeader reads the header of block b, hsize bytes long (its first
// byte already read), checks its CRC32 and its LZMA2 dictionary, and
// records the dictionary and the uncompressed size it states. The one
// filter chain a decoder takes is LZMA2 alone.
func (x *xzWalker) blockHeader(b *xzBlock, hsize, maxDict int64) error {
	start := b.start
	head := make([]byte, hsize)
	if start+hsize > x.size {
		return fmt.Errorf("%w: truncated block header at byte %d", ErrXzStructure, start)
	}
	x.pos = start
	if err := x.read(head); err != nil {
		return err
	}
	x.pos = start + 1
	if crc32.ChecksumIEEE(head[:hsize-4]) != binary.LittleEndian.Uint32(head[hsize-4:]) {
		return fmt.Errorf("%w: block header at byte %d fails its CRC32", ErrXzStructure, start)
	}
	flags, err := x.byte()
	if err != nil {
		return err
	}
	if flags&0x3c != 0 {
		return fmt.Errorf("%w: reserved block flags at byte %d", ErrXzStructure, start)
	}
	if flags&3 != 0 {
		return fmt.Errorf("%w: block at byte %d has %d filters; only LZMA2 alone is read", ErrXzStructure, start, flags&3+1)
	}
	b.uncompressed, b.compressed = -1, -1
	if flags&0x40 != 0 { // compressed size
		c, err := x.vli()
		if err != nil {
			return err
		}
		if c > 1<<62 {
			return fmt.Errorf("%w: block at byte %d claims %d compressed bytes", ErrXzStructure, start, c)
		}
		b.compressed = int64(c)
	}
	if flags&0x80 != 0 {
		u, err := x.vli()
		if err != nil {
			return err
		}
		if u > 1<<62 {
			return fmt.Errorf("%w: block at byte %d claims %d bytes", ErrXzStructure, start, u)
		}
		b.uncompressed = int64(u)
	}
	b.dict = -1
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
			return fmt.Errorf("%w: filter properties longer than their block header", ErrXzStructure)
		}
		props := make([]byte, n)
		if err := x.read(props); err != nil {
			return err
		}
		if id == 0x21 && n == 1 { // LZMA2
			dict, err := lzma.DecodeDictCap(props[0])
			if err != nil {
				return fmt.Errorf("%w: %w", ErrXzStructure, err)
			}
			if dict > maxDict {
				return fmt.Errorf("xz block at byte %d: %w: a %d MiB dictionary, more than the %d MiB allowed", start, ErrCompressionBounds, dict>>20, maxDict>>20)
			}
			b.dict = dict
		}
	}
	if b.dict < 0 {
		return fmt.Errorf("%w: block at byte %d is not LZMA2", ErrXzStructure, start)
	}
	if x.pos > start+hsize-4 {
		return fmt.Errorf("%w: block header longer than it says", ErrXzStructure)
	}
	if !allZero(head[x.pos-start : hsize-4]) {
		return fmt.Errorf("%w: the block header at byte %d has non-zero padding", ErrXzStructure, start)
	}
	x.pos = start + hsize
	return nil
}

// lzma2Chunks skips the LZMA2 chunks of block b by their headers, up to
// and including the end marker, and adds up what they hold. The first
// chunk of a block resets the dictionary (xz -t refuses a block whose
// first chunk does not): checked here, it lets one decoder, which
// would carry its dictionary across, read every block (xzReader).
func (x *xzWalker) lzma2Chunks(b *xzBlock) error {
	for first := true; ; first = false {
		start := x.pos
		c, err := x.byte()
		if err != nil {
			return err
		}
		if first && c != 0 && c != 1 && c < 0xe0 {
			return fmt.Errorf("%w: the first LZMA2 chunk of the block at byte %d does not reset the dictionary", ErrXzStructure, b.start)
		}
		var h [5]byte
		var n int64 // what the chunk holds
		switch {
		case c == 0:
			return nil
		case c == 1 || c == 2: // uncompressed: its size - 1
			if err := x.read(h[:2]); err != nil {
				return err
			}
			n = int64(binary.BigEndian.Uint16(h[:2])) + 1
			x.pos += n
		case c >= 0x80: // LZMA: unpacked size - 1 (5 bits in c), packed size - 1, maybe properties
			hl := 4
			if (c>>5)&3 >= 2 {
				hl = 5
			}
			if err := x.read(h[:hl]); err != nil {
				return err
			}
			x.pos += int64(binary.BigEndian.Uint16(h[2:4])) + 1
			n = int64(c&0x1f)<<16 + int64(binary.BigEndian.Uint16(h[:2])) + 1
		default:
			return fmt.Errorf("%w: bad LZMA2 chunk %#x at byte %d", ErrXzStructure, c, x.pos-1)
		}
		b.chunked += n
		if x.budget != nil {
			if err := x.budget.add(start, n); err != nil {
				return err
			}
		}
	}
}

// newXzReader decodes the xz file of size bytes in r, which walkXz
// has checked.
func newXzReader(r io.ReaderAt, size int64) *xzReader {
	return &xzReader{r: r, blocks: xzCursor{blocks: xzWalker{r: r, size: size}, maxDict: MaxDecoderWindow}}
}

// xzReader decodes the blocks a second walk finds, each from its own
// bytes only, with the dictionary its checked header states, or less
// when the block holds less: the LZMA2 chunks of a block must end,
// where the walk says they do, and its check must match what it
// decoded.
//
// One decoder reads block after block while their dictionaries are the
// same size: a new lzma.Reader2 for each block (it cannot be reset)
// cost 22 µs, 40 times xz -d, for a block of one byte, and output that
// small is not bounded by the image's size. The decoder is fed each
// block's chunks without their end marker, which would stop it for
// good; the walk has checked that the first chunk of each block resets
// the dictionary (so nothing is carried from the block before: the
// Reader2's chunk states after a reset are those of a new one) and that
// the chunks hold what the index says, so a block is read up to that
// size and is then at the end of its last chunk. A new decoder is
// needed only where the dictionary grows or shrinks, which takes a
// block of more than lzma.MinDictCap bytes.
type xzReader struct {
	r      io.ReaderAt
	blocks xzCursor
	block  xzBlock // the one being decoded
	// left of the block's bytes are still to be read; open while a block is.
	left int64
	open bool

	cur     *lzma.Reader2
	dictCap int // cur's
	// decoders counts the Reader2s made, for tests.
	decoders int
	sec      *io.SectionReader
	br       *bufio.Reader
	sum      hash.Hash
	err      error
}

func (z *xzReader) Read(p []byte) (int, error) {
	if z.err != nil {
		return 0, z.err
	}
	if len(p) == 0 {
		return 0, nil
	}
	for z.left == 0 {
		if err := z.next(); err != nil {
			z.err = err
			return 0, err
		}
	}
	n, err := z.cur.Read(p[:min(int64(len(p)), z.left)])
	z.sum.Write(p[:n])
	z.left -= int64(n)
	if err != nil {
		if err == io.EOF { // an end marker the walk did not see
			err = io.ErrUnexpectedEOF
		}
		z.err = fmt.Errorf("xz block at byte %d: %w", z.block.start, err)
		return n, z.err
	}
	return n, nil
}

// next finishes the block just read, if any, and starts the next.
func (z *xzReader) next() error {
	if z.open {
		if err := z.finish(); err != nil {
			return err
		}
		z.open = false
	}
	b, err := z.blocks.next()
	if err != nil {
		return err
	}
	z.block, z.open, z.left = b, true, b.uncompressed
	z.sum = xzCheck(b.check)
	// The chunks without the end marker (the walk saw it at end-1).
	z.sec = io.NewSectionReader(z.r, b.data, b.end-1-b.data)
	// One read buffer serves every block: a new one a block cost 64 KiB
	// for each 16-byte empty block of a hostile file.
	if z.br == nil {
		z.br = bufio.NewReaderSize(z.sec, 64<<10)
	} else {
		z.br.Reset(z.sec)
	}
	if b.uncompressed == 0 { // no chunks: nothing to decode
		return nil
	}
	// A block never looks back further than it holds: its dictionary
	// need not be larger than what its header and the index say it
	// holds. Many small blocks that each state a 64 MiB dictionary
	// would otherwise cost 64 MiB (allocated and cleared) each.
	dictCap := int(max(min(b.dict, b.uncompressed), lzma.MinDictCap))
	if z.cur != nil && dictCap == z.dictCap {
		return nil // the next Read reads the block's first chunk header from br
	}
	z.cur, err = lzma.Reader2Config{DictCap: dictCap}.NewReader2(z.br)
	if err != nil {
		return fmt.Errorf("xz block at byte %d: %w", b.start, err)
	}
	z.dictCap = dictCap
	z.decoders++
	return nil
}

// finish checks that the block just read ended where the walk said (at
// its end marker) and matches its check.
func (z *xzReader) finish() error {
	b := z.block
	off, _ := z.sec.Seek(0, io.SeekCurrent)
	if off-int64(z.br.Buffered()) != b.end-1-b.data {
		return fmt.Errorf("%w: the LZMA2 chunks of the block at byte %d do not end where their headers say", ErrXzStructure, b.start)
	}
	want := make([]byte, z.sum.Size())
	if _, err := z.r.ReadAt(want, b.end+(4-(b.end-b.start)%4)%4); err != nil {
		return err
	}
	if !bytes.Equal(xzCheckSum(z.sum), want) {
		return fmt.Errorf("%w: the block at byte %d fails its check", ErrXzStructure, b.start)
	}
	return nil
}

// xzCheck is the hash of an xz check type (the walk refused the others).
func xzCheck(t byte) hash.Hash {
	switch t {
	case 0x1:
		return crc32.NewIEEE()
	case 0x4:
		return crc64.New(crc64.MakeTable(crc64.ECMA))
	case 0xa:
		return sha256.New()
	}
	return noCheck{}
}

// xzCheckSum is h's sum as xz stores it: the CRCs little-endian.
func xzCheckSum(h hash.Hash) []byte {
	switch h := h.(type) {
	case hash.Hash32:
		return binary.LittleEndian.AppendUint32(nil, h.Sum32())
	case hash.Hash64:
		return binary.LittleEndian.AppendUint64(nil, h.Sum64())
	}
	return h.Sum(nil)
}

// noCheck is check type None.
type noCheck struct{}

func (noCheck) Write(p []byte) (int, error) { return len(p), nil }
func (noCheck) Sum(b []byte) []byte         { return b }
func (noCheck) Reset()                      {}
func (noCheck) Size() int                   { return 0 }
func (noCheck) BlockSize() int              { return 1 }
