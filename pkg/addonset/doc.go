// Package addonset reads a declaration of a set of add-ons (addons.yaml),
// pins every member in a lock file (addons.lock), renders the whole set in
// dependency order from exactly what the lock pins, and mirrors it to a
// registry or an oci-archive file.
//
// A member's source is any SOURCE addonpkg reads that can be pinned: a
// registry reference (optionally with a semver range in version), a git
// repository, an https download, a local folder, oci:DIR or
// oci-archive:FILE. The declaration format is specified in
// spec/addon-set-v1.md.
//
// The four verbs are Load, Lock, Render and Mirror. Each takes a context
// first and an options struct, and returns typed errors: see the Err
// variables, DeclError, CycleError, StaleError and MismatchError. An
// installer needs one call, RenderLocked: the declaration file rendered
// from exactly the lock beside it, refused without one (ErrNoLock).
package addonset
