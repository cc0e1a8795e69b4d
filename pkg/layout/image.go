package layout

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/gofrs/flock"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/partial"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/addonpkg/addonpkg/internal/verify"
	"github.com/addonpkg/addonpkg/pkg/addon"
	"github.com/addonpkg/addonpkg/pkg/mediatypes"
)

// Progress is told how many bytes of a blob were copied. It may be nil.
type Progress func(digest v1.Hash, done, total int64)

// writeLock is held shared by every writer and exclusively by GC, so GC
// never deletes the temp file or fresh blob of a write in progress.
func (s *Store) writeLock(exclusive bool) (func(), error) {
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

// WriteImage writes the image's blobs (layers, config, then manifest) and
// tags it with names. A tag appears only once everything it points to is
// in place.
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
		// fetched again, twice at most; what is written is always verified.
		for try := 0; ; try++ {
			rc, err := l.Compressed()
			if err == nil {
				err = s.WriteBlob(ld.Digest, ld.Size, withProgress(rc, ld.Digest, ld.Size, progress))
				rc.Close()
			}
			if err == nil {
				break
			}
			err = fmt.Errorf("layer %s: %w", ld.Digest, err)
			if try >= 2 || !transient(err) {
				return nil, err
			}
		}
	}
	cfg, err := verify.Config(img, addon.MaxConfigSize)
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
	h, err := s.writeBytes(raw)
	if err != nil {
		return nil, err
	}
	mt, err := img.MediaType()
	if err != nil {
		return nil, err
	}
	return &v1.Descriptor{MediaType: mt, Size: int64(len(raw)), Digest: h, ArtifactType: m.ArtifactType}, nil
}

// WriteIndex writes an index and every manifest below it, then tags it.
func (s *Store) WriteIndex(ctx context.Context, idx v1.ImageIndex, progress Progress, names ...string) (v1.Descriptor, error) {
	unlock, err := s.writeLock(false)
	if err != nil {
		return v1.Descriptor{}, err
	}
	defer unlock()
	d, err := s.writeIndexBlobs(ctx, idx, progress, 0)
	if err != nil {
		return v1.Descriptor{}, err
	}
	return *d, s.setTags(*d, names...)
}

// maxIndexDepth bounds nested indexes (an index may point to itself).
const maxIndexDepth = 8

func (s *Store) writeIndexBlobs(ctx context.Context, idx v1.ImageIndex, progress Progress, depth int) (*v1.Descriptor, error) {
	if depth > maxIndexDepth {
		return nil, fmt.Errorf("index nests deeper than %d levels", maxIndexDepth)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		return nil, err
	}
	for _, c := range im.Manifests {
		switch {
		case mediatypes.IsIndex(mediatypes.MediaType(c.MediaType)):
			child, err := idx.ImageIndex(c.Digest)
			if err != nil {
				return nil, err
			}
			if _, err := s.writeIndexBlobs(ctx, child, progress, depth+1); err != nil {
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
	h, err := s.writeBytes(raw)
	if err != nil {
		return nil, err
	}
	mt, err := idx.MediaType()
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
	raw, err := s.readBlob(d.Digest, d.Size, MaxManifestSize)
	if err != nil {
		return nil, fmt.Errorf("read manifest: %w", err)
	}
	m, err := v1.ParseManifest(strings.NewReader(string(raw)))
	if err != nil {
		return nil, fmt.Errorf("manifest %s: %w", d.Digest, err)
	}
	mt := d.MediaType
	if m.MediaType != "" {
		mt = m.MediaType
	}
	if mt == "" {
		mt = types.OCIManifestSchema1
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
		b, err := i.s.readBlob(c.Digest, c.Size, addon.MaxConfigSize)
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
	raw, err := s.readBlob(d.Digest, d.Size, MaxManifestSize)
	if err != nil {
		return nil, fmt.Errorf("read index: %w", err)
	}
	var im v1.IndexManifest
	if err := json.Unmarshal(raw, &im); err != nil {
		return nil, fmt.Errorf("index %s: %w", d.Digest, err)
	}
	mt := d.MediaType
	if im.MediaType != "" {
		mt = im.MediaType
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

// GC removes every blob that no tagged or untagged entry of index.json
// reaches, and temp files left by killed writers. It returns how many
// files it removed and how many bytes that freed.
func (s *Store) GC() (removed int, freed int64, err error) {
	unlock, err := s.writeLock(true)
	if err != nil {
		return 0, 0, err
	}
	defer unlock()
	idx, err := s.readIndex()
	if err != nil {
		return 0, 0, err
	}
	keep := map[string]bool{}
	for _, d := range idx.Manifests {
		s.mark(d, keep, 0)
	}
	dir := filepath.Join(s.dir, "blobs", "sha256")
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0, 0, err
	}
	for _, e := range entries {
		if keep[e.Name()] {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue
		}
		if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
			return removed, freed, err
		}
		removed++
		freed += info.Size()
	}
	// Temp files of index.json writes: those are made under the index
	// lock, not the gc lock, so take it too or a concurrent tag loses its
	// temp file mid-write.
	l := flock.New(filepath.Join(s.dir, indexLock))
	if err := l.Lock(); err != nil {
		return removed, freed, fmt.Errorf("lock %s: %w", s.dir, err)
	}
	defer l.Unlock()
	if tmps, err := filepath.Glob(filepath.Join(s.dir, tmpPrefix+"*")); err == nil {
		for _, t := range tmps {
			if os.Remove(t) == nil {
				removed++
			}
		}
	}
	return removed, freed, nil
}

// mark records d and everything below it as reachable. Unreadable
// manifests keep only themselves: GC must never fail halfway.
func (s *Store) mark(d v1.Descriptor, keep map[string]bool, depth int) {
	if keep[d.Digest.Hex] || depth > maxIndexDepth {
		return
	}
	keep[d.Digest.Hex] = true
	mt := mediatypes.MediaType(d.MediaType)
	if !mediatypes.IsIndex(mt) && !mediatypes.IsManifest(mt) {
		return
	}
	raw, err := s.readBlob(d.Digest, d.Size, MaxIndexSize)
	if err != nil {
		return
	}
	var doc struct {
		Config    *v1.Descriptor  `json:"config"`
		Layers    []v1.Descriptor `json:"layers"`
		Manifests []v1.Descriptor `json:"manifests"`
		Subject   *v1.Descriptor  `json:"subject"`
	}
	if json.Unmarshal(raw, &doc) != nil {
		return
	}
	if doc.Config != nil {
		keep[doc.Config.Digest.Hex] = true
	}
	for _, l := range doc.Layers {
		keep[l.Digest.Hex] = true
	}
	for _, c := range doc.Manifests {
		s.mark(c, keep, depth+1)
	}
}

// transient reports a blob that arrived wrong and may arrive right if
// fetched again: a digest or size mismatch, or a body cut short (what
// go-containerregistry reports untyped, as a size that does not match).
func transient(err error) bool {
	return errors.Is(err, verify.ErrDigestMismatch) || errors.Is(err, io.ErrUnexpectedEOF) ||
		strings.Contains(err.Error(), "does not match")
}
