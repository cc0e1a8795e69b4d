package inspect_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/addonpkg/addonpkg/internal/inspect"
	"github.com/addonpkg/addonpkg/pkg/build"
	"github.com/addonpkg/addonpkg/pkg/folder"
	"github.com/addonpkg/addonpkg/pkg/layout"
	"github.com/addonpkg/addonpkg/pkg/mediatypes"
	"github.com/addonpkg/addonpkg/pkg/pack"
	"github.com/addonpkg/addonpkg/pkg/source"
)

// buildLayout builds the example coredns add-on in format f into an OCI
// layout in dir, tagged 1.
func buildLayout(dir string, f pack.Format) (source.Ref, error) {
	fsys, err := folder.LoadDir("../../examples/coredns")
	if err != nil {
		return source.Ref{}, err
	}
	res, err := build.Build(context.Background(), fsys, build.Options{Name: "coredns", Version: "1.11", Format: f})
	if err != nil {
		return source.Ref{}, err
	}
	st, err := layout.Init(dir)
	if err != nil {
		return source.Ref{}, err
	}
	if _, err := st.WriteImage(context.Background(), res.Image, nil, "1"); err != nil {
		return source.Ref{}, err
	}
	return source.Ref{Kind: source.KindLayout, Path: dir, Name: "1"}, nil
}

// Both forms are described with the same metadata; only the image form
// needs its content read (its labels are checked against the tree).
func TestSourceForms(t *testing.T) {
	for _, f := range []pack.Format{pack.FormatImage, pack.FormatArtifact} {
		t.Run(string(f), func(t *testing.T) {
			ref, err := buildLayout(t.TempDir(), f)
			if err != nil {
				t.Fatal(err)
			}
			in, err := inspect.Source(context.Background(), ref, inspect.Options{})
			if err != nil {
				t.Fatal(err)
			}
			want := mediatypes.FormImage
			if f == pack.FormatArtifact {
				want = mediatypes.FormArtifact
			}
			if in.Form != want || in.Config == nil || in.Config.Name != "coredns" || in.Config.Version != "1.11" || in.Problem != "" {
				t.Fatalf("form %s, config %+v, problem %q", in.Form, in.Config, in.Problem)
			}
			if len(in.Config.Inventory.Objects) == 0 || len(in.Layers) != 1 || !strings.HasPrefix(in.Digest, "sha256:") {
				t.Errorf("inventory %d objects, %d layers, digest %q", len(in.Config.Inventory.Objects), len(in.Layers), in.Digest)
			}
		})
	}
}

// A plain container image is inspected, not refused: its content problem
// (no /addon directory) is reported in Problem.
func TestSourceProblems(t *testing.T) {
	dir := t.TempDir()
	img, err := random.Image(64, 1)
	if err != nil {
		t.Fatal(err)
	}
	img = mutate.MediaType(img, "application/vnd.oci.image.manifest.v1+json")
	st, err := layout.Init(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.WriteImage(context.Background(), img, nil, "x"); err != nil {
		t.Fatal(err)
	}
	in, err := inspect.Source(context.Background(), source.Ref{Kind: source.KindLayout, Path: dir, Name: "x"}, inspect.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if in.Problem == "" {
		t.Errorf("a random image has no add-on, but no problem is reported: %+v", in)
	}
	d, err := st.Resolve("x")
	if err != nil {
		t.Fatal(err)
	}
	if got := inspect.StoreForm(st, d); got != string(in.Form) {
		t.Errorf("StoreForm = %s, Source says %s", got, in.Form)
	}
}

// A folder is inspected as what its content says: the metadata and
// inventory an image built from it has, and nothing only an image has
// (digest, media type, layers), neither in the struct nor in JSON.
func TestSourceFolder(t *testing.T) {
	ref, err := buildLayout(t.TempDir(), pack.FormatArtifact)
	if err != nil {
		t.Fatal(err)
	}
	built, err := inspect.Source(context.Background(), ref, inspect.Options{})
	if err != nil {
		t.Fatal(err)
	}
	in, err := inspect.Source(context.Background(), source.Ref{Kind: source.KindDir, Path: "../../examples/coredns"}, inspect.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := in.Config
	if in.Form != source.FormFolder || !in.Derived || in.Problem != "" || c == nil || c.Name != "coredns" || c.Kind != built.Config.Kind || c.Identity != built.Config.Identity {
		t.Fatalf("form %s, derived %v, problem %q, config %+v; want the folder's metadata, identity %s", in.Form, in.Derived, in.Problem, c, built.Config.Identity)
	}
	if len(c.Inventory.Objects) == 0 || len(c.Inventory.Objects) != len(built.Config.Inventory.Objects) {
		t.Errorf("inventory of %d objects, the built image's has %d", len(c.Inventory.Objects), len(built.Config.Inventory.Objects))
	}
	if in.Digest != "" || in.MediaType != "" || in.Layers != nil {
		t.Errorf("a folder has digest %q, media type %q, layers %v", in.Digest, in.MediaType, in.Layers)
	}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{`"digest"`, `"mediaType"`, `"layers"`} {
		if strings.Contains(string(b), k) {
			t.Errorf("JSON of a folder has %s: %s", k, b)
		}
	}
}

// Inspect an add-on in an OCI layout: its form and metadata, from the
// manifest and config (and, for the image form, the content).
func ExampleSource() {
	dir, err := os.MkdirTemp("", "inspect-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ref, err := buildLayout(filepath.Join(dir, "layout"), pack.FormatArtifact)
	if err != nil {
		log.Fatal(err)
	}
	in, err := inspect.Source(context.Background(), ref, inspect.Options{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(in.Form, in.Config.Name, in.Config.Version, in.Config.Kind)
	// Output: artifact coredns 1.11 manifests
}

// The platforms of an index are those an add-on can be picked from, by
// the unpacker's rule: the attestation manifests BuildKit puts beside
// each image (unknown/unknown) are not listed (spec 9.1).
func TestSourceIndexPlatforms(t *testing.T) {
	ctx := context.Background()
	fsys, err := folder.LoadDir("../../examples/coredns")
	if err != nil {
		t.Fatal(err)
	}
	res, err := build.Build(ctx, fsys, build.Options{Name: "coredns", Version: "1.11"})
	if err != nil {
		t.Fatal(err)
	}
	att, err := random.Image(64, 1)
	if err != nil {
		t.Fatal(err)
	}
	idx := mutate.AppendManifests(mutate.IndexMediaType(empty.Index, types.OCIImageIndex),
		mutate.IndexAddendum{Add: res.Image, Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: "amd64"}}},
		mutate.IndexAddendum{Add: att, Descriptor: v1.Descriptor{
			Platform:    &v1.Platform{OS: "unknown", Architecture: "unknown"},
			Annotations: map[string]string{"vnd.docker.reference.type": "attestation-manifest"},
		}})
	dir := t.TempDir()
	st, err := layout.Init(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.WriteIndex(ctx, idx, nil, "1"); err != nil {
		t.Fatal(err)
	}
	in, err := inspect.Source(ctx, source.Ref{Kind: source.KindLayout, Path: dir, Name: "1"}, inspect.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(in.Platforms, " "); got != "linux/amd64" || in.Config == nil || in.Config.Name != "coredns" {
		t.Errorf("platforms %q, config %+v; want linux/amd64 alone and the add-on", got, in.Config)
	}
}
