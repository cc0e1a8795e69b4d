package unpack

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path"
	"strings"
	"sync"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/addonpkg/addonpkg/pkg/archive"
	"github.com/addonpkg/addonpkg/pkg/filetree"
	"github.com/addonpkg/addonpkg/pkg/safetree"
)

// OCI whiteout markers.
const (
	whiteoutPrefix = ".wh."
	opaqueMarker   = ".wh..wh..opq"
)

// layerSource is one layer to apply: its blob and what the image says of it.
type layerSource struct {
	index     int // 1-based, bottom to top
	layer     v1.Layer
	desc      v1.Descriptor
	diffID    *v1.Hash // from the config, when it has one
	placement string   // ORAS file layers: the file's path in the tree
}

// flattener applies layers top-down. An entry of a lower layer is kept
// only if no upper layer already wrote, deleted or hid its path, so what
// an upper layer deletes is never kept (see readahead.go for how lower
// layers are read while upper ones are merged).
type flattener struct {
	content string // content directory, relative to the image root ("" = root)
	limits  safetree.Limits
	log     *slog.Logger

	b           *filetree.Builder
	owner       map[string]int        // tree path -> layer that wrote it
	implied     map[string]int        // directories made for deeper entries -> their layer
	deleted     map[string]bool       // image paths whited out by upper layers
	opaque      map[string]bool       // image dirs made opaque by upper layers
	shadowed    map[string]shadowFile // this layer's content files not kept, for hardlinks to them
	shadowBytes int64
	sink        Sink
	sinkOnly    bool
	spillDir    string // where readers stream large files, if set
}

func newFlattener(content string, limits safetree.Limits, log *slog.Logger) *flattener {
	return &flattener{
		content: strings.Trim(content, "/"),
		limits:  limits,
		log:     log,
		b:       filetree.NewBuilder(),
		owner:   map[string]int{},
		implied: map[string]int{},
		deleted: map[string]bool{},
		opaque:  map[string]bool{},
	}
}

// apply flattens the layers, given bottom to top: it starts a reader per
// layer, top first, and merges their entries one layer at a time.
func (f *flattener) apply(ctx context.Context, layers []layerSource) (*filetree.FS, error) {
	ctx, cancel := context.WithCancel(ctx)
	ahead := newReadAhead(layers[len(layers)-1].index, f.spillDir != "")
	var wg sync.WaitGroup
	defer func() {
		cancel()
		ahead.stop()
		wg.Wait()
	}()
	count := &imageCounters{}
	chans := make([]chan layerEntry, len(layers))
	for i := range chans {
		chans[i] = make(chan layerEntry, 256)
	}
	// Readers start top-down, so the layer being merged has always been
	// started before any layer below it holds a slot.
	wg.Add(1)
	go func() {
		defer wg.Done()
		slots := make(chan struct{}, maxLayerReaders)
		for i := len(layers) - 1; i >= 0; i-- {
			select {
			case slots <- struct{}{}:
			case <-ctx.Done():
				return
			}
			r := &layerReader{f: f, ls: layers[i], ahead: ahead, count: count, out: chans[i]}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer func() { <-slots }()
				r.run(ctx)
			}()
		}
	}()
	for i := len(layers) - 1; i >= 0; i-- {
		ahead.advance(layers[i].index)
		if err := f.mergeLayer(ctx, layers[i], chans[i], ahead); err != nil {
			return nil, err
		}
	}
	fsys := f.b.FS()
	// Links are judged in the final tree, through each other: the same
	// judgement the -o writer and every tree source make.
	if err := safetree.CheckLinks(fsys); err != nil {
		return nil, err
	}
	return fsys, nil
}

// mergeLayer applies one layer's entries as its reader sends them.
func (f *flattener) mergeLayer(ctx context.Context, ls layerSource, in <-chan layerEntry, ahead *readAhead) error {
	// This layer's whiteouts apply only to lower layers: collect them and
	// merge after the layer is done.
	layerDeleted := map[string]bool{}
	layerOpaque := map[string]bool{}
	f.shadowed, f.shadowBytes = map[string]shadowFile{}, 0
	for {
		var e layerEntry
		select {
		case e = <-in:
		case <-ctx.Done():
			return ctx.Err()
		}
		ahead.release(e.held, e.cur)
		if e.end {
			if e.err != nil {
				return e.err
			}
			break
		}
		if err := f.entry(ls, e, layerDeleted, layerOpaque); err != nil {
			return err
		}
	}
	for p := range layerDeleted {
		f.deleted[p] = true
	}
	for p := range layerOpaque {
		f.opaque[p] = true
	}
	// Hidden files spilled to disk that no hardlink took are gone for
	// good: free the disk as the layers go.
	for _, h := range f.shadowed {
		if h.spill != "" {
			os.Remove(h.spill)
		}
	}
	f.shadowed = nil
	return nil
}

// inContent maps an image path to the tree path; ok is false outside the
// content directory.
func (f *flattener) inContent(p string) (string, bool) {
	if f.content == "" {
		return p, true
	}
	if p == f.content {
		return ".", true
	}
	if strings.HasPrefix(p, f.content+"/") {
		return p[len(f.content)+1:], true
	}
	return "", false
}

// mayMatter reports whether the entry at image path p can change the
// add-on tree: it lies inside the content directory, or it is a whiteout
// of a path inside it or of one of its ancestors.
func (f *flattener) mayMatter(p string) bool {
	dir, base := path.Split(p)
	dir = path.Clean(dir)
	switch {
	case base == opaqueMarker:
		_, in := f.inContent(dir)
		return in || f.isAncestorOfContent(dir)
	case strings.HasPrefix(base, whiteoutPrefix):
		target := path.Join(dir, strings.TrimPrefix(base, whiteoutPrefix))
		_, in := f.inContent(target)
		return in || f.isAncestorOfContent(target)
	}
	_, in := f.inContent(p)
	return in
}

// hidden reports whether an upper layer deleted p or made one of its
// ancestors opaque or deleted.
func (f *flattener) hidden(p string) bool {
	if f.deleted[p] {
		return true
	}
	for d := path.Dir(p); ; d = path.Dir(d) {
		if f.deleted[d] || f.opaque[d] {
			return true
		}
		if d == "." || d == "/" {
			return false
		}
	}
}

// countingReader hashes a layer's decompressed bytes and enforces the
// whole-image decompressed byte limit as they are read, so a bomb stops at
// the limit, not after.
type countingReader struct {
	r     io.Reader
	count *imageCounters
	limit int64
	h     hash.Hash
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.h.Write(p[:n])
	if c.count.bytes.Add(int64(n)) > c.limit {
		return n, &safetree.LimitError{Name: "decompressed image size", Limit: c.limit, Which: safetree.LimitImageBytes}
	}
	return n, err
}

// cleanName normalizes a tar entry name and refuses names that climb out
// (safetree.CleanName).
func cleanName(ls layerSource, name string) (string, error) {
	p, err := safetree.CleanName(name)
	if err != nil {
		return "", inLayer(ls.index, err)
	}
	return p, nil
}

// entry merges one entry that the layer's reader found relevant.
func (f *flattener) entry(ls layerSource, e layerEntry, layerDeleted, layerOpaque map[string]bool) error {
	hdr, p := e.hdr, e.path
	dir, base := path.Split(p)
	dir = path.Clean(dir)

	// Nothing below a .wh. name is part of the filesystem: that name is a
	// whiteout (or an opaque or AUFS marker), never a directory.
	if underWhiteout(dir) {
		return nil
	}
	// Whiteouts are markers whatever their type flag.
	if base == opaqueMarker {
		if _, in := f.inContent(dir); in || f.isAncestorOfContent(dir) {
			layerOpaque[dir] = true
		}
		return nil
	}
	if strings.HasPrefix(base, whiteoutPrefix) {
		target := path.Join(dir, strings.TrimPrefix(base, whiteoutPrefix))
		if _, in := f.inContent(target); in || f.isAncestorOfContent(target) {
			layerDeleted[target] = true
		}
		return nil
	}

	tp, in := f.inContent(p)
	if !in {
		return nil // outside the add-on: streamed past, only counted
	}
	if hdr.Typeflag != tar.TypeDir {
		// A file or link replaces whatever lower layers had at its path,
		// a whole directory included, even when an upper layer later makes
		// a directory there again and this entry is not kept.
		layerDeleted[p] = true
	}
	if f.hidden(p) {
		return f.shadow(e, tp)
	}
	if tp == "." {
		if hdr.Typeflag != tar.TypeDir {
			return &EntryError{Layer: ls.index, Entry: hdr.Name, Reason: "content directory is not a directory", Err: ErrNoContent}
		}
		return nil
	}
	if err := f.limits.CheckPath(tp); err != nil {
		return inLayer(ls.index, err)
	}
	if _, exists := f.b.Lookup(tp); exists {
		owner, explicit := f.owner[tp]
		if !explicit {
			owner = f.implied[tp]
		}
		switch {
		case owner == ls.index && hdr.Typeflag == tar.TypeDir:
			// This layer's own directory, first implied by deeper entries,
			// or declared twice: it keeps its contents.
		case owner == ls.index:
			// The same path twice in one layer: the later entry wins, as
			// in a sequential extraction.
			if err := f.replaceOwn(ls, hdr, tp); err != nil {
				return err
			}
		case !explicit && hdr.Typeflag == tar.TypeDir:
			// An upper layer implied this directory; this layer declares it,
			// so what lower layers put here is replaced, not written through.
			f.owner[tp] = ls.index
			return nil
		case !explicit && hdr.Typeflag == tar.TypeSymlink:
			// An upper layer wrote below this path without declaring it a
			// directory: applied in order, those writes would go through
			// this link. Refuse rather than guess where they land.
			return &EntryError{Layer: ls.index, Entry: hdr.Name, Reason: "an upper layer writes through this symlink", Err: safetree.ErrUnsafe}
		default:
			// An upper layer wrote this path, or a directory below it.
			return f.shadow(e, tp)
		}
	}
	// An upper layer that put a file (or link) where this entry's parent
	// directory would be replaced that whole directory.
	if f.parentReplaced(tp, ls.index) {
		return f.shadow(e, tp)
	}
	if f.b.Count() >= f.limits.MaxEntries {
		return &safetree.LimitError{Name: "entry count", Limit: int64(f.limits.MaxEntries), Which: safetree.LimitEntries}
	}

	var werr error
	switch hdr.Typeflag {
	case tar.TypeDir:
		werr = f.b.Mkdir(tp, 0o755)
	case tar.TypeReg:
		if safetree.GNUSparse(hdr) {
			return &EntryError{Layer: ls.index, Entry: hdr.Name, Reason: "GNU sparse files are not supported in an add-on", Err: safetree.ErrUnsupportedType}
		}
		if e.tooBig {
			return &safetree.LimitError{Name: "file size", Limit: f.limits.MaxFileBytes, Which: safetree.LimitFileBytes, Entry: sanitize(tp)}
		}
		if f.b.Size()+hdr.Size > f.limits.MaxAddonBytes {
			return &safetree.LimitError{Name: "add-on size", Limit: f.limits.MaxAddonBytes, Which: safetree.LimitAddonBytes, Entry: sanitize(tp)}
		}
		mode := archive.NormalMode(fs.FileMode(hdr.Mode))
		werr = f.keepFile(tp, e.data, e.spill, hdr.Size, mode, e.sum)
	case tar.TypeSymlink:
		if err := f.checkLink(ls, hdr, tp); err != nil {
			return err
		}
		werr = f.b.Symlink(hdr.Linkname, tp)
	case tar.TypeLink:
		// A hard link shares its target's inode: it has the target's bytes
		// and mode, whatever mode its own header claims.
		src, hid, err := f.hardlinkData(ls, hdr)
		if err != nil {
			return err
		}
		switch {
		case src == "":
			// A hidden file of this layer, held for links like this one.
			spilled := hid.spill
			if spilled != "" {
				// tp gets a file of its own (the tree or the sink may move
				// it); the hidden one stays for more links.
				if spilled, err = linkSpill(f.spillDir, hid.spill); err != nil {
					return &EntryError{Layer: ls.index, Entry: hdr.Name, Reason: err.Error(), Err: safetree.ErrUnsafe}
				}
			}
			werr = f.keepFile(tp, hid.data, spilled, hid.size, hid.mode, hid.sum)
		default:
			mode, _ := f.b.Lookup(src)
			if werr = f.b.CopyFile(src, tp, mode); werr == nil && f.sink != nil {
				f.sink.Copy(tp, src, mode)
			}
		}
	case tar.TypeChar, tar.TypeBlock, tar.TypeFifo:
		return &EntryError{Layer: ls.index, Entry: hdr.Name, Reason: "device or fifo entries are not allowed in an add-on", Err: safetree.ErrUnsupportedType}
	case tar.TypeXGlobalHeader, tar.TypeXHeader, tar.TypeGNULongName, tar.TypeGNULongLink:
		return nil
	case tar.TypeGNUSparse:
		return &EntryError{Layer: ls.index, Entry: hdr.Name, Reason: "GNU sparse files are not supported in an add-on", Err: safetree.ErrUnsupportedType}
	default:
		return &EntryError{Layer: ls.index, Entry: hdr.Name, Reason: fmt.Sprintf("unsupported entry type %q", hdr.Typeflag), Err: safetree.ErrUnsupportedType}
	}
	if werr != nil {
		if errors.Is(werr, filetree.ErrSpill) {
			// The disk failed, not the entry.
			return fmt.Errorf("layer %d: %s: %w", ls.index, sanitize(hdr.Name), werr)
		}
		if errors.Is(werr, filetree.ErrNotDir) {
			return &EntryError{Layer: ls.index, Entry: hdr.Name, Reason: "path passes through a symlink or file", Err: safetree.ErrUnsafe}
		}
		return &EntryError{Layer: ls.index, Entry: hdr.Name, Reason: werr.Error(), Err: safetree.ErrUnsafe}
	}
	f.owner[tp] = ls.index
	// Directories the builder made on the way are implied by this layer.
	for d := path.Dir(tp); d != "."; d = path.Dir(d) {
		if _, ok := f.owner[d]; ok {
			break
		}
		if _, ok := f.implied[d]; ok {
			break
		}
		f.implied[d] = ls.index
	}
	return nil
}

// underWhiteout reports whether a segment of the directory dir begins
// with .wh.: such a name is a whiteout or marker, so an entry below it has
// no place in the filesystem.
func underWhiteout(dir string) bool {
	for rest := dir; rest != "" && rest != "."; {
		var part string
		part, rest, _ = strings.Cut(rest, "/")
		if strings.HasPrefix(part, whiteoutPrefix) {
			return true
		}
	}
	return false
}

// replaceOwn removes what this layer wrote at tp before, so that a later
// entry of the same layer takes its place: a file, link or directory
// subtree goes, unless the new entry is a directory over a directory.
// When upper layers wrote below tp, the layer order decides nothing a
// sequential extraction could reproduce (it would write through a file):
// the entry is refused. Files already handed to a sink cannot be taken
// back: the entry is then refused as unsupported.
func (f *flattener) replaceOwn(ls layerSource, hdr *tar.Header, tp string) error {
	mode, _ := f.b.Lookup(tp)
	if mode.IsDir() {
		if upper, ok := f.implied[tp]; ok && upper != ls.index {
			return &EntryError{Layer: ls.index, Entry: hdr.Name, Reason: "an upper layer writes below this path, which its own layer replaces with a non-directory", Err: safetree.ErrUnsafe}
		}
	}
	before := f.b.Count()
	f.b.Remove(tp)
	delete(f.owner, tp)
	delete(f.implied, tp)
	if f.sink != nil && (mode.IsRegular() || (mode.IsDir() && before-f.b.Count() > 1)) {
		// The first was handed to the sink already: take it back.
		r, ok := f.sink.(Remover)
		if !ok {
			return &EntryError{Layer: ls.index, Entry: hdr.Name, Reason: "the same path twice in one layer, after the first was already streamed to the output, which cannot replace it", Err: ErrUnsupported}
		}
		r.Remove(tp)
	}
	return nil
}

// maxShadowBytes bounds the hidden bytes held per layer for hardlinks.
// With a spill directory, only shadowMemBytes of them stay in memory and
// the rest go there, without a bound but the image's own limits.
const maxShadowBytes = 64 << 20

var shadowMemBytes int64 = 4 << 20 // a variable for tests

// shadow holds, until this layer is done, the bytes of a regular file
// that an upper layer hid: a hardlink later in this layer may still name
// it. Hidden files are not part of the add-on, so they do not count
// against its limits; past maxShadowBytes they are no longer held, and a
// hardlink to one of those is refused.
func (f *flattener) shadow(e layerEntry, tp string) error {
	mode := archive.NormalMode(fs.FileMode(e.hdr.Mode))
	if old, ok := f.shadowed[tp]; ok && old.spill != "" {
		os.Remove(old.spill) // the same path hidden twice: the later wins
	}
	if e.spill != "" {
		// On disk already: held at no cost in memory.
		f.shadowed[tp] = shadowFile{name: tp, spill: e.spill, size: e.hdr.Size, sum: e.sum, mode: mode}
		return nil
	}
	if e.data == nil {
		return nil
	}
	if f.spillDir != "" && f.shadowBytes+int64(len(e.data)) > shadowMemBytes {
		name, err := spillBytes(f.spillDir, e.data)
		if err != nil {
			return fmt.Errorf("hold %s: %w", sanitize(tp), err)
		}
		f.shadowed[tp] = shadowFile{name: tp, spill: name, size: int64(len(e.data)), sum: e.sum, mode: mode}
		return nil
	}
	if f.shadowBytes+int64(len(e.data)) > maxShadowBytes {
		return nil
	}
	// A copy: a small file's bytes share a slab with the files read next
	// to it, which are written and let go long before this layer ends.
	data := append([]byte(nil), e.data...)
	f.shadowed[tp] = shadowFile{name: tp, data: data, size: int64(len(e.data)), sum: e.sum, mode: mode}
	f.shadowBytes += int64(len(e.data))
	return nil
}

// shadowFile is a regular file of this layer that an upper layer hid.
type shadowFile struct {
	name  string
	data  []byte
	spill string // the file on disk that holds its bytes, when spilled
	size  int64
	sum   [32]byte
	mode  fs.FileMode
}

// isAncestorOfContent reports whether p is the content directory's parent
// or higher, so that its whiteout or opaque marker hides the content.
func (f *flattener) isAncestorOfContent(p string) bool {
	if f.content == "" {
		return false
	}
	if p == "." {
		return true
	}
	return strings.HasPrefix(f.content+"/", p+"/")
}

// parentReplaced reports whether an upper layer put a non-directory at one
// of tp's ancestors.
func (f *flattener) parentReplaced(tp string, layer int) bool {
	for d := path.Dir(tp); d != "."; d = path.Dir(d) {
		if mode, ok := f.b.Lookup(d); ok && !mode.IsDir() && f.owner[d] != layer {
			return true
		}
	}
	return false
}

// checkLink refuses a symlink whose text is absolute or leaves the tree
// (safetree.CheckLinkText); the final tree's links are judged together
// once every layer is merged (safetree.CheckLinks, in apply).
func (f *flattener) checkLink(ls layerSource, hdr *tar.Header, tp string) error {
	if err := safetree.CheckLinkText(tp, hdr.Linkname); err != nil {
		var se *safetree.Error
		if errors.As(err, &se) {
			return &EntryError{Layer: ls.index, Entry: hdr.Name, Reason: se.Reason, Err: se.Err}
		}
		return err
	}
	return nil
}

// hardlinkData resolves a hardlink to a file this layer already has: a
// kept file (src names it in the tree) or a hidden one (its bytes and
// mode). Hardlinks that leave the tree, or point into another layer, are
// refused.
func (f *flattener) hardlinkData(ls layerSource, hdr *tar.Header) (src string, hid shadowFile, err error) {
	target, err := cleanName(ls, hdr.Linkname)
	if err != nil {
		return "", hid, &EntryError{Layer: ls.index, Entry: hdr.Name, Reason: fmt.Sprintf("hardlink to %q leaves the tree", sanitize(hdr.Linkname)), Err: safetree.ErrLinkEscape}
	}
	tt, in := f.inContent(target)
	if !in {
		return "", hid, &EntryError{Layer: ls.index, Entry: hdr.Name, Reason: fmt.Sprintf("hardlink to %q leads out of the add-on tree", sanitize(hdr.Linkname)), Err: safetree.ErrLinkEscape}
	}
	if f.owner[tt] == ls.index {
		if mode, ok := f.b.Lookup(tt); ok && mode.IsRegular() {
			return tt, hid, nil
		}
	}
	if hid, ok := f.shadowed[tt]; ok {
		return "", hid, nil
	}
	return "", hid, &EntryError{Layer: ls.index, Entry: hdr.Name, Reason: fmt.Sprintf("hardlink to %q, which is not a file kept from the same layer", sanitize(hdr.Linkname)), Err: safetree.ErrLinkEscape}
}

// keepFile puts a regular file in the tree, from its bytes or from the
// file it was spilled to, and hands it to the sink.
func (f *flattener) keepFile(tp string, data []byte, spill string, size int64, mode fs.FileMode, sum [32]byte) error {
	if spill == "" {
		if err := f.b.WriteFileSum(tp, data, mode, sum); err != nil {
			return err
		}
		f.toSink(tp, data, mode)
		return nil
	}
	if err := f.b.WriteFileOnDisk(tp, spill, size, mode, sum); err != nil {
		return err
	}
	if f.sink == nil {
		return nil
	}
	if ds, ok := f.sink.(DiskSink); ok && f.sinkOnly {
		// The sink moves the file: the tree keeps its size and digest.
		ds.TakeFile(tp, spill, mode)
		return f.b.Drop(tp)
	}
	b, err := os.ReadFile(spill)
	if err != nil {
		return err
	}
	f.toSink(tp, b, mode)
	return nil
}

// toSink hands a kept file to the sink, and lets go of its bytes when
// only the sink keeps them.
func (f *flattener) toSink(name string, data []byte, mode fs.FileMode) {
	if f.sink == nil {
		return
	}
	f.sink.File(name, data, mode)
	if f.sinkOnly {
		_ = f.b.Drop(name) // it was just written with its sum
	}
}

// readExactly reads a file's bytes. Files up to 1 MiB get their buffer
// from alloc. A larger file gets up to trustedSize at once and grows past
// that only as its bytes arrive, so a header that lies about its size
// costs little.
func readExactly(r io.Reader, size int64, alloc func(int) []byte) ([]byte, error) {
	const small = 1 << 20
	if size <= small {
		b := alloc(int(size))
		_, err := io.ReadFull(r, b)
		return b, err
	}
	b := make([]byte, 0, min(size, trustedSize))
	b, err := readAllInto(r, b, size)
	if err != nil {
		return nil, err
	}
	if int64(len(b)) != size {
		return nil, io.ErrUnexpectedEOF
	}
	return b, nil
}

// trustedSize is how much of a header's size is allocated before the
// bytes arrive.
const trustedSize = 16 << 20

func readAllInto(r io.Reader, b []byte, size int64) ([]byte, error) {
	for int64(len(b)) < size {
		if len(b) == cap(b) {
			nb := make([]byte, len(b), min(int64(cap(b))*2, size))
			copy(nb, b)
			b = nb
		}
		n, err := r.Read(b[len(b):min(int64(cap(b)), size)])
		b = b[:len(b)+n]
		if err == io.EOF {
			// tar.Reader hands back the last bytes with io.EOF.
			if int64(len(b)) == size {
				return b, nil
			}
			return b, io.ErrUnexpectedEOF
		}
		if err != nil {
			return b, err
		}
	}
	return b, nil
}
