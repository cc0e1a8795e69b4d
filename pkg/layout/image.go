package layout

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/gofrs/flock"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/partial"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/addonpkg/addonpkg/internal/retry"
	"github.com/addonpkg/addonpkg/internal/verify"
	"github.com/addonpkg/addonpkg/pkg/mediatypes"
	"github.com/addonpkg/addonpkg/pkg/safetree"
)

// Progress is told how many bytes of a blob were copied. It may be nil.
type Progress func(digest v1.Hash, done, total int64)

// writeLock is held shared by every mutation (WriteBlob, WriteImage,
// WriteIndex, Tag, Untag, Init, Hold) and exclusively by GC, so GC never
// deletes the temp file or fresh blob of a write in progress, nor reads
// index.json while a tag changes. Shared holders do not wait for each
// other, and a shared holder may take it again (Hold, then WriteImage):
// each call opens the lock file anew, and flock(2) grants a shared lock
// beside other shared ones even while GC waits. Lock order: this lock,
// then the index lock (updateIndex); no path takes them the other way.
// An archive's store is read-only: writeLock refuses it (errReadOnly).
func (s *Store) writeLock(exclusive bool) (func(), error) {
	if s.archive != nil {
		return nil, errReadOnly
	}
	if err := s.ensure(); err != nil {
		return nil, err
	}
	return s.lockFile(exclusive)
}

// lockFile takes the write lock of writeLock, on a layout that exists.
func (s *Store) lockFile(exclusive bool) (func(), error) {
	l := flock.New(filepath.Join(s.dir, gcLock))
	var err error
	if exclusive {
		err = l.Lock()
	} else {
		err = l.RLock()
	}
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", s.dir, err)
	}
	return func() { _ = l.Unlock() }, nil
}

// Hold keeps GC out of the store until release is called, for a library
// caller that writes in several steps (blobs with WriteBlob, then what
// names them): without it, a GC between two steps may delete blobs that
// nothing names yet. Writes made while holding do not wait. Call release
// once, and soon: GC waits for it, so a goroutine that holds must not call
// GC itself before release (it would wait for itself).
func (s *Store) Hold() (release func(), err error) {
	return s.writeLock(false)
}

// WriteImage writes the image's blobs (layers, config, then manifest) and
// tags it with names. A tag appears only once everything it points to is
// in place.
//
// Blobs already in the store are kept only if they verify: a corrupted
// one is fetched from img again and replaced. The descriptor's media type
// comes from the manifest's own bytes (mediatypes.Sniff), never from what img
// says, which for a registry is a Content-Type header.
func (s *Store) WriteImage(ctx context.Context, img v1.Image, progress Progress, names ...string) (v1.Descriptor, error) {
	unlock, err := s.writeLock(false)
	if err != nil {
		return v1.Descriptor{}, err
	}
	defer unlock()
	d, err := s.writeImageBlobs(ctx, img, progress)
	if err != nil {
		return v1.Descriptor{}, err
	}
	return *d, s.setTags(*d, names...)
}

func (s *Store) writeImageBlobs(ctx context.Context, img v1.Image, progress Progress) (*v1.Descriptor, error) {
	m, err := img.Manifest()
	if err != nil {
		return nil, fmt.Errorf("read manifest: %w", err)
	}
	for _, ld := range m.Layers {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if s.HasBlob(ld.Digest) {
			continue
		}
		l, err := img.LayerByDigest(ld.Digest)
		if err != nil {
			return nil, fmt.Errorf("layer %s: %w", ld.Digest, err)
		}
		// A blob that arrives wrong (cut short or changed on the way) is
		// fetched again (retry.Do); what is written is always verified.
		err = retry.Do(ctx, func() error {
			rc, err := l.Compressed()
			if err == nil {
				err = s.writeBlob(ld.Digest, ld.Size, withProgress(rc, ld.Digest, ld.Size, progress))
				rc.Close()
			}
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("layer %s: %w", ld.Digest, err)
		}
	}
	cfg, err := verify.Config(img, configCap)
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	if _, err := s.writeBytes(cfg); err != nil {
		return nil, err
	}
	raw, err := img.RawManifest()
	if err != nil {
		return nil, err
	}
	d, err := s.writeManifest(raw, false)
	if err != nil {
		return nil, err
	}
	d.ArtifactType = m.ArtifactType
	return d, nil
}

// WriteIndex writes an index and every manifest below it, then tags it,
// as WriteImage does.
func (s *Store) WriteIndex(ctx context.Context, idx v1.ImageIndex, progress Progress, names ...string) (v1.Descriptor, error) {
	unlock, err := s.writeLock(false)
	if err != nil {
		return v1.Descriptor{}, err
	}
	defer unlock()
	d, err := s.writeIndexBlobs(ctx, idx, progress, 0, map[v1.Hash]bool{})
	if err != nil {
		return v1.Descriptor{}, err
	}
	return *d, s.setTags(*d, names...)
}

// maxIndexDepth bounds nested indexes (an index may point to itself), as
// every reader of an index graph does.
const maxIndexDepth = safetree.MaxIndexDepth

// ErrIndexGraph marks an index graph over the bounds of
// safetree.MaxIndexDepth or safetree.MaxIndexManifests.
var ErrIndexGraph = errors.New("index graph too large")

// writeIndexBlobs writes what idx lists, each distinct manifest once
// (done), then idx itself.
func (s *Store) writeIndexBlobs(ctx context.Context, idx v1.ImageIndex, progress Progress, depth int, done map[v1.Hash]bool) (*v1.Descriptor, error) {
	if depth > maxIndexDepth {
		return nil, fmt.Errorf("%w: indexes nest deeper than %d levels", ErrIndexGraph, maxIndexDepth)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		return nil, err
	}
	for _, c := range im.Manifests {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if done[c.Digest] {
			continue
		}
		done[c.Digest] = true
		if len(done) > safetree.MaxIndexManifests {
			return nil, fmt.Errorf("%w: more than %d manifests", ErrIndexGraph, safetree.MaxIndexManifests)
		}
		switch {
		case mediatypes.IsIndex(mediatypes.MediaType(c.MediaType)):
			child, err := idx.ImageIndex(c.Digest)
			if err != nil {
				return nil, err
			}
			if _, err := s.writeIndexBlobs(ctx, child, progress, depth+1, done); err != nil {
				return nil, err
			}
		default:
			img, err := idx.Image(c.Digest)
			if err != nil {
				return nil, err
			}
			if _, err := s.writeImageBlobs(ctx, img, progress); err != nil {
				return nil, err
			}
		}
	}
	raw, err := idx.RawManifest()
	if err != nil {
		return nil, err
	}
	return s.writeManifest(raw, true)
}

// writeManifest writes a manifest's own bytes, refusing an index where an
// image manifest belongs and the other way round; its media type is the
// one the bytes give (mediatypes.Sniff).
func (s *Store) writeManifest(raw []byte, index bool) (*v1.Descriptor, error) {
	what, other := "manifest", "an index where an image manifest belongs"
	if index {
		what, other = "index", "an image manifest where an index belongs"
	}
	mt, err := mediatypes.Sniff(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if mediatypes.IsIndex(mediatypes.MediaType(mt)) != index {
		return nil, fmt.Errorf("%s: %w: %s", what, mediatypes.ErrNotManifest, other)
	}
	h, err := s.writeBytes(raw)
	if err != nil {
		return nil, err
	}
	return &v1.Descriptor{MediaType: mt, Size: int64(len(raw)), Digest: h}, nil
}

type progressReader struct {
	r        io.Reader
	h        v1.Hash
	done     int64
	total    int64
	progress Progress
}

func (p *progressReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	p.done += int64(n)
	p.progress(p.h, p.done, p.total)
	return n, err
}

func withProgress(r io.Reader, h v1.Hash, total int64, progress Progress) io.Reader {
	if progress == nil {
		return r
	}
	return &progressReader{r: r, h: h, total: total, progress: progress}
}

// Image returns the image d describes. Every blob it reads is verified.
func (s *Store) Image(d v1.Descriptor) (v1.Image, error) {
	raw, err := s.readBlob(d.Digest, d.Size, manifestCap)
	if err != nil {
		return nil, fmt.Errorf("read manifest: %w", err)
	}
	m, err := v1.ParseManifest(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("manifest %s: %w", d.Digest, err)
	}
	// What index.json says is a claim, possibly written by an older
	// version from a Content-Type header: the manifest's bytes decide.
	mt, err := mediatypes.Sniff(raw)
	if err != nil {
		return nil, fmt.Errorf("manifest %s: %w", d.Digest, err)
	}
	if !mediatypes.IsManifest(mediatypes.MediaType(mt)) {
		return nil, fmt.Errorf("manifest %s: %w: an index, not an image manifest", d.Digest, mediatypes.ErrNotManifest)
	}
	return partial.CompressedToImage(&storeImage{s: s, raw: raw, manifest: m, mediaType: mt})
}

type storeImage struct {
	s         *Store
	raw       []byte
	manifest  *v1.Manifest
	mediaType types.MediaType
	config    []byte
}

func (i *storeImage) RawManifest() ([]byte, error)        { return i.raw, nil }
func (i *storeImage) MediaType() (types.MediaType, error) { return i.mediaType, nil }

func (i *storeImage) RawConfigFile() ([]byte, error) {
	if i.config == nil {
		c := i.manifest.Config
		b, err := i.s.readBlob(c.Digest, c.Size, configCap)
		if err != nil {
			return nil, fmt.Errorf("read config: %w", err)
		}
		i.config = b
	}
	return i.config, nil
}

func (i *storeImage) LayerByDigest(h v1.Hash) (partial.CompressedLayer, error) {
	for _, l := range i.manifest.Layers {
		if l.Digest == h {
			return &storeLayer{s: i.s, desc: l}, nil
		}
	}
	if i.manifest.Config.Digest == h {
		return &storeLayer{s: i.s, desc: i.manifest.Config}, nil
	}
	return nil, fmt.Errorf("blob %s is not part of this image", h)
}

type storeLayer struct {
	s    *Store
	desc v1.Descriptor
}

func (l *storeLayer) Digest() (v1.Hash, error)            { return l.desc.Digest, nil }
func (l *storeLayer) Size() (int64, error)                { return l.desc.Size, nil }
func (l *storeLayer) MediaType() (types.MediaType, error) { return l.desc.MediaType, nil }
func (l *storeLayer) Compressed() (io.ReadCloser, error)  { return l.s.Blob(l.desc.Digest, l.desc.Size) }

// Index returns the index d describes, reading its children from the store.
func (s *Store) Index(d v1.Descriptor) (v1.ImageIndex, error) {
	raw, err := s.readBlob(d.Digest, d.Size, manifestCap)
	if err != nil {
		return nil, fmt.Errorf("read index: %w", err)
	}
	var im v1.IndexManifest
	if err := json.Unmarshal(raw, &im); err != nil {
		return nil, fmt.Errorf("index %s: %w", d.Digest, err)
	}
	mt, err := mediatypes.Sniff(raw)
	if err != nil {
		return nil, fmt.Errorf("index %s: %w", d.Digest, err)
	}
	if !mediatypes.IsIndex(mediatypes.MediaType(mt)) {
		return nil, fmt.Errorf("index %s: %w: an image manifest, not an index", d.Digest, mediatypes.ErrNotManifest)
	}
	return &storeIndex{s: s, raw: raw, im: &im, mediaType: mt, digest: d.Digest}, nil
}

type storeIndex struct {
	s         *Store
	raw       []byte
	im        *v1.IndexManifest
	mediaType types.MediaType
	digest    v1.Hash
}

func (x *storeIndex) MediaType() (types.MediaType, error)         { return x.mediaType, nil }
func (x *storeIndex) Digest() (v1.Hash, error)                    { return x.digest, nil }
func (x *storeIndex) Size() (int64, error)                        { return int64(len(x.raw)), nil }
func (x *storeIndex) IndexManifest() (*v1.IndexManifest, error)   { return x.im, nil }
func (x *storeIndex) RawManifest() ([]byte, error)                { return x.raw, nil }
func (x *storeIndex) Image(h v1.Hash) (v1.Image, error)           { return x.s.Image(x.child(h)) }
func (x *storeIndex) ImageIndex(h v1.Hash) (v1.ImageIndex, error) { return x.s.Index(x.child(h)) }

func (x *storeIndex) child(h v1.Hash) v1.Descriptor {
	for _, d := range x.im.Manifests {
		if d.Digest == h {
			return d
		}
	}
	return v1.Descriptor{Digest: h, Size: -1}
}

// ErrUnreadable marks a store entry whose manifest tree cannot be read;
// GC refuses to run while one exists (see UnreadableError).
var ErrUnreadable = errors.New("manifest cannot be read")

// UnreadableEntry is an entry of index.json whose manifest tree GC could
// not read.
type UnreadableEntry struct {
	// Name is the entry's tag, "" for an untagged entry.
	Name string
	// Digest is the entry's manifest or index.
	Digest v1.Hash
	// Err says what could not be read, and why.
	Err error
}

// UnreadableError is GC's refusal: it deleted nothing, because the
// entries listed reach blobs it cannot know. Removing those entries (or
// writing their manifests again, as a pull does) lets GC run.
type UnreadableError struct {
	Entries []UnreadableEntry
}

func (e *UnreadableError) Error() string {
	var b strings.Builder
	b.WriteString("gc deleted nothing: ")
	for i, u := range e.Entries {
		if i > 0 {
			b.WriteString("; ")
		}
		if u.Name != "" {
			fmt.Fprintf(&b, "tag %q (%s)", u.Name, u.Digest)
		} else {
			fmt.Fprintf(&b, "untagged %s", u.Digest)
		}
		fmt.Fprintf(&b, ": %v", u.Err)
	}
	return b.String()
}

// Is makes errors.Is(err, ErrUnreadable) hold.
func (e *UnreadableError) Is(target error) bool { return target == ErrUnreadable }

// Unwrap gives the entries' own errors.
func (e *UnreadableError) Unwrap() []error {
	out := make([]error, len(e.Entries))
	for i, u := range e.Entries {
		out[i] = u.Err
	}
	return out
}

// CheckIndexGraph walks the indexes below idx, each distinct one once,
// and refuses (ErrIndexGraph) a graph nested deeper than
// safetree.MaxIndexDepth or holding more than safetree.MaxIndexManifests
// manifests, before anything is written: a copy to a registry checks
// what WriteIndex bounds as it writes.
func CheckIndexGraph(ctx context.Context, idx v1.ImageIndex) error {
	return checkIndexGraph(ctx, idx, 0, map[v1.Hash]bool{})
}

func checkIndexGraph(ctx context.Context, idx v1.ImageIndex, depth int, seen map[v1.Hash]bool) error {
	if depth > maxIndexDepth {
		return fmt.Errorf("%w: indexes nest deeper than %d levels", ErrIndexGraph, maxIndexDepth)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		return err
	}
	for _, c := range im.Manifests {
		if err := ctx.Err(); err != nil {
			return err
		}
		if seen[c.Digest] {
			continue
		}
		seen[c.Digest] = true
		if len(seen) > safetree.MaxIndexManifests {
			return fmt.Errorf("%w: more than %d manifests", ErrIndexGraph, safetree.MaxIndexManifests)
		}
		if !mediatypes.IsIndex(mediatypes.MediaType(c.MediaType)) {
			continue
		}
		child, err := idx.ImageIndex(c.Digest)
		if err != nil {
			return err
		}
		if err := checkIndexGraph(ctx, child, depth+1, seen); err != nil {
			return err
		}
	}
	return nil
}
