// Package layout is addonpkg's local store: an OCI image layout on disk
// that any OCI tool can read, written so that a killed process never
// leaves a half-written blob, tag or index behind. Any other OCI layout
// opens the same way, and an oci-archive file (a tar of a layout) is read
// in place by OpenArchive and written reproducibly by WriteArchive.
//
// Blobs are ingested into temp files beside their final place, verified
// against their digest, synced, renamed, and the directory synced after
// the rename. index.json is rewritten the same way under an exclusive file
// lock, so concurrent writers never lose each other's tags. The
// directories Init creates are synced into their parents.
//
// Every mutation (WriteBlob, WriteImage, WriteIndex, Tag, Untag, Init when
// it writes, and Hold) holds a shared lock that GC takes exclusively: GC
// never runs in the middle of a write, in this process or another. A
// caller writing in several steps holds Hold across them.
//
// A Store reads index.json from disk on every call, but parses it again
// only when its bytes changed, and reads each manifest once to learn its
// subject (Referrers). Pin goes further for an operation that owns the
// Store: index.json is read once and written once, at the end. Handles
// give an operation one Store per layout, archive and store, and travel
// in its context (WithHandles), so every call it makes shares them.
//
// Presence is verified presence: HasBlob, and every write that finds its
// blob already there, hash the file, and a blob that does not match is
// written again from the source (so a pull repairs a corrupted store).
// Every blob read back is verified too (go-containerregistry's own layout
// reader does not).
//
// Media types come from the manifests' own bytes (mediatypes.Sniff), never from
// a registry's Content-Type. GC (GarbageCollect) keeps what the tags
// reach, read from those bytes: each tagged manifest's tree, what refers
// to anything kept (signatures, an add-on's image lock), the attachment
// tags named after it (sha256-HEX.sig), and the images a kept image lock
// pins; every other entry of index.json goes, then every blob nothing
// kept names. It deletes nothing at all when what it keeps cannot be read
// (UnreadableError).
package layout
