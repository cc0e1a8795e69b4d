package unpack_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/addonpkg/addonpkg/pkg/build"
	"github.com/addonpkg/addonpkg/pkg/filetree"
	"github.com/addonpkg/addonpkg/pkg/output"
	"github.com/addonpkg/addonpkg/pkg/render"
	"github.com/addonpkg/addonpkg/pkg/unpack"
)

// Unpack and render an add-on from an image held in memory: here one that
// build made, but any v1.Image (remote, layout, tarball) works the same.
func Example() {
	ctx := context.Background()
	src := filetree.NewBuilder()
	_ = src.WriteFile("configmap.yaml", []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: hello\ndata:\n  greeting: hi\n"), 0o644)
	built, err := build.Build(ctx, src.FS(), build.Options{Name: "hello", Version: "1.0.0"})
	if err != nil {
		log.Fatal(err)
	}

	a, err := unpack.Image(ctx, built.Image, unpack.Options{})
	if err != nil {
		log.Fatal(err)
	}
	res, err := render.Addon(ctx, a, render.Options{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(a.Form, a.Config.Name, a.Config.Version, a.Config.Kind)
	fmt.Print(string(res.YAML()))
	// Output:
	// image hello 1.0.0 manifests
	// apiVersion: v1
	// kind: ConfigMap
	// metadata:
	//   name: hello
	// data:
	//   greeting: hi
}

// Unpack an add-on straight to a directory: files are written while the
// layers are still read, the tree keeps only their sizes and digests, and
// the directory appears only once everything checked out.
func ExampleOptions_sink() {
	ctx := context.Background()
	src := filetree.NewBuilder()
	_ = src.WriteFile("deploy/configmap.yaml", []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: hello\n"), 0o644)
	built, err := build.Build(ctx, src.FS(), build.Options{Name: "hello"})
	if err != nil {
		log.Fatal(err)
	}

	dir, err := os.MkdirTemp("", "addon-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	out := filepath.Join(dir, "hello")
	w, err := output.NewWriter(out)
	if err != nil {
		log.Fatal(err)
	}
	a, err := unpack.Image(ctx, built.Image, unpack.Options{Sink: w, SinkOnly: true})
	if err != nil {
		w.Abort() // nothing is left behind
		log.Fatal(err)
	}
	if err := w.Commit(a.FS); err != nil {
		log.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(out, "deploy", "configmap.yaml"))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(a.Identity == built.Config.Identity)
	fmt.Print(string(b))
	// Output:
	// true
	// apiVersion: v1
	// kind: ConfigMap
	// metadata:
	//   name: hello
}
