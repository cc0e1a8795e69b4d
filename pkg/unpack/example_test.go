package unpack_test

import (
	"context"
	"fmt"
	"log"

	"github.com/addonpkg/addonpkg/pkg/build"
	"github.com/addonpkg/addonpkg/pkg/memfs"
	"github.com/addonpkg/addonpkg/pkg/render"
	"github.com/addonpkg/addonpkg/pkg/unpack"
)

// Unpack and render an add-on from an image held in memory: here one that
// build made, but any v1.Image (remote, layout, tarball) works the same.
func Example() {
	ctx := context.Background()
	src := memfs.NewBuilder()
	_ = src.WriteFile("configmap.yaml", []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: hello\ndata:\n  greeting: hi\n"), 0o644)
	built, err := build.Build(ctx, src.FS(), build.Options{Name: "hello", Version: "1.0.0"})
	if err != nil {
		log.Fatal(err)
	}

	a, err := unpack.Image(ctx, built.Image, unpack.Options{})
	if err != nil {
		log.Fatal(err)
	}
	res, err := a.Render(ctx, render.Options{})
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
