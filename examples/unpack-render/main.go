// Command unpack-render is the smallest installer: it unpacks one add-on
// (a registry reference, oci:DIR:TAG, any core SOURCE), fills in the
// values it declares (-set NAME=VALUE, spec/addon-v1.md section 6.6) and
// writes its rendered stream for 'kubectl apply -f -'. It imports pkg/
// alone, with registry retries and verified blob reads, and compiles no
// git library and at most 240 third-party packages (TestDependencyBudgets
// in internal/testing/audit counts them).
//
//	go run ./examples/unpack-render -set DNS_SERVER_IP=10.96.0.10 registry.example.com/addons/coredns:1.11 | kubectl apply -f -
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/addonpkg/addonpkg/pkg/render"
	"github.com/addonpkg/addonpkg/pkg/source"
	"github.com/addonpkg/addonpkg/pkg/unpack"
	"github.com/addonpkg/addonpkg/pkg/values"
)

func main() {
	given := map[string]string{}
	flag.Func("set", "a value the add-on declares, `NAME=VALUE` (repeatable)", func(s string) error {
		name, value, err := values.ParseAssignment(s)
		given[name] = value
		return err
	})
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: unpack-render [-set NAME=VALUE]... SOURCE")
		os.Exit(2)
	}
	if err := run(context.Background(), flag.Arg(0), given, source.Options{}, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "unpack-render:", err)
		os.Exit(1)
	}
}

// run unpacks src, renders it with the values given and writes the
// stream to w. given is never nil: an installer fills values in, so an
// add-on missing a required value is refused (values.MissingError)
// rather than written with ${NAME} in it.
func run(ctx context.Context, src string, given map[string]string, opts source.Options, w io.Writer) error {
	if given == nil {
		given = map[string]string{}
	}
	ad, err := source.Resolve(ctx, src, opts, unpack.Options{})
	if err != nil {
		return err
	}
	res, err := render.Addon(ctx, ad, render.Options{Values: given})
	if err != nil {
		return fmt.Errorf("render %s: %w", src, err)
	}
	_, err = res.WriteTo(w)
	return err
}
