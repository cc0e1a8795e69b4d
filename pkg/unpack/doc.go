// Package unpack reads an add-on out of any OCI image or index, whatever
// made it, into a read-only in-memory file system: no container runtime,
// no root, no temp files.
//
// Layers are flattened by the OCI changeset rules (whiteouts, opaque
// directories), top layer first, so content that an upper layer deletes
// is never held. Entries outside the content directory are streamed past
// and only counted. Every blob is verified as it is read, DiffIDs are
// checked against the config, and limits stop hostile images (bombs,
// path tricks, escaping links) with typed errors.
package unpack
