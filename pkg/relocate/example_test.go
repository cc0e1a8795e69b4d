package relocate_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing/fstest"

	"github.com/addonpkg/addonpkg/pkg/imagelock"
	"github.com/addonpkg/addonpkg/pkg/mediatypes"
	"github.com/addonpkg/addonpkg/pkg/relocate"
	"github.com/addonpkg/addonpkg/pkg/render"
)

// Relocate points a rendered add-on's images at a mirror, by digest, from
// its image lock; an image the lock lacks is refused.
func ExampleRelocate() {
	const d = "sha256:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
	tree := fstest.MapFS{"pod.yaml": {Data: []byte("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - name: c\n    image: busybox:1.36\n")}}
	ctx := context.Background()
	res, err := render.Render(ctx, tree, render.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	mirrored, _ := imagelock.MirrorReference("", "busybox:1.36", d)
	lock := &imagelock.Lock{MediaType: mediatypes.ImagesLock, Subject: d,
		Images: []imagelock.Image{{Image: "busybox:1.36", Digest: d, Mirrored: mirrored}}}
	out, err := relocate.Relocate(ctx, res, tree, relocate.Options{Mirror: "mirror.internal", Lock: lock})
	if err != nil {
		fmt.Println(err)
		return
	}
	out.WriteTo(os.Stdout)

	_, err = relocate.Relocate(ctx, res, tree, relocate.Options{Mirror: "mirror.internal", Lock: &imagelock.Lock{MediaType: mediatypes.ImagesLock, Subject: d}})
	fmt.Println(errors.Is(err, relocate.ErrNotInLock), err)
	// Output:
	// apiVersion: v1
	// kind: Pod
	// metadata:
	//   name: p
	// spec:
	//   containers:
	//   - name: c
	//     image: mirror.internal/library/busybox@sha256:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb
	// true image not in the image lock: busybox:1.36 (copy the add-on with its images again)
}
