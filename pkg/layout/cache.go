package layout

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/addonpkg/addonpkg/pkg/mediatypes"
)

// cache is what a Store has read, so that a Store asked again and again
// (a copy of 1,000 images resolves each, lists what refers to each, and
// writes each) does not read and parse index.json, nor every manifest it
// lists, each time: that made copy --with-images quadratic in the images
// of the lock (issue 25).
//
// index.json is still read from disk on every call (another process may
// have changed it) and compared with the bytes the parsed copy came from:
// only a change is parsed again. An archive's index never changes: it is
// read once. What a manifest says (its media type, subject and artifact
// type) is kept by digest: the digest names its bytes, which were
// verified when read.
type cache struct {
	mu sync.Mutex
	// raw is the index.json idx was parsed from; idx is shared with
	// callers that only read it.
	raw []byte
	idx *v1.IndexManifest
	// facts is what each manifest read says, by digest; unreadable marks
	// manifests that could not be read while index.json was raw (a
	// change of index.json clears it: what was missing may be there now).
	facts      map[v1.Hash]manifestFacts
	unreadable map[v1.Hash]bool
	// bySubject lists the entries of idx by the subject their manifests
	// name, built on first use for idx.
	bySubject  map[v1.Hash][]subjectEntry
	subjectsOf *v1.IndexManifest

	// A pin (Store.Pin): pins counts the open ones; pinned is the index
	// the pinned Store answers from, pending the changes made to it since
	// the pin, and release the write lock held while any is pending.
	pins    int
	pinned  *v1.IndexManifest
	pending []func(*v1.IndexManifest) error
	release func()
	// unsynced are the directories blobs were renamed into since the pin,
	// synced by done before index.json is written.
	unsynced map[string]bool

	stats counters
}

// counters are the Store's operations that Stats reports.
type counters struct {
	indexReads, indexParses, indexWrites, indexBytesWritten, manifestReads atomic.Int64
}

// manifestFacts is what a manifest's bytes say, as Referrers reads them.
type manifestFacts struct {
	size      int64
	mediaType types.MediaType // "" when the bytes are no manifest (mediatypes.Sniff)
	subject   v1.Hash         // zero without one
	hasSub    bool
	artifact  string
}

// subjectEntry is an entry of index.json whose manifest names a subject.
type subjectEntry struct {
	desc    v1.Descriptor
	refName string
}

func newCache() *cache {
	return &cache{facts: map[v1.Hash]manifestFacts{}, unreadable: map[v1.Hash]bool{}}
}

// Stats counts what a Store did since it was opened, for the tests and
// benchmarks that check an operation scales with what it copies rather
// than with the square of it. Handles.Stats sums the Stores it opened.
type Stats struct {
	// IndexReads counts reads of index.json from disk (an archive's once).
	IndexReads int64
	// IndexParses counts the reads that found index.json changed and
	// parsed it again.
	IndexParses int64
	// IndexWrites counts index.json rewrites, IndexBytesWritten their
	// bytes.
	IndexWrites       int64
	IndexBytesWritten int64
	// ManifestReads counts manifests Referrers read: each manifest of
	// index.json once, and the referrers it lists.
	ManifestReads int64
}

// Stats reports the Store's counts.
func (s *Store) Stats() Stats {
	c := &s.c.stats
	return Stats{
		IndexReads:        c.indexReads.Load(),
		IndexParses:       c.indexParses.Load(),
		IndexWrites:       c.indexWrites.Load(),
		IndexBytesWritten: c.indexBytesWritten.Load(),
		ManifestReads:     c.manifestReads.Load(),
	}
}

func (a Stats) add(b Stats) Stats {
	return Stats{
		IndexReads:        a.IndexReads + b.IndexReads,
		IndexParses:       a.IndexParses + b.IndexParses,
		IndexWrites:       a.IndexWrites + b.IndexWrites,
		IndexBytesWritten: a.IndexBytesWritten + b.IndexBytesWritten,
		ManifestReads:     a.ManifestReads + b.ManifestReads,
	}
}

// index gives the parsed index.json, shared: the caller must not change
// it (updateIndex works on a copy). A pinned Store answers from its pin.
func (s *Store) index() (*v1.IndexManifest, error) {
	c := s.c
	c.mu.Lock()
	pinned := c.pinned
	c.mu.Unlock()
	if pinned != nil {
		return pinned, nil
	}
	return s.diskIndex()
}

// diskIndex gives the parsed index.json as it is on disk now (parsed
// again only if it changed), whatever a pin holds.
func (s *Store) diskIndex() (*v1.IndexManifest, error) {
	c := s.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if s.archive != nil && c.idx != nil {
		return c.idx, nil // an archive is read-only
	}
	b, err := s.readIndexBytes()
	if err != nil {
		return nil, err
	}
	c.stats.indexReads.Add(1)
	if c.idx != nil && bytes.Equal(b, c.raw) {
		return c.idx, nil
	}
	idx := &v1.IndexManifest{SchemaVersion: 2, MediaType: types.OCIImageIndex}
	if b != nil {
		c.stats.indexParses.Add(1)
		idx = &v1.IndexManifest{}
		if err := json.Unmarshal(b, idx); err != nil {
			return nil, fmt.Errorf("%s: bad index.json: %w", s.dir, err)
		}
	}
	c.setIndex(b, idx)
	return idx, nil
}

// setIndex records idx, parsed from or written as b; the caller holds mu.
func (c *cache) setIndex(b []byte, idx *v1.IndexManifest) {
	c.raw, c.idx = b, idx
	clear(c.unreadable)
}

// written records what updateIndex wrote, so the next read need not
// parse it.
func (s *Store) written(b []byte, idx *v1.IndexManifest) {
	c := s.c
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stats.indexWrites.Add(1)
	c.stats.indexBytesWritten.Add(int64(len(b)))
	c.setIndex(b, idx)
}

// factsOf reads what the manifest d says, once per digest; ok is false
// when it cannot be read (missing, corrupted, over its cap, another size
// than d says).
func (s *Store) factsOf(d v1.Descriptor) (manifestFacts, bool) {
	c := s.c
	c.mu.Lock()
	f, ok := c.facts[d.Digest]
	bad := c.unreadable[d.Digest]
	c.mu.Unlock()
	if !ok && !bad {
		c.stats.manifestReads.Add(1)
		raw, err := s.readBlob(d.Digest, d.Size, manifestCap)
		c.mu.Lock()
		if err != nil {
			c.unreadable[d.Digest] = true
			c.mu.Unlock()
			return manifestFacts{}, false
		}
		f = manifestFacts{size: int64(len(raw))}
		if mt, err := mediatypes.Sniff(raw); err == nil {
			f.mediaType = mt
		}
		if sub, art, _ := subjectOf(raw); sub != nil {
			f.subject, f.hasSub, f.artifact = sub.Digest, true, art
		}
		c.facts[d.Digest] = f
		c.mu.Unlock()
		ok = true
	}
	if !ok || d.Size >= 0 && d.Size != f.size {
		return manifestFacts{}, false
	}
	return f, true
}

// entriesNaming lists the entries of idx whose manifests name subject,
// from a map of idx built once (each manifest read once, see factsOf).
func (s *Store) entriesNaming(idx *v1.IndexManifest, subject v1.Hash) []subjectEntry {
	c := s.c
	c.mu.Lock()
	if c.subjectsOf == idx {
		defer c.mu.Unlock()
		return slices.Clone(c.bySubject[subject])
	}
	c.mu.Unlock()
	by := map[v1.Hash][]subjectEntry{}
	for _, e := range idx.Manifests {
		f, ok := s.factsOf(e)
		if !ok || !f.hasSub || f.mediaType == "" {
			continue
		}
		by[f.subject] = append(by[f.subject], subjectEntry{desc: e, refName: e.Annotations[mediatypes.AnnotationRefName]})
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.bySubject, c.subjectsOf = by, idx
	return slices.Clone(by[subject])
}

// indexPath is index.json's path, for messages.
func (s *Store) indexPath() string { return filepath.Join(s.dir, indexFile) }

// Pin reads index.json once for the calls that follow, until done: a
// copy of many images resolves, lists and writes through one Store
// without reading index.json, nor writing it whole, for each (issue 25:
// rewriting it per image made copy --with-images quadratic).
//
// While pinned, the Store answers from the index it read at the pin, and
// the index.json changes made through it (WriteImage, WriteIndex, Tag,
// Untag) are applied to that copy at once and to the disk by done, all
// in one atomic rewrite under the index lock, replayed over whatever
// index.json holds then: other writers' tags meanwhile are kept. Blobs
// are written (and synced) as they come, and their directory is synced
// once, by done, before index.json names them; a killed process leaves
// index.json as it was before the pin, and the blobs for GC. From the first change until
// done, the Store holds the shared write lock (see Hold), so GC does not
// collect the blobs that nothing names yet; done releases it.
//
// Pins nest: the outermost done writes. Every call on the Store sees the
// pin: pin a Store that one operation owns (one from Handles), not one
// shared with unrelated writers. done is called once, whatever happened.
func (s *Store) Pin() (done func() error, err error) {
	c := s.c
	if _, err := s.index(); err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pins == 0 {
		c.pinned = c.idx
	}
	c.pins++
	var once sync.Once
	return func() error {
		err := errors.New("pin released twice")
		once.Do(func() { err = s.unpin() })
		return err
	}, nil
}

// unpin closes a pin; the last one writes what is pending.
func (s *Store) unpin() error {
	c := s.c
	c.mu.Lock()
	c.pins--
	if c.pins > 0 {
		c.mu.Unlock()
		return nil
	}
	pending, release, unsynced := c.pending, c.release, c.unsynced
	c.pinned, c.pending, c.release, c.unsynced = nil, nil, nil, nil
	c.mu.Unlock()
	if release != nil {
		defer release()
	}
	// The renames first, then what names them.
	for _, dir := range slices.Sorted(maps.Keys(unsynced)) {
		if err := syncDir(dir); err != nil {
			return err
		}
	}
	if len(pending) == 0 {
		return nil
	}
	return s.updateIndex(func(idx *v1.IndexManifest) error {
		for _, change := range pending {
			if err := change(idx); err != nil {
				return err
			}
		}
		return nil
	})
}

// deferSync reports whether the sync of dir after a blob's rename waits
// for done (the Store is pinned), and records it.
func (s *Store) deferSync(dir string) bool {
	c := s.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pins == 0 {
		return false
	}
	if c.unsynced == nil {
		c.unsynced = map[string]bool{}
	}
	c.unsynced[dir] = true
	return true
}

// pinnedUpdate applies change to the pin's index, and keeps it for
// unpin; false when the Store is not pinned. The caller holds the write
// lock for this call; the pin takes its own for the pending changes.
func (s *Store) pinnedUpdate(change func(*v1.IndexManifest) error) (bool, error) {
	c := s.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pins == 0 {
		return false, nil
	}
	if c.release == nil {
		unlock, err := s.writeLock(false)
		if err != nil {
			return true, err
		}
		c.release = unlock
	}
	idx := *c.pinned
	idx.Manifests = slices.Clone(c.pinned.Manifests)
	if idx.Manifests == nil {
		idx.Manifests = []v1.Descriptor{}
	}
	if err := change(&idx); err != nil {
		return true, err
	}
	c.pinned = &idx
	c.pending = append(c.pending, change)
	return true, nil
}
