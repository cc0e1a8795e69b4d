package safetree

import "strings"

// Limits bound what an untrusted tree may make a reader do. The zero
// value of a field means its default.
type Limits struct {
	// MaxAddonBytes caps the bytes of files kept in the tree.
	MaxAddonBytes int64
	// MaxImageBytes caps the decompressed bytes read from all layers (or
	// from an archive), inside the tree or not, so a bomb anywhere stops.
	MaxImageBytes int64
	// MaxEntries caps the entries read.
	MaxEntries int
	// MaxFileBytes caps one file.
	MaxFileBytes int64
	// MaxPathLength caps an entry's path, in bytes.
	MaxPathLength int
	// MaxDepth caps an entry's number of path components.
	MaxDepth int
	// MaxLayers caps the layers of one image, checked before any layer
	// is fetched.
	MaxLayers int
}

// Defaults, as spec/SECURITY.md documents them.
const (
	DefaultMaxAddonBytes = 512 << 20
	DefaultMaxImageBytes = 2 << 30
	DefaultMaxEntries    = 100_000
	DefaultMaxFileBytes  = 128 << 20
	DefaultMaxPathLength = 4096
	DefaultMaxDepth      = 64
	DefaultMaxLayers     = 1000
)

// Index graphs are bounded one way by every reader that walks one (the
// unpacker picking an image, a copy writing every manifest, gc marking
// what a tag reaches): nested indexes at most MaxIndexDepth levels below
// the top one, each distinct manifest visited once, at most
// MaxIndexManifests of them. An index may list another many times, or
// itself: without the dedup six 10-entry indexes each listing the next
// ten times are a million visits.
const (
	MaxIndexDepth     = 4
	MaxIndexManifests = 10_000
)

// A LimitID names the limit a LimitError crossed, so that a caller can
// say how to raise it (the command line maps each to its flag;
// a library caller to its Limits field) without parsing the message.
type LimitID string

// The limits of Limits, and the ones other readers add (a download's
// size).
const (
	LimitAddonBytes    LimitID = "addon-bytes"
	LimitImageBytes    LimitID = "image-bytes"
	LimitEntries       LimitID = "entries"
	LimitFileBytes     LimitID = "file-bytes"
	LimitPathLength    LimitID = "path-length"
	LimitDepth         LimitID = "depth"
	LimitLayers        LimitID = "layers"
	LimitDownloadBytes LimitID = "download-bytes"
)

// WithDefaults fills the zero (or negative) fields.
func (l Limits) WithDefaults() Limits {
	orDefault(&l.MaxAddonBytes, DefaultMaxAddonBytes)
	orDefault(&l.MaxImageBytes, DefaultMaxImageBytes)
	orDefault(&l.MaxEntries, DefaultMaxEntries)
	orDefault(&l.MaxFileBytes, DefaultMaxFileBytes)
	orDefault(&l.MaxPathLength, DefaultMaxPathLength)
	orDefault(&l.MaxDepth, DefaultMaxDepth)
	orDefault(&l.MaxLayers, DefaultMaxLayers)
	return l
}

func orDefault[T int | int64](v *T, def T) {
	if *v <= 0 {
		*v = def
	}
}

// MaxNameBytes is the longest path component a tree may hold: what
// Linux, macOS and Windows file systems hold (NAME_MAX), so that a tree
// that unpacks in memory also unpacks to disk.
const MaxNameBytes = 255

// CheckPath applies the path length and depth limits to a clean path,
// and refuses a component longer than MaxNameBytes.
func (l Limits) CheckPath(p string) error {
	if len(p) > l.MaxPathLength {
		return &LimitError{Name: "path length", Limit: int64(l.MaxPathLength), Which: LimitPathLength, Entry: p}
	}
	if depth := strings.Count(p, "/") + 1; depth > l.MaxDepth {
		return &LimitError{Name: "path depth", Limit: int64(l.MaxDepth), Which: LimitDepth, Entry: p}
	}
	for rest := p; rest != ""; {
		var part string
		part, rest, _ = strings.Cut(rest, "/")
		if len(part) > MaxNameBytes {
			return refuse(p, ErrBadName, "a name of %d bytes, over the %d that file systems hold", len(part), MaxNameBytes)
		}
	}
	return nil
}

// CheckEntries refuses the entry that would make count exceed the limit.
func (l Limits) CheckEntries(count int) error {
	if count > l.MaxEntries {
		return &LimitError{Name: "entry count", Limit: int64(l.MaxEntries), Which: LimitEntries}
	}
	return nil
}

// CheckFile refuses a file of size bytes that would cross the file or
// tree size limits, given the bytes the tree already holds.
func (l Limits) CheckFile(name string, size, treeBytes int64) error {
	if size > l.MaxFileBytes {
		return &LimitError{Name: "file size", Limit: l.MaxFileBytes, Which: LimitFileBytes, Entry: name}
	}
	if treeBytes+size > l.MaxAddonBytes {
		return &LimitError{Name: "add-on size", Limit: l.MaxAddonBytes, Which: LimitAddonBytes, Entry: name}
	}
	return nil
}

// CheckLayers refuses an image with more than MaxLayers layers.
func (l Limits) CheckLayers(n int) error {
	if n > l.MaxLayers {
		return &LimitError{Name: "layer count", Limit: int64(l.MaxLayers), Which: LimitLayers}
	}
	return nil
}
