package source_test

import (
	"context"
	"fmt"
	"log"

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
	// Output:
	// form: folder
	// kind: manifests
	// name: coredns
	// pinned: ""
}
