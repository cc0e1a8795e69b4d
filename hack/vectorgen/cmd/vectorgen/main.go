// Command vectorgen writes the conformance vectors of spec/addon-v1.md:
//
//	go run ./hack/vectorgen/cmd/vectorgen -o spec/conformance/vectors
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/addonpkg/addonpkg/hack/vectorgen"
)

func main() {
	out := flag.String("o", "spec/conformance/vectors", "folder to write the vectors into (replaced)")
	flag.Parse()
	if err := vectorgen.Generate(*out); err != nil {
		fmt.Fprintln(os.Stderr, "vectorgen:", err)
		os.Exit(1)
	}
}
