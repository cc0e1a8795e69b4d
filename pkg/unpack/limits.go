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

// Flag names the CLI flags that raise each limit.
const (
	FlagMaxAddonBytes = safetree.FlagMaxAddonBytes
	FlagMaxImageBytes = safetree.FlagMaxImageBytes
	FlagMaxEntries    = safetree.FlagMaxEntries
	FlagMaxFileBytes  = safetree.FlagMaxFileBytes
	FlagMaxPathLength = safetree.FlagMaxPathLength
	FlagMaxDepth      = safetree.FlagMaxDepth
	FlagMaxLayers     = safetree.FlagMaxLayers
)
