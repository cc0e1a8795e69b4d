// Package unpack reads an add-on out of any OCI image or index, whatever
// made it, into a read-only tree (a filetree.FS): no container runtime, no
// root. The tree is held in memory unless Options.SpillDir names a
// directory, which then takes the large files, the read-ahead past its
// budget and, with Options.MemoryBudget, every file past that budget;
// the caller makes that directory and removes it.
//
// Layers are flattened by the OCI changeset rules (whiteouts, opaque
// directories), merged top layer first, so content that an upper layer
// deletes is never kept. Layers are read in parallel: readers of lower
// layers run ahead of the merge, holding at most 32 MiB of entries it has
// not reached yet (8 MiB with Options.SpillDir, past which they write
// what they read ahead there instead of waiting). Entries outside the
// content directory are streamed past and only counted. With
// Options.Sink, kept files go to the sink as soon as they are final
// (output.Writer writes them to disk), and SinkOnly lets the tree keep
// only their sizes and digests: with a DiskSink and a SpillDir too, an
// unpack's memory holds the tree's shape, not its bytes, whatever the
// size of the add-on, its files or its layers. Every blob is verified
// as it is read, DiffIDs are checked against the config, and limits stop
// hostile images (bombs, path tricks, escaping links) with typed errors.
// Unpacking never renders: render.Addon takes the result.
//
// # Errors
//
// Every failure matches a sentinel with errors.Is, and never needs its
// message read: safetree.ErrLimit (errors.As gives the *safetree.LimitError, whose Which
// names the limit), safetree.ErrUnsafe and its classes (safetree.ErrPathEscape,
// safetree.ErrLinkEscape, safetree.ErrUnsupportedType), errdef.ErrDigestMismatch, ErrCorrupt (with
// ErrDiffIDMismatch and ErrIdentityMismatch), ErrUnsupported,
// ErrNoContent and ErrNoPlatform. Registry failures keep their own
// sentinels (errdef.ErrNotFound, registry.ErrUnauthorized...), and a
// signature check its own.
package unpack
