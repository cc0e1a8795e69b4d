package unpack_test

import (
	"bytes"
	"context"
	"io"
	"testing"

	"github.com/containerd/stargz-snapshotter/estargz"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/addonpkg/addonpkg/pkg/mediatypes"
	"github.com/addonpkg/addonpkg/pkg/unpack"
)

// estargzLayer converts a tar to eStargz with the stargz snapshotter's
// own builder (what nerdctl and ctr-remote convert with): a gzip member
// per file, the landmark .no.prefetch.landmark first, the table of
// contents stargz.index.json last, then a footer member.
func estargzLayer(t *testing.T, tarb []byte) (*testLayer, string) {
	t.Helper()
	blob, err := estargz.Build(io.NewSectionReader(bytes.NewReader(tarb), 0, int64(len(tarb))))
	if err != nil {
		t.Fatal(err)
	}
	defer blob.Close()
	b, err := io.ReadAll(blob)
	if err != nil {
		t.Fatal(err)
	}
	diffID, err := v1.NewHash(blob.DiffID().String())
	if err != nil {
		t.Fatal(err)
	}
	return &testLayer{blob: b, mt: types.OCILayer, diffID: diffID}, blob.TOCDigest().String()
}

// An add-on whose layer was converted to eStargz reads as the same tree
// as the plain one, whatever its content directory. Under /addon the
// entries eStargz adds at the layer root were outside the tree anyway;
// with the whole filesystem as content (io.cncf.addon.content: /) the
// table of contents and the landmark landed in it as files, and changed
// the identity. Without the descriptor's annotation they are files like
// any other: only a layer that says it is eStargz has them as metadata.
func TestEstargzLayerReadsAsThePlainOne(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name    string
		labels  map[string]string
		entries []ent
	}{
		{"content /addon", nil, []ent{dirE("addon/"), dirE("addon/base/"), file("addon/base/cm.yaml", cmYAML), file("addon/kustomization.yaml", "resources: [base/cm.yaml]\n")}},
		{"content /", map[string]string{mediatypes.LabelContent: "/"}, []ent{dirE("base/"), file("base/cm.yaml", cmYAML), file("kustomization.yaml", "resources: [base/cm.yaml]\n")}},
	} {
		t.Run(c.name, func(t *testing.T) {
			tarb := tarBytes(c.entries...)
			want, err := unpack.Image(ctx, imageOf(t, imageOpts{labels: c.labels}, tarLayer(tarb, mediatypes.Gzip, types.OCILayer)), unpack.Options{})
			if err != nil {
				t.Fatal(err)
			}
			el, toc := estargzLayer(t, tarb)
			img, err := mutate.Append(imageOf(t, imageOpts{labels: c.labels}), mutate.Addendum{Layer: el, Annotations: map[string]string{mediatypes.AnnotationEstargzTOC: toc}})
			if err != nil {
				t.Fatal(err)
			}
			got, err := unpack.Image(ctx, img, unpack.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if d := diffTrees(treeOf(t, want.FS), treeOf(t, got.FS)); d != "" || got.Identity != want.Identity {
				t.Errorf("eStargz: identity %s, want %s; tree differs:\n%s", got.Identity, want.Identity, d)
			}

			if c.labels == nil {
				return
			}
			bare, err := unpack.Image(ctx, imageOf(t, imageOpts{labels: c.labels}, el), unpack.Options{})
			if err != nil {
				t.Fatal(err)
			}
			tr := treeOf(t, bare.FS)
			if _, ok := tr[estargz.TOCTarName]; !ok {
				t.Errorf("without the annotation, %s is not a file of the tree: %s", estargz.TOCTarName, listTree(tr))
			}
		})
	}
}
