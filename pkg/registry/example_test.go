package registry_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"log"
	"net/http/httptest"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	ggcrregistry "github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/addonpkg/addonpkg/pkg/registry"
)

// A caller that verifies blobs itself reads them through Blobs: one
// SHA-256 pass, its own, with its own error when the bytes are wrong.
func ExampleOptions_Blobs() {
	srv := httptest.NewServer(ggcrregistry.New(ggcrregistry.Logger(log.New(io.Discard, "", 0))))
	defer srv.Close()
	o := registry.Options{Keychain: authn.NewMultiKeychain()}
	ref, err := o.ParseReference(strings.TrimPrefix(srv.URL, "http://") + "/addons/example:1")
	if err != nil {
		log.Fatal(err)
	}
	img, _ := random.Image(1024, 1)
	if err := remote.Write(ref, img); err != nil {
		log.Fatal(err)
	}
	layers, _ := img.Layers()
	digest, _ := layers[0].Digest()
	size, _ := layers[0].Size()

	rc, err := o.Blobs(ref.Context()).Open(context.Background(), digest, size)
	if err != nil {
		log.Fatal(err)
	}
	defer rc.Close()
	h := sha256.New()
	n, err := io.Copy(h, rc)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("size as described:", n == size)
	fmt.Println("digest as described:", hex.EncodeToString(h.Sum(nil)) == digest.Hex)
	// Output:
	// size as described: true
	// digest as described: true
}
