package source_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/addonpkg/addonpkg/pkg/build"
	"github.com/addonpkg/addonpkg/pkg/errdef"
	"github.com/addonpkg/addonpkg/pkg/pack"
	"github.com/addonpkg/addonpkg/pkg/source"
	"github.com/addonpkg/addonpkg/pkg/unpack"
)

// A tag an OCI layout lacks is called a tag whatever its letters: a
// layout's ref name follows the tag grammar (reference.IsTag), capitals
// included, not a repository's. V2, which is no repository name
// (capitals), was called "digest V2".
func TestLayoutMissingTagIsCalledATag(t *testing.T) {
	ctx := context.Background()
	res := buildExample(t, build.Options{Name: "coredns", Format: pack.FormatImage})
	dir := filepath.Join(t.TempDir(), "layout")
	writeBuilt(t, "oci:"+dir+":1.11", res)
	for _, tag := range []string{"V2", "9", "Release_1"} {
		_, err := source.Resolve(ctx, "oci:"+dir+":"+tag, source.Options{}, unpack.Options{})
		if !errors.Is(err, errdef.ErrNotFound) || !strings.Contains(err.Error(), "tag "+tag+" not found in the layout; its tags: 1.11") {
			t.Errorf("oci:DIR:%s: %v, want errdef.ErrNotFound naming tag %s and the layout's tags", tag, err, tag)
		}
	}
}
