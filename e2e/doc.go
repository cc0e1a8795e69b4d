// Package e2e holds the end-to-end tests of the addonpkg command: they
// build the real binary once, run it against real CNCF Distribution
// registries on 127.0.0.1 (see internal/testing/testregistry), and check that
// addonpkg and its peers (crane, oras, skopeo, umoci) read each other's
// output. Everything is in the _test.go files; run them with
//
//	go test ./e2e/ -count=1 -v
//
// Missing tools skip the tests locally and fail them under CI; install
// them with hack/install-deps.sh.
package e2e
