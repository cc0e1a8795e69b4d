package source_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/partial"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/addonpkg/addonpkg/pkg/errdef"
	"github.com/addonpkg/addonpkg/pkg/layout"
	"github.com/addonpkg/addonpkg/pkg/source"
)

// A layout named without a tag opens its one add-on even when what refers
// to it travels beside it: an SBOM with a subject, cosign's .sig tag.
// Two add-ons are still ambiguous.
func TestOpenLayoutBesideReferrers(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := layout.Init(dir)
	if err != nil {
		t.Fatal(err)
	}
	addon, err := random.Image(64, 1)
	if err != nil {
		t.Fatal(err)
	}
	d, err := st.WriteImage(ctx, addon, nil)
	if err != nil {
		t.Fatal(err)
	}
	sub, err := partial.Descriptor(addon)
	if err != nil {
		t.Fatal(err)
	}
	sbom, err := mutate.Append(mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), "application/spdx+json"),
		mutate.Addendum{Layer: static.NewLayer([]byte("{}"), "application/json")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.WriteImage(ctx, mutate.Subject(sbom, *sub).(v1.Image), nil); err != nil {
		t.Fatal(err)
	}
	sig, err := random.Image(32, 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.WriteImage(ctx, sig, nil, strings.Replace(d.Digest.String(), ":", "-", 1)+".sig"); err != nil {
		t.Fatal(err)
	}
	a, err := source.Open(ctx, source.Ref{Kind: source.KindLayout, Path: dir}, source.Options{})
	if err != nil {
		t.Fatal(err)
	}
	a.Close()
	if a.Digest != d.Digest {
		t.Errorf("opened %s, want the add-on %s", a.Digest, d.Digest)
	}

	other, err := random.Image(64, 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.WriteImage(ctx, other, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := source.Open(ctx, source.Ref{Kind: source.KindLayout, Path: dir}, source.Options{}); err == nil || !strings.Contains(err.Error(), "holds 2 manifests") {
		t.Errorf("two add-ons: err = %v, want \"holds 2 manifests\"", err)
	}
}

// oci:DIR:TAG finds a layout entry named as a build or the store names
// it (coredns:1.11); an exact ref name wins, and a tag two names share is
// ambiguous.
func TestLayoutTagOfStoreName(t *testing.T) {
	dir := t.TempDir()
	st, err := layout.Init(dir)
	if err != nil {
		t.Fatal(err)
	}
	write := func(name string) v1.Hash { return writeRandom(t, st, name) }
	open := func(s string) (v1.Hash, error) { return openDigest(t, s) }
	coredns := write("coredns:1.11")
	if got, err := open("oci:" + dir + ":1.11"); err != nil || got != coredns {
		t.Errorf("oci:DIR:1.11 = %v, %v; want coredns:1.11's %v", got, err, coredns)
	}
	write("other:1.11")
	if _, err := open("oci:" + dir + ":1.11"); err == nil || !strings.Contains(err.Error(), "ambiguous") {
		t.Errorf("a tag of two names: %v, want ambiguous", err)
	}
	exact := write("1.11")
	if got, err := open("oci:" + dir + ":1.11"); err != nil || got != exact {
		t.Errorf("an exact ref name: %v, %v; want %v", got, err, exact)
	}
	if _, err := open("oci:" + dir + ":2.0"); !errors.Is(err, errdef.ErrNotFound) {
		t.Errorf("an absent tag: %v, want errdef.ErrNotFound", err)
	}
}

// A ref name that is a whole reference, as skopeo writes it
// (oci:DIR:registry/repo:tag), opens from a layout and an archive,
// though Parse, which reads no disk, split it at the last colon. A path
// with a colon of its own that exists is still read as that path.
func TestLayoutFullReferenceName(t *testing.T) {
	root := t.TempDir()
	open := func(s string) (v1.Hash, error) { return openDigest(t, s) }
	write := func(dir, refName string) v1.Hash {
		st, err := layout.Init(dir)
		if err != nil {
			t.Fatal(err)
		}
		return writeRandom(t, st, refName)
	}
	dir := root + "/skopeo"
	want := write(dir, "localhost:5000/addons/coredns:1.11")
	write(dir, "other:1.11")
	archive := root + "/skopeo.tar"
	if err := layout.WriteArchive(dir, archive); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"oci:" + dir + ":localhost:5000/addons/coredns:1.11", "oci-archive:" + archive + ":localhost:5000/addons/coredns:1.11"} {
		if got, err := open(s); err != nil || got != want {
			t.Errorf("%s = %v, %v; want %v", s, got, err, want)
		}
	}
	colon := root + "/a:b"
	inColon := write(colon, "1.0")
	if got, err := open("oci:" + colon + ":1.0"); err != nil || got != inColon {
		t.Errorf("a path with a colon: %v, %v; want %v", got, err, inColon)
	}
	if _, err := open("oci:" + dir + ":localhost:5000/addons/coredns:2"); !errors.Is(err, errdef.ErrNotFound) {
		t.Errorf("a full name the layout does not hold: %v, want ErrNotFound", err)
	}
}

// openDigest opens the SOURCE s and gives its digest.
func openDigest(t *testing.T, s string) (v1.Hash, error) {
	t.Helper()
	ref, err := source.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	a, err := source.Open(context.Background(), ref, source.Options{})
	if err != nil {
		return v1.Hash{}, err
	}
	defer a.Close()
	return a.Digest, nil
}

// writeRandom writes a random image into st under name.
func writeRandom(t *testing.T, st *layout.Store, name string) v1.Hash {
	t.Helper()
	img, err := random.Image(64, 1)
	if err != nil {
		t.Fatal(err)
	}
	d, err := st.WriteImage(context.Background(), img, nil, name)
	if err != nil {
		t.Fatal(err)
	}
	return d.Digest
}
