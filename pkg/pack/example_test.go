package pack_test

import (
	"fmt"
	"log"
	"time"

	"github.com/addonpkg/addonpkg/pkg/addon"
	"github.com/addonpkg/addonpkg/pkg/filetree"
	"github.com/addonpkg/addonpkg/pkg/mediatypes"
	"github.com/addonpkg/addonpkg/pkg/pack"
)

// Lay one tree out in both forms. pack does not render: the config's
// kind and inventory are the caller's (build derives them); Assemble
// fills in the content root and the tree's identity. The same tree,
// config and time give the same digest, in every run and on every
// machine.
func ExampleAssemble() {
	b := filetree.NewBuilder()
	_ = b.WriteFile("configmap.yaml", []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: hello\n"), 0o644)
	tree := b.FS()

	for _, f := range []pack.Format{pack.FormatImage, pack.FormatArtifact} {
		opts := pack.Options{Format: f, Compression: mediatypes.Gzip, Created: time.Unix(0, 0).UTC()}
		layer, err := pack.Layer(tree, opts)
		if err != nil {
			log.Fatal(err)
		}
		cfg := &addon.Config{SpecVersion: "v1", Name: "hello", Version: "1.0.0", Kind: addon.KindManifests}
		img, err := pack.Assemble(layer, cfg, opts)
		if err != nil {
			log.Fatal(err)
		}
		m, err := img.Manifest()
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(f, cfg.ContentRoot, m.Layers[0].MediaType)
	}
	// Output:
	// image /addon application/vnd.oci.image.layer.v1.tar+gzip
	// artifact / application/vnd.cncf.addon.content.v1.tar+gzip
}
