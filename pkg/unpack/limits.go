package unpack

import "github.com/addonpkg/addonpkg/pkg/safetree"

// Limits bound what an image may make the unpacker do. The rules and
// their defaults (safetree.DefaultMaxAddonBytes...) live in safetree,
// where every reader of untrusted trees takes them from. The zero value
// of a field means its default.
type Limits = safetree.Limits
