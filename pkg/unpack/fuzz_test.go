package unpack_test

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"path"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/addonpkg/addonpkg/pkg/archive"
	"github.com/addonpkg/addonpkg/pkg/mediatypes"
	"github.com/addonpkg/addonpkg/pkg/safetree"
	"github.com/addonpkg/addonpkg/pkg/unpack"
)

// fuzzLimits keep one fuzz run small.
var fuzzLimits = safetree.Limits{
	MaxAddonBytes: 4 << 20,
	MaxImageBytes: 8 << 20,
	MaxEntries:    1000,
	MaxFileBytes:  1 << 20,
	MaxPathLength: 512,
	MaxDepth:      16,
}

// fuzzSeeds are small valid and hostile layers, as plain tar, gzip and
// zstd; testdata/fuzz/FuzzFlatten holds more. Plain tars are kept to a few
// entries and lose their end-of-archive blocks (tar readers stop at a
// clean EOF too): every byte of a seed makes minimizing what the fuzzer
// finds slower.
func fuzzSeeds() [][]byte {
	valid := fuzzValidTar()
	whiteouts := tarBytes(dirE("addon/"), whiteout("addon", "gone"), opaque("addon/base"), file("addon/base/new", "n"),
		whiteout("", "addon"), opaque("."), file(".wh.top", ""), file("./addon/dot", "d"))
	gz := func(b []byte) []byte { return compress(b, mediatypes.Gzip) }
	return [][]byte{
		gz(valid),
		compress(valid, mediatypes.Zstd),
		trimTar(tarBytes(file("addon/cm.yaml", cmYAML), symlink("addon/l", "cm.yaml"))),
		gz(whiteouts),
		trimTar(tarBytes(file("../escape", "x"), file("/abs", "x"))),
		gz(tarBytes(symlink("addon/etc", "/etc"), symlink("addon/l", "../../x"), symlink("l", "../x"))),
		gz(tarBytes(dirE("addon/"), dirE("addon/sub/"), symlink("addon/d", "sub"), file("addon/d/x", "x"))),
		gz(tarBytes(file("addon/a", "1"), file("addon/a", "2"), hardlink("addon/h", "/etc/passwd"), hardlink("addon/g", "../x"))),
		gz(tarBytes(ent{name: "addon/null", typ: tar.TypeChar}, ent{name: "addon/fifo", typ: tar.TypeFifo}, ent{name: "fifo", typ: tar.TypeFifo})),
		gz(tarBytes(file("addon/caf\xe9", "x"), file("addon/"+strings.Repeat("d/", 20)+"f", "deep"), file(strings.Repeat("n", 600), "long"))),
		gz(tarBytes(file("addon/d", "file"), file("addon/d/x", "under a file"), dirE("addon/e/"), file("addon/e", "file over dir"))),
		{},
		[]byte("not a tar at all"),
		{0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00},
		{0x28, 0xb5, 0x2f, 0xfd, 0x00},
	}
}

// fuzzValidTar is a valid image-form layer using most entry kinds.
func fuzzValidTar() []byte {
	return tarBytes(dirE("addon/"), file("addon/cm.yaml", cmYAML), dirE("addon/base/"), file("addon/base/k.yaml", "a: 1\n"),
		symlink("addon/link.yaml", "cm.yaml"), hardlink("addon/hard.yaml", "addon/cm.yaml"), file("etc/junk", "x"),
		dirE("cm/"), file("cm/x.yaml", cmYAML))
}

// trimTar drops a tar stream's end-of-archive blocks.
func trimTar(b []byte) []byte {
	for len(b) >= 512 && bytes.Equal(b[len(b)-512:], make([]byte, 512)) {
		b = b[:len(b)-512]
	}
	return b
}

// checkAddon asserts what must hold of any tree the unpacker returns.
func checkAddon(t *testing.T, a *unpack.Addon) {
	t.Helper()
	if a.FS.Size() > fuzzLimits.MaxAddonBytes {
		t.Errorf("tree holds %d bytes, over MaxAddonBytes %d", a.FS.Size(), fuzzLimits.MaxAddonBytes)
	}
	err := fs.WalkDir(a.FS, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !fs.ValidPath(p) {
			t.Errorf("invalid path %q in the tree", p)
		}
		if p == "." {
			return nil
		}
		for _, part := range strings.Split(p, "/") {
			if strings.HasPrefix(part, ".wh.") {
				t.Errorf("whiteout marker %q kept in the tree", p)
			}
		}
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := fs.ReadLink(a.FS, p)
			if err != nil {
				return err
			}
			j := path.Join(path.Dir(p), target)
			if target == "" || path.IsAbs(target) || j == ".." || strings.HasPrefix(j, "../") {
				t.Errorf("symlink %q -> %q is absolute or leaves the tree", p, target)
			}
		case d.IsDir(), d.Type().IsRegular():
		default:
			t.Errorf("%q has type %v", p, d.Type())
		}
		return nil
	})
	if err != nil {
		t.Errorf("walk: %v", err)
	}
	id, err := archive.Identity(a.FS)
	if err != nil {
		t.Errorf("identity: %v", err)
	} else if id.String() != a.Identity {
		t.Errorf("Identity %s, the tree's is %s", a.Identity, id)
	}
}

// imageConfig is an OCI image config without diff_ids, so that any layer
// can unpack.
const imageConfig = `{"architecture":"amd64","os":"linux","rootfs":{"type":"layers","diff_ids":[]},"config":{}}`

func FuzzFlatten(f *testing.F) {
	for _, s := range fuzzSeeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, blob []byte) {
		ctx := context.Background()
		opts := unpack.Options{Limits: fuzzLimits}

		// The image form: the blob is the only layer, under /addon.
		img := artifactOf(t, types.OCIConfigJSON, "", []byte(imageConfig), nil, rawLayer(blob, types.OCILayer))
		if a, err := unpack.Image(ctx, img, opts); err == nil {
			if a.Form != mediatypes.FormImage || a.ContentDir != "/addon" {
				t.Errorf("form %s, content dir %s", a.Form, a.ContentDir)
			}
			checkAddon(t, a)
		}

		// A Flux artifact: the same blob, its root the tree.
		flux := artifactOf(t, mediatypes.FluxConfig, "", []byte("{}"), nil, rawLayer(blob, mediatypes.FluxContentGzip))
		fa, ferr := unpack.Image(ctx, flux, opts)
		if ferr == nil {
			checkAddon(t, fa)
		}

		// The artifact form: the same blob as a content layer, with a
		// config claiming the identity the Flux run found. Both read the
		// layer root the same way, so both must agree.
		id, kind := "sha256:"+strings.Repeat("0", 64), "manifests"
		if ferr == nil {
			id, kind = fa.Identity, string(fa.Config.Kind)
		}
		cfg := fmt.Sprintf(`{"specVersion":"v1","name":"fuzz","kind":%q,"contentRoot":"/","identity":%q,"inventory":{"objects":[]}}`, kind, id)
		art := artifactOf(t, mediatypes.AddonConfig, mediatypes.AddonConfig, []byte(cfg), nil,
			rawLayer(blob, mediatypes.AddonContentGzip))
		aa, aerr := unpack.Image(ctx, art, opts)
		switch {
		case aerr == nil && ferr == nil:
			checkAddon(t, aa)
			if aa.Identity != fa.Identity {
				t.Errorf("artifact identity %s, Flux identity %s", aa.Identity, fa.Identity)
			}
		case aerr == nil:
			t.Errorf("the artifact form unpacked what the Flux form refused (%v)", ferr)
		case ferr == nil:
			t.Errorf("the artifact form refused what the Flux form unpacked: %v", aerr)
		}
	})
}

// The fuzz harness reaches success: the valid seed unpacks in all three
// shapes, compressed or not.
func TestFuzzHarness(t *testing.T) {
	valid := fuzzValidTar()
	for i, blob := range [][]byte{valid, trimTar(valid), compress(valid, mediatypes.Gzip), compress(valid, mediatypes.Zstd)} {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			ctx := context.Background()
			opts := unpack.Options{Limits: fuzzLimits}
			img := artifactOf(t, types.OCIConfigJSON, "", []byte(imageConfig), nil, rawLayer(blob, types.OCILayer))
			a, err := unpack.Image(ctx, img, opts)
			if err != nil {
				t.Fatalf("image form: %v", err)
			}
			checkAddon(t, a)
			want := tree{"cm.yaml": F(cmYAML), "base": D, "base/k.yaml": F("a: 1\n"), "link.yaml": L("cm.yaml"), "hard.yaml": F(cmYAML)}
			if d := diffTrees(want, treeOf(t, a.FS)); d != "" {
				t.Errorf("image form tree:\n%s", d)
			}
			flux := artifactOf(t, mediatypes.FluxConfig, "", []byte("{}"), nil, rawLayer(blob, mediatypes.FluxContentGzip))
			fa, err := unpack.Image(ctx, flux, opts)
			if err != nil {
				t.Fatalf("flux form: %v", err)
			}
			checkAddon(t, fa)
			if _, ok := treeOf(t, fa.FS)["addon/cm.yaml"]; !ok {
				t.Errorf("flux tree lacks addon/cm.yaml:\n%s", listTree(treeOf(t, fa.FS)))
			}
		})
	}
}
