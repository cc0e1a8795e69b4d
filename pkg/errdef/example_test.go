package errdef_test

import (
	"errors"
	"fmt"

	"github.com/addonpkg/addonpkg/pkg/errdef"
)

// A blob cut short fails with ErrSizeMismatch, which is also a digest
// mismatch: one errors.Is test catches every blob that is not the one
// its descriptor names, from whichever package read it.
func Example() {
	err := fmt.Errorf("blob sha256:4f2a…: %w: 96 bytes, 156 described (truncated?)", errdef.ErrSizeMismatch)
	fmt.Println(errors.Is(err, errdef.ErrDigestMismatch), errors.Is(err, errdef.ErrSizeMismatch))
	fmt.Println(errors.Is(errdef.ErrDigestMismatch, errdef.ErrSizeMismatch))
	// Output:
	// true true
	// false
}
