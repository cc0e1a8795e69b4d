// Package vectorgen generates the conformance vectors of spec/addon-v1.md
// into spec/conformance/vectors: each vector is an OCI image layout (or a
// docker-archive or oci-archive file) built byte by byte here, with no
// addonpkg reader involved, and the expected.json that the spec's rules
// give for it, computed from the vector's own model of the tree.
//
// Regenerate with `go generate ./hack/vectorgen` or `make
// conformance`; a test regenerates into a temp dir and compares byte for
// byte.
package vectorgen

//go:generate go run ./cmd/vectorgen -o ../../spec/conformance/vectors
