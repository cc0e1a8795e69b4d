// The perf lab's profiler: the library calls behind `addonpkg unpack SRC -o DIR`
// and `addonpkg build DIR -t NAME`, with CPU and allocation profiles. Its own
// module, so the addonpkg module's `go vet ./...` / `go test ./...` skip it;
// go.work next to it resolves github.com/addonpkg/addonpkg to this checkout.
module addonpkg.local/perf/profile

go 1.26.0
