package signature_test

import (
	"context"
	"fmt"
	"os"

	"github.com/google/go-containerregistry/pkg/v1/partial"
	"github.com/google/go-containerregistry/pkg/v1/random"

	"github.com/addonpkg/addonpkg/pkg/layout"
	"github.com/addonpkg/addonpkg/pkg/referrers"
	"github.com/addonpkg/addonpkg/pkg/signature"
	"github.com/addonpkg/addonpkg/pkg/source"
)

// Sign an add-on in an OCI layout with a cosign key pair, then open it
// with source.Options.Verify set, as an installer would.
func ExampleKeyVerifier() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "signature-example-*")
	defer os.RemoveAll(dir)
	st, _ := layout.Init(dir)
	loc := referrers.Layout(st, "")
	img, _ := random.Image(64, 1)
	desc, _ := partial.Descriptor(img)
	_ = loc.Write(ctx, &referrers.Manifest{Descriptor: *desc, Image: img}, "1")

	priv, pub, _ := signature.GenerateKeyPair([]byte("password"))
	signer, _ := signature.LoadPrivateKey("cosign.key", priv, []byte("password"))
	key, _ := signature.LoadPublicKey("cosign.pub", pub)
	if _, err := signature.Sign(ctx, loc, desc.Digest, signer, signature.SignOptions{}); err != nil {
		fmt.Println(err)
		return
	}

	opts := source.Options{Verify: &signature.KeyVerifier{Keys: []signature.Key{key}}}
	a, err := source.Open(ctx, source.Ref{Kind: source.KindLayout, Path: dir, Name: "1"}, opts)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer a.Close()
	fmt.Println("opened, signed:", a.Digest == desc.Digest)
	// Output: opened, signed: true
}
