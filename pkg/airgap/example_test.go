package airgap_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	ggcrregistry "github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/addonpkg/addonpkg/pkg/airgap"
	"github.com/addonpkg/addonpkg/pkg/build"
	"github.com/addonpkg/addonpkg/pkg/folder"
	"github.com/addonpkg/addonpkg/pkg/source"
)

// Copy an add-on and the image it runs from a registry into one
// oci-archive, to carry across an air gap.
func ExampleCopy() {
	ctx := context.Background()
	srv := httptest.NewServer(ggcrregistry.New(ggcrregistry.Logger(log.New(io.Discard, "", 0))))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")

	// A container image, and an add-on whose Pod runs it.
	img, _ := random.Image(256, 1)
	ref, _ := name.ParseReference(host + "/tools/pause:3.10")
	if err := remote.Write(ref, img); err != nil {
		fmt.Println(err)
		return
	}
	tree, _ := folder.LoadBytes("pod.yaml", []byte("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - name: c\n    image: "+ref.String()+"\n"))
	built, err := build.Build(ctx, tree, build.Options{Name: "demo"})
	if err != nil {
		fmt.Println(err)
		return
	}
	addonRef, _ := name.ParseReference(host + "/addons/demo:1")
	if err := remote.Write(addonRef, built.Image); err != nil {
		fmt.Println(err)
		return
	}

	dir, _ := os.MkdirTemp("", "airgap-example-")
	defer os.RemoveAll(dir)
	src, _ := source.Parse(addonRef.String())
	dst, _ := source.Parse("oci-archive:" + filepath.Join(dir, "demo.tar") + ":1")
	res, err := airgap.Copy(ctx, src, dst, airgap.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	want, _ := img.Digest()
	for _, im := range res.Lock.Images {
		fmt.Println(strings.TrimPrefix(im.Image, host), im.Digest == want.String(), strings.TrimSuffix(im.Mirrored, want.String()))
	}
	// Output:
	// /tools/pause:3.10 true tools/pause@
}
