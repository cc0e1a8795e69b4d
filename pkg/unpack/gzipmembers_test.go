package unpack_test

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/addonpkg/addonpkg/pkg/archive"
	"github.com/addonpkg/addonpkg/pkg/mediatypes"
	"github.com/addonpkg/addonpkg/pkg/unpack"
)

// What follows a gzip layer's tar can smuggle nothing past the diff_id:
// a second member, after the tar's end, is part of the uncompressed
// stream the diff_id covers (a config whose diff_id covers the first
// member alone is refused), and its files are not read, as containerd's
// applier stops at the tar's end; zero padding is compressed bytes, in
// the digest, not in the diff_id; any other trailing byte is refused.
// Checked by this review (round 4); nothing needed fixing.
func TestGzipLayerTrailersAndTheDiffID(t *testing.T) {
	ctx := context.Background()
	tarA := tarBytes(dirE("addon/"), file("addon/cm.yaml", cmYAML))
	tarB := tarBytes(dirE("addon/"), file("addon/evil.yaml", cmYAML))
	gzA, gzB := compress(tarA, mediatypes.Gzip), compress(tarB, mediatypes.Gzip)
	cat := func(bs ...[]byte) []byte { return bytes.Join(bs, nil) }
	for _, c := range []struct {
		name    string
		blob    []byte
		diffID  []byte // what the config's diff_id hashes
		wantErr error
	}{
		{"a second member, diff_id of the first", cat(gzA, gzB), tarA, unpack.ErrDiffIDMismatch},
		{"a second member, diff_id of both", cat(gzA, gzB), cat(tarA, tarB), nil},
		{"zero padding", cat(gzA, make([]byte, 512)), tarA, nil},
		{"trailing bytes", cat(gzA, []byte("evil")), tarA, archive.ErrGzipTrailingData},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := &testLayer{blob: c.blob, mt: types.OCILayer, diffID: sha(c.diffID)}
			got, err := unpack.Image(ctx, imageOf(t, imageOpts{}, l), unpack.Options{})
			if !errors.Is(err, c.wantErr) {
				t.Fatalf("err = %v, want %v", err, c.wantErr)
			}
			if err != nil {
				return
			}
			if d := diffTrees(tree{"cm.yaml": F(cmYAML)}, treeOf(t, got.FS)); d != "" {
				t.Errorf("tree differs:\n%s", d)
			}
		})
	}
}
