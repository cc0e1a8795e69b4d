// Package peers tests addonpkg against the client libraries of the tools
// its users already run: Flux's OCI client (github.com/fluxcd/pkg/oci, the
// code behind `flux pull artifact` and source-controller's OCIRepository)
// reads what addonpkg builds by default, and a chart pushed by Helm's own
// registry client (helm.sh/helm/v3/pkg/registry, the code behind
// `helm push`) is recognised as a Helm chart.
//
// It is a module of its own so that Flux's and Helm's dependencies stay
// out of addonpkg's go.mod. Run it with `make e2e` or
// `cd e2e/peers && go test ./...`.
package peers
