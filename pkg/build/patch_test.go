package build_test

import (
	"context"
	"errors"
	"io/fs"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/addonpkg/addonpkg/pkg/build"
	"github.com/addonpkg/addonpkg/pkg/filetree"
	"github.com/addonpkg/addonpkg/pkg/mediatypes"
	"github.com/addonpkg/addonpkg/pkg/pack"
	"github.com/addonpkg/addonpkg/pkg/unpack"
)

func patchCM(name, data string) string {
	return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name + "\ndata:\n  k: " + data + "\n"
}

// patchTree makes a tree from path -> content; a trailing / is a directory.
func patchTree(t *testing.T, files map[string]string) *filetree.FS {
	t.Helper()
	b := filetree.NewBuilder()
	for _, name := range slices.Sorted(maps.Keys(files)) {
		var err error
		if strings.HasSuffix(name, "/") {
			err = b.Mkdir(strings.TrimSuffix(name, "/"), 0o755)
		} else {
			err = b.WriteFile(name, []byte(files[name]), 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return b.FS()
}

// patchContents lists a tree as path -> content ("/" for directories).
func patchContents(t *testing.T, fsys fs.FS) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := fs.WalkDir(fsys, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || name == "." {
			return err
		}
		if d.IsDir() {
			m[name+"/"] = ""
			return nil
		}
		b, err := fs.ReadFile(fsys, name)
		m[name] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func layerDigests(t *testing.T, img v1.Image) []v1.Hash {
	t.Helper()
	m, err := img.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	var out []v1.Hash
	for _, l := range m.Layers {
		out = append(out, l.Digest)
	}
	return out
}

func TestPatch(t *testing.T) {
	ctx := context.Background()
	baseFiles := map[string]string{
		"a.yaml":       patchCM("a", "1"),
		"dir/":         "",
		"dir/b.yaml":   patchCM("b", "1"),
		"dir/c.yaml":   patchCM("c", "1"),
		"keep/":        "",
		"keep/d.yaml":  patchCM("d", "1"),
		"keep/e.yaml":  patchCM("e", "1"),
		"gone/":        "",
		"gone/f.yaml":  patchCM("f", "1"),
		"README.md":    "hello\n",
		"other/":       "",
		"other/g.yaml": patchCM("g", "1"),
	}
	patchFiles := map[string]string{
		"dir/":       "",
		"dir/b.yaml": patchCM("b", "2"),
		"new.yaml":   patchCM("new", "1"),
	}
	deletes := []string{"dir/c.yaml", "keep/e.yaml", "gone", "./README.md"}
	want := map[string]string{
		"a.yaml":       patchCM("a", "1"),
		"dir/":         "",
		"dir/b.yaml":   patchCM("b", "2"),
		"keep/":        "",
		"keep/d.yaml":  patchCM("d", "1"),
		"new.yaml":     patchCM("new", "1"),
		"other/":       "",
		"other/g.yaml": patchCM("g", "1"),
	}
	created := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)

	for _, v := range []struct {
		form    pack.Format
		layered bool
	}{{pack.FormatImage, false}, {pack.FormatArtifact, false}, {pack.FormatArtifact, true}} {
		form := v.form
		for _, c := range []mediatypes.Compression{mediatypes.Gzip, mediatypes.Zstd} {
			name := string(form) + "/" + string(c)
			if v.layered {
				name += "/layered"
			}
			t.Run(name, func(t *testing.T) {
				base, err := build.Build(ctx, patchTree(t, baseFiles), build.Options{
					Format: form, Name: "demo", Version: "1.0.0", Created: time.Unix(0, 0),
				})
				if err != nil {
					t.Fatal(err)
				}
				opts := build.PatchOptions{
					Deletes: deletes, Created: created, Compression: c, Version: "1.0.0-patch.1", Layered: v.layered,
				}
				res, err := build.Patch(ctx, base.Image, patchTree(t, patchFiles), opts)
				if err != nil {
					t.Fatal(err)
				}

				baseLayers, gotLayers := layerDigests(t, base.Image), layerDigests(t, res.Image)
				if form == pack.FormatArtifact && !v.layered {
					// One layer, the patched tree: what Build makes of it.
					direct, err := build.Build(ctx, patchTree(t, want), build.Options{
						Format: form, Name: "demo", Created: created, Compression: c,
					})
					if err != nil {
						t.Fatal(err)
					}
					if directLayers := layerDigests(t, direct.Image); !slices.Equal(gotLayers, directLayers) {
						t.Fatalf("layers %v, want the single layer %v that Build makes of the patched tree", gotLayers, directLayers)
					}
				} else if len(gotLayers) != len(baseLayers)+1 || !slices.Equal(gotLayers[:len(baseLayers)], baseLayers) {
					// The base's layers are untouched, one layer is added.
					t.Fatalf("layers %v, want %v plus one", gotLayers, baseLayers)
				}
				m, err := res.Image.Manifest()
				if err != nil {
					t.Fatal(err)
				}
				top := m.Layers[len(m.Layers)-1]
				wantMT := mediatypes.ImageLayer(c)
				if form == pack.FormatArtifact {
					wantMT = mediatypes.ContentLayer(c)
				}
				if string(top.MediaType) != string(wantMT) {
					t.Errorf("patch layer media type %s, want %s", top.MediaType, wantMT)
				}
				if m.Annotations[mediatypes.LabelIdentity] != res.Config.Identity || m.Annotations[mediatypes.AnnotationVersion] != "1.0.0-patch.1" {
					t.Errorf("annotations not updated: %v", m.Annotations)
				}

				// Flattening gives base + patch - deletes, and the metadata
				// describes that tree.
				ad, err := unpack.Image(ctx, res.Image, unpack.Options{})
				if err != nil {
					t.Fatal(err)
				}
				if got := patchContents(t, ad.FS); !maps.Equal(got, want) {
					t.Errorf("flattened tree\n%v\nwant\n%v", got, want)
				}
				if ad.Derived {
					t.Errorf("the reader ignored the config (stale?)")
				}
				if ad.Identity != res.Config.Identity || ad.Config.Identity != ad.Identity {
					t.Errorf("identity: content %s, config %s, result %s", ad.Identity, ad.Config.Identity, res.Config.Identity)
				}
				if ad.Config.Version != "1.0.0-patch.1" || ad.Config.Name != "demo" || ad.Config.Created != "2024-05-01T12:00:00Z" {
					t.Errorf("config %+v", ad.Config)
				}
				var names []string
				for _, o := range ad.Config.Inventory.Objects {
					names = append(names, o.Name)
				}
				if want := []string{"a", "b", "d", "new", "g"}; !slices.Equal(names, want) {
					t.Errorf("inventory %v, want %v", names, want)
				}

				if form == pack.FormatImage {
					cf, err := res.Image.ConfigFile()
					if err != nil {
						t.Fatal(err)
					}
					if len(cf.RootFS.DiffIDs) != 2 || len(cf.History) != 2 {
						t.Errorf("diff_ids %v, history %v", cf.RootFS.DiffIDs, cf.History)
					}
					l := cf.Config.Labels
					if l[mediatypes.LabelIdentity] != res.Config.Identity || l[mediatypes.LabelVersion] != "1.0.0-patch.1" || !strings.Contains(l[mediatypes.LabelConfig], res.Config.Identity) {
						t.Errorf("labels not updated: %v", l)
					}
					if !cf.Created.Time.Equal(created) || cf.OS != "linux" || cf.Architecture != "amd64" {
						t.Errorf("config: created %v, platform %s/%s", cf.Created, cf.OS, cf.Architecture)
					}
				}

				// Reproducible.
				again, err := build.Patch(ctx, base.Image, patchTree(t, patchFiles), opts)
				if err != nil {
					t.Fatal(err)
				}
				if again.Digest != res.Digest {
					t.Errorf("second patch %s, first %s", again.Digest, res.Digest)
				}

				// A patch of the patch stacks another layer (or, for a
				// squashed artifact, stays one layer).
				res2, err := build.Patch(ctx, res.Image, nil, build.PatchOptions{Deletes: []string{"new.yaml"}, Created: created, Layered: v.layered})
				if err != nil {
					t.Fatal(err)
				}
				ad2, err := unpack.Image(ctx, res2.Image, unpack.Options{})
				if err != nil {
					t.Fatal(err)
				}
				want2 := maps.Clone(want)
				delete(want2, "new.yaml")
				wantLayers2 := len(gotLayers) + 1
				if form == pack.FormatArtifact && !v.layered {
					wantLayers2 = 1
				}
				if got := patchContents(t, ad2.FS); !maps.Equal(got, want2) || ad2.Derived || len(layerDigests(t, res2.Image)) != wantLayers2 {
					t.Errorf("second patch: tree %v derived %v, %d layers (want %d)", got, ad2.Derived, len(layerDigests(t, res2.Image)), wantLayers2)
				}
				if ad2.Config.Version != "1.0.0-patch.1" {
					t.Errorf("second patch kept version %q", ad2.Config.Version)
				}
			})
		}
	}
}

// A kustomize add-on patched into a different set of objects: the kind
// and the inventory follow the flattened tree.
func TestPatchKustomize(t *testing.T) {
	ctx := context.Background()
	base, err := build.Build(ctx, patchTree(t, map[string]string{
		"kustomization.yaml": "resources:\n- a.yaml\n- b.yaml\n",
		"a.yaml":             patchCM("a", "1"),
		"b.yaml":             patchCM("b", "1"),
	}), build.Options{Name: "k"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := build.Patch(ctx, base.Image, patchTree(t, map[string]string{
		"kustomization.yaml": "resources:\n- a.yaml\n- c.yaml\n",
		"c.yaml":             patchCM("c", "1"),
	}), build.PatchOptions{Deletes: []string{"b.yaml"}})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, o := range res.Config.Inventory.Objects {
		names = append(names, o.Name)
	}
	if !slices.Equal(names, []string{"a", "c"}) || res.Config.Kind != "kustomize" {
		t.Errorf("kind %s, inventory %v", res.Config.Kind, names)
	}
	// Deleting the kustomization makes it a manifests add-on.
	res, err = build.Patch(ctx, base.Image, nil, build.PatchOptions{Deletes: []string{"kustomization.yaml"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Config.Kind != "manifests" || len(res.Config.Inventory.Objects) != 2 {
		t.Errorf("kind %s, inventory %v", res.Config.Kind, res.Config.Inventory.Objects)
	}
	ad, err := unpack.Image(ctx, res.Image, unpack.Options{})
	if err != nil || ad.Derived || ad.Config.Kind != "manifests" {
		t.Fatalf("unpack: %v %+v", err, ad)
	}
}

func TestPatchErrors(t *testing.T) {
	ctx := context.Background()
	base, err := build.Build(ctx, patchTree(t, map[string]string{"a.yaml": patchCM("a", "1"), "b.yaml": patchCM("b", "1")}), build.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		patch   map[string]string
		deletes []string
		want    error
	}{
		"missing delete":    {deletes: []string{"nope.yaml"}, want: build.ErrPatch},
		"climbing delete":   {deletes: []string{"../a.yaml"}, want: build.ErrPatch},
		"root delete":       {deletes: []string{"."}, want: build.ErrPatch},
		"delete everything": {deletes: []string{"a.yaml", "b.yaml"}, want: build.ErrPatch},
		"whiteout name":     {patch: map[string]string{".wh.a.yaml": ""}, want: build.ErrPatch},
		"invalid manifest":  {patch: map[string]string{"c.yaml": "kind: ConfigMap\n"}, want: build.ErrValidation},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := build.Patch(ctx, base.Image, patchTree(t, tc.patch), build.PatchOptions{Deletes: tc.deletes})
			if !errors.Is(err, tc.want) {
				t.Errorf("got %v, want %v", err, tc.want)
			}
		})
	}
}

// A Docker schema 2 base gets a Docker layer and no annotations.
func TestPatchDockerBase(t *testing.T) {
	ctx := context.Background()
	built, err := build.Build(ctx, patchTree(t, map[string]string{"a.yaml": patchCM("a", "1")}), build.Options{Name: "d"})
	if err != nil {
		t.Fatal(err)
	}
	layers, err := built.Image.Layers()
	if err != nil {
		t.Fatal(err)
	}
	cf, err := built.Image.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	cf = cf.DeepCopy()
	cf.RootFS.DiffIDs, cf.History = nil, nil
	base := mutate.MediaType(empty.Image, types.DockerManifestSchema2)
	base = mutate.ConfigMediaType(base, types.DockerConfigJSON)
	if base, err = mutate.ConfigFile(base, cf); err != nil {
		t.Fatal(err)
	}
	if base, err = mutate.Append(base, mutate.Addendum{Layer: layers[0], MediaType: types.DockerLayer}); err != nil {
		t.Fatal(err)
	}
	res, err := build.Patch(ctx, base, patchTree(t, map[string]string{"b.yaml": patchCM("b", "1")}), build.PatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	m, err := res.Image.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	if m.MediaType != types.DockerManifestSchema2 || m.Layers[1].MediaType != types.DockerLayer || m.Annotations != nil {
		t.Errorf("manifest %s, layer %s, annotations %v", m.MediaType, m.Layers[1].MediaType, m.Annotations)
	}
	ad, err := unpack.Image(ctx, res.Image, unpack.Options{})
	if err != nil || ad.Derived || len(ad.Config.Inventory.Objects) != 2 {
		t.Fatalf("unpack: %v %+v", err, ad)
	}
	if _, err := build.Patch(ctx, base, nil, build.PatchOptions{Deletes: []string{"a.yaml"}, Compression: mediatypes.None}); !errors.Is(err, build.ErrPatch) {
		t.Errorf("uncompressed layer on a Docker base: %v", err)
	}
}

// A delete through a symlinked directory is refused: the whiteout would
// name a path that the flattened tree does not have.
func TestPatchDeleteThroughLink(t *testing.T) {
	b := filetree.NewBuilder()
	if err := b.WriteFile("d/a.yaml", []byte(patchCM("a", "1")), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := b.Symlink("d", "l"); err != nil {
		t.Fatal(err)
	}
	base, err := build.Build(context.Background(), b.FS(), build.Options{NoValidate: true})
	if err != nil {
		t.Fatal(err)
	}
	_, err = build.Patch(context.Background(), base.Image, nil, build.PatchOptions{Deletes: []string{"l/a.yaml"}, NoValidate: true})
	if !errors.Is(err, build.ErrPatch) {
		t.Errorf("got %v", err)
	}
	// The link itself can go.
	if _, err := build.Patch(context.Background(), base.Image, nil, build.PatchOptions{Deletes: []string{"l"}, NoValidate: true}); err != nil {
		t.Error(err)
	}
}

// FluxWarnings is silent for what build makes by default, and names the
// choices that Flux's client cannot read.
func TestFluxWarnings(t *testing.T) {
	ctx := context.Background()
	tree := patchTree(t, map[string]string{"a.yaml": patchCM("a", "1")})
	patch := patchTree(t, map[string]string{"b.yaml": patchCM("b", "1")})
	for _, tc := range []struct {
		name    string
		format  pack.Format
		c       mediatypes.Compression
		patch   bool
		layered bool
		want    []string
	}{
		{name: "artifact", format: pack.FormatArtifact},
		{name: "image", format: pack.FormatImage},
		{name: "artifact patch", format: pack.FormatArtifact, patch: true},
		{name: "artifact patch layered", format: pack.FormatArtifact, patch: true, layered: true, want: []string{"2 layers", "oras pull refuses"}},
		{name: "image patch", format: pack.FormatImage, patch: true, want: []string{"image has 2 layers"}},
		{name: "artifact zstd", format: pack.FormatArtifact, c: mediatypes.Zstd, want: []string{"not gzip-compressed (zstd)"}},
		{name: "image none", format: pack.FormatImage, c: mediatypes.None, want: []string{"not gzip-compressed (none)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := build.Build(ctx, tree, build.Options{Format: tc.format, Name: "x", Compression: tc.c})
			if err != nil {
				t.Fatal(err)
			}
			if tc.patch {
				if res, err = build.Patch(ctx, res.Image, patch, build.PatchOptions{Layered: tc.layered}); err != nil {
					t.Fatal(err)
				}
			}
			got := strings.Join(build.FluxWarnings(res.Image), "\n")
			if len(tc.want) == 0 && got != "" {
				t.Errorf("warnings %q, want none", got)
			}
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("warnings %q do not say %q", got, w)
				}
			}
		})
	}
}
