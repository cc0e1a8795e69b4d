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

// kustomize's warnings are returned, not printed: a command shows them its
// own way (addonpkg prints "addonpkg: warning: ..." on stderr).
func ExampleResult_warnings() {
	tree := fstest.MapFS{
		"kustomization.yaml": {Data: []byte("resources:\n- app.yaml\ncommonLabels:\n  app: demo\n")},
		"app.yaml":           {Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\n")},
	}
	res, err := render.Render(context.Background(), tree, render.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, w := range res.Warnings {
		fmt.Println("warning:", w)
	}
	fmt.Println(len(res.Documents), "document")
	// Output:
	// warning: kustomization.yaml: 'commonLabels' is deprecated. Please use 'labels' instead. Run 'kustomize edit fix' to update your Kustomization automatically.
	// 1 document
}

// A List (what kubectl get -o yaml writes) is its items, in apply order;
// a JSON document is written to the stream as YAML.
func ExampleRender_list() {
	tree := fstest.MapFS{
		"export.yaml": {Data: []byte("apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: app\n    namespace: demo\n- apiVersion: v1\n  kind: Namespace\n  metadata:\n    name: demo\n")},
		"extra.json":  {Data: []byte(`{"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "namespace": "demo"}}`)},
	}
	res, err := render.Render(context.Background(), tree, render.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	if _, err := res.WriteTo(os.Stdout); err != nil {
		fmt.Println(err)
	}
	// Output:
	// apiVersion: v1
	// kind: Namespace
	// metadata:
	//   name: demo
	// ---
	// apiVersion: v1
	// kind: ConfigMap
	// metadata:
	//   name: app
	//   namespace: demo
	// ---
	// apiVersion: v1
	// kind: Secret
	// metadata:
	//   name: s
	//   namespace: demo
}
