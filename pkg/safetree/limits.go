package safetree

import (
	"io"
	"strings"
)

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

	// The caps on the documents read before a tree, or beside one. A
	// reader that takes no Limits applies the default.

	// MaxManifestBytes caps a manifest or index blob read from a layout
	// or an archive, and a docker-archive's manifest.json.
	MaxManifestBytes int64
	// MaxIndexBytes caps a layout's index.json (every tag of a store),
	// what a layout's gc walks, and any manifest a registry serves.
	MaxIndexBytes int64
	// MaxConfigBytes caps a config blob or a label holding one;
	// registries can lie about sizes, so readers never trust descriptors.
	MaxConfigBytes int64
	// MaxLockBytes caps an image lock document.
	MaxLockBytes int64
	// MaxSignatureBytes caps a signature's payload.
	MaxSignatureBytes int64
	// MaxDeclarationBytes caps an add-on set's declaration or lock file.
	MaxDeclarationBytes int64

	// MaxMappingKeys caps the keys of one YAML mapping in a tree that
	// kustomize renders, and the keys a kustomization's generator makes
	// of one ConfigMap or Secret: kustomize's YAML library takes time
	// quadratic in a mapping's keys (a 1 MB ConfigMap of 40,000 keys
	// costs it 40 s of CPU, 10 MB hours). Plain manifests render in
	// linear time and have no such cap.
	MaxMappingKeys int
	// MaxKustomizeObjects caps the objects kustomize loads to render a
	// tree: the documents (and List items) of every resource file, once
	// for each time a kustomization includes it through its bases and
	// components, and the objects its generators make, counted before
	// kustomize runs. Kustomize takes time quadratic in them (1,000 tiny
	// ConfigMaps cost it 3 s, 4,000 a minute and a half).
	MaxKustomizeObjects int
	// MaxPatchTargets caps the objects the patches of a kustomize tree
	// may touch, summed over the patches: a patch counts every object
	// of the kustomization that applies it, whatever its target, since
	// kustomize looks at each, plus one for each patch of that
	// kustomization (a patch may grow what the next one touches: 1,000
	// patches of one ConfigMap took kustomize 20 s). Kustomize takes about a
	// millisecond for each object a patch applies to (300 patches of
	// every ConfigMap of 300 took it 2 m 47 s, from 30 KB of input), and
	// tens of microseconds for each it only looks at. The transformers
	// a kustomization's lists make count as patches do: each entry of
	// images, replicas, replacements, transformers and validators, each
	// key of labels, commonLabels and commonAnnotations (100 to 300 µs
	// for each object, growing as the objects grow: 300 images entries
	// over 1,000 Deployments took kustomize 108 s).
	MaxPatchTargets int

	// The caps on what a diff of two add-ons compares line by line (its
	// memory grows with them); past them it reports sizes, not lines.

	// MaxDiffObjectBytes caps the YAML of one object that a diff
	// normalizes and compares line by line: an object over it on either
	// side is compared by its bytes and reported by its sizes.
	MaxDiffObjectBytes int64
	// MaxDiffBytes caps the unified diffs one diff report holds: past
	// it, each further changed object is reported by its sizes.
	MaxDiffBytes int64

	// The bounds on the search for a Sigstore bundle that verifies
	// (pkg/signature): anyone who can push a referrer can push junk
	// bundles, so the search is bounded by its work. A repository busy
	// with referrers of one add-on needs them raised.

	// MaxBundleReferrers caps the referrer manifests listed as Sigstore
	// bundles that one verification reads.
	MaxBundleReferrers int
	// MaxBundleSearchBytes caps the signature bytes one verification
	// reads in all: the legacy sha256-HEX.sig image and its payloads,
	// then those referrers, their manifests and their bundles (each
	// payload or bundle is capped by MaxSignatureBytes too, each
	// manifest as any manifest is).
	MaxBundleSearchBytes int64
}

// Defaults, as spec/SECURITY.md documents them: the one table of the
// caps on untrusted input (a test fails if pkg/ declares another).
const (
	DefaultMaxAddonBytes = 512 << 20
	DefaultMaxImageBytes = 2 << 30
	DefaultMaxEntries    = 100_000
	DefaultMaxFileBytes  = 128 << 20
	DefaultMaxPathLength = 4096
	DefaultMaxDepth      = 64
	DefaultMaxLayers     = 1000

	DefaultMaxManifestBytes    = 4 << 20
	DefaultMaxIndexBytes       = 16 << 20
	DefaultMaxConfigBytes      = 8 << 20
	DefaultMaxLockBytes        = 4 << 20
	DefaultMaxSignatureBytes   = 1 << 20
	DefaultMaxDeclarationBytes = 1 << 20
	// 5,000 keys take kustomize under half a second.
	DefaultMaxMappingKeys = 5000
	// At the caps kustomize renders in seconds: 1,000 objects, about
	// one; 10,000 patch targets, about one where each patch names its
	// object (as real overlays do: a patch looks at each object, and
	// applies to one), up to ten where every patch applies to every
	// object. The patch cap leaves room for a real overlay (20 patches
	// over 400 objects) that a lower one would refuse; the largest real
	// add-on trees have a few hundred objects and patches that touch a
	// few dozen.
	DefaultMaxKustomizeObjects = 1000
	DefaultMaxPatchTargets     = 10000
	// An object the API server stores is at most 1.5 MiB (etcd's request
	// limit): every such object is diffed line by line.
	DefaultMaxDiffObjectBytes = 2 << 20
	DefaultMaxDiffBytes       = 16 << 20
	// 256 candidates, 64 MiB: a verification reads at most that much,
	// in seconds, before it fails closed.
	DefaultMaxBundleReferrers   = 256
	DefaultMaxBundleSearchBytes = 64 << 20
	// DefaultMaxDownloadBytes is the default of source.Options'
	// MaxDownloadBytes (LimitDownloadBytes).
	DefaultMaxDownloadBytes = 512 << 20
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

	LimitManifestBytes    LimitID = "manifest-bytes"
	LimitIndexBytes       LimitID = "index-bytes"
	LimitConfigBytes      LimitID = "config-bytes"
	LimitLockBytes        LimitID = "lock-bytes"
	LimitSignatureBytes   LimitID = "signature-bytes"
	LimitDeclarationBytes LimitID = "declaration-bytes"
	LimitMappingKeys      LimitID = "mapping-keys"
	LimitKustomizeObjects LimitID = "kustomize-objects"
	LimitPatchTargets     LimitID = "patch-targets"

	LimitDiffObjectBytes LimitID = "diff-object-bytes"
	LimitDiffBytes       LimitID = "diff-bytes"

	LimitBundleReferrers   LimitID = "bundle-referrers"
	LimitBundleSearchBytes LimitID = "bundle-search-bytes"
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
	orDefault(&l.MaxManifestBytes, DefaultMaxManifestBytes)
	orDefault(&l.MaxIndexBytes, DefaultMaxIndexBytes)
	orDefault(&l.MaxConfigBytes, DefaultMaxConfigBytes)
	orDefault(&l.MaxLockBytes, DefaultMaxLockBytes)
	orDefault(&l.MaxSignatureBytes, DefaultMaxSignatureBytes)
	orDefault(&l.MaxDeclarationBytes, DefaultMaxDeclarationBytes)
	orDefault(&l.MaxMappingKeys, DefaultMaxMappingKeys)
	orDefault(&l.MaxKustomizeObjects, DefaultMaxKustomizeObjects)
	orDefault(&l.MaxPatchTargets, DefaultMaxPatchTargets)
	orDefault(&l.MaxDiffObjectBytes, DefaultMaxDiffObjectBytes)
	orDefault(&l.MaxDiffBytes, DefaultMaxDiffBytes)
	orDefault(&l.MaxBundleReferrers, DefaultMaxBundleReferrers)
	orDefault(&l.MaxBundleSearchBytes, DefaultMaxBundleSearchBytes)
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

// A Cap is one of the document caps of Limits (MaxManifestBytes...),
// taken out to hand to a reader of one document: its bound and its id.
type Cap struct {
	Which LimitID
	Max   int64
}

// Cap is the cap l sets for id, one of the Limit...Bytes of the
// documents (LimitManifestBytes...); it panics for another id, which is
// a programming error.
func (l Limits) Cap(id LimitID) Cap {
	var max int64
	switch id {
	case LimitManifestBytes:
		max = l.MaxManifestBytes
	case LimitIndexBytes:
		max = l.MaxIndexBytes
	case LimitConfigBytes:
		max = l.MaxConfigBytes
	case LimitLockBytes:
		max = l.MaxLockBytes
	case LimitSignatureBytes:
		max = l.MaxSignatureBytes
	case LimitDeclarationBytes:
		max = l.MaxDeclarationBytes
	default:
		panic("safetree: no document cap " + string(id))
	}
	return Cap{Which: id, Max: max}
}

// DefaultCap is the default of the cap id: what a reader that takes no
// Limits applies.
func DefaultCap(id LimitID) Cap { return Limits{}.WithDefaults().Cap(id) }

// docNames say what each document cap counts, in a LimitError.
var docNames = map[LimitID]string{
	LimitManifestBytes:    "manifest size",
	LimitIndexBytes:       "index size",
	LimitConfigBytes:      "config size",
	LimitLockBytes:        "image lock size",
	LimitSignatureBytes:   "signature payload size",
	LimitDeclarationBytes: "declaration size",
}

// Bytes is the bound, c.Max.
func (c Cap) Bytes() int64 { return c.Max }

// Check refuses a document of size bytes over the cap; entry names the
// document if known (a file, a digest, a URL).
func (c Cap) Check(entry string, size int64) error {
	if size > c.Max {
		e := c.Exceeded(entry)
		e.Size = size
		return e
	}
	return nil
}

// ReadAll reads r whole, up to the cap: one byte more than the cap is
// read to tell a document at the cap from one over it, which is refused
// with Check's error naming entry. Nothing is allocated by a claimed size.
func (c Cap) ReadAll(entry string, r io.Reader) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, c.Max+1))
	if err != nil {
		return nil, err
	}
	if err := c.Check(entry, int64(len(b))); err != nil {
		return nil, err
	}
	return b, nil
}

// Over is Exceeded as an error.
func (c Cap) Over(entry string) error { return c.Exceeded(entry) }

// Exceeded is the error of a document found over the cap (a body that
// brought more than its size said).
func (c Cap) Exceeded(entry string) *LimitError {
	return &LimitError{Name: docNames[c.Which], Limit: c.Max, Which: c.Which, Entry: entry}
}
