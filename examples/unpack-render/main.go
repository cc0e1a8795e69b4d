// Command unpack-render is the smallest installer: it unpacks one add-on
// (a registry reference, oci:DIR:TAG, any core SOURCE) and writes its
// rendered stream for 'kubectl apply -f -'. It imports pkg/ alone, with
// registry retries and verified blob reads, and compiles no git library
// and at most 240 third-party packages (TestDependencyBudgets in
// internal/testing/audit counts them).
//
//	go run ./examples/unpack-render registry.example.com/addons/coredns:1.11 | kubectl apply -f -
package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/addonpkg/addonpkg/pkg/render"
	"github.com/addonpkg/addonpkg/pkg/source"
	"github.com/addonpkg/addonpkg/pkg/unpack"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: unpack-render SOURCE")
		os.Exit(2)
	}
	if err := run(context.Background(), os.Args[1], source.Options{}, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "unpack-render:", err)
		os.Exit(1)
	}
}

// run unpacks src, renders it and writes the stream to w.
func run(ctx context.Context, src string, opts source.Options, w io.Writer) error {
	ad, err := source.Resolve(ctx, src, opts, unpack.Options{})
	if err != nil {
		return err
	}
	res, err := render.Addon(ctx, ad, render.Options{})
	if err != nil {
		return fmt.Errorf("render %s: %w", src, err)
	}
	_, err = res.WriteTo(w)
	return err
}
