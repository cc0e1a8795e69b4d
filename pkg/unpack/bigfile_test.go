package unpack_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/addonpkg/addonpkg/pkg/build"
	"github.com/addonpkg/addonpkg/pkg/filetree"
	"github.com/addonpkg/addonpkg/pkg/unpack"
)

// Files larger than the unpacker's first read chunk (1 MiB) come back
// whole: tar hands back their last bytes together with io.EOF.
func TestUnpackFilesOverOneMiB(t *testing.T) {
	for _, size := range []int{1<<20 - 1, 1 << 20, 1<<20 + 1, 4<<20 + 123} {
		data := bytes.Repeat([]byte("# big\n"), size/6+1)[:size]
		src := filetree.NewBuilder()
		_ = src.WriteFile("big.txt", data, 0o644)
		res, err := build.Build(context.Background(), src.FS(), build.Options{NoValidate: true})
		if err != nil {
			t.Fatal(err)
		}
		a, err := unpack.Image(context.Background(), res.Image, unpack.Options{})
		if err != nil {
			t.Fatalf("%d bytes: %v", size, err)
		}
		got, err := a.FS.ReadFile("big.txt")
		if err != nil || !bytes.Equal(got, data) {
			t.Errorf("%d bytes: got %d bytes, %v", size, len(got), err)
		}
	}
}
