package registry_test

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"

	"github.com/addonpkg/addonpkg/pkg/errdef"
	"github.com/addonpkg/addonpkg/pkg/registry"
)

// Blobs reads what the registry serves, through its authentication and
// its redirects to storage, with the credentials kept at their origin; a
// blob of another length than described is refused before it is read.
func TestBlobsReadThroughAuthAndRedirects(t *testing.T) {
	ar := newAuthRegistry(t, "http")
	o := registry.Options{Keychain: aliceKeychain{}, Retries: -1}
	ref, err := o.ParseReference(ar.ref)
	if err != nil {
		t.Fatal(err)
	}
	b := o.Blobs(ref.Context())
	layers, err := ar.image.Layers()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range layers {
		d, _ := l.Digest()
		size, _ := l.Size()
		rc, err := b.Open(t.Context(), d, size)
		if err != nil {
			t.Fatalf("open %s: %v", d, err)
		}
		body, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		if sum := sha256.Sum256(body); hex.EncodeToString(sum[:]) != d.Hex {
			t.Fatalf("blob %s: read other bytes", d)
		}
		if _, err := b.Open(t.Context(), d, size+1); !errors.Is(err, errdef.ErrSizeMismatch) {
			t.Fatalf("blob %s opened with a wrong size: %v, want errdef.ErrSizeMismatch", d, err)
		}
	}
	for _, s := range ar.blobs.all() {
		if !strings.HasSuffix(s, "auth=") {
			t.Errorf("the blob server on another port got credentials: %s", s)
		}
	}
	if len(ar.blobs.all()) == 0 {
		t.Fatal("no blob went through the redirect")
	}

	missing := v1.Hash{Algorithm: "sha256", Hex: strings.Repeat("0", 64)}
	if _, err := b.Open(t.Context(), missing, -1); err == nil {
		t.Fatal("a missing blob opened")
	}

	anon := registry.Options{Keychain: authn.NewMultiKeychain(), Retries: -1}
	d, _ := layers[0].Digest()
	_, err = anon.Blobs(ref.Context()).Open(t.Context(), d, -1)
	var te *transport.Error
	if !errors.As(err, &te) || te.StatusCode != http.StatusUnauthorized {
		t.Fatalf("without credentials: %v, want the registry's 401", err)
	}
}
