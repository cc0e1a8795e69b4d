// Package referrers finds and copies what refers to a manifest: OCI 1.1
// referrers (manifests whose subject is that manifest), and cosign's
// sha256-HEX.sig, .att and .sbom tags.
//
// A Location is where manifests live: a registry repository (Registry)
// or an OCI image layout (Layout), which may be addonpkg's local store.
// In a registry, referrers are listed through the referrers API, and
// through the sha256-HEX tag-schema fallback index on registries without
// it; writing a referrer to a registry without the API updates that
// index, so cosign and oras find it. In a layout, referrers are the
// entries of index.json whose manifest names the subject; cosign's tags
// are ref names (REPO:TAG in the store).
package referrers
