package filetree_test

import (
	"fmt"
	"io/fs"
	"os"

	"github.com/addonpkg/addonpkg/pkg/filetree"
)

// A Builder with SpillPast keeps files in memory up to its budget and
// puts the rest in one file on disk; the tree reads the same either way.
func ExampleBuilder_SpillPast() {
	dir, err := os.MkdirTemp("", "filetree-example-*")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	b := filetree.NewBuilder()
	b.SpillPast(dir, 8)
	for _, name := range []string{"a.yaml", "b.yaml", "c.yaml"} {
		if err := b.WriteFile(name, []byte("kind: "+name[:1]+"\n"), 0o644); err != nil {
			fmt.Println(err)
			return
		}
	}
	fsys := b.FS()
	defer fsys.Close()
	data, _ := fs.ReadFile(fsys, "c.yaml")
	fmt.Printf("%d of %d bytes in memory; c.yaml: %q\n", fsys.InMemory(), fsys.Size(), data)
	// Output:
	// 8 of 24 bytes in memory; c.yaml: "kind: c\n"
}
