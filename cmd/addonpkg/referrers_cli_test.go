package main

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/addonpkg/addonpkg/internal/testing/testregistry"
	"github.com/addonpkg/addonpkg/pkg/build"
	"github.com/addonpkg/addonpkg/pkg/layout"
	"github.com/addonpkg/addonpkg/pkg/signature"
)

// cliKeyPairs caches cliKeys's pairs by label: making one encrypts the
// private key with scrypt, seconds of CPU under -race on a busy machine,
// and every signing test made its own. What a test proves does not
// depend on which key it signs with; a test that needs two keys names
// two labels.
var (
	cliKeyPairsMu sync.Mutex
	cliKeyPairs   = map[string][2][]byte{}
)

// cliKeys writes the cosign key pair named label (no password) into a
// folder of the test's own and returns the private and public key files.
func cliKeys(t *testing.T, label string) (string, string) {
	t.Helper()
	cliKeyPairsMu.Lock()
	pair, ok := cliKeyPairs[label]
	if !ok {
		priv, pub, err := signature.GenerateKeyPair(nil)
		if err != nil {
			cliKeyPairsMu.Unlock()
			t.Fatal(err)
		}
		pair = [2][]byte{priv, pub}
		cliKeyPairs[label] = pair
	}
	cliKeyPairsMu.Unlock()
	dir := t.TempDir()
	cliWriteFile(t, filepath.Join(dir, "cosign.key"), string(pair[0]))
	cliWriteFile(t, filepath.Join(dir, "cosign.pub"), string(pair[1]))
	return filepath.Join(dir, "cosign.key"), filepath.Join(dir, "cosign.pub")
}

// An add-on's own signature travels with copy --with-images, so the
// README's air gap (registry or layout -> archive -> mirror, each with
// --verify-key) holds at every stop; the source's image lock does not
// travel (the copy writes its own).
func TestCLICopyWithImagesCarriesSignature(t *testing.T) {
	t.Parallel()
	cliNewHome(t)
	reg := testregistry.Start(t, testregistry.Options{})
	key, pub := cliKeys(t, "a")
	dir := filepath.Join(t.TempDir(), "layout")
	cliMust(t, "build", cliExampleDir("gateway-api-crds"), "--name", "crds", "--output", "oci:"+dir+":1")
	cliMust(t, "sign", "--key", key, "oci:"+dir+":1")

	first := filepath.Join(t.TempDir(), "first.tar")
	cliMust(t, "copy", "--with-images", "--verify-key", pub, "oci:"+dir+":1", "oci-archive:"+first+":1")
	cliMust(t, "verify", "--key", pub, "oci-archive:"+first+":1")
	// Archive to mirror, and on: each copy verifies, and carries the
	// signature and one image lock (its own).
	mirror := reg.Host + "/air/crds:1"
	cliMust(t, "copy", "--with-images", "--verify-key", pub, "oci-archive:"+first+":1", mirror)
	cliMust(t, "verify", "--key", pub, mirror)
	second := filepath.Join(t.TempDir(), "second.tar")
	cliMust(t, "copy", "--with-images", "--verify-key", pub, mirror, "oci-archive:"+second+":1")
	cliMust(t, "verify", "--key", pub, "oci-archive:"+second+":1")
	cliMust(t, "unpack", "--relocate", "mirror.example", "--verify-key", pub, "oci-archive:"+second+":1")

}

// twoPlatformIndex writes a signed two-platform index of one-ConfigMap
// add-ons to oci:DIR:1 and returns DIR.
func twoPlatformIndex(t *testing.T, key string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "index")
	st, err := layout.Init(dir)
	if err != nil {
		t.Fatal(err)
	}
	var adds []mutate.IndexAddendum
	for _, arch := range []string{"amd64", "arm64"} {
		cm := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  arch: " + arch + "\n"
		res, err := build.Build(context.Background(), fstest.MapFS{"cm.yaml": {Data: []byte(cm), Mode: 0o644}}, build.Options{Name: "cm"})
		if err != nil {
			t.Fatal(err)
		}
		adds = append(adds, mutate.IndexAddendum{Add: res.Image, Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: arch}}})
	}
	idx := mutate.IndexMediaType(mutate.AppendManifests(empty.Index, adds...), types.OCIImageIndex)
	if _, err := st.WriteIndex(context.Background(), idx, nil, "1"); err != nil {
		t.Fatal(err)
	}
	cliMust(t, "sign", "--key", key, "oci:"+dir+":1")
	return dir
}

// A signed index copied or pulled for one platform arrives whole, with
// its signature: the signature covers the index, and one child alone
// would fail unpack --verify-key.
func TestCLISignedIndexTravelsWhole(t *testing.T) {
	t.Parallel()
	cliNewHome(t)
	reg := testregistry.Start(t, testregistry.Options{})
	key, pub := cliKeys(t, "a")
	dir := twoPlatformIndex(t, key)

	archive := filepath.Join(t.TempDir(), "one.tar")
	r := cliRun(t, "copy", "--platform", "linux/arm64", "oci:"+dir+":1", "oci-archive:"+archive+":1")
	if r.code != 0 || !strings.Contains(r.stderr, "whole index") {
		t.Fatalf("copy of a signed index for one platform: want success and a note on the whole index: exit %d\n%s", r.code, r.stderr)
	}
	cliMust(t, "unpack", "--verify-key", pub, "--platform", "linux/arm64", "oci-archive:"+archive+":1")

	// To a registry, and pulled from it into the store.
	cliMust(t, "copy", "--all-platforms", "oci:"+dir+":1", reg.Host+"/idx/cm:1")
	cliMust(t, "pull", reg.Host+"/idx/cm:1")
	cliMust(t, "unpack", "--pull", "never", "--verify-key", pub, "--platform", "linux/amd64", reg.Host+"/idx/cm:1")

	// copy --with-images too.
	withImages := filepath.Join(t.TempDir(), "images.tar")
	cliMust(t, "copy", "--with-images", "--platform", "linux/arm64", "oci:"+dir+":1", "oci-archive:"+withImages+":1")
	cliMust(t, "unpack", "--verify-key", pub, "--platform", "linux/arm64", "oci-archive:"+withImages+":1")

	// --no-referrers keeps the old meaning: one platform, unsigned.
	bare := filepath.Join(t.TempDir(), "bare.tar")
	cliMust(t, "copy", "--no-referrers", "--platform", "linux/arm64", "oci:"+dir+":1", "oci-archive:"+bare+":1")
	cliCheckError(t, cliRun(t, "unpack", "--verify-key", pub, "oci-archive:"+bare+":1"), "signature")
}

// push carries a signature made in the store, as copy does.
func TestCLIPushCarriesSignature(t *testing.T) {
	t.Parallel()
	cliNewHome(t)
	reg := testregistry.Start(t, testregistry.Options{})
	key, pub := cliKeys(t, "a")
	cliMust(t, "build", cliExampleDir("gateway-api-crds"), "-t", "crds:1")
	cliMust(t, "sign", "--key", key, "crds:1")
	cliMust(t, "verify", "--key", pub, "crds:1")
	cliMust(t, "push", "crds:1", reg.Host+"/pushed/crds:1")
	cliMust(t, "verify", "--key", pub, reg.Host+"/pushed/crds:1")
}

// An add-on set's mirror carries its OCI members' signatures, to an
// archive and to a registry.
func TestCLIMirrorCarriesSignatures(t *testing.T) {
	t.Parallel()
	cliNewHome(t)
	reg := testregistry.Start(t, testregistry.Options{})
	key, pub := cliKeys(t, "a")
	cliMust(t, "build", cliExampleDir("gateway-api-crds"), "-t", "crds:1")
	cliMust(t, "sign", "--key", key, "crds:1")
	cliMust(t, "copy", "crds:1", reg.Host+"/pushed/crds:1")
	cliMust(t, "verify", "--key", pub, reg.Host+"/pushed/crds:1")

	dir := filepath.Join(t.TempDir(), "layout")
	cliMust(t, "build", cliExampleDir("gateway-api-crds"), "--name", "crds", "--output", "oci:"+dir+":1")
	cliMust(t, "sign", "--key", key, "oci:"+dir+":1")
	set := t.TempDir()
	cliWriteFile(t, filepath.Join(set, "addons.yaml"), "apiVersion: addon.cncf.io/v1alpha1\nkind: AddonSet\naddons:\n- name: crds\n  source: oci:"+dir+":1\n- name: reg\n  source: "+reg.Host+"/pushed/crds:1\n")
	cliMust(t, "lock", "-f", filepath.Join(set, "addons.yaml"))
	archive := filepath.Join(set, "mirror.tar")
	cliMust(t, "mirror", "-f", filepath.Join(set, "addons.yaml"), "--to", "oci-archive:"+archive)
	cliMust(t, "verify", "--key", pub, "oci-archive:"+archive+":crds")
	cliMust(t, "verify", "--key", pub, "oci-archive:"+archive+":reg")
	var mirrored struct {
		Addons []struct {
			Name, Pinned string
		}
	}
	if err := json.Unmarshal([]byte(cliMust(t, "mirror", "-f", filepath.Join(set, "addons.yaml"), "--to", reg.Host+"/mirrored", "--json")), &mirrored); err != nil {
		t.Fatal(err)
	}
	if len(mirrored.Addons) != 2 {
		t.Fatalf("mirrored lock: %+v", mirrored)
	}
	for _, m := range mirrored.Addons {
		cliMust(t, "verify", "--key", pub, m.Pinned)
	}
}

// A copy --with-images that fails (an image that cannot be read) leaves
// the destination's tag where it was: images and lock are written first,
// the tag last (spec/image-lock-v1.md 4).
func TestCLICopyWithImagesFailureKeepsTag(t *testing.T) {
	t.Parallel()
	cliNewHome(t)
	reg := testregistry.Start(t, testregistry.Options{})
	cliMust(t, "build", cliExampleDir("gateway-api-crds"), "-t", "crds:1")
	tree := t.TempDir()
	cliWriteFile(t, filepath.Join(tree, "deploy.yaml"), "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app\nspec:\n  template:\n    spec:\n      containers:\n      - name: app\n        image: "+reg.Host+"/missing/app:1\n")
	cliMust(t, "build", tree, "-t", "app:2")

	dir := filepath.Join(t.TempDir(), "layout")
	for _, dst := range []string{reg.Host + "/air/x:1", "oci:" + dir + ":1", "x:1"} {
		t.Run(dst, func(t *testing.T) {
			first := strings.TrimSpace(cliMust(t, "copy", "--with-images", "-q", "crds:1", dst))
			_, want, _ := strings.Cut(first, "@")
			r := cliRun(t, "copy", "--with-images", "-q", "app:2", dst)
			cliCheckError(t, r, "missing/app:1")
			var got string
			switch {
			case strings.HasPrefix(dst, "oci:"):
				st, err := layout.Open(dir)
				if err != nil {
					t.Fatal(err)
				}
				d, err := st.Resolve("1")
				if err != nil {
					t.Fatal(err)
				}
				got = d.Digest.String()
			case strings.HasPrefix(dst, reg.Host):
				ref, err := name.ParseReference(dst)
				if err != nil {
					t.Fatal(err)
				}
				d, err := remote.Head(ref)
				if err != nil {
					t.Fatal(err)
				}
				got = d.Digest.String()
			default:
				var imgs []struct {
					Name   string `json:"name"`
					Digest string `json:"digest"`
				}
				if err := json.Unmarshal([]byte(cliMust(t, "images", "--json")), &imgs); err != nil {
					t.Fatal(err)
				}
				for _, im := range imgs {
					if im.Name == "x:1" {
						got = im.Digest
					}
				}
			}
			if got != want {
				t.Errorf("after a failed copy %s is %s, want the previous %s", dst, got, want)
			}
		})
	}
}

// --max-layers bounds what refers to the add-on too (issue 25: a
// 1,500-layer "SBOM" referrer was copied by copy --max-layers 10).
func TestCLIReferrersRespectMaxLayers(t *testing.T) {
	t.Parallel()
	cliNewHome(t)
	dir := filepath.Join(t.TempDir(), "layout")
	cliMust(t, "build", cliExampleDir("gateway-api-crds"), "--name", "crds", "--output", "oci:"+dir+":1")
	st, err := layout.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	subject, err := st.Resolve("1")
	if err != nil {
		t.Fatal(err)
	}
	subject.Annotations = nil
	img := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), "application/vnd.example.sbom")
	for i := 0; i < 20; i++ {
		if img, err = mutate.Append(img, mutate.Addendum{Layer: static.NewLayer([]byte(fmt.Sprint(i)), "application/json")}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := st.WriteImage(context.Background(), mutate.Subject(img, subject).(v1.Image), nil); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out")
	cliCheckError(t, cliRun(t, "copy", "--max-layers", "10", "oci:"+dir+":1", "oci:"+out+":1"), "layer count limit of 10")
	cliMust(t, "copy", "oci:"+dir+":1", "oci:"+filepath.Join(t.TempDir(), "ok")+":1")
}
