package output_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing/fstest"

	"github.com/addonpkg/addonpkg/pkg/output"
)

// WriteDir puts a tree into a folder whole, or not at all; a folder that
// already holds something is refused untouched.
func ExampleWriteDir() {
	base, err := os.MkdirTemp("", "output-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(base)
	tree := fstest.MapFS{
		"kustomization.yaml":   {Data: []byte("resources:\n- config/settings.yaml\n")},
		"config/settings.yaml": {Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n")},
	}
	dir := filepath.Join(base, "out", "addon")
	if err := output.WriteDir(tree, dir); err != nil {
		panic(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "config", "settings.yaml"))
	if err != nil {
		panic(err)
	}
	fmt.Print(string(b))

	err = output.WriteDir(tree, dir)
	fmt.Println(errors.Is(err, output.ErrNotEmpty))
	// Output:
	// apiVersion: v1
	// kind: ConfigMap
	// metadata:
	//   name: settings
	// true
}
