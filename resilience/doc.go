// Package resilience holds the resilience proofs of addonpkg, all in its
// _test.go files: the real binary against a real Distribution registry
// behind a fault-injecting proxy (internal/testing/faultproxy), killed with
// SIGKILL at random points, and run many at once against one store. After
// every failure the tests check that nothing half-written is left: every
// tag of the store resolves to blobs that hash to their digests, and no
// output file or directory of a failed command exists.
//
//	go test -race ./resilience/ -count=1 -v
//
// The tests need the docker-registry binary (hack/install-deps.sh); they
// skip without it, and fail under CI.
package resilience
