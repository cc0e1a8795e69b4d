package safetree_test

import (
	"errors"
	"fmt"

	"github.com/addonpkg/addonpkg/pkg/safetree"
)

// An entry name from an archive is cleaned, and one that climbs out of
// the tree is refused, however it is spelled.
func ExampleCleanName() {
	for _, name := range []string{"addon//config/./a.yaml", "addon/../../etc/passwd", "/etc/passwd"} {
		clean, err := safetree.CleanName(name)
		fmt.Printf("%q %q %v\n", clean, name, errors.Is(err, safetree.ErrPathEscape))
	}
	// Output:
	// "addon/config/a.yaml" "addon//config/./a.yaml" false
	// "" "addon/../../etc/passwd" true
	// "" "/etc/passwd" true
}

// A kustomization's "../base" is read from its own directory, and may
// not leave the tree.
func ExampleJoinInside() {
	p, err := safetree.JoinInside("overlays/prod", "../../base")
	fmt.Println(p, err)
	_, err = safetree.JoinInside("overlays", "../../outside")
	fmt.Println(errors.Is(err, safetree.ErrPathEscape))
	// Output:
	// base <nil>
	// true
}

// Text from an add-on or a registry is printed on one line, without the
// escapes a hostile name could send to a terminal.
func ExampleSanitize() {
	fmt.Println(safetree.Sanitize("coredns\x1b]0;pwned\x07\nnext line"))
	// Output:
	// coredns?]0;pwned??next line
}
