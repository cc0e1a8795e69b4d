package conformance_test

import (
	"context"
	"fmt"

	"github.com/addonpkg/addonpkg/internal/conformance"
)

// Read one vector with addonpkg's reader and compare with what the vector
// expects.
func ExampleRead() {
	v, err := conformance.LoadVector("../../spec/conformance/vectors/hardlink-mode")
	if err != nil {
		panic(err)
	}
	got, err := conformance.Read(context.Background(), v.Source, conformance.ReadOptions{})
	if err != nil {
		panic(err)
	}
	fmt.Println(got.Result, got.Form, got.Files["bin/check-copy.sh"].Mode)
	fmt.Println(len(conformance.Compare(v.Expected, got)), "differences")
	// Output:
	// ok image 0755
	// 0 differences
}
