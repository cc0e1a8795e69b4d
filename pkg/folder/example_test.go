package folder_test

import (
	"fmt"
	"io/fs"
	"log"

	"github.com/addonpkg/addonpkg/pkg/folder"
	"github.com/addonpkg/addonpkg/pkg/safetree"
)

// Open lists a folder with the checks and ignore rules of LoadDir, and
// reads its files from disk only when they are read: what a build of a
// large folder holds is its shape, not its bytes.
func ExampleOpen() {
	tree, err := folder.Open("../../examples/coredns", safetree.Limits{})
	if err != nil {
		log.Fatal(err)
	}
	defer tree.Close()
	entries, err := fs.ReadDir(tree, ".")
	if err != nil {
		log.Fatal(err)
	}
	for _, e := range entries {
		info, err := e.Info()
		if err != nil {
			log.Fatal(err)
		}
		b, err := fs.ReadFile(tree, e.Name())
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(e.Name(), info.Size() == int64(len(b)))
	}
	// Output:
	// .addonvalues true
	// coredns.yaml true
}
