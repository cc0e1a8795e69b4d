// Package imagelock is the image lock of an add-on carried across an air
// gap with its container images (spec/addon-v1.md, "Image lock"): a small
// JSON document, media type mediatypes.ImagesLock, that lists each image
// the add-on runs as its manifests write it, the digest that was copied,
// and where the copy is.
//
// The lock travels as an OCI artifact whose subject is the add-on's
// manifest: a referrer. In a registry it is found through the referrers
// API, or the referrers tag schema (tag sha256-<hex>) on registries
// without it; in an OCI layout, an oci-archive or the local store it is an
// untagged entry of index.json whose artifactType is mediatypes.ImagesLock.
// Reading it from a layout or archive needs no network.
//
// Mirrored images are named MIRROR/PATH@DIGEST, where PATH is the
// original reference's repository path without its registry host
// (registry.k8s.io/coredns/coredns:v1.11.1 becomes
// MIRROR/coredns/coredns@sha256:...; nginx becomes MIRROR/library/nginx@...).
// Images are always addressed by digest, so two registries' images with the
// same path share a repository without clashing.
package imagelock
