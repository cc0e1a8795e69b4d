package layout

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/gofrs/flock"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/addonpkg/addonpkg/pkg/mediatypes"
	"github.com/addonpkg/addonpkg/pkg/reference"
	"github.com/addonpkg/addonpkg/pkg/safetree"
)

// lockCap bounds an image lock document GC reads for the digests it
// pins.
var lockCap = safetree.DefaultCap(safetree.LimitLockBytes)

// GCResult is what GarbageCollect removed, and why it kept the entries
// no tag names.
type GCResult struct {
	// Files counts the blob and temp files removed, Bytes what they held.
	Files int   `json:"removed"`
	Bytes int64 `json:"freedBytes"`
	// Removed are the entries of index.json removed: nothing tagged
	// reaches them.
	Removed []GCEntry `json:"entries"`
	// Kept are the entries kept that no tag names (an add-on's images,
	// its image lock, its signatures), each with what keeps it.
	Kept []GCEntry `json:"kept"`
}

// GCEntry is one entry of index.json that GC removed or kept, and why.
type GCEntry struct {
	// Name is the entry's tag: "" for an untagged entry, or an
	// attachment tag (sha256-HEX.sig...).
	Name   string  `json:"name,omitempty"`
	Digest v1.Hash `json:"digest"`
	// ArtifactType is the manifest's artifactType (an image lock, a
	// signature), when it has one.
	ArtifactType string `json:"artifactType,omitempty"`
	Why          string `json:"why"`
}

// digestText finds the digests an image lock document names.
var digestText = regexp.MustCompile(`sha256:[0-9a-f]{64}`)

// GC is GarbageCollect, counting: the files removed and the bytes freed.
func (s *Store) GC() (removed int, freed int64, err error) {
	res, err := s.GarbageCollect()
	if res == nil {
		return 0, 0, err
	}
	return res.Files, res.Bytes, err
}

// GarbageCollect removes what no tag reaches: entries of index.json, then
// blobs, then temp files left by killed writers.
//
// The tagged entries are the roots, but for attachment tags (a tag named
// after a digest: sha256-HEX, sha256-HEX.sig, .att, .sbom), which hang on
// the manifest they name. A root reaches its manifest tree (configs,
// layers, the manifests of an index), and, from every manifest reached:
// the entries whose manifests name it as their subject (signatures,
// SBOMs, its image lock), the attachment tags named after it, the other
// entries of the same manifest, and, from
// an image lock reached, every entry whose digest its document names
// (the images copy --with-images wrote untagged beside the add-on), with
// their trees and referrers in turn. Everything else is garbage: an
// add-on's images, lock and signatures go when its last tag goes. Before
// issue 25 every entry of index.json was a root, so untagged entries
// were never collected.
//
// What an entry reaches is read from the manifests' own bytes. If an
// entry that is reached cannot be read (a blob missing, corrupted, over
// its cap, not a manifest; a lock document that cannot be read), GC
// cannot know what it needs, so it removes nothing at all and returns an
// *UnreadableError naming every such entry. An entry nothing reaches is
// removed whether or not it can be read. index.json is rewritten before
// any blob is removed: a GC killed midway leaves blobs for the next one,
// never an entry without its blobs.
func (s *Store) GarbageCollect() (*GCResult, error) {
	if s.absent() {
		return &GCResult{Removed: []GCEntry{}, Kept: []GCEntry{}}, nil
	}
	unlock, err := s.writeLock(true)
	if err != nil {
		return nil, err
	}
	defer unlock()
	idx, err := s.readIndex()
	if err != nil {
		return nil, err
	}
	g := newGraph(s, idx)
	g.walk()
	if len(g.broken) > 0 {
		return nil, &UnreadableError{Entries: g.broken}
	}
	res := &GCResult{Removed: []GCEntry{}, Kept: []GCEntry{}}
	g.explain()
	for _, e := range g.entries {
		switch {
		case e.why == "":
			res.Removed = append(res.Removed, GCEntry{Name: e.name, Digest: e.d.Digest, ArtifactType: e.artifact, Why: g.garbage(e)})
		case !e.root:
			res.Kept = append(res.Kept, GCEntry{Name: e.name, Digest: e.d.Digest, ArtifactType: e.artifact, Why: e.why})
		}
	}
	if len(res.Removed) > 0 {
		gone := map[int]bool{}
		for i, e := range g.entries {
			gone[i] = e.why == ""
		}
		err := s.updateIndex(func(cur *v1.IndexManifest) error {
			// Nothing writes while GC holds the store: cur is idx.
			if len(cur.Manifests) != len(g.entries) {
				return fmt.Errorf("gc: index.json changed under the gc lock")
			}
			kept := cur.Manifests[:0]
			for i, d := range cur.Manifests {
				if !gone[i] {
					kept = append(kept, d)
				}
			}
			cur.Manifests = kept
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	dir := filepath.Join(s.dir, "blobs", "sha256")
	files, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		if g.keep[f.Name()] {
			continue
		}
		info, err := f.Info()
		if err != nil {
			continue
		}
		if err := os.Remove(filepath.Join(dir, f.Name())); err != nil {
			return res, err
		}
		res.Files++
		res.Bytes += info.Size()
	}
	// Temp files of index.json writes are made under the index lock too:
	// take it as well, as every index writer does.
	l := flock.New(filepath.Join(s.dir, indexLock))
	if err := l.Lock(); err != nil {
		return res, fmt.Errorf("lock %s: %w", s.dir, err)
	}
	defer l.Unlock()
	if tmps, err := filepath.Glob(filepath.Join(s.dir, tmpPrefix+"*")); err == nil {
		for _, t := range tmps {
			if os.Remove(t) == nil {
				res.Files++
			}
		}
	}
	return res, nil
}

// gcEntry is an entry of index.json as GC sees it.
type gcEntry struct {
	d    v1.Descriptor
	name string
	root bool
	// attached is the digest an attachment tag names.
	attached string
	// What the manifest's own bytes say; readErr when they cannot be read.
	readErr  error
	subject  string
	artifact string
	lock     bool
	// why is what reaches the entry; "" while nothing does.
	why string
}

// graph is what GC reaches from the roots, each entry once: linear in
// the entries, whatever the chains of referrers and locks.
type graph struct {
	s       *Store
	entries []*gcEntry
	// The entries by what reaches them: their subject, the digest their
	// attachment tag names, their own digest (for a lock that pins it).
	bySubject, byAttached, byDigest map[string][]*gcEntry
	// keep holds every blob reached (hex); queue the manifests newly
	// reached, whose referrers are still to be looked up.
	keep   map[string]bool
	queue  []string
	whyHex map[string]string
	broken []UnreadableEntry
	// namedBy maps the digests an unreached image lock names to that
	// lock, to say why what it pinned goes.
	namedBy map[string]*gcEntry
}

func newGraph(s *Store, idx *v1.IndexManifest) *graph {
	g := &graph{
		s:          s,
		bySubject:  map[string][]*gcEntry{},
		byAttached: map[string][]*gcEntry{},
		byDigest:   map[string][]*gcEntry{},
		keep:       map[string]bool{},
		whyHex:     map[string]string{},
	}
	for _, d := range idx.Manifests {
		e := &gcEntry{d: d, name: d.Annotations[mediatypes.AnnotationRefName]}
		if e.name != "" {
			// A store's REPO:TAG, or a layout's bare TAG.
			if hex, ok := reference.Attachment(e.name); ok {
				e.attached = hex
			} else {
				e.root = true
			}
		}
		raw, err := s.readBlob(d.Digest, d.Size, indexCap)
		if err != nil {
			e.readErr = err
		} else if _, err := mediatypes.ParseDocument(raw); err != nil {
			e.readErr = fmt.Errorf("%s: %w", d.Digest, err)
		} else {
			sub, art, _ := subjectOf(raw)
			if sub != nil {
				e.subject = sub.Digest.Hex
			}
			e.lock = mediatypes.MediaType(art) == mediatypes.ImagesLock
			if art != string(types.OCIConfigJSON) && art != string(types.DockerConfigJSON) {
				e.artifact = art // an image's config type says nothing
			}
		}
		g.entries = append(g.entries, e)
		if e.subject != "" {
			g.bySubject[e.subject] = append(g.bySubject[e.subject], e)
		}
		if e.attached != "" {
			g.byAttached[e.attached] = append(g.byAttached[e.attached], e)
		}
		g.byDigest[d.Digest.Hex] = append(g.byDigest[d.Digest.Hex], e)
	}
	return g
}

// walk reaches everything the roots reach.
func (g *graph) walk() {
	for _, e := range g.entries {
		if e.root {
			g.reach(e, "tagged "+e.name)
		}
	}
	for len(g.queue) > 0 {
		h := g.queue[0]
		g.queue = g.queue[1:]
		for _, e := range g.bySubject[h] {
			g.reach(e, "refers to sha256:"+h+" ("+g.whyHex[h]+")")
		}
		for _, e := range g.byAttached[h] {
			g.reach(e, "tagged after sha256:"+h+" ("+g.whyHex[h]+")")
		}
		// Another entry of a manifest reached (an untagged entry of a
		// tagged add-on, a manifest of a reached index).
		for _, e := range g.byDigest[h] {
			g.reach(e, "the manifest "+g.whyHex[h]+" reaches")
		}
	}
}

// reach marks e reached, with its tree, and what a lock pins.
func (g *graph) reach(e *gcEntry, why string) {
	if e.why != "" {
		return
	}
	e.why = why
	if err := g.mark(e.d, why, 0); err != nil {
		g.broken = append(g.broken, UnreadableEntry{Name: e.name, Digest: e.d.Digest, Err: err})
		return
	}
	if !e.lock {
		return
	}
	pins, err := g.pins(e.d)
	if err != nil {
		g.broken = append(g.broken, UnreadableEntry{Name: e.name, Digest: e.d.Digest, Err: fmt.Errorf("image lock: %w", err)})
		return
	}
	for _, h := range pins {
		for _, p := range g.byDigest[h] {
			g.reach(p, "pinned by the image lock "+e.d.Digest.String()+", which "+why)
		}
	}
}

// mark keeps d's tree, as Store.mark does, and queues each manifest of it
// for its referrers.
func (g *graph) mark(d v1.Descriptor, why string, depth int) error {
	if depth > maxIndexDepth {
		return fmt.Errorf("%w: indexes nest deeper than %d levels", ErrIndexGraph, maxIndexDepth)
	}
	if g.keep[d.Digest.Hex] && g.whyHex[d.Digest.Hex] != "" {
		return nil
	}
	raw, err := g.s.readBlob(d.Digest, d.Size, indexCap)
	if err != nil {
		return err
	}
	doc, err := mediatypes.ParseDocument(raw)
	if err != nil {
		return fmt.Errorf("%s: %w", d.Digest, err)
	}
	g.keep[d.Digest.Hex] = true
	g.whyHex[d.Digest.Hex] = why
	g.queue = append(g.queue, d.Digest.Hex)
	if doc.Config != nil {
		g.keep[doc.Config.Digest.Hex] = true
	}
	for _, l := range doc.Layers {
		g.keep[l.Digest.Hex] = true
	}
	for _, c := range doc.Manifests {
		if err := g.mark(c, why, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// pins reads the digests the image lock d names: every sha256 digest of
// its lock documents' text (the images, and the add-on it locks). Read
// as text, not as a lock: what GC keeps for a lock can only be more than
// it pins, never less.
func (g *graph) pins(d v1.Descriptor) ([]string, error) {
	raw, err := g.s.readBlob(d.Digest, d.Size, indexCap)
	if err != nil {
		return nil, err
	}
	doc, err := mediatypes.ParseDocument(raw)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, l := range doc.Layers {
		if mediatypes.MediaType(l.MediaType) != mediatypes.ImagesLock {
			continue
		}
		b, err := g.s.readBlob(l.Digest, l.Size, lockCap)
		if err != nil {
			return nil, err
		}
		for _, m := range digestText.FindAll(b, -1) {
			out = append(out, strings.TrimPrefix(string(m), "sha256:"))
		}
	}
	return out, nil
}

// explain reads what the image locks nothing reaches name, for
// garbage's reasons: a lock that cannot be read says nothing.
func (g *graph) explain() {
	g.namedBy = map[string]*gcEntry{}
	for _, e := range g.entries {
		if !e.lock || e.why != "" {
			continue
		}
		pins, _ := g.pins(e.d)
		for _, h := range pins {
			if _, ok := g.namedBy[h]; !ok {
				g.namedBy[h] = e
			}
		}
	}
}

// garbage says why nothing keeps e.
func (g *graph) garbage(e *gcEntry) string {
	lock := g.namedBy[e.d.Digest.Hex]
	switch {
	case lock != nil && e.attached == "" && e.subject == "":
		return "named by the image lock " + lock.d.Digest.String() + " of sha256:" + lock.subject + ", which nothing tagged reaches"
	case e.readErr != nil && e.attached == "":
		return fmt.Sprintf("its manifest cannot be read (%v), and nothing tagged names it", e.readErr)
	case e.attached != "":
		return "tagged after sha256:" + e.attached + ", which nothing tagged reaches"
	case e.lock:
		return "the image lock of sha256:" + e.subject + ", which nothing tagged reaches"
	case e.subject != "":
		return "refers to sha256:" + e.subject + ", which nothing tagged reaches"
	}
	return "untagged, and no tagged add-on's image lock or referrers name it"
}
