package render_test

import (
	"context"
	"fmt"
	"os"
	"testing/fstest"

	"github.com/addonpkg/addonpkg/pkg/render"
)

// A render with DropText holds where each document is, not its text: the
// stream is read back from the tree as it is written, in apply order.
func ExampleOptions_dropText() {
	tree := fstest.MapFS{
		"a/app.yaml": {Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\n")},
		"z/ns.yaml":  {Data: []byte("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: demo")},
	}
	res, err := render.Render(context.Background(), tree, render.Options{DropText: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, d := range res.Documents {
		fmt.Printf("%s %s at %s[%d:+%d], text held: %v\n", d.Object.Kind, d.Object.Name, d.File, d.Offset, d.Length, d.Raw != nil)
	}
	if _, err := res.WriteTo(os.Stdout); err != nil {
		fmt.Println(err)
	}
	// Output:
	// Namespace demo at z/ns.yaml[0:+53], text held: false
	// ConfigMap app at a/app.yaml[0:+53], text held: false
	// apiVersion: v1
	// kind: Namespace
	// metadata:
	//   name: demo
	// ---
	// apiVersion: v1
	// kind: ConfigMap
	// metadata:
	//   name: app
}
