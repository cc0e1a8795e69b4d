package layout

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/gofrs/flock"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/addonpkg/addonpkg/internal/atomicfile"
	"github.com/addonpkg/addonpkg/internal/verify"
	"github.com/addonpkg/addonpkg/pkg/errdef"
	"github.com/addonpkg/addonpkg/pkg/mediatypes"
	"github.com/addonpkg/addonpkg/pkg/reference"
	"github.com/addonpkg/addonpkg/pkg/safetree"
)

// A layout is input like any other: its manifests, indexes and configs
// are read within the default caps of safetree.Limits.
var (
	manifestCap = safetree.DefaultCap(safetree.LimitManifestBytes)
	indexCap    = safetree.DefaultCap(safetree.LimitIndexBytes)
	configCap   = safetree.DefaultCap(safetree.LimitConfigBytes)
)

// missingLayout is ErrNotLayout for a directory that is not there: it
// matches fs.ErrNotExist too, as a missing folder, file or archive does,
// so a caller tells "not there" from "not a layout" with errors.Is.
type missingLayout struct{}

func (missingLayout) Error() string { return ErrNotLayout.Error() }

func (missingLayout) Is(target error) bool {
	return target == ErrNotLayout || target == fs.ErrNotExist
}

// Errors callers can test with errors.Is.
var (
	// ErrNotLayout: the directory is not an OCI image layout. One that
	// is not there matches fs.ErrNotExist as well.
	ErrNotLayout = errors.New("not an OCI image layout")
	errReadOnly  = errors.New("an oci-archive is read-only: copy it to a layout to change it")
)

const (
	layoutFile = ocispec.ImageLayoutFile
	indexFile  = ocispec.ImageIndexFile
	indexLock  = ".addonpkg-index.lock"
	gcLock     = ".addonpkg-gc.lock"
	tmpPrefix  = ".tmp-"
)

// Store is an OCI image layout directory.
type Store struct {
	dir string
	// archive, when set, serves a read-only layout from an oci-archive tar.
	archive *tarIndex
	// c is what the Store has read (see cache).
	c *cache
	// pending, when set, is the layout an InitOnWrite store creates at
	// its first write.
	pending *pendingLayout
}

// DefaultDir is $ADDONPKG_HOME, else $XDG_DATA_HOME/addonpkg, else
// ~/.local/share/addonpkg.
func DefaultDir() (string, error) {
	if d := os.Getenv("ADDONPKG_HOME"); d != "" {
		return d, nil
	}
	if d := os.Getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "addonpkg"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("find the store: %w (set ADDONPKG_HOME)", err)
	}
	return filepath.Join(home, ".local", "share", "addonpkg"), nil
}

// Init opens the layout at dir, creating an empty one if dir does not
// hold one yet.
func Init(dir string) (*Store, error) {
	s := &Store{dir: dir, c: newCache()}
	if err := s.create(); err != nil {
		return nil, err
	}
	return Open(dir)
}

// InitOnWrite is Init for a store that may not exist yet and may only be
// read: the layout is created by the first write (a blob, a tag), not
// now. Until then the store reads as empty and nothing is left on disk,
// so that listing a store, completing a name or resolving a folder
// source does not create one (a typo in --store stays a typo). A
// directory that already holds a layout is opened as Open does; its first
// write adds what Init would (blobs/sha256, index.json). A dir that
// cannot hold a store (a file) is refused now.
func InitOnWrite(dir string) (*Store, error) {
	s := &Store{dir: dir, c: newCache()}
	_, err := os.Lstat(filepath.Join(dir, layoutFile))
	switch {
	case err == nil:
		if s, err = Open(dir); err != nil {
			return nil, err
		}
	case !errors.Is(err, fs.ErrNotExist):
		// dir is a file, or cannot be searched: say so now, as Init did.
		return nil, fmt.Errorf("open store %s: %w", dir, err)
	}
	// The first write still completes what Init would have: a layout
	// another tool made may lack blobs/sha256 or index.json.
	s.pending = &pendingLayout{}
	return s, nil
}

// pendingLayout is the layout an InitOnWrite store creates at its first
// write.
type pendingLayout struct {
	mu   sync.Mutex
	done bool
}

// ensure creates the layout of an InitOnWrite store, once it succeeds: a
// failure (a parent not there yet) is tried again by the next write.
func (s *Store) ensure() error {
	if s.pending == nil {
		return nil
	}
	s.pending.mu.Lock()
	defer s.pending.mu.Unlock()
	if s.pending.done {
		return nil
	}
	if err := s.create(); err != nil {
		return err
	}
	s.pending.done = true
	return nil
}

// absent reports whether s is an InitOnWrite store that nothing has
// created yet: it holds nothing (no index.json, which reads go by), and
// a write that only removes has nothing to do.
func (s *Store) absent() bool {
	if s.pending == nil {
		return false
	}
	for _, name := range []string{layoutFile, indexFile} {
		if _, err := os.Lstat(filepath.Join(s.dir, name)); !errors.Is(err, fs.ErrNotExist) {
			return false
		}
	}
	return true
}

// create makes dir an empty layout, keeping what it already holds.
func (s *Store) create() error {
	dir := s.dir
	if err := checkForeign(dir); err != nil {
		return err
	}
	if err := mkdirDurable(filepath.Join(dir, "blobs", "sha256")); err != nil {
		return fmt.Errorf("create layout %s: %w", dir, err)
	}
	missing := func(name string) bool {
		_, err := os.Stat(filepath.Join(dir, name))
		return errors.Is(err, fs.ErrNotExist)
	}
	// A complete layout is opened without a lock, so a read-only one opens.
	if !missing(layoutFile) && !missing(indexFile) {
		return nil
	}
	unlock, err := s.lockFile(false)
	if err != nil {
		return err
	}
	defer unlock()
	if missing(layoutFile) {
		b, err := json.Marshal(ocispec.ImageLayout{Version: ocispec.ImageLayoutVersion})
		if err == nil {
			err = writeFileAtomic(filepath.Join(dir, layoutFile), b)
		}
		if err != nil {
			return fmt.Errorf("create layout %s: %w", dir, err)
		}
	}
	if missing(indexFile) {
		// To the disk, whatever a pin holds: a pinned Store's first write
		// creates the layout from inside writeLock (see pinnedUpdate).
		if err := s.diskUpdate(func(*v1.IndexManifest) error { return nil }); err != nil {
			return fmt.Errorf("create layout %s: %w", dir, err)
		}
	}
	return nil
}

// checkForeign refuses to make a layout in a folder that holds files of
// its own and no oci-layout file (oci:./project, ADDONPKG_HOME=~): the
// layout's blobs and index.json would be mixed into them. What a layout
// (or a creation cut short) holds is no obstacle.
func checkForeign(dir string) error {
	if _, err := os.Lstat(filepath.Join(dir, layoutFile)); err == nil {
		return nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil // missing: made next; unreadable: mkdir says why
	}
	for _, e := range entries {
		switch n := e.Name(); {
		case n == "blobs", n == indexFile, n == indexLock, n == gcLock, strings.HasPrefix(n, tmpPrefix):
		default:
			return &fs.PathError{Op: "create layout", Path: dir, Err: fmt.Errorf("%w: the folder holds other files (%s); give a new or empty folder", ErrNotLayout, safetree.Sanitize(n))}
		}
	}
	return nil
}

// Open opens an existing layout. What keeps dir from being one is an
// *fs.PathError naming dir (matching ErrNotLayout, and fs.ErrNotExist
// when dir is not there), as for a missing folder or file.
func Open(dir string) (*Store, error) {
	b, err := os.ReadFile(filepath.Join(dir, layoutFile))
	if err != nil {
		if _, serr := os.Stat(dir); errors.Is(serr, fs.ErrNotExist) {
			return nil, &fs.PathError{Op: "open layout", Path: dir, Err: fmt.Errorf("%w (no such directory)", missingLayout{})}
		}
		if errors.Is(err, fs.ErrNotExist) {
			return nil, &fs.PathError{Op: "open layout", Path: dir, Err: fmt.Errorf("%w (no oci-layout file)", ErrNotLayout)}
		}
		return nil, fmt.Errorf("open layout %s: %w", dir, err)
	}
	var l ocispec.ImageLayout
	if err := json.Unmarshal(b, &l); err != nil || l.Version == "" {
		return nil, &fs.PathError{Op: "open layout", Path: dir, Err: fmt.Errorf("%w (bad oci-layout file)", ErrNotLayout)}
	}
	return &Store{dir: dir, c: newCache()}, nil
}

// Dir is the layout's directory.
func (s *Store) Dir() string { return s.dir }

func (s *Store) blobPath(h v1.Hash) (string, error) {
	// The digest comes from index.json or a manifest: validate it before it
	// becomes a path.
	if _, err := v1.NewHash(h.String()); err != nil || h.Algorithm != "sha256" {
		return "", fmt.Errorf("invalid digest %q", h)
	}
	return filepath.Join(s.dir, "blobs", h.Algorithm, h.Hex), nil
}

// HasBlob reports whether the blob is present, verified: the file is
// there and its bytes hash to h. A blob that is there but does not match
// (corrupted on disk, or written by another tool) counts as absent, and
// the next write of h replaces it. Presence costs a read of the whole
// blob; every later read of it is verified again.
func (s *Store) HasBlob(h v1.Hash) bool {
	rc, err := s.Blob(h, -1)
	if err != nil {
		return false
	}
	defer rc.Close()
	_, err = io.Copy(io.Discard, rc)
	return err == nil
}

// Blob opens a blob; the reader fails at EOF unless the bytes match h and,
// when size >= 0, the size.
func (s *Store) Blob(h v1.Hash, size int64) (io.ReadCloser, error) {
	p, err := s.blobPath(h)
	if err != nil {
		return nil, err
	}
	var f io.ReadCloser
	if s.archive != nil {
		f, err = s.archive.open("blobs/sha256/" + h.Hex)
	} else {
		f, err = os.Open(p)
	}
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("blob %s: missing from layout %s", h, s.dir)
		}
		return nil, err
	}
	return verify.NewReader(f, h, size)
}

// readBlob reads a whole small blob, verified and capped.
func (s *Store) readBlob(h v1.Hash, size int64, c safetree.Cap) ([]byte, error) {
	rc, err := s.Blob(h, size)
	if err != nil {
		return nil, err
	}
	return verify.ReadAll(rc, h, size, c)
}

// readIndexBytes reads index.json, capped; nil when there is none yet.
func (s *Store) readIndexBytes() ([]byte, error) {
	var (
		f   io.ReadCloser
		err error
	)
	if s.archive != nil {
		f, err = s.archive.open(indexFile)
	} else {
		f, err = os.Open(s.indexPath())
	}
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	defer f.Close()
	b, err := indexCap.ReadAll(s.indexPath(), f)
	if err != nil {
		return nil, err
	}
	if b == nil {
		b = []byte{} // present, if empty: a parse error, not "none yet"
	}
	return b, nil
}

// readIndex reads index.json, from disk whatever a pin holds, into a
// copy the caller may change.
func (s *Store) readIndex() (*v1.IndexManifest, error) {
	idx, err := s.diskIndex()
	if err != nil {
		return nil, err
	}
	c := *idx
	c.Manifests = slices.Clone(idx.Manifests)
	return &c, nil
}

// updateIndex changes index.json under the index lock and replaces it
// atomically; on a pinned Store, it changes the pin's copy (see Pin).
// The caller holds the write lock (shared).
func (s *Store) updateIndex(change func(*v1.IndexManifest) error) error {
	if s.archive != nil {
		return errReadOnly
	}
	if ok, err := s.pinnedUpdate(change); ok {
		return err
	}
	return s.diskUpdate(change)
}

// diskUpdate is updateIndex on index.json itself, pinned or not.
func (s *Store) diskUpdate(change func(*v1.IndexManifest) error) error {
	l := flock.New(filepath.Join(s.dir, indexLock))
	if err := l.Lock(); err != nil {
		return fmt.Errorf("lock %s: %w", s.dir, err)
	}
	defer l.Unlock()
	idx, err := s.readIndex()
	if err != nil {
		return err
	}
	if idx.Manifests == nil {
		idx.Manifests = []v1.Descriptor{}
	}
	if err := change(idx); err != nil {
		return err
	}
	idx.SchemaVersion = 2
	idx.MediaType = types.OCIImageIndex
	b, err := json.Marshal(idx)
	if err != nil {
		return err
	}
	if err := writeFileAtomic(s.indexPath(), b); err != nil {
		return err
	}
	s.written(b, idx)
	return nil
}

// writeFileAtomic writes a temp file beside name, syncs it and renames it
// into place: readers see the old file or the new one, never a part.
func writeFileAtomic(name string, b []byte) error {
	f, err := os.CreateTemp(filepath.Dir(name), tmpPrefix+"*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp) // no-op after a successful rename
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	return commit(f, name)
}

// commit makes a complete temp file durable, renames it into place and
// makes the rename durable too (an fsync of the directory); it closes f
// whatever happens.
func commit(f *os.File, name string) error {
	if err := commitFile(f, name); err != nil {
		return err
	}
	return syncDir(filepath.Dir(name))
}

// commitFile is commit but for the directory's sync, which a pinned
// Store makes once, at done, before index.json names what was renamed.
func commitFile(f *os.File, name string) error {
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), name)
}

// syncDir makes the entries of dir durable (atomicfile.SyncDir); a
// variable so a test can watch it.
var syncDir = atomicfile.SyncDir

// mkdirDurable creates dir and its missing parents, and syncs the parent
// of each directory it created, so that a blob synced into dir after a
// crash is not lost with the directory entry that led to it.
func mkdirDurable(dir string) error {
	var created []string
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if _, err := os.Stat(d); err == nil || !errors.Is(err, fs.ErrNotExist) {
			break
		}
		created = append(created, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, d := range created {
		if err := syncDir(filepath.Dir(d)); err != nil {
			return err
		}
	}
	return nil
}

// WriteBlob ingests a blob: it is hashed while written to a temp file and
// renamed into place only if it matches h (and size, when size >= 0).
// A blob already present is kept only if it verifies (see HasBlob);
// otherwise it is replaced by the verified bytes read from r. GC does not
// run while WriteBlob does.
func (s *Store) WriteBlob(h v1.Hash, size int64, r io.Reader) error {
	unlock, err := s.writeLock(false)
	if err != nil {
		return err
	}
	defer unlock()
	return s.writeBlob(h, size, r)
}

// writeBlob is WriteBlob; the caller holds the write lock.
func (s *Store) writeBlob(h v1.Hash, size int64, r io.Reader) error {
	p, err := s.blobPath(h)
	if err != nil {
		return err
	}
	if s.HasBlob(h) {
		return nil // content addressed and verified: already right
	}
	f, err := os.CreateTemp(filepath.Dir(p), tmpPrefix+"*")
	if err != nil {
		return fmt.Errorf("write blob %s: %w", h, err)
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	vr, err := verify.NewReader(io.NopCloser(r), h, size)
	if err != nil {
		f.Close()
		return err
	}
	if _, err := io.Copy(f, vr); err != nil {
		f.Close()
		return fmt.Errorf("write blob %s: %w", h, err)
	}
	if s.deferSync(filepath.Dir(p)) {
		return commitFile(f, p)
	}
	return commit(f, p)
}

// writeBytes ingests a small blob held in memory; the caller holds the
// write lock.
func (s *Store) writeBytes(b []byte) (v1.Hash, error) {
	h, _, err := v1.SHA256(bytes.NewReader(b))
	if err != nil {
		return v1.Hash{}, err
	}
	return h, s.writeBlob(h, int64(len(b)), bytes.NewReader(b))
}

// Entry is one tagged manifest of the store.
type Entry struct {
	Name       string
	Descriptor v1.Descriptor
}

// List returns the tagged entries, sorted by name.
func (s *Store) List() ([]Entry, error) {
	idx, err := s.index()
	if err != nil {
		return nil, err
	}
	var out []Entry
	for _, d := range idx.Manifests {
		if n := d.Annotations[mediatypes.AnnotationRefName]; n != "" {
			out = append(out, Entry{Name: n, Descriptor: d})
		}
	}
	slices.SortFunc(out, func(a, b Entry) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// Resolve finds a descriptor by tag name, by "sha256:..." digest, or by
// "name@sha256:..." (the name is then only informative).
func (s *Store) Resolve(name string) (v1.Descriptor, error) {
	idx, err := s.index()
	if err != nil {
		return v1.Descriptor{}, err
	}
	if i := strings.LastIndex(name, "@"); i >= 0 || strings.HasPrefix(name, "sha256:") {
		dg := name[i+1:]
		h, err := v1.NewHash(dg)
		if err != nil {
			return v1.Descriptor{}, fmt.Errorf("%s: invalid digest: %w", name, err)
		}
		for _, d := range idx.Manifests {
			if d.Digest == h {
				d.Annotations = nil
				return d, nil
			}
		}
		if d, ok := s.nested(idx, h); ok {
			d.Annotations = nil
			return d, nil
		}
		return v1.Descriptor{}, fmt.Errorf("%s: %w in store", name, errdef.ErrNotFound)
	}
	name = entryName(idx, name)
	for _, d := range idx.Manifests {
		if d.Annotations[mediatypes.AnnotationRefName] == name {
			return d, nil
		}
	}
	return v1.Descriptor{}, fmt.Errorf("%s: %w in store", name, errdef.ErrNotFound)
}

// nested finds the manifest h below the indexes that idx names: one
// platform's image of a multi-platform index, which skopeo copy --all,
// docker buildx --output type=oci and docker save (since Docker 25)
// write with only the index in index.json, as a registry holds it and
// serves any of its manifests by digest. The walk is bounded as every
// walk of an index graph (safetree.MaxIndexDepth levels, each index read
// once, at most safetree.MaxIndexManifests); an index that does not read
// is passed over, as it holds nothing that could be found.
func (s *Store) nested(idx *v1.IndexManifest, h v1.Hash) (v1.Descriptor, bool) {
	level := slices.Clone(idx.Manifests)
	seen := map[v1.Hash]bool{}
	for depth := 0; depth <= safetree.MaxIndexDepth && len(level) > 0; depth++ {
		var next []v1.Descriptor
		for _, d := range level {
			if !mediatypes.IsIndex(mediatypes.MediaType(d.MediaType)) || seen[d.Digest] || len(seen) >= safetree.MaxIndexManifests {
				continue
			}
			seen[d.Digest] = true
			child, err := s.Index(d)
			if err != nil {
				continue
			}
			im, err := child.IndexManifest()
			if err != nil {
				continue
			}
			for _, c := range im.Manifests {
				if c.Digest == h {
					return c, true
				}
			}
			next = append(next, im.Manifests...)
		}
		level = next
	}
	return v1.Descriptor{}, false
}

// entryName is the ref name of idx that name stands for: name itself,
// or, when no entry has it, for NAME:latest (a name given without a
// tag), the entry named NAME bare. Names addonpkg writes always carry a
// tag, but another writer (copy to oci:STORE:v1, another tool) may have
// left a bare one, which could otherwise be neither read nor removed.
func entryName(idx *v1.IndexManifest, name string) string {
	bare, ok := strings.CutSuffix(name, ":"+reference.DefaultTag)
	if !ok || bare == "" {
		return name
	}
	found := false
	for _, d := range idx.Manifests {
		switch d.Annotations[mediatypes.AnnotationRefName] {
		case name:
			return name
		case bare:
			found = true
		}
	}
	if found {
		return bare
	}
	return name
}

// Tag points dst at the manifest src names, replacing any earlier dst.
// GC does not run while Tag does.
func (s *Store) Tag(src, dst string) (v1.Descriptor, error) {
	unlock, err := s.writeLock(false)
	if err != nil {
		return v1.Descriptor{}, err
	}
	defer unlock()
	d, err := s.Resolve(src)
	if err != nil {
		return v1.Descriptor{}, err
	}
	return d, s.setTags(d, dst)
}

// setTags records d under each name, replacing earlier entries of those
// names; without names, d is recorded untagged unless already present.
// The caller holds the write lock.
func (s *Store) setTags(d v1.Descriptor, names ...string) error {
	for _, n := range names {
		// NAME@DIGEST is found by its digest (Resolve): a name whose
		// digest is not d's could never be read.
		if _, v := reference.Split(n); strings.HasPrefix(v, "@") && v[1:] != d.Digest.String() {
			return fmt.Errorf("name %s: its digest is not the manifest's %s", n, d.Digest)
		}
	}
	return s.updateIndex(func(idx *v1.IndexManifest) error {
		if len(names) == 0 {
			for _, m := range idx.Manifests {
				if m.Digest == d.Digest {
					return nil
				}
			}
			d.Annotations = nil
			idx.Manifests = append(idx.Manifests, d)
			return nil
		}
		for _, n := range names {
			idx.Manifests = slices.DeleteFunc(idx.Manifests, func(m v1.Descriptor) bool {
				return m.Annotations[mediatypes.AnnotationRefName] == n
			})
			nd := d
			nd.Annotations = map[string]string{mediatypes.AnnotationRefName: n}
			idx.Manifests = append(idx.Manifests, nd)
		}
		return nil
	})
}

// Untag removes a tag. Blobs stay until GC, which does not run while
// Untag does.
func (s *Store) Untag(name string) error {
	if s.absent() {
		return fmt.Errorf("%s: %w in store", name, errdef.ErrNotFound)
	}
	unlock, err := s.writeLock(false)
	if err != nil {
		return err
	}
	defer unlock()
	found := false
	err = s.updateIndex(func(idx *v1.IndexManifest) error {
		name = entryName(idx, name)
		idx.Manifests = slices.DeleteFunc(idx.Manifests, func(m v1.Descriptor) bool {
			hit := m.Annotations[mediatypes.AnnotationRefName] == name
			found = found || hit
			return hit
		})
		return nil
	})
	if err == nil && !found {
		return fmt.Errorf("%s: %w in store", name, errdef.ErrNotFound)
	}
	return err
}

// Descriptors returns every entry of index.json, tagged or not.
func (s *Store) Descriptors() ([]v1.Descriptor, error) {
	idx, err := s.index()
	if err != nil {
		return nil, err
	}
	return slices.Clone(idx.Manifests), nil
}
