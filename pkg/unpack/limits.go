package unpack

import "github.com/addonpkg/addonpkg/pkg/safetree"

// Limits bound what an image may make the unpacker do (see
// safetree.Limits, where the rules for every untrusted tree live). The
// zero value of a field means its default.
type Limits = safetree.Limits

// Defaults, as spec/SECURITY.md documents them.
const (
	DefaultMaxAddonBytes = safetree.DefaultMaxAddonBytes
	DefaultMaxImageBytes = safetree.DefaultMaxImageBytes
	DefaultMaxEntries    = safetree.DefaultMaxEntries
	DefaultMaxFileBytes  = safetree.DefaultMaxFileBytes
	DefaultMaxPathLength = safetree.DefaultMaxPathLength
	DefaultMaxDepth      = safetree.DefaultMaxDepth
	DefaultMaxLayers     = safetree.DefaultMaxLayers
)

// LimitID identifies a limit in a LimitError (safetree.LimitID).
type LimitID = safetree.LimitID

// The identifiers of the limits.
const (
	LimitAddonBytes = safetree.LimitAddonBytes
	LimitImageBytes = safetree.LimitImageBytes
	LimitEntries    = safetree.LimitEntries
	LimitFileBytes  = safetree.LimitFileBytes
	LimitPathLength = safetree.LimitPathLength
	LimitDepth      = safetree.LimitDepth
	LimitLayers     = safetree.LimitLayers
)
