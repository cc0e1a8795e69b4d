package unpack_test

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/addonpkg/addonpkg/pkg/errdef"
	"github.com/addonpkg/addonpkg/pkg/mediatypes"
	"github.com/addonpkg/addonpkg/pkg/unpack"
)

// A gzip layer padded with zeros to a block after its stream unpacks to
// the tree of the same layer unpadded; it was refused ("gzip: invalid
// header"). The zeros are bytes of the blob like any other: its digest
// and size cover them, so a blob served with padding its descriptor does
// not count is still a mismatch.
func TestGzipLayerWithZeroPadding(t *testing.T) {
	ctx := context.Background()
	tarb := tarBytes(dirE("addon/"), file("addon/cm.yaml", cmYAML))
	plain := tarLayer(tarb, mediatypes.Gzip, types.OCILayer)
	padded := tarLayer(tarb, mediatypes.Gzip, types.OCILayer)
	padded.blob = append(bytes.Clone(padded.blob), make([]byte, 4096-len(padded.blob)%4096)...)

	want, err := unpack.Image(ctx, imageOf(t, imageOpts{}, plain), unpack.Options{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := unpack.Image(ctx, imageOf(t, imageOpts{}, padded), unpack.Options{})
	if err != nil {
		t.Fatalf("padded to %d bytes: %v", len(padded.blob), err)
	}
	if d := diffTrees(treeOf(t, want.FS), treeOf(t, got.FS)); d != "" {
		t.Errorf("the padded layer's tree differs:\n%s", d)
	}

	served := tarLayer(tarb, mediatypes.Gzip, types.OCILayer)
	served.body = padded.blob
	_, err = unpack.Image(ctx, imageOf(t, imageOpts{}, served), unpack.Options{})
	if !errors.Is(err, errdef.ErrDigestMismatch) {
		t.Errorf("padding the descriptor does not count: %v, want errdef.ErrDigestMismatch", err)
	}
}
