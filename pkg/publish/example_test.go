package publish_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/addonpkg/addonpkg/pkg/build"
	"github.com/addonpkg/addonpkg/pkg/layout"
	"github.com/addonpkg/addonpkg/pkg/publish"
	"github.com/addonpkg/addonpkg/pkg/source"
)

// Build a folder as `addonpkg build ./hello -t hello:1.0 -o oci:DIR:1.0`
// does: tagged in a store, and written to an OCI layout that oci:DIR:1.0
// reads back.
func ExampleBuild() {
	work, err := os.MkdirTemp("", "publish-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(work)
	dir := filepath.Join(work, "hello")
	if err := os.Mkdir(dir, 0o755); err != nil {
		log.Fatal(err)
	}
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: hello\n"
	if err := os.WriteFile(filepath.Join(dir, "configmap.yaml"), []byte(cm), 0o644); err != nil {
		log.Fatal(err)
	}

	out := filepath.Join(work, "layout")
	res, err := publish.Build(context.Background(), dir, publish.Options{
		Build:   build.Options{Version: "1.0"},
		Tags:    []string{"hello:1.0"},
		Store:   func() (*layout.Store, error) { return layout.Init(filepath.Join(work, "store")) },
		Outputs: []source.Ref{{Kind: source.KindLayout, Path: out, Name: "1.0"}},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Config.Name, res.Config.Version, res.Tags)

	ref, err := source.Parse("oci:" + out + ":1.0")
	if err != nil {
		log.Fatal(err)
	}
	a, err := source.Open(context.Background(), ref, source.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer a.Close()
	fmt.Println(a.Digest == res.Digest)
	// Output:
	// hello 1.0 [hello:1.0]
	// true
}
