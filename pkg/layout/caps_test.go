package layout_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/addonpkg/addonpkg/pkg/layout"
	"github.com/addonpkg/addonpkg/pkg/safetree"
)

// A manifest over the manifest cap and an index over the index cap are
// refused with a *safetree.LimitError naming the cap, whether their
// descriptor says so or only their bytes do.
func TestManifestAndIndexCaps(t *testing.T) {
	dir := t.TempDir()
	st, err := layout.Init(dir)
	if err != nil {
		t.Fatal(err)
	}
	put := func(b []byte) v1.Hash {
		s := sha256.Sum256(b)
		h := v1.Hash{Algorithm: "sha256", Hex: hex.EncodeToString(s[:])}
		if err := os.WriteFile(filepath.Join(dir, "blobs", "sha256", h.Hex), b, 0o644); err != nil {
			t.Fatal(err)
		}
		return h
	}
	big := append([]byte(`{"schemaVersion":2,"x":"`), bytes.Repeat([]byte("a"), safetree.DefaultMaxIndexBytes+1)...)
	big = append(big, `"}`...)
	h := put(big)
	for _, tc := range []struct {
		name  string
		d     v1.Descriptor
		open  func(v1.Descriptor) error
		which safetree.LimitID
	}{
		{"manifest, size told", v1.Descriptor{MediaType: types.OCIManifestSchema1, Digest: h, Size: int64(len(big))}, func(d v1.Descriptor) error { _, err := st.Image(d); return err }, safetree.LimitManifestBytes},
		{"manifest, size hidden", v1.Descriptor{MediaType: types.OCIManifestSchema1, Digest: h, Size: -1}, func(d v1.Descriptor) error { _, err := st.Image(d); return err }, safetree.LimitManifestBytes},
		{"index, size told", v1.Descriptor{MediaType: types.OCIImageIndex, Digest: h, Size: int64(len(big))}, func(d v1.Descriptor) error { _, err := st.Index(d); return err }, safetree.LimitManifestBytes},
		{"index.json", v1.Descriptor{}, func(v1.Descriptor) error {
			if err := os.WriteFile(filepath.Join(dir, "index.json"), big, 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := layout.Open(dir)
			if err == nil {
				_, err = st.List()
			}
			return err
		}, safetree.LimitIndexBytes},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.open(tc.d)
			if le := (*safetree.LimitError)(nil); !errors.As(err, &le) || le.Which != tc.which {
				t.Fatalf("got %v, want a LimitError of %s", err, tc.which)
			}
		})
	}
}
