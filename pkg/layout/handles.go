package layout

import (
	"context"
	"errors"
	"path/filepath"
	"sync"

	"github.com/addonpkg/addonpkg/pkg/safetree"
)

// Handles are the layouts and archives one operation has opened, shared
// by path: a copy that opens the same oci:DIR or oci-archive:FILE for
// each of its images gets one Store, which reads index.json and each
// manifest's subject once (see Stats), and an archive is indexed once
// instead of once per image.
//
// An operation carries its Handles in its context (WithHandles), so that
// every call it makes, down to a hook it was given, shares them:
// package source opens oci:, oci-archive: and the local store through
// HandlesFrom(ctx). A nil *Handles opens a new Store on every call, as
// Open, Init and OpenArchive do. Handles are for one operation: an
// archive replaced on disk while they hold it is not read again. Close
// closes the archives.
type Handles struct {
	mu       sync.Mutex
	dirs     map[string]*Store
	archives map[string]*Store
}

type handlesKey struct{}

// WithHandles returns ctx carrying h for the calls made with it.
func WithHandles(ctx context.Context, h *Handles) context.Context {
	return context.WithValue(ctx, handlesKey{}, h)
}

// HandlesFrom gives the Handles ctx carries, nil when none.
func HandlesFrom(ctx context.Context) *Handles {
	h, _ := ctx.Value(handlesKey{}).(*Handles)
	return h
}

// NewHandles returns empty Handles.
func NewHandles() *Handles {
	return &Handles{dirs: map[string]*Store{}, archives: map[string]*Store{}}
}

func key(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return filepath.Clean(p)
}

// Open is Open, shared.
func (h *Handles) Open(dir string) (*Store, error) {
	return h.dir(dir, Open)
}

// Init is Init, shared.
func (h *Handles) Init(dir string) (*Store, error) {
	return h.dir(dir, Init)
}

func (h *Handles) dir(dir string, open func(string) (*Store, error)) (*Store, error) {
	if h == nil {
		return open(dir)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	k := key(dir)
	if st, ok := h.dirs[k]; ok {
		return st, nil
	}
	st, err := open(dir)
	if err != nil {
		return nil, err
	}
	h.dirs[k] = st
	return st, nil
}

// Own gives the operation's own Store of st's layout: one shared by the
// operation's calls, as Open's are, and not st itself, so that pinning it
// (Pin) leaves st's other users alone. A nil h gives st.
func (h *Handles) Own(st *Store) *Store {
	if h == nil || st == nil || st.archive != nil {
		return st
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	k := key(st.dir)
	if own, ok := h.dirs[k]; ok {
		return own
	}
	own := &Store{dir: st.dir, c: newCache(), pending: st.pending}
	h.dirs[k] = own
	return own
}

// OpenArchive is OpenArchive, shared: the caller must not Close the
// Store (Handles.Close does), unless h is nil.
func (h *Handles) OpenArchive(file string) (*Store, error) {
	return h.OpenArchiveLimit(file, safetree.DefaultMaxImageBytes)
}

// OpenArchiveLimit is OpenArchiveLimit, shared as OpenArchive is. An
// archive already open is returned as it is, whatever maxBytes.
func (h *Handles) OpenArchiveLimit(file string, maxBytes int64) (*Store, error) {
	if h == nil {
		return OpenArchiveLimit(file, maxBytes)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	k := key(file)
	if st, ok := h.archives[k]; ok {
		return st, nil
	}
	st, err := OpenArchiveLimit(file, maxBytes)
	if err != nil {
		return nil, err
	}
	h.archives[k] = st
	return st, nil
}

// Shared reports whether h keeps what it opens (h is not nil): then an
// archive's Store is closed by h.Close, not by its opener.
func (h *Handles) Shared() bool { return h != nil }

// Stats sums the Stats of every Store h opened.
func (h *Handles) Stats() Stats {
	var out Stats
	if h == nil {
		return out
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, m := range []map[string]*Store{h.dirs, h.archives} {
		for _, st := range m {
			out = out.add(st.Stats())
		}
	}
	return out
}

// Close closes the archives h opened and forgets everything.
func (h *Handles) Close() error {
	if h == nil {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	var errs []error
	for _, st := range h.archives {
		errs = append(errs, st.Close())
	}
	h.dirs, h.archives = map[string]*Store{}, map[string]*Store{}
	return errors.Join(errs...)
}
