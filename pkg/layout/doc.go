// Package layout is addonpkg's local store: an OCI image layout on disk
// that any OCI tool can read, written so that a killed process never
// leaves a half-written blob, tag or index behind.
//
// Blobs are ingested into temp files beside their final place, verified
// against their digest, then renamed. index.json is rewritten the same
// way under an exclusive file lock, so concurrent writers never lose each
// other's tags. Every blob read back is verified too (go-containerregistry's
// own layout reader does not).
package layout
