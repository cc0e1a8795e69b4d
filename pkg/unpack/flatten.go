package unpack

import (
	"archive/tar"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"log/slog"
	"path"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/addonpkg/addonpkg/internal/verify"
	"github.com/addonpkg/addonpkg/pkg/archive"
	"github.com/addonpkg/addonpkg/pkg/mediatypes"
	"github.com/addonpkg/addonpkg/pkg/memfs"
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
// an upper layer deletes is skipped without being read into memory.
type flattener struct {
	content string // content directory, relative to the image root ("" = root)
	limits  Limits
	log     *slog.Logger

	b           *memfs.Builder
	owner       map[string]int    // tree path -> layer that wrote it
	implied     map[string]int    // directories made for deeper entries -> their layer
	deleted     map[string]bool   // image paths whited out by upper layers
	opaque      map[string]bool   // image dirs made opaque by upper layers
	imageIn     int64             // decompressed bytes read so far
	headers     int               // tar entries read so far, anywhere in the image
	shadowed    map[string][]byte // this layer's content files not kept, for hardlinks to them
	shadowBytes int64
}

func newFlattener(content string, limits Limits, log *slog.Logger) *flattener {
	return &flattener{
		content: strings.Trim(content, "/"),
		limits:  limits,
		log:     log,
		b:       memfs.NewBuilder(),
		owner:   map[string]int{},
		implied: map[string]int{},
		deleted: map[string]bool{},
		opaque:  map[string]bool{},
	}
}

// apply flattens the layers, given bottom to top.
func (f *flattener) apply(ctx context.Context, layers []layerSource) (*memfs.FS, error) {
	for i := len(layers) - 1; i >= 0; i-- {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := f.applyLayer(ctx, layers[i]); err != nil {
			return nil, err
		}
	}
	return f.b.FS(), nil
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

// countingReader enforces the whole-image decompressed byte limit as the
// bytes are read, so a bomb stops at the limit, not after.
type countingReader struct {
	r io.Reader
	f *flattener
	h hash.Hash
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.h.Write(p[:n])
	c.f.imageIn += int64(n)
	if c.f.imageIn > c.f.limits.MaxImageBytes {
		return n, &LimitError{Name: "decompressed image size", Limit: c.f.limits.MaxImageBytes, Flag: FlagMaxImageBytes}
	}
	return n, err
}

func (f *flattener) applyLayer(ctx context.Context, ls layerSource) (err error) {
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
		return f.applyFile(ls, rc)
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
	cr := &countingReader{r: zr, f: f, h: sha256.New()}
	tarStream := prefetch(cr, 4)
	defer tarStream.Close()
	tr := tar.NewReader(tarStream)

	// This layer's whiteouts apply only to lower layers: collect them and
	// merge after the layer is done.
	layerDeleted := map[string]bool{}
	layerOpaque := map[string]bool{}
	f.shadowed, f.shadowBytes = map[string][]byte{}, 0
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			var le *LimitError
			if errors.As(err, &le) {
				return err
			}
			return layerErr(ls.index, ls.desc.Digest, fmt.Errorf("%w: read tar: %w", ErrCorrupt, err))
		}
		if err := f.entry(ls, tr, hdr, layerDeleted, layerOpaque); err != nil {
			return err
		}
	}
	// Drain: the digest and DiffID checks happen at EOF, and tar stops
	// before the padding.
	if _, err := io.Copy(io.Discard, tarStream); err != nil {
		var le *LimitError
		if errors.As(err, &le) {
			return err
		}
		return layerErr(ls.index, ls.desc.Digest, fmt.Errorf("%w: %w", ErrCorrupt, err))
	}
	if _, err := io.Copy(io.Discard, blob); err != nil {
		return layerErr(ls.index, ls.desc.Digest, err)
	}
	if ls.diffID != nil {
		if got := hex.EncodeToString(cr.h.Sum(nil)); got != ls.diffID.Hex {
			return layerErr(ls.index, ls.desc.Digest, fmt.Errorf("%w: uncompressed content hashes to sha256:%s, the config's diff_id is %s", ErrCorrupt, got, ls.diffID))
		}
	}
	for p := range layerDeleted {
		f.deleted[p] = true
	}
	for p := range layerOpaque {
		f.opaque[p] = true
	}
	return nil
}

// cleanName normalizes a tar entry name and refuses names that climb out.
func cleanName(ls layerSource, name string) (string, error) {
	if strings.HasPrefix(name, "/") {
		return "", &EntryError{Layer: ls.index, Entry: name, Reason: "absolute path", Err: ErrUnsafeEntry}
	}
	for _, part := range strings.Split(name, "/") {
		if part == ".." {
			return "", &EntryError{Layer: ls.index, Entry: name, Reason: "path climbs out with ..", Err: ErrUnsafeEntry}
		}
	}
	if strings.ContainsRune(name, 0) {
		return "", &EntryError{Layer: ls.index, Entry: name, Reason: "NUL in path", Err: ErrUnsafeEntry}
	}
	p := path.Clean(name)
	if p == "." {
		return ".", nil
	}
	return p, nil
}

func (f *flattener) entry(ls layerSource, tr *tar.Reader, hdr *tar.Header, layerDeleted, layerOpaque map[string]bool) error {
	// Every entry counts, kept or not: whiteout and outside entries cost
	// work and bookkeeping too.
	f.headers++
	if f.headers > f.limits.MaxEntries {
		return &LimitError{Name: "entry count", Limit: int64(f.limits.MaxEntries), Flag: FlagMaxEntries}
	}
	p, err := cleanName(ls, hdr.Name)
	if err != nil {
		return err
	}
	if len(p) > f.limits.MaxPathLength {
		return &LimitError{Name: "path length", Limit: int64(f.limits.MaxPathLength), Flag: FlagMaxPathLength, Entry: sanitize(p)}
	}
	if p == "." {
		return nil
	}
	dir, base := path.Split(p)
	dir = path.Clean(dir)

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
		return f.shadow(ls, tr, hdr, tp)
	}
	if tp == "." {
		if hdr.Typeflag != tar.TypeDir {
			return &EntryError{Layer: ls.index, Entry: hdr.Name, Reason: "content directory is not a directory", Err: ErrNoContent}
		}
		return nil
	}
	if depth := strings.Count(tp, "/") + 1; depth > f.limits.MaxDepth {
		return &LimitError{Name: "path depth", Limit: int64(f.limits.MaxDepth), Flag: FlagMaxDepth, Entry: sanitize(tp)}
	}
	if _, exists := f.b.Lookup(tp); exists {
		owner, explicit := f.owner[tp]
		if !explicit {
			owner = f.implied[tp]
		}
		switch {
		case owner == ls.index && hdr.Typeflag == tar.TypeDir:
			// This layer's own directory, first implied by deeper entries.
		case owner == ls.index:
			return &EntryError{Layer: ls.index, Entry: hdr.Name, Reason: "duplicate entry in one layer", Err: ErrUnsafeEntry}
		case !explicit && hdr.Typeflag == tar.TypeDir:
			// An upper layer implied this directory; this layer declares it,
			// so what lower layers put here is replaced, not written through.
			f.owner[tp] = ls.index
			return nil
		case !explicit && hdr.Typeflag == tar.TypeSymlink:
			// An upper layer wrote below this path without declaring it a
			// directory: applied in order, those writes would go through
			// this link. Refuse rather than guess where they land.
			return &EntryError{Layer: ls.index, Entry: hdr.Name, Reason: "an upper layer writes through this symlink", Err: ErrUnsafeEntry}
		default:
			// An upper layer wrote this path, or a directory below it.
			return f.shadow(ls, tr, hdr, tp)
		}
	}
	// An upper layer that put a file (or link) where this entry's parent
	// directory would be replaced that whole directory.
	if f.parentReplaced(tp, ls.index) {
		return f.shadow(ls, tr, hdr, tp)
	}
	if f.b.Count() >= f.limits.MaxEntries {
		return &LimitError{Name: "entry count", Limit: int64(f.limits.MaxEntries), Flag: FlagMaxEntries}
	}

	var werr error
	switch hdr.Typeflag {
	case tar.TypeDir:
		werr = f.b.Mkdir(tp, 0o755)
	case tar.TypeReg, tar.TypeRegA:
		if hdr.Size > f.limits.MaxFileBytes {
			return &LimitError{Name: "file size", Limit: f.limits.MaxFileBytes, Flag: FlagMaxFileBytes, Entry: sanitize(tp)}
		}
		if f.b.Size()+hdr.Size > f.limits.MaxAddonBytes {
			return &LimitError{Name: "add-on size", Limit: f.limits.MaxAddonBytes, Flag: FlagMaxAddonBytes, Entry: sanitize(tp)}
		}
		data, err := readExactly(tr, hdr.Size)
		if err != nil {
			var le *LimitError
			if errors.As(err, &le) {
				return err
			}
			return layerErr(ls.index, ls.desc.Digest, fmt.Errorf("%w: %s: %w", ErrCorrupt, sanitize(hdr.Name), err))
		}
		werr = f.b.WriteFile(tp, data, archive.NormalMode(fs.FileMode(hdr.Mode)))
	case tar.TypeSymlink:
		if err := f.checkLink(ls, hdr, tp); err != nil {
			return err
		}
		werr = f.b.Symlink(hdr.Linkname, tp)
	case tar.TypeLink:
		data, err := f.hardlinkData(ls, hdr)
		if err != nil {
			return err
		}
		werr = f.b.WriteFile(tp, data, 0o644)
	case tar.TypeChar, tar.TypeBlock, tar.TypeFifo:
		return &EntryError{Layer: ls.index, Entry: hdr.Name, Reason: "device or fifo entries are not allowed in an add-on", Err: ErrUnsafeEntry}
	case tar.TypeXGlobalHeader, tar.TypeXHeader, tar.TypeGNULongName, tar.TypeGNULongLink:
		return nil
	default:
		return &EntryError{Layer: ls.index, Entry: hdr.Name, Reason: fmt.Sprintf("unsupported entry type %q", hdr.Typeflag), Err: ErrUnsafeEntry}
	}
	if werr != nil {
		if errors.Is(werr, memfs.ErrNotDir) {
			return &EntryError{Layer: ls.index, Entry: hdr.Name, Reason: "path passes through a symlink or file", Err: ErrUnsafeEntry}
		}
		return &EntryError{Layer: ls.index, Entry: hdr.Name, Reason: werr.Error(), Err: ErrUnsafeEntry}
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

// maxShadowBytes bounds the hidden bytes held per layer for hardlinks.
const maxShadowBytes = 64 << 20

// shadow holds, until this layer is done, the bytes of a regular file
// that an upper layer hid: a hardlink later in this layer may still name
// it. Hidden files are not part of the add-on, so they do not count
// against its limits; past maxShadowBytes they are no longer held, and a
// hardlink to one of those is refused.
func (f *flattener) shadow(ls layerSource, tr io.Reader, hdr *tar.Header, tp string) error {
	if hdr.Typeflag != tar.TypeReg && hdr.Typeflag != tar.TypeRegA {
		return nil
	}
	if f.shadowBytes+hdr.Size > maxShadowBytes {
		return nil
	}
	data, err := readExactly(tr, hdr.Size)
	if err != nil {
		var le *LimitError
		if errors.As(err, &le) {
			return err
		}
		return layerErr(ls.index, ls.desc.Digest, fmt.Errorf("%w: %s: %w", ErrCorrupt, sanitize(hdr.Name), err))
	}
	f.shadowed[tp] = data
	f.shadowBytes += hdr.Size
	return nil
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

// checkLink refuses symlinks that are absolute or leave the tree.
func (f *flattener) checkLink(ls layerSource, hdr *tar.Header, tp string) error {
	t := hdr.Linkname
	if t == "" || path.IsAbs(t) {
		return &EntryError{Layer: ls.index, Entry: hdr.Name, Reason: fmt.Sprintf("symlink to absolute path %q", sanitize(t)), Err: ErrUnsafeEntry}
	}
	j := path.Join(path.Dir(tp), t)
	if j == ".." || strings.HasPrefix(j, "../") {
		return &EntryError{Layer: ls.index, Entry: hdr.Name, Reason: fmt.Sprintf("symlink %q leads out of the add-on tree", sanitize(t)), Err: ErrUnsafeEntry}
	}
	return nil
}

// hardlinkData resolves a hardlink to a file this layer already kept.
// Hardlinks that leave the tree, or point into another layer, are refused.
func (f *flattener) hardlinkData(ls layerSource, hdr *tar.Header) ([]byte, error) {
	target, err := cleanName(ls, hdr.Linkname)
	if err != nil {
		return nil, &EntryError{Layer: ls.index, Entry: hdr.Name, Reason: fmt.Sprintf("hardlink to %q leaves the tree", sanitize(hdr.Linkname)), Err: ErrUnsafeEntry}
	}
	tt, in := f.inContent(target)
	if !in {
		return nil, &EntryError{Layer: ls.index, Entry: hdr.Name, Reason: fmt.Sprintf("hardlink to %q leads out of the add-on tree", sanitize(hdr.Linkname)), Err: ErrUnsafeEntry}
	}
	if f.owner[tt] == ls.index {
		if data, ok := f.b.ReadFile(tt); ok {
			return data, nil
		}
	}
	if data, ok := f.shadowed[tt]; ok {
		return data, nil
	}
	return nil, &EntryError{Layer: ls.index, Entry: hdr.Name, Reason: fmt.Sprintf("hardlink to %q, which is not a file kept from the same layer", sanitize(hdr.Linkname)), Err: ErrUnsafeEntry}
}

// readExactly reads a file's bytes, allocating as they arrive rather than
// trusting the header's size up front.
func readExactly(r io.Reader, size int64) ([]byte, error) {
	const chunk = 1 << 20
	if size <= chunk {
		b := make([]byte, size)
		_, err := io.ReadFull(r, b)
		return b, err
	}
	b := make([]byte, 0, chunk)
	b, err := readAllInto(r, b, size)
	if err != nil {
		return nil, err
	}
	if int64(len(b)) != size {
		return nil, io.ErrUnexpectedEOF
	}
	return b, nil
}

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

// applyFile places an ORAS file layer (a plain blob, not a tar) at its title.
func (f *flattener) applyFile(ls layerSource, rc io.Reader) error {
	p, err := cleanName(ls, ls.placement)
	if err != nil {
		return err
	}
	if len(p) > f.limits.MaxPathLength {
		return &LimitError{Name: "path length", Limit: int64(f.limits.MaxPathLength), Flag: FlagMaxPathLength, Entry: sanitize(p)}
	}
	if depth := strings.Count(p, "/") + 1; depth > f.limits.MaxDepth {
		return &LimitError{Name: "path depth", Limit: int64(f.limits.MaxDepth), Flag: FlagMaxDepth, Entry: sanitize(p)}
	}
	if ls.desc.Size > f.limits.MaxFileBytes {
		return &LimitError{Name: "file size", Limit: f.limits.MaxFileBytes, Flag: FlagMaxFileBytes, Entry: sanitize(p)}
	}
	data, err := io.ReadAll(io.LimitReader(rc, f.limits.MaxFileBytes+1))
	if err != nil {
		return layerErr(ls.index, ls.desc.Digest, err)
	}
	if int64(len(data)) > f.limits.MaxFileBytes {
		return &LimitError{Name: "file size", Limit: f.limits.MaxFileBytes, Flag: FlagMaxFileBytes, Entry: sanitize(p)}
	}
	if _, ok := f.owner[p]; ok {
		return nil
	}
	if f.b.Count() >= f.limits.MaxEntries {
		return &LimitError{Name: "entry count", Limit: int64(f.limits.MaxEntries), Flag: FlagMaxEntries}
	}
	if f.b.Size()+int64(len(data)) > f.limits.MaxAddonBytes {
		return &LimitError{Name: "add-on size", Limit: f.limits.MaxAddonBytes, Flag: FlagMaxAddonBytes, Entry: sanitize(p)}
	}
	if err := f.b.WriteFile(p, data, 0o644); err != nil {
		return &EntryError{Layer: ls.index, Entry: p, Reason: err.Error(), Err: ErrUnsafeEntry}
	}
	f.owner[p] = ls.index
	return nil
}
