package unpack_test

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"runtime"
	"strconv"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/addonpkg/addonpkg/pkg/mediatypes"
	"github.com/addonpkg/addonpkg/pkg/safetree"
	"github.com/addonpkg/addonpkg/pkg/unpack"
)

// flattenCase is one multi-layer image (or index) and the tree it must
// unpack to.
type flattenCase struct {
	name string
	img  func(t testing.TB) v1.Image      // either this
	idx  func(t testing.TB) v1.ImageIndex // or this
	opts unpack.Options

	want       tree
	form       mediatypes.Form // "" means image
	contentDir string          // "" means /addon
	check      func(t *testing.T, a *unpack.Addon)
}

// layers is shorthand for an OCI image-form image of gzip layers given as
// entry lists, bottom first.
func layers(ls ...[]ent) func(t testing.TB) v1.Image {
	return func(t testing.TB) v1.Image {
		var vl []v1.Layer
		for _, es := range ls {
			vl = append(vl, ociLayer(es...))
		}
		return imageOf(t, imageOpts{}, vl...)
	}
}

func es(e ...ent) []ent { return e }

const cmYAML = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: demo\ndata:\n  k: v\n"

// twoPlatformIndex is an OCI index with a linux/amd64 and a linux/arm64
// image, each with its own tree.
func twoPlatformIndex(t testing.TB) v1.ImageIndex {
	amd := imageOf(t, imageOpts{}, ociLayer(dirE("addon/"), file("addon/arch", "amd64")))
	arm := imageOf(t, imageOpts{}, ociLayer(dirE("addon/"), file("addon/arch", "arm64"), file("addon/only-arm", "x")))
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	return mutate.AppendManifests(idx,
		mutate.IndexAddendum{Add: amd, Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: "amd64"}}},
		mutate.IndexAddendum{Add: arm, Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: "arm64"}}},
	)
}

func flattenCases() []flattenCase {
	return []flattenCase{
		{
			name: "upper file replaces lower file",
			img: layers(
				es(dirE("addon/"), file("addon/a.yaml", "one"), file("addon/b.yaml", "b")),
				es(dirE("addon/"), file("addon/a.yaml", "two")),
			),
			want: tree{"a.yaml": F("two"), "b.yaml": F("b")},
		},
		{
			name: "three layers, each replacing the one below",
			img: layers(
				es(file("addon/a", "1"), file("addon/b", "1"), file("addon/c", "1")),
				es(file("addon/b", "2"), file("addon/c", "2")),
				es(file("addon/c", "3")),
			),
			want: tree{"a": F("1"), "b": F("2"), "c": F("3")},
		},
		{
			name: "whiteout deletes a lower file and a lower directory",
			img: layers(
				es(dirE("addon/"), file("addon/f", "gone"), dirE("addon/d/"), file("addon/d/x", "gone"),
					dirE("addon/d/sub/"), file("addon/d/sub/y", "gone"), file("addon/keep", "kept")),
				es(dirE("addon/"), whiteout("addon", "f"), whiteout("addon", "d")),
			),
			want: tree{"keep": F("kept")},
		},
		{
			name: "whiteout in a subdirectory and of a missing path",
			img: layers(
				es(file("addon/d/x", "gone"), file("addon/d/y", "kept")),
				es(whiteout("addon/d", "x"), whiteout("addon/d", "never-was"), whiteout("addon/nodir", "z")),
			),
			want: tree{"d": D, "d/y": F("kept")},
		},
		{
			name: "opaque directory hides lower contents, keeps its own layer's files",
			img: layers(
				es(dirE("addon/"), dirE("addon/d/"), file("addon/d/old", "gone"), dirE("addon/d/sub/"),
					file("addon/d/sub/old2", "gone"), file("addon/other", "kept")),
				es(dirE("addon/d/"), opaque("addon/d"), file("addon/d/new", "new")),
			),
			want: tree{"d": D, "d/new": F("new"), "other": F("kept")},
		},
		{
			name: "opaque marker after the layer's own files in tar order",
			img: layers(
				es(file("addon/d/old", "gone"), file("addon/d/same", "old")),
				es(dirE("addon/d/"), file("addon/d/new", "new"), file("addon/d/same", "new"), opaque("addon/d")),
			),
			want: tree{"d": D, "d/new": F("new"), "d/same": F("new")},
		},
		{
			name: "opaque directory without new files stays, empty",
			img: layers(
				es(file("addon/d/old", "gone"), file("addon/top", "t")),
				es(dirE("addon/d/"), opaque("addon/d")),
			),
			want: tree{"d": D, "top": F("t")},
		},
		{
			name: "opaque directory two layers down; the middle layer's files stay",
			img: layers(
				es(file("addon/d/bottom", "gone")),
				es(dirE("addon/d/"), opaque("addon/d"), file("addon/d/middle", "m")),
				es(file("addon/d/top", "t")),
			),
			want: tree{"d": D, "d/middle": F("m"), "d/top": F("t")},
		},
		{
			name: "a whiteout never removes what its own layer wrote",
			img: layers(
				es(file("addon/a", "old a"), file("addon/b", "old b"), file("addon/c", "old c"), file("addon/d/x", "old x")),
				es(
					file("addon/a", "new a"), whiteout("addon", "a"), // entry, then its whiteout
					whiteout("addon", "b"), file("addon/b", "new b"), // whiteout, then the entry
					whiteout("addon", "d"), dirE("addon/d/"), file("addon/d/y", "new y"),
				),
			),
			want: tree{"a": F("new a"), "b": F("new b"), "c": F("old c"), "d": D, "d/y": F("new y")},
		},
		{
			name: "whiteout of the content directory (.wh.addon at the root) hides everything lower",
			img: layers(
				es(dirE("addon/"), file("addon/old", "gone"), file("addon/d/x", "gone")),
				es(file("addon/mid", "gone too")),
				es(whiteout("", "addon"), dirE("addon/"), file("addon/new", "new")),
			),
			want: tree{"new": F("new")},
		},
		{
			name: "whiteout of the content directory's parent hides everything lower",
			img: func(t testing.TB) v1.Image {
				return imageOf(t, imageOpts{labels: map[string]string{mediatypes.LabelContent: "/srv/addon"}},
					ociLayer(file("srv/addon/old", "gone"), file("srv/other", "junk")),
					ociLayer(whiteout("", "srv"), file("srv/addon/new", "new")),
				)
			},
			want:       tree{"new": F("new")},
			contentDir: "/srv/addon",
		},
		{
			name: "opaque root hides everything lower",
			img: layers(
				es(file("addon/old", "gone")),
				es(opaque("."), file("addon/new", "new")),
			),
			want: tree{"new": F("new")},
		},
		{
			name: "upper file replaces a lower directory",
			img: layers(
				es(dirE("addon/d/"), file("addon/d/x", "gone"), dirE("addon/d/sub/"), file("addon/d/sub/y", "gone"), file("addon/z", "z")),
				es(file("addon/d", "now a file")),
			),
			want: tree{"d": F("now a file"), "z": F("z")},
		},
		{
			// spec 4.4 rule 3: the middle layer's file replaces the bottom
			// directory, whose whole subtree goes; the top layer's new
			// directory does not bring it back (umoci agrees).
			name: "a middle layer's file deletes a lower directory that an upper layer makes again",
			img: layers(
				es(dirE("addon/"), dirE("addon/d/"), file("addon/d/old", "gone"), dirE("addon/d/sub/"), file("addon/d/sub/x", "gone")),
				es(file("addon/d", "a file for a while")),
				es(dirE("addon/d/"), file("addon/d/new", "new")),
			),
			want: tree{"d": D, "d/new": F("new")},
		},
		{
			name: "a middle layer's symlink deletes a lower directory that an upper layer makes again",
			img: layers(
				es(dirE("addon/"), dirE("addon/d/"), file("addon/d/old", "gone"), file("addon/t", "t")),
				es(symlink("addon/d", "t")),
				es(dirE("addon/d/"), file("addon/d/new", "new")),
			),
			want: tree{"d": D, "d/new": F("new"), "t": F("t")},
		},
		{
			name: "upper directory replaces a lower file",
			img: layers(
				es(file("addon/f", "was a file"), file("addon/z", "z")),
				es(dirE("addon/f/"), file("addon/f/inner", "inner")),
			),
			want: tree{"f": D, "f/inner": F("inner"), "z": F("z")},
		},
		{
			name: "middle directory entry replaces a lower file; the top layer writes into it",
			img: layers(
				es(dirE("addon/"), file("addon/f", "was a file")),
				es(dirE("addon/f/"), file("addon/f/x", "x")),
				es(file("addon/f/y", "y")),
			),
			want: tree{"f": D, "f/x": F("x"), "f/y": F("y")},
		},
		{
			// The top layer's addon/f/y does not pass through a link: the
			// middle layer made addon/f a directory again (umoci agrees).
			name: "middle directory entry replaces a lower symlink; the top layer writes into it",
			img: layers(
				es(dirE("addon/"), dirE("addon/sub/"), symlink("addon/f", "sub")),
				es(dirE("addon/f/"), file("addon/f/x", "x")),
				es(file("addon/f/y", "y")),
			),
			want: tree{"f": D, "f/x": F("x"), "f/y": F("y"), "sub": D},
		},
		{
			name: "whiteout of a lower symlink; the upper layer makes a directory there",
			img: layers(
				es(dirE("addon/"), dirE("addon/sub/"), symlink("addon/f", "sub")),
				es(whiteout("addon", "f"), file("addon/f/x", "x")),
			),
			want: tree{"f": D, "f/x": F("x"), "sub": D},
		},
		{
			name: "upper symlink replaces a lower directory",
			img: layers(
				es(file("addon/d/x", "gone"), file("addon/target/y", "y")),
				es(symlink("addon/d", "target")),
			),
			want: tree{"d": L("target"), "target": D, "target/y": F("y")},
		},
		{
			name: "directories of two layers merge",
			img: layers(
				es(dirE("addon/d/"), file("addon/d/low", "l")),
				es(dirE("addon/d/"), file("addon/d/up", "u")),
			),
			want: tree{"d": D, "d/low": F("l"), "d/up": F("u")},
		},
		{
			name: "entries outside /addon are ignored",
			img: layers(
				es(dirE("etc/"), file("etc/passwd", "root:x:0:0"), file("usr/bin/sh", "ELF"), file("addonx/y", "not addon"),
					file("add", "no"), dirE("addon/"), file("addon/a", "a")),
				es(whiteout("etc", "passwd"), opaque("usr"), file("tmp/x", "x")),
			),
			want: tree{"a": F("a")},
		},
		{
			name: "./addon/x style names",
			img: layers(
				es(dirE("./"), dirE("./addon/"), file("./addon/x", "gone"), dirE("./addon/d/"), file("./addon/d/y", "y")),
				es(dirE("./"), whiteout("./addon", "x"), file("./addon/z", "z"), file("addon//w", "w"), file("addon/./v", "v")),
			),
			want: tree{"d": D, "d/y": F("y"), "z": F("z"), "w": F("w"), "v": F("v")},
		},
		{
			name: "zstd layers",
			img: func(t testing.TB) v1.Image {
				return imageOf(t, imageOpts{},
					tarLayer(tarBytes(file("addon/a", "gone"), file("addon/b", "b")), mediatypes.Zstd, types.OCILayerZStd),
					tarLayer(tarBytes(whiteout("addon", "a"), file("addon/c", "c")), mediatypes.Zstd, types.OCILayerZStd),
				)
			},
			want: tree{"b": F("b"), "c": F("c")},
		},
		{
			name: "uncompressed layers",
			img: func(t testing.TB) v1.Image {
				return imageOf(t, imageOpts{},
					tarLayer(tarBytes(file("addon/a", "gone"), file("addon/b", "b")), mediatypes.None, types.OCIUncompressedLayer),
					tarLayer(tarBytes(whiteout("addon", "a"), file("addon/c", "c")), mediatypes.None, types.OCIUncompressedLayer),
				)
			},
			want: tree{"b": F("b"), "c": F("c")},
		},
		{
			name: "mislabelled layers are read by their magic bytes",
			img: func(t testing.TB) v1.Image {
				return imageOf(t, imageOpts{},
					// gzip labelled as an uncompressed tar
					tarLayer(tarBytes(file("addon/a", "gzip as tar")), mediatypes.Gzip, types.OCIUncompressedLayer),
					// zstd labelled as gzip
					tarLayer(tarBytes(file("addon/b", "zstd as gzip")), mediatypes.Zstd, types.OCILayer),
					// plain tar labelled as zstd
					tarLayer(tarBytes(file("addon/c", "tar as zstd")), mediatypes.None, types.OCILayerZStd),
				)
			},
			want: tree{"a": F("gzip as tar"), "b": F("zstd as gzip"), "c": F("tar as zstd")},
		},
		{
			name: "mixed compressions across layers",
			img: func(t testing.TB) v1.Image {
				return imageOf(t, imageOpts{},
					tarLayer(tarBytes(file("addon/a", "1"), file("addon/b", "1")), mediatypes.None, types.OCIUncompressedLayer),
					tarLayer(tarBytes(file("addon/b", "2"), file("addon/c", "2")), mediatypes.Zstd, types.OCILayerZStd),
					tarLayer(tarBytes(whiteout("addon", "a")), mediatypes.Gzip, types.OCILayer),
				)
			},
			want: tree{"b": F("2"), "c": F("2")},
		},
		{
			name: "Docker schema 2 image with rootfs.diff.tar.gzip layers",
			img: func(t testing.TB) v1.Image {
				img := imageOf(t, imageOpts{docker: true},
					tarLayer(tarBytes(dirE("addon/"), file("addon/a", "gone"), file("addon/b", "b")), mediatypes.Gzip, types.DockerLayer),
					tarLayer(tarBytes(whiteout("addon", "a"), file("addon/c", "c")), mediatypes.Gzip, types.DockerLayer),
				)
				if mt, _ := img.MediaType(); mt != types.DockerManifestSchema2 {
					t.Fatalf("built a %s, want a Docker manifest", mt)
				}
				return img
			},
			want: tree{"b": F("b"), "c": F("c")},
			check: func(t *testing.T, a *unpack.Addon) {
				if a.Manifest.MediaType != types.DockerManifestSchema2 || a.Manifest.Config.MediaType != types.DockerConfigJSON {
					t.Errorf("manifest %s, config %s: not a Docker image", a.Manifest.MediaType, a.Manifest.Config.MediaType)
				}
			},
		},
		{
			name: "OCI image manifest and config",
			img: layers(
				es(dirE("addon/"), file("addon/a", "a")),
				es(dirE("addon/"), file("addon/b", "b")),
			),
			want: tree{"a": F("a"), "b": F("b")},
			check: func(t *testing.T, a *unpack.Addon) {
				if a.Manifest.MediaType != types.OCIManifestSchema1 || a.Manifest.Config.MediaType != types.OCIConfigJSON {
					t.Errorf("manifest %s, config %s: not an OCI image", a.Manifest.MediaType, a.Manifest.Config.MediaType)
				}
			},
		},
		{
			name: "index with two platforms, linux/amd64 chosen",
			idx:  twoPlatformIndex,
			opts: unpack.Options{Platform: &v1.Platform{OS: "linux", Architecture: "amd64"}},
			want: tree{"arch": F("amd64")},
		},
		{
			name: "index with two platforms, linux/arm64 chosen",
			idx:  twoPlatformIndex,
			opts: unpack.Options{Platform: &v1.Platform{OS: "linux", Architecture: "arm64"}},
			want: tree{"arch": F("arm64"), "only-arm": F("x")},
		},
		{
			name: "index with one entry and no platform",
			idx: func(t testing.TB) v1.ImageIndex {
				img := imageOf(t, imageOpts{}, ociLayer(file("addon/only", "one")))
				return mutate.AppendManifests(mutate.IndexMediaType(empty.Index, types.OCIImageIndex), mutate.IndexAddendum{Add: img})
			},
			want: tree{"only": F("one")},
		},
		{
			name: "relative symlinks inside the tree are kept",
			img: layers(
				es(file("addon/real.yaml", cmYAML), symlink("addon/link.yaml", "real.yaml"), dirE("addon/d/"),
					symlink("addon/d/up.yaml", "../real.yaml"), symlink("addon/dirlink", "d")),
				es(symlink("addon/d/self", "./up.yaml")),
			),
			want: tree{"real.yaml": F(cmYAML), "link.yaml": L("real.yaml"), "d": D, "d/up.yaml": L("../real.yaml"),
				"d/self": L("./up.yaml"), "dirlink": L("d")},
			check: func(t *testing.T, a *unpack.Addon) {
				for p, want := range map[string]string{"link.yaml": "real.yaml", "d/up.yaml": "../real.yaml"} {
					got, err := fs.ReadLink(a.FS, p)
					if err != nil || got != want {
						t.Errorf("ReadLink(%s) = %q, %v; want %q", p, got, err, want)
					}
				}
				// Links are followed inside the tree.
				if b, err := fs.ReadFile(a.FS, "d/up.yaml"); err != nil || string(b) != cmYAML {
					t.Errorf("ReadFile through d/up.yaml = %q, %v", b, err)
				}
			},
		},
		{
			name: "hardlink to a file of the same layer",
			img: layers(
				es(file("addon/a", "shared"), hardlink("addon/b", "addon/a"), hardlink("addon/c", "./addon/a")),
			),
			want: tree{"a": F("shared"), "b": F("shared"), "c": F("shared")},
		},
		{
			// spec 4.4 and 9.4: b is a hard link to a file present at that
			// point; an upper layer then replaces a. b keeps a's old bytes.
			name: "hardlink whose target an upper layer replaced",
			img: layers(
				es(file("addon/a", "old"), hardlink("addon/b", "addon/a")),
				es(file("addon/a", "new")),
			),
			want: tree{"a": F("new"), "b": F("old")},
		},
		{
			name: "hardlink whose target an upper layer deleted",
			img: layers(
				es(file("addon/a", "old"), hardlink("addon/b", "addon/a")),
				es(whiteout("addon", "a"), file("addon/c", "c")),
			),
			want: tree{"b": F("old"), "c": F("c")},
		},
		{
			name: "hardlink whose target's directory an upper layer replaced with a file",
			img: layers(
				es(dirE("addon/"), dirE("addon/d/"), file("addon/d/a", "old"), hardlink("addon/b", "addon/d/a")),
				es(file("addon/d", "now a file")),
			),
			want: tree{"b": F("old"), "d": F("now a file")},
		},
		{
			// Limits bound the add-on tree; a file an upper layer deleted is
			// not in it ("content that an upper layer deletes is never
			// held", says the package doc).
			name: "a deleted lower file over MaxFileBytes does not count",
			img: layers(
				es(dirE("addon/"), file("addon/big", strings.Repeat("b", 2000)), file("addon/keep", "k")),
				es(whiteout("addon", "big")),
			),
			opts: unpack.Options{Limits: safetree.Limits{MaxFileBytes: 1000}},
			want: tree{"keep": F("k")},
		},
		{
			name: "replaced lower files do not count against MaxAddonBytes",
			img: layers(
				es(dirE("addon/"), file("addon/a", strings.Repeat("1", 2000))),
				es(file("addon/a", strings.Repeat("2", 2000))),
			),
			opts: unpack.Options{Limits: safetree.Limits{MaxAddonBytes: 3000}},
			want: tree{"a": F(strings.Repeat("2", 2000))},
		},
		{
			name: "an opaque directory's hidden lower files do not count against MaxAddonBytes",
			img: layers(
				es(dirE("addon/"), file("addon/d/x", strings.Repeat("x", 1500)), file("addon/d/y", strings.Repeat("y", 1500))),
				es(dirE("addon/d/"), opaque("addon/d"), file("addon/d/z", strings.Repeat("z", 1500))),
			),
			opts: unpack.Options{Limits: safetree.Limits{MaxAddonBytes: 2048}},
			want: tree{"d": D, "d/z": F(strings.Repeat("z", 1500))},
		},
		{
			name: "artifact form: two content layers, whiteout in the second",
			img: func(t testing.TB) v1.Image {
				want := tree{"cm.yaml": F(cmYAML), "base": D, "base/keep.yaml": F(cmYAML + "# keep\n")}
				cfg := fmt.Sprintf(`{"specVersion":"v1","name":"demo","version":"1.0.0","kind":"manifests","contentRoot":"/","identity":%q,"inventory":{"objects":[{"apiVersion":"v1","kind":"ConfigMap","name":"demo"}]}}`, identityOf(t, want))
				l1 := tarLayer(tarBytes(dirE("base/"), file("base/keep.yaml", cmYAML+"# keep\n"), file("base/old.yaml", "gone"), file("cm.yaml", "old")),
					mediatypes.Gzip, mediatypes.AddonContentGzip)
				l2 := tarLayer(tarBytes(whiteout("base", "old.yaml"), file("cm.yaml", cmYAML)),
					mediatypes.Zstd, mediatypes.AddonContentZstd)
				return artifactOf(t, mediatypes.AddonConfig, mediatypes.AddonConfig, []byte(cfg), nil, l1, l2)
			},
			want:       tree{"cm.yaml": F(cmYAML), "base": D, "base/keep.yaml": F(cmYAML + "# keep\n")},
			form:       mediatypes.FormArtifact,
			contentDir: "/",
			check: func(t *testing.T, a *unpack.Addon) {
				if a.Derived || a.Config.Name != "demo" || a.Config.Version != "1.0.0" || a.Config.Identity != a.Identity {
					t.Errorf("config %+v (derived %v), identity %s", a.Config, a.Derived, a.Identity)
				}
				if len(a.Config.Inventory.Objects) != 1 {
					t.Errorf("inventory %+v, want the config's", a.Config.Inventory)
				}
			},
		},
		{
			name: "Flux artifact",
			img: func(t testing.TB) v1.Image {
				l := tarLayer(tarBytes(file("cm.yaml", cmYAML), dirE("apps/"), file("apps/app.yaml", cmYAML)),
					mediatypes.Gzip, mediatypes.FluxContentGzip)
				return artifactOf(t, mediatypes.FluxConfig, "", []byte("{}"),
					map[string]string{"org.opencontainers.image.source": "https://example.com/repo"}, l)
			},
			want:       tree{"cm.yaml": F(cmYAML), "apps": D, "apps/app.yaml": F(cmYAML)},
			form:       mediatypes.FormFlux,
			contentDir: "/",
			check: func(t *testing.T, a *unpack.Addon) {
				if !a.Derived || a.Config.Source != "https://example.com/repo" {
					t.Errorf("config %+v, derived %v", a.Config, a.Derived)
				}
			},
		},
		{
			name: "ORAS directory artifact",
			img: func(t testing.TB) v1.Image {
				l := tarLayer(tarBytes(dirE("manifests/"), file("manifests/cm.yaml", cmYAML), dirE("manifests/sub/"), file("manifests/sub/b.yaml", cmYAML)),
					mediatypes.Gzip, types.OCILayer)
				l.annotations = map[string]string{mediatypes.AnnotationTitle: "manifests", mediatypes.AnnotationORASUnpack: "true"}
				return artifactOf(t, mediatypes.OCIEmpty, "application/vnd.example.thing", []byte("{}"), nil, l)
			},
			want:       tree{"cm.yaml": F(cmYAML), "sub": D, "sub/b.yaml": F(cmYAML)},
			form:       mediatypes.FormORAS,
			contentDir: "/manifests",
		},
		{
			// oras push . from inside the folder titles its one layer "."
			// and puts the tree at the layer's root; oras pull -o writes it
			// there.
			name: "ORAS directory artifact pushed as .",
			img: func(t testing.TB) v1.Image {
				l := tarLayer(tarBytes(dirE("./"), file("./cm.yaml", cmYAML), dirE("./sub/"), file("./sub/b.yaml", cmYAML)),
					mediatypes.Gzip, types.OCILayer)
				l.annotations = map[string]string{mediatypes.AnnotationTitle: ".", mediatypes.AnnotationORASUnpack: "true"}
				return artifactOf(t, mediatypes.OCIEmpty, "application/vnd.example.thing", []byte("{}"), nil, l)
			},
			want:       tree{"cm.yaml": F(cmYAML), "sub": D, "sub/b.yaml": F(cmYAML)},
			form:       mediatypes.FormORAS,
			contentDir: "/",
		},
		{
			name: "ORAS file artifact",
			img: func(t testing.TB) v1.Image {
				l1 := rawLayer([]byte(cmYAML), types.OCIUncompressedLayer)
				l1.annotations = map[string]string{mediatypes.AnnotationTitle: "cm.yaml"}
				l2 := rawLayer([]byte(cmYAML+"# two\n"), types.OCIUncompressedLayer)
				l2.annotations = map[string]string{mediatypes.AnnotationTitle: "two.yaml"}
				return artifactOf(t, mediatypes.OCIEmpty, "", []byte("{}"), nil, l1, l2)
			},
			want:       tree{"cm.yaml": F(cmYAML), "two.yaml": F(cmYAML + "# two\n")},
			form:       mediatypes.FormORAS,
			contentDir: "/",
		},
		{
			name: "OLM bundle",
			img: func(t testing.TB) v1.Image {
				return imageOf(t, imageOpts{labels: map[string]string{
					mediatypes.LabelOLMManifests:                         "manifests/",
					"operators.operatorframework.io.bundle.metadata.v1":  "metadata/",
					"operators.operatorframework.io.bundle.mediatype.v1": "registry+v1",
				}},
					ociLayer(dirE("manifests/"), file("manifests/csv.yaml", cmYAML), file("manifests/crd.yaml", "old"),
						dirE("metadata/"), file("metadata/annotations.yaml", "annotations: {}\n")),
					ociLayer(file("manifests/crd.yaml", cmYAML)),
				)
			},
			want:       tree{"csv.yaml": F(cmYAML), "crd.yaml": F(cmYAML)},
			form:       mediatypes.FormOLM,
			contentDir: "/manifests",
		},
		{
			name: "io.cncf.addon.content label",
			img: func(t testing.TB) v1.Image {
				return imageOf(t, imageOpts{labels: map[string]string{mediatypes.LabelContent: "/custom"}},
					ociLayer(dirE("custom/"), file("custom/a", "a"), file("custom/gone", "x"), file("addon/ignored", "not the content dir")),
					ociLayer(whiteout("custom", "gone"), file("custom/d/b", "b")),
				)
			},
			want:       tree{"a": F("a"), "d": D, "d/b": F("b")},
			contentDir: "/custom",
		},
		{
			name: "Options.ContentDir overrides the label",
			img: func(t testing.TB) v1.Image {
				return imageOf(t, imageOpts{labels: map[string]string{mediatypes.LabelContent: "/custom"}},
					ociLayer(file("custom/a", "a"), file("other/b", "b")),
				)
			},
			opts:       unpack.Options{ContentDir: "/other"},
			want:       tree{"b": F("b")},
			contentDir: "/other",
		},
	}
}

func TestFlatten(t *testing.T) {
	for _, c := range flattenCases() {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			var a *unpack.Addon
			var err error
			if c.idx != nil {
				a, err = unpack.Index(ctx, c.idx(t), c.opts)
			} else {
				a, err = unpack.Image(ctx, c.img(t), c.opts)
			}
			if err != nil {
				t.Fatalf("unpack: %v", err)
			}
			got := treeOf(t, a.FS)
			if d := diffTrees(c.want, got); d != "" {
				t.Errorf("tree differs from the golden tree (- want, + got):\n%sgot:\n%s", d, listTree(got))
			}
			wantForm := c.form
			if wantForm == "" {
				wantForm = mediatypes.FormImage
			}
			if a.Form != wantForm {
				t.Errorf("form %s, want %s", a.Form, wantForm)
			}
			wantDir := c.contentDir
			if wantDir == "" {
				wantDir = "/addon"
			}
			if a.ContentDir != wantDir {
				t.Errorf("content dir %s, want %s", a.ContentDir, wantDir)
			}
			if id := identityOf(t, c.want); a.Identity != id {
				t.Errorf("identity %s, want %s (that of the golden tree)", a.Identity, id)
			}
			if c.check != nil {
				c.check(t, a)
			}
		})
	}
}

// An index with no entry for the wanted platform is refused with the
// platforms it has.
func TestFlattenIndexNoPlatform(t *testing.T) {
	_, err := unpack.Index(context.Background(), twoPlatformIndex(t), unpack.Options{Platform: &v1.Platform{OS: "linux", Architecture: "s390x"}})
	if !errors.Is(err, unpack.ErrNoPlatform) {
		t.Fatalf("err = %v, want ErrNoPlatform", err)
	}
	var pe *unpack.PlatformError
	if !errors.As(err, &pe) {
		t.Fatalf("err = %T %v, want a *PlatformError", err, err)
	}
	if pe.Want != "linux/s390x" {
		t.Errorf("Want = %q", pe.Want)
	}
	if strings.Join(pe.Have, ",") != "linux/amd64,linux/arm64" {
		t.Errorf("Have = %q, want both platforms", pe.Have)
	}
	for _, s := range []string{"linux/amd64", "linux/arm64", "linux/s390x"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("message %q does not name %s", err, s)
		}
	}
}

// An index as docker buildx pushes it: the image for one platform and,
// beside it, an attestation manifest (platform unknown/unknown, BuildKit's
// reference-type annotation). The attestation is not an add-on: with no
// platform asked for, the one image is read wherever the reader runs, and
// a refusal does not list the attestation as a platform.
func TestFlattenIndexSkipsAttestations(t *testing.T) {
	arch := "arm64"
	if runtime.GOARCH == "arm64" {
		arch = "amd64"
	}
	img := imageOf(t, imageOpts{}, ociLayer(dirE("addon/"), file("addon/arch", arch)))
	att := imageOf(t, imageOpts{}, ociLayer(file("provenance.json", "{}")))
	idx := mutate.AppendManifests(mutate.IndexMediaType(empty.Index, types.OCIImageIndex),
		mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: arch}}},
		mutate.IndexAddendum{Add: att, Descriptor: v1.Descriptor{
			Platform:    &v1.Platform{OS: "unknown", Architecture: "unknown"},
			Annotations: map[string]string{"vnd.docker.reference.type": "attestation-manifest"},
		}},
	)
	a, err := unpack.Index(context.Background(), idx, unpack.Options{})
	if err != nil {
		t.Fatalf("unpack without a platform: %v", err)
	}
	if d := diffTrees(tree{"arch": F(arch)}, treeOf(t, a.FS)); d != "" {
		t.Errorf("tree differs (- want, + got):\n%s", d)
	}

	_, err = unpack.Index(context.Background(), idx, unpack.Options{Platform: &v1.Platform{OS: "linux", Architecture: "s390x"}})
	var pe *unpack.PlatformError
	if !errors.As(err, &pe) {
		t.Fatalf("err = %T %v, want a *PlatformError", err, err)
	}
	if got := strings.Join(pe.Have, ","); got != "linux/"+arch {
		t.Errorf("Have = %q, want only the image's platform", got)
	}

	// An index of attestations alone (what is left when a copy dropped
	// the images) has no platform to list: it says so, not "has: ".
	onlyAtt := mutate.AppendManifests(mutate.IndexMediaType(empty.Index, types.OCIImageIndex),
		mutate.IndexAddendum{Add: att, Descriptor: v1.Descriptor{
			Platform:    &v1.Platform{OS: "unknown", Architecture: "unknown"},
			Annotations: map[string]string{"vnd.docker.reference.type": "attestation-manifest"},
		}})
	_, err = unpack.Index(context.Background(), onlyAtt, unpack.Options{})
	if !errors.Is(err, unpack.ErrNoPlatform) || !strings.Contains(err.Error(), "the index holds only attestation manifests") {
		t.Errorf("index of attestations only: %v, want ErrNoPlatform saying it holds only attestations", err)
	}
}

// legacyTypeflags rewrites every regular-file and directory header of a
// tar stream to the pre-POSIX typeflag '\x00' (tar.TypeRegA, a directory
// told by its trailing slash), as old tar writers emit them; Go's
// tar.Writer never writes it, so the headers are patched by hand.
func legacyTypeflags(t *testing.T, b []byte) (out []byte, rewritten int) {
	t.Helper()
	b = append([]byte(nil), b...)
	for off := 0; off+512 <= len(b); {
		h := b[off : off+512]
		if bytes.Count(h, []byte{0}) == 512 {
			break
		}
		size, err := strconv.ParseInt(strings.Trim(string(h[124:136]), " \x00"), 8, 64)
		if err != nil {
			t.Fatalf("tar header at %d: size: %v", off, err)
		}
		if h[156] == tar.TypeReg || h[156] == tar.TypeDir {
			h[156] = legacyTypeflag
			rewritten++
			copy(h[148:156], "        ")
			sum := 0
			for _, c := range h {
				sum += int(c)
			}
			copy(h[148:156], fmt.Sprintf("%06o\x00 ", sum))
		}
		off += 512 + int((size+511)/512*512)
	}
	return b, rewritten
}

// legacyTypeflag is tar.TypeRegA, which the standard library deprecates
// for writers: here it is the input under test.
const legacyTypeflag = '\x00'

// Legacy regular-file headers (typeflag '\x00', a trailing slash meaning
// a directory) read as files and directories: Go's tar.Reader turns them
// into TypeReg and TypeDir before the flattener sees them.
func TestFlattenLegacyTypeflag(t *testing.T) {
	tb, n := legacyTypeflags(t, tarBytes(file("addon/a.yaml", "a: 1\n"), dirE("addon/d/"), file("addon/d/b.yaml", "b: 2\n")))
	if n != 3 {
		t.Fatalf("%d headers rewritten, want 3", n)
	}
	img := imageOf(t, imageOpts{}, tarLayer(tb, mediatypes.Gzip, types.OCILayer))
	a, err := unpack.Image(context.Background(), img, unpack.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if d := diffTrees(tree{"a.yaml": F("a: 1\n"), "d": D, "d/b.yaml": F("b: 2\n")}, treeOf(t, a.FS)); d != "" {
		t.Errorf("tree differs (- want, + got):\n%s", d)
	}
}
