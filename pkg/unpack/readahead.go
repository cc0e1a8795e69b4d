package unpack

import (
	"archive/tar"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/addonpkg/addonpkg/internal/rawfile"
	"github.com/addonpkg/addonpkg/internal/verify"
	"github.com/addonpkg/addonpkg/pkg/archive"
	"github.com/addonpkg/addonpkg/pkg/mediatypes"
	"github.com/addonpkg/addonpkg/pkg/safetree"
)

// Layers are read in parallel and merged top-down. Each layer has a reader
// (fetch and verify the blob, inflate and hash it, parse the tar) that
// hands the merge only what could belong to the add-on: entries inside
// the content directory, with their bytes, and whiteouts that reach it.
// Everything else is streamed past. The merge takes the layers one at a
// time from the top, so which entry wins is decided exactly as in a
// sequential read; the readers of lower layers merely run ahead.
//
// What a lower layer reads ahead may still be hidden by an upper layer,
// so it is held only up to readAheadBudget bytes in all; past that, the
// lower readers wait for the merge to reach them. The layer being merged
// never waits, so the merge always progresses.
//
// With a spill directory (Options.SpillDir) the lower readers never wait:
// past spillBudget, what they read ahead goes to a file there, so the
// layers are read at full speed and memory stays flat whatever the size
// of the layers below.
var readAheadBudget int64 = 32 << 20 // a variable for tests

// spillBudget is the read-ahead held in memory when the rest can spill.
const spillBudget = 8 << 20

const (
	// maxLayerReaders bounds the layers read at once (and so the registry
	// connections one unpack opens).
	maxLayerReaders = 4
)

// layerEntry is what a layer reader hands the merge.
type layerEntry struct {
	hdr  *tar.Header
	path string // the cleaned image path
	data []byte // a regular file's bytes, unless tooBig or spilled
	// spill is the file in Options.SpillDir that holds a large regular
	// file's bytes instead of data.
	spill string
	sum   [32]byte // their SHA-256, taken here, on the layer's goroutine
	// tooBig marks a regular file over MaxFileBytes, not read: an error
	// only if the merge keeps it.
	tooBig bool
	// held is what the entry counts against the read-ahead budget, or,
	// when cur is set, against the layer being merged's own (with a spill
	// directory only).
	held int64
	cur  bool
	// end marks the layer's last message; err is its outcome.
	end bool
	err error
}

// readAhead is the byte budget that lower layers' readers share.
type readAhead struct {
	mu       sync.Mutex
	cond     sync.Cond
	current  int // the layer being merged
	pending  int64
	curHeld  int64 // bytes of the layer being merged sent and not merged yet, when spilling
	stopped  bool
	spilling bool // past the budget, readers spill to disk: they never wait
}

func newReadAhead(top int, spilling bool) *readAhead {
	r := &readAhead{current: top, spilling: spilling}
	r.cond.L = &r.mu
	return r
}

// acquire reserves n bytes for an entry of layer, waiting while the budget
// is spent. It returns the bytes reserved (0 for the layer being merged),
// and false once the merge has stopped.
func (r *readAhead) acquire(layer int, n int64) (int64, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for !r.stopped && layer != r.current && r.pending > 0 && r.pending+n > r.budget() {
		r.cond.Wait()
	}
	if r.stopped {
		return 0, false
	}
	if layer == r.current {
		return 0, true
	}
	r.pending += n
	return n, true
}

// tryAcquire is acquire without the wait: ok is false when the bytes
// are not free now (or the merge has stopped), and nothing is reserved.
//
// The layer being merged has a budget of its own, the same size: when the
// merge falls behind (the writer is slower than the readers), what its
// reader sends ahead goes to disk too. cur reports that budget.
func (r *readAhead) tryAcquire(layer int, n int64) (held int64, cur, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case r.stopped:
		return 0, false, false
	case layer == r.current && r.curHeld > 0 && r.curHeld+n > r.budget():
		return 0, false, false
	case layer == r.current:
		r.curHeld += n
		return n, true, true
	case r.pending+n > r.budget():
		// No entry over the budget: the reader spills it, and the merge
		// still progresses.
		return 0, false, false
	}
	r.pending += n
	return n, false, true
}

// budget is what lower layers may hold in memory: readAheadBudget, or
// spillBudget when what does not fit can go to disk instead.
func (r *readAhead) budget() int64 {
	if r.spilling {
		return min(readAheadBudget, spillBudget)
	}
	return readAheadBudget
}

func (r *readAhead) release(n int64, cur bool) {
	if n == 0 {
		return
	}
	r.mu.Lock()
	if cur {
		r.curHeld -= n
	} else {
		r.pending -= n
	}
	r.mu.Unlock()
	r.cond.Broadcast()
}

// advance makes layer the one being merged: its reader no longer waits.
func (r *readAhead) advance(layer int) {
	r.mu.Lock()
	r.current = layer
	r.mu.Unlock()
	r.cond.Broadcast()
}

func (r *readAhead) stop() {
	r.mu.Lock()
	r.stopped = true
	r.mu.Unlock()
	r.cond.Broadcast()
}

// imageCounters are the image-wide limits that every layer reader counts
// against.
type imageCounters struct {
	bytes   atomic.Int64 // decompressed bytes read
	headers atomic.Int64 // tar entries read, anywhere in the image
}

// layerReader reads one layer for the merge.
type layerReader struct {
	f     *flattener // only its immutable fields: content, limits
	ls    layerSource
	ahead *readAhead
	count *imageCounters
	out   chan layerEntry
	slab  []byte // the unused rest of the current slab
}

// Small files are carved out of shared slabs: an add-on is mostly files
// of a few KiB, and one allocation each would round every one of them up
// to a size class (over 10% of the tree) and give the collector tens of
// thousands of objects to track. A slab lives as long as any file in it.
const (
	slabSize     = 1 << 20
	maxSlabAlloc = 64 << 10
)

// alloc returns a buffer of n bytes for a file's content.
func (r *layerReader) alloc(n int) []byte {
	if n > maxSlabAlloc {
		return make([]byte, n)
	}
	if len(r.slab) < n {
		r.slab = make([]byte, slabSize)
	}
	b := r.slab[:n:n]
	r.slab = r.slab[n:]
	return b
}

// run reads the layer and sends its entries, then one end message.
func (r *layerReader) run(ctx context.Context) {
	err := r.read(ctx)
	select {
	case r.out <- layerEntry{end: true, err: err}:
	case <-ctx.Done():
	}
}

func (r *layerReader) send(ctx context.Context, e layerEntry) error {
	select {
	case r.out <- e:
		return nil
	case <-ctx.Done():
		r.ahead.release(e.held, e.cur)
		return ctx.Err()
	}
}

func (r *layerReader) read(ctx context.Context) error {
	ls := r.ls
	raw, err := ls.layer.Compressed()
	if err != nil {
		return layerErr(ls.index, ls.desc.Digest, err)
	}
	// Verified here whatever the origin: not every v1.Layer checks itself,
	// and a typed mismatch lets callers fetch a registry blob again.
	rc, err := verify.NewReader(raw, ls.desc.Digest, ls.desc.Size)
	if err != nil {
		return layerErr(ls.index, ls.desc.Digest, err)
	}
	defer rc.Close()
	if ls.placement != "" {
		return r.readFile(ctx, rc)
	}
	// Three stages on their own goroutines: fetch and verify the blob,
	// inflate and hash the tar, parse it (here).
	blob := prefetch(rc, 4)
	defer blob.Close()
	zr, err := archive.Decompress(blob, mediatypes.LayerCompression(mediatypes.MediaType(ls.desc.MediaType)))
	if err != nil {
		return layerErr(ls.index, ls.desc.Digest, fmt.Errorf("%w: %w", ErrCorrupt, err))
	}
	defer zr.Close()
	cr := &countingReader{r: zr, count: r.count, limit: r.f.limits.MaxImageBytes, h: sha256.New()}
	tarStream := prefetch(cr, 4)
	defer tarStream.Close()
	tr := tar.NewReader(tarStream)
	_, err = archive.Entries(ctx, tr, func(hdr *tar.Header) error { return r.entry(ctx, tr, hdr) })
	var he *archive.HeaderError
	if errors.As(err, &he) {
		he.After = sanitize(he.After)
		return corruptOrLimit(ls, he)
	}
	if err != nil {
		return err
	}
	// Drain: the digest and DiffID checks happen at EOF, and tar stops
	// before the padding.
	if _, err := io.Copy(io.Discard, tarStream); err != nil {
		return corruptOrLimit(ls, err)
	}
	if _, err := io.Copy(io.Discard, blob); err != nil {
		return layerErr(ls.index, ls.desc.Digest, err)
	}
	if ls.diffID != nil {
		if got := hex.EncodeToString(cr.h.Sum(nil)); got != ls.diffID.Hex {
			return layerErr(ls.index, ls.desc.Digest, fmt.Errorf("%w: uncompressed content hashes to sha256:%s, the config's diff_id is %s", ErrDiffIDMismatch, got, ls.diffID))
		}
	}
	return nil
}

// corruptOrLimit passes a limit through and marks anything else corrupt.
func corruptOrLimit(ls layerSource, err error) error {
	var le *safetree.LimitError
	if errors.As(err, &le) {
		return le
	}
	return layerErr(ls.index, ls.desc.Digest, fmt.Errorf("%w: %w", ErrCorrupt, err))
}

// entry sends the merge what it needs of one tar entry: nothing for
// entries outside the content directory (tar skips their bytes).
func (r *layerReader) entry(ctx context.Context, tr *tar.Reader, hdr *tar.Header) error {
	f, ls := r.f, r.ls
	// Every entry counts, kept or not: whiteout and outside entries cost
	// work and bookkeeping too.
	if r.count.headers.Add(1) > int64(f.limits.MaxEntries) {
		return &safetree.LimitError{Name: "entry count", Limit: int64(f.limits.MaxEntries), Which: safetree.LimitEntries}
	}
	p, err := cleanName(ls, hdr.Name)
	if err != nil {
		return err
	}
	if len(p) > f.limits.MaxPathLength {
		return &safetree.LimitError{Name: "path length", Limit: int64(f.limits.MaxPathLength), Which: safetree.LimitPathLength, Entry: sanitize(p)}
	}
	if p == "." || !f.mayMatter(p) || isEstargzMetadata(ls, p, hdr.Typeflag) {
		return nil
	}
	e := layerEntry{hdr: hdr, path: p}
	if hdr.Typeflag == tar.TypeReg {
		_, base := path.Split(p)
		switch {
		case hdr.Size > f.limits.MaxFileBytes:
			e.tooBig = true
		case strings.HasPrefix(base, whiteoutPrefix):
			// A whiteout marker: its bytes mean nothing (tar skips them).
			e.data = []byte{}
		case f.spillDir != "" && hdr.Size > SpillThreshold:
			// Streamed to disk: no memory, no read-ahead budget.
			return r.spillEntry(ctx, tr, e)
		case hdr.Size > 0:
			var held int64
			cur, ok := false, true
			if f.spillDir != "" {
				if held, cur, ok = r.ahead.tryAcquire(ls.index, hdr.Size); !ok {
					// No room in memory: to disk, at no cost in memory.
					return r.spillEntry(ctx, tr, e)
				}
			} else {
				held, ok = r.ahead.acquire(ls.index, hdr.Size)
			}
			if !ok {
				return context.Canceled
			}
			e.held, e.cur = held, cur
			e.data, err = readExactly(tr, hdr.Size, r.alloc)
			if err != nil {
				r.ahead.release(held, cur)
				var le *safetree.LimitError
				if errors.As(err, &le) {
					return le
				}
				return layerErr(ls.index, ls.desc.Digest, fmt.Errorf("%w: %s: %w", ErrCorrupt, sanitize(hdr.Name), err))
			}
		default:
			e.data = []byte{}
		}
		e.sum = sha256.Sum256(e.data)
	}
	return r.send(ctx, e)
}

// isEstargzMetadata reports whether the entry p of type typ is one of
// the entries that eStargz adds at the root of a layer (its table of
// contents and its prefetch landmarks, each a regular file) in a layer
// whose descriptor says it is eStargz (spec 4.4). They describe the
// layer, not the filesystem: the lazy snapshotter never shows them and
// containers/storage skips them, so the add-on reads the same whether
// its layer was converted or not. eStargz extends image layers only: in
// the artifact form, a Flux artifact or any other layer the names are
// the add-on's own files, as Flux reads them, whatever the descriptor
// says, and so is an entry of those names that is no regular file.
func isEstargzMetadata(ls layerSource, p string, typ byte) bool {
	switch p {
	case "stargz.index.json", ".prefetch.landmark", ".no.prefetch.landmark":
		return typ == tar.TypeReg &&
			mediatypes.IsImageLayer(mediatypes.MediaType(ls.desc.MediaType)) &&
			ls.desc.Annotations[mediatypes.AnnotationEstargzTOC] != ""
	}
	return false
}

// spillEntry streams a regular file's bytes to the spill directory and
// sends the entry.
func (r *layerReader) spillEntry(ctx context.Context, tr io.Reader, e layerEntry) error {
	var err error
	e.spill, e.sum, err = spill(r.f.spillDir, tr, e.hdr.Size)
	if err != nil {
		return layerErr(r.ls.index, r.ls.desc.Digest, fmt.Errorf("%w: %s: %w", ErrCorrupt, sanitize(e.hdr.Name), err))
	}
	return r.send(ctx, e)
}

// spillBuf is the copy buffer of spill.
var spillBuf = sync.Pool{New: func() any { b := make([]byte, 256<<10); return &b }}

// spill streams size bytes of r to a new file in dir, hashing them, and
// returns its path and SHA-256. The spill directory is the unpack's own
// (0700, made for this unpack): rawfile writes there with three system
// calls a file where os.CreateTemp and Write take eight.
func spill(dir string, r io.Reader, size int64) (string, [32]byte, error) {
	var sum [32]byte
	h := sha256.New()
	buf := spillBuf.Get().(*[]byte)
	name, err := rawfile.WriteTemp(dir, "spill-", r, size, *buf, func(p []byte) { h.Write(p) })
	spillBuf.Put(buf)
	if err != nil {
		return "", sum, err
	}
	h.Sum(sum[:0])
	return name, sum, nil
}

// spillBytes writes data to a new file in dir and returns its path.
func spillBytes(dir string, data []byte) (string, error) {
	return rawfile.WriteTempBytes(dir, "spill-", data)
}

// linkSpill gives the spilled file at name a second name in dir (a hard
// link, else a copy) and returns it.
func linkSpill(dir, name string) (string, error) {
	f, err := os.CreateTemp(dir, "spill-*")
	if err != nil {
		return "", err
	}
	to := f.Name()
	f.Close()
	os.Remove(to)
	if err := os.Link(name, to); err == nil {
		return to, nil
	}
	in, err := os.Open(name)
	if err != nil {
		return "", err
	}
	defer in.Close()
	st, err := in.Stat()
	if err != nil {
		return "", err
	}
	to, _, err = spill(dir, in, st.Size())
	return to, err
}

// readFile reads an ORAS file layer (a plain blob, not a tar), to be
// placed at its title.
func (r *layerReader) readFile(ctx context.Context, rc io.Reader) error {
	f, ls := r.f, r.ls
	p, err := cleanName(ls, ls.placement)
	if err != nil {
		return err
	}
	if len(p) > f.limits.MaxPathLength {
		return &safetree.LimitError{Name: "path length", Limit: int64(f.limits.MaxPathLength), Which: safetree.LimitPathLength, Entry: sanitize(p)}
	}
	if ls.desc.Size > f.limits.MaxFileBytes {
		return &safetree.LimitError{Name: "file size", Limit: f.limits.MaxFileBytes, Which: safetree.LimitFileBytes, Entry: sanitize(p)}
	}
	if f.spillDir != "" && ls.desc.Size > SpillThreshold {
		// The blob's size is verified: past it, or short of it, the
		// verifying reader fails.
		spilled, sum, err := spill(f.spillDir, rc, ls.desc.Size)
		if err == nil {
			_, err = io.Copy(io.Discard, rc)
		}
		if err != nil {
			if spilled != "" {
				os.Remove(spilled)
			}
			return layerErr(ls.index, ls.desc.Digest, err)
		}
		hdr := &tar.Header{Typeflag: tar.TypeReg, Name: p, Size: ls.desc.Size, Mode: 0o644}
		return r.send(ctx, layerEntry{hdr: hdr, path: p, spill: spilled, sum: sum})
	}
	data, err := io.ReadAll(io.LimitReader(rc, f.limits.MaxFileBytes+1))
	if err != nil {
		return layerErr(ls.index, ls.desc.Digest, err)
	}
	if int64(len(data)) > f.limits.MaxFileBytes {
		return &safetree.LimitError{Name: "file size", Limit: f.limits.MaxFileBytes, Which: safetree.LimitFileBytes, Entry: sanitize(p)}
	}
	hdr := &tar.Header{Typeflag: tar.TypeReg, Name: p, Size: int64(len(data)), Mode: 0o644}
	return r.send(ctx, layerEntry{hdr: hdr, path: p, data: data, sum: sha256.Sum256(data)})
}
