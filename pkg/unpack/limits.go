package unpack

// Limits bound what an image may make the unpacker do. The zero value of
// a field means its default.
type Limits struct {
	// MaxAddonBytes caps the bytes of files kept in the add-on tree.
	MaxAddonBytes int64
	// MaxImageBytes caps the decompressed bytes read from all layers,
	// inside the content directory or not (a bomb anywhere is caught).
	MaxImageBytes int64
	// MaxEntries caps the entries of the add-on tree.
	MaxEntries int
	// MaxFileBytes caps one file.
	MaxFileBytes int64
	// MaxPathLength caps an entry's path, in bytes.
	MaxPathLength int
	// MaxDepth caps an entry's number of path components.
	MaxDepth int
}

// Defaults, as spec/SECURITY.md documents them.
const (
	DefaultMaxAddonBytes = 512 << 20
	DefaultMaxImageBytes = 2 << 30
	DefaultMaxEntries    = 100_000
	DefaultMaxFileBytes  = 128 << 20
	DefaultMaxPathLength = 4096
	DefaultMaxDepth      = 64
)

// withDefaults fills zero fields.
func (l Limits) withDefaults() Limits {
	if l.MaxAddonBytes <= 0 {
		l.MaxAddonBytes = DefaultMaxAddonBytes
	}
	if l.MaxImageBytes <= 0 {
		l.MaxImageBytes = DefaultMaxImageBytes
	}
	if l.MaxEntries <= 0 {
		l.MaxEntries = DefaultMaxEntries
	}
	if l.MaxFileBytes <= 0 {
		l.MaxFileBytes = DefaultMaxFileBytes
	}
	if l.MaxPathLength <= 0 {
		l.MaxPathLength = DefaultMaxPathLength
	}
	if l.MaxDepth <= 0 {
		l.MaxDepth = DefaultMaxDepth
	}
	return l
}

// Flag names the CLI flags that raise each limit.
const (
	FlagMaxAddonBytes = "--max-addon-bytes"
	FlagMaxImageBytes = "--max-image-bytes"
	FlagMaxEntries    = "--max-entries"
	FlagMaxFileBytes  = "--max-file-bytes"
	FlagMaxPathLength = "--max-path-length"
	FlagMaxDepth      = "--max-depth"
)
