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

	"github.com/addonpkg/addonpkg/internal/verify"
	"github.com/addonpkg/addonpkg/pkg/layout"
)

// A manifest over MaxManifestSize and an index over MaxIndexSize are
// refused, whether their descriptor says so or only their bytes do.
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
	big := append([]byte(`{"schemaVersion":2,"x":"`), bytes.Repeat([]byte("a"), layout.MaxIndexSize+1)...)
	big = append(big, `"}`...)
	h := put(big)
	for _, tc := range []struct {
		name string
		d    v1.Descriptor
		open func(v1.Descriptor) error
	}{
		{"manifest, size told", v1.Descriptor{MediaType: types.OCIManifestSchema1, Digest: h, Size: int64(len(big))}, func(d v1.Descriptor) error { _, err := st.Image(d); return err }},
		{"manifest, size hidden", v1.Descriptor{MediaType: types.OCIManifestSchema1, Digest: h, Size: -1}, func(d v1.Descriptor) error { _, err := st.Image(d); return err }},
		{"index, size told", v1.Descriptor{MediaType: types.OCIImageIndex, Digest: h, Size: int64(len(big))}, func(d v1.Descriptor) error { _, err := st.Index(d); return err }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.open(tc.d)
			if !errors.Is(err, verify.ErrTooLarge) {
				t.Fatalf("got %v, want ErrTooLarge", err)
			}
		})
	}
}
