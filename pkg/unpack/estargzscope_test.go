package unpack_test

import (
	"context"
	"fmt"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/addonpkg/addonpkg/pkg/mediatypes"
	"github.com/addonpkg/addonpkg/pkg/unpack"
)

// eStargz extends the gzip layers of images (its specification names
// application/vnd.oci.image.layer.v1.tar+gzip and Docker's
// rootfs.diff.tar.gzip), and what it adds at a layer's root, its table
// of contents and landmarks, are regular files. The three names were
// left out of the tree in any layer whose descriptor carried the
// annotation: the annotation alone hid an add-on's own root files
// stargz.index.json or .prefetch.landmark in the artifact form or a
// Flux artifact, whose layers no eStargz converter writes and which
// Flux reads as files, and hid a directory of that name (whose files
// stayed). They are files of the tree there; in an image layer, only
// regular files of those names at the layer's root are eStargz's: below
// it, and in /addon, they are the add-on's.
func TestEstargzNamesOnlyInImageLayers(t *testing.T) {
	const cmJSON = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"index"}}`
	ctx := context.Background()
	toc := map[string]string{mediatypes.AnnotationEstargzTOC: "sha256:" + fmt.Sprintf("%064x", 1)}
	withAnnotation := func(l *testLayer) *testLayer { l.annotations = toc; return l }
	own := tree{"stargz.index.json": F(cmJSON), ".prefetch.landmark": F("x"), "cm.yaml": F(cmYAML)}
	ownEntries := []ent{file("stargz.index.json", cmJSON), file(".prefetch.landmark", "x"), file("cm.yaml", cmYAML)}

	for _, c := range []struct {
		name string
		img  func(t *testing.T) v1.Image
		want tree
	}{
		{"artifact form", func(t *testing.T) v1.Image {
			cfg := fmt.Sprintf(`{"specVersion":"v1","name":"demo","version":"1.0.0","kind":"manifests","contentRoot":"/","identity":%q}`, identityOf(t, own))
			l := withAnnotation(tarLayer(tarBytes(ownEntries...), mediatypes.Gzip, mediatypes.AddonContentGzip))
			return artifactOf(t, mediatypes.AddonConfig, mediatypes.AddonConfig, []byte(cfg), nil, l)
		}, own},
		{"Flux artifact", func(t *testing.T) v1.Image {
			l := withAnnotation(tarLayer(tarBytes(ownEntries...), mediatypes.Gzip, mediatypes.FluxContentGzip))
			return artifactOf(t, mediatypes.FluxConfig, "", []byte("{}"), nil, l)
		}, own},
		{"image form: a directory and a link of those names", func(t *testing.T) v1.Image {
			l := tarLayer(tarBytes(dirE("stargz.index.json/"), file("stargz.index.json/cm.yaml", cmYAML), symlink(".no.prefetch.landmark", "cm.yaml"), file("cm.yaml", cmYAML)),
				mediatypes.Gzip, types.OCILayer)
			img, err := mutate.Append(imageOf(t, imageOpts{labels: map[string]string{mediatypes.LabelContent: "/"}}), mutate.Addendum{Layer: l, Annotations: toc})
			if err != nil {
				t.Fatal(err)
			}
			return img
		}, tree{"stargz.index.json": D, "stargz.index.json/cm.yaml": F(cmYAML), ".no.prefetch.landmark": L("cm.yaml"), "cm.yaml": F(cmYAML)}},
		{"image form: the names below the root", func(t *testing.T) v1.Image {
			l := tarLayer(tarBytes(dirE("base/"), file("base/stargz.index.json", cmJSON), file("base/.prefetch.landmark", "x"), file("cm.yaml", cmYAML)),
				mediatypes.Gzip, types.OCILayer)
			img, err := mutate.Append(imageOf(t, imageOpts{labels: map[string]string{mediatypes.LabelContent: "/"}}), mutate.Addendum{Layer: l, Annotations: toc})
			if err != nil {
				t.Fatal(err)
			}
			return img
		}, tree{"base": D, "base/stargz.index.json": F(cmJSON), "base/.prefetch.landmark": F("x"), "cm.yaml": F(cmYAML)}},
		{"image form: the names in /addon", func(t *testing.T) v1.Image {
			l := tarLayer(tarBytes(dirE("addon/"), file("addon/stargz.index.json", cmJSON), file("addon/.no.prefetch.landmark", "x"), file("addon/cm.yaml", cmYAML), file(".no.prefetch.landmark", "\x0f")),
				mediatypes.Gzip, types.OCILayer)
			img, err := mutate.Append(imageOf(t, imageOpts{}), mutate.Addendum{Layer: l, Annotations: toc})
			if err != nil {
				t.Fatal(err)
			}
			return img
		}, tree{"stargz.index.json": F(cmJSON), ".no.prefetch.landmark": F("x"), "cm.yaml": F(cmYAML)}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := unpack.Image(ctx, c.img(t), unpack.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if d := diffTrees(c.want, treeOf(t, got.FS)); d != "" {
				t.Errorf("tree differs:\n%s", d)
			}
		})
	}
}
