package source_test

import (
	"context"
	"fmt"
	"log"
	"path/filepath"

	"github.com/addonpkg/addonpkg/pkg/source"
	"github.com/addonpkg/addonpkg/pkg/unpack"
)

// Resolve reads any SOURCE: here a local folder. The same call takes a
// store name, a registry reference or oci:DIR; an https:// URL of a YAML
// file or an archive, or a git+https:// repository, once Options.Locations
// lists pkg/source/https's or pkg/source/git's location (else
// ErrKindNotEnabled).
func ExampleResolve() {
	ad, err := source.Resolve(context.Background(), "../../examples/coredns", source.Options{}, unpack.Options{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("form:", ad.Form)
	fmt.Println("kind:", ad.Config.Kind)
	fmt.Println("name:", ad.Config.Name)
	fmt.Printf("pinned: %q\n", ad.Pinned) // a folder has no pinned form
	// What an installer records (apply.FromRendered): the folder's
	// absolute path, the same from any directory.
	fmt.Println("recorded:", filepath.IsAbs(ad.Source), filepath.Base(ad.Source))
	// Output:
	// form: folder
	// kind: manifests
	// name: coredns
	// pinned: ""
	// recorded: true coredns
}
