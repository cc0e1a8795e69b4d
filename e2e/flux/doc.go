// Package flux tests that Flux's own OCI client (github.com/fluxcd/pkg/oci,
// the code behind `flux pull artifact` and source-controller's
// OCIRepository) reads what addonpkg builds by default.
//
// It is a module of its own so that Flux's dependencies stay out of
// addonpkg's go.mod. Run it with `make e2e` or `cd e2e/flux && go test ./...`.
package flux
