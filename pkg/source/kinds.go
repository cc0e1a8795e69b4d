package source

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/addonpkg/addonpkg/pkg/safetree"
)

// Limits bound a tree as they bound an unpacked image (safetree.Limits).
type Limits = safetree.Limits

// A Location is one kind of place add-ons live. Each kind is one file of
// this package (store.go, registry.go, layout.go, dockerarchive.go,
// dir.go, http.go, git.go) and one entry of the locations table below:
// a new kind of location is a new file and a line there (or a Register
// call, which is also how a test substitutes one).
//
// A Location reads SOURCE strings of its syntax; what it can do with
// them is the further interfaces it has: Opener (an OCI image or index),
// TreeLoader (a plain tree), Writer (a destination).
type Location interface {
	// Kind names the location.
	Kind() Kind
	// Claims reports whether s is written in this kind's own syntax (a
	// prefix such as "oci:" or "git+"). Store names, registry references
	// and bare paths, told apart by what they look like rather than by
	// a prefix, are decided by Parse after every claim.
	Claims(s string) bool
	// Parse parses a SOURCE the kind claimed.
	Parse(s string) (Ref, error)
	// Format writes ref back as a SOURCE that parses to it, credentials
	// removed.
	Format(ref Ref) string
}

// An Opener opens the OCI image or index at a Ref of its kind.
type Opener interface {
	Open(ctx context.Context, ref Ref, opts Options) (*Artifact, error)
}

// A TreeLoader reads the plain tree at a Ref of its kind (a folder, a
// download, a git commit). limits hold their defaults.
type TreeLoader interface {
	LoadTree(ctx context.Context, ref Ref, opts Options, limits Limits) (*Tree, error)
}

// A Writer writes an opened artifact to a Ref of its kind and returns the
// reference that names what it wrote (with its digest where the kind can
// name one).
type Writer interface {
	Write(ctx context.Context, a *Artifact, dst Ref, opts Options) (string, error)
}

// A Pinner names an artifact of its kind by digest, and the repository
// it was read under (see Artifact.Pinned and Artifact.Repository).
type Pinner interface {
	Pinned(a *Artifact) string
	Repository(a *Artifact) string
}

var (
	locationsMu sync.RWMutex
	// locations, in the order their claims are tried.
	locations = []Location{
		layoutLocation{}, archiveLocation{}, dockerArchiveLocation{},
		registryLocation{}, httpLocation{}, gitLocation{}, dirLocation{},
		storeLocation{},
	}
)

// Register adds a kind of location, or replaces the one of the same Kind.
// A new kind's claims are tried before the built-in ones.
func Register(l Location) {
	locationsMu.Lock()
	defer locationsMu.Unlock()
	for i, old := range locations {
		if old.Kind() == l.Kind() {
			locations[i] = l
			return
		}
	}
	locations = append([]Location{l}, locations...)
}

// LocationOf returns the location of kind k, or nil.
func LocationOf(k Kind) Location {
	locationsMu.RLock()
	defer locationsMu.RUnlock()
	for _, l := range locations {
		if l.Kind() == k {
			return l
		}
	}
	return nil
}

func claimant(s string) Location {
	locationsMu.RLock()
	defer locationsMu.RUnlock()
	for _, l := range locations {
		if l.Claims(s) {
			return l
		}
	}
	return nil
}

// IsTree reports whether sources of kind k are plain trees (LoadTree),
// not OCI images (Open).
func IsTree(k Kind) bool {
	_, ok := LocationOf(k).(TreeLoader)
	return ok
}

func (r Ref) String() string {
	if l := LocationOf(r.Kind); l != nil {
		return l.Format(r)
	}
	return r.Name
}

// Parse classifies a SOURCE string without touching the network.
func Parse(s string) (Ref, error) {
	if s == "" {
		return Ref{}, fmt.Errorf("%w: empty", ErrBadSource)
	}
	if strings.ContainsAny(s, "\x00\n") {
		return Ref{}, fmt.Errorf("%w: %q has control characters", ErrBadSource, s)
	}
	if l := claimant(s); l != nil {
		return l.Parse(s)
	}
	return parseByLook(s)
}
