package publish_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/addonpkg/addonpkg/pkg/build"
	"github.com/addonpkg/addonpkg/pkg/layout"
	"github.com/addonpkg/addonpkg/pkg/pack"
	"github.com/addonpkg/addonpkg/pkg/publish"
	"github.com/addonpkg/addonpkg/pkg/source"
	"github.com/addonpkg/addonpkg/pkg/unpack"
)

const configMap = `apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
data:
  a: "1"
`

// tree writes a folder named name holding files (path: content).
func tree(t *testing.T, name string, files map[string]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	for p, c := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if len(files) == 0 {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func store(t *testing.T) (*layout.Store, func() (*layout.Store, error)) {
	t.Helper()
	st, err := layout.Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return st, func() (*layout.Store, error) { return st, nil }
}

// With no tag and no output, a build is named after its tree and
// version, and lands in the store.
func TestBuildDefaultTag(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "")
	ctx := context.Background()
	dir := tree(t, "settings", map[string]string{"cm.yaml": configMap})
	st, open := store(t)
	for _, tc := range []struct{ version, want string }{{"", "settings:latest"}, {"1.2", "settings:1.2"}} {
		res, err := publish.Build(ctx, dir, publish.Options{Build: build.Options{Version: tc.version}, Store: open})
		if err != nil {
			t.Fatal(err)
		}
		if !res.DefaultTag || len(res.Tags) != 1 || res.Tags[0] != tc.want {
			t.Errorf("version %q: tags %v (default %v), want %s", tc.version, res.Tags, res.DefaultTag, tc.want)
		}
		d, err := st.Resolve(tc.want)
		if err != nil || d.Digest != res.Digest {
			t.Errorf("store has %s as %v (%v), want %s", tc.want, d.Digest, err, res.Digest)
		}
	}
}

// Tags get their default tag; outputs alone write nothing to the store.
func TestBuildTagsAndOutputs(t *testing.T) {
	ctx := context.Background()
	dir := tree(t, "settings", map[string]string{"cm.yaml": configMap})
	_, open := store(t)
	res, err := publish.Build(ctx, dir, publish.Options{Tags: []string{"x", "registry.example.com/a/x:1"}, Store: open})
	if err != nil {
		t.Fatal(err)
	}
	if res.DefaultTag || len(res.Tags) != 2 || res.Tags[0] != "x:latest" || res.Tags[1] != "registry.example.com/a/x:1" {
		t.Errorf("tags %v", res.Tags)
	}
	out := filepath.Join(t.TempDir(), "layout")
	ref, err := source.Parse("oci:" + out + ":v1")
	if err != nil {
		t.Fatal(err)
	}
	opened := false
	res2, err := publish.Build(ctx, dir, publish.Options{Outputs: []source.Ref{ref}, Store: func() (*layout.Store, error) { opened = true; return nil, errors.New("no store") }})
	if err != nil {
		t.Fatal(err)
	}
	if opened || len(res2.Tags) != 0 || res2.Digest != res.Digest {
		t.Errorf("outputs only: store opened %v, tags %v, digest %s want %s", opened, res2.Tags, res2.Digest, res.Digest)
	}
	if _, err := os.Stat(filepath.Join(out, "index.json")); err != nil {
		t.Errorf("no layout written: %v", err)
	}
}

func TestBuildRefuses(t *testing.T) {
	ctx := context.Background()
	dir := tree(t, "settings", map[string]string{"cm.yaml": configMap})
	_, open := store(t)
	docker, _ := source.Parse("docker-archive:" + filepath.Join(t.TempDir(), "a.tar"))
	folderRef, _ := source.Parse(dir)
	for _, tc := range []struct {
		name string
		opts publish.Options
		want error
	}{
		{"bad tag", publish.Options{Tags: []string{"oci:x"}, Store: open}, source.ErrStoreName},
		{"artifact to docker-archive", publish.Options{Build: build.Options{Format: pack.FormatArtifact}, Outputs: []source.Ref{docker}}, publish.ErrOutputForm},
		{"output to a folder", publish.Options{Outputs: []source.Ref{folderRef}}, publish.ErrOutputKind},
		{"delete without a base", publish.Options{Deletes: []string{"cm.yaml"}}, publish.ErrNeedsBase},
		{"layered without a base", publish.Options{Layered: true}, publish.ErrNeedsBase},
		{"a tree as the base", publish.Options{Base: folderRef}, publish.ErrNotBuilt},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := publish.Build(ctx, dir, tc.opts)
			if !errors.Is(err, tc.want) {
				t.Errorf("err %v, want %v", err, tc.want)
			}
		})
	}
	// A base's own trouble is a *BaseError.
	_, err := publish.Build(ctx, dir, publish.Options{Base: folderRef})
	if be := (*publish.BaseError)(nil); !errors.As(err, &be) || be.Path != dir {
		t.Errorf("a tree as the base: %v, want a BaseError of %s", err, dir)
	}
}

// A patch that only deletes takes an empty folder; the base's name and
// version are kept.
func TestBuildDeleteOnly(t *testing.T) {
	ctx := context.Background()
	st, open := store(t)
	dir := tree(t, "settings", map[string]string{"cm.yaml": configMap, "more.yaml": strings.Replace(configMap, "name: settings", "name: more", 1)})
	if _, err := publish.Build(ctx, dir, publish.Options{Build: build.Options{Version: "1"}, Tags: []string{"base:1"}, Store: open}); err != nil {
		t.Fatal(err)
	}
	empty := tree(t, "empty", nil)
	base := source.Ref{Kind: source.KindStore, Name: "base:1"}
	opts := publish.Options{Base: base, BaseSource: source.Options{Store: st}, Deletes: []string{"more.yaml"}, Store: open}
	res, err := publish.Build(ctx, empty, opts)
	if err != nil {
		t.Fatal(err)
	}
	if res.Config.Name != "settings" || res.Config.Version != "1" || !res.DefaultTag || res.Tags[0] != "settings:1" {
		t.Errorf("patched: name %q version %q tags %v", res.Config.Name, res.Config.Version, res.Tags)
	}
	// Without deletes an empty folder is an error, as for any build.
	opts.Deletes = nil
	if _, err := publish.Build(ctx, empty, opts); err == nil {
		t.Error("an empty patch without deletes was built")
	}
}

// A base that is an index of several platforms is refused: patching the
// building machine's platform alone made the result depend on that
// machine, and dropped the other platforms without a word. An index of
// one platform (whatever the machine's) is patched.
func TestBuildBaseIndexOfPlatforms(t *testing.T) {
	ctx := context.Background()
	st, open := store(t)
	var imgs []v1.Image
	for _, name := range []string{"amd", "arm"} {
		dir := tree(t, name, map[string]string{"cm.yaml": strings.Replace(configMap, "name: settings", "name: "+name, 1)})
		if _, err := publish.Build(ctx, dir, publish.Options{Tags: []string{name + ":1"}, Store: open}); err != nil {
			t.Fatal(err)
		}
		d, err := st.Resolve(name + ":1")
		if err != nil {
			t.Fatal(err)
		}
		img, err := st.Image(d)
		if err != nil {
			t.Fatal(err)
		}
		imgs = append(imgs, img)
	}
	index := func(plats ...string) v1.ImageIndex {
		var adds []mutate.IndexAddendum
		for i, p := range plats {
			pl, err := v1.ParsePlatform(p)
			if err != nil {
				t.Fatal(err)
			}
			adds = append(adds, mutate.IndexAddendum{Add: imgs[i], Descriptor: v1.Descriptor{Platform: pl}})
		}
		return mutate.IndexMediaType(mutate.AppendManifests(empty.Index, adds...), types.OCIImageIndex)
	}
	if _, err := st.WriteIndex(ctx, index("linux/amd64", "linux/arm64"), nil, "multi:1"); err != nil {
		t.Fatal(err)
	}
	if _, err := st.WriteIndex(ctx, index("linux/s390x"), nil, "one:1"); err != nil {
		t.Fatal(err)
	}
	patch := tree(t, "site", map[string]string{"site.yaml": strings.Replace(configMap, "name: settings", "name: site", 1)})
	opts := func(base string) publish.Options {
		return publish.Options{Base: source.Ref{Kind: source.KindStore, Name: base}, BaseSource: source.Options{Store: st}, Tags: []string{"out:1"}, Store: open}
	}
	_, err := publish.Build(ctx, patch, opts("multi:1"))
	if be := (*publish.BaseError)(nil); !errors.Is(err, publish.ErrPlatformsBase) || !errors.As(err, &be) {
		t.Errorf("a base of two platforms: %v, want a BaseError of ErrPlatformsBase", err)
	}
	res, err := publish.Build(ctx, patch, opts("one:1"))
	if err != nil {
		t.Fatalf("a base of one platform: %v", err)
	}
	if n := len(res.Config.Inventory.Objects); n != 2 {
		t.Errorf("the patch of one platform has %d objects, want the base's and the patch's", n)
	}
	// A platform named patches that platform's image, whatever the
	// machine's; one the index does not have is refused.
	for plat, want := range map[string]string{"linux/arm64": "arm", "linux/amd64": "amd"} {
		o := opts("multi:1")
		if o.BasePlatform, err = v1.ParsePlatform(plat); err != nil {
			t.Fatal(err)
		}
		res, err := publish.Build(ctx, patch, o)
		if err != nil {
			t.Fatalf("a base of two platforms, %s named: %v", plat, err)
		}
		var names []string
		for _, obj := range res.Config.Inventory.Objects {
			names = append(names, obj.Name)
		}
		if !slices.Contains(names, want) || !slices.Contains(names, "site") || len(names) != 2 {
			t.Errorf("the patch of %s holds %v, want %s's object and site", plat, names, want)
		}
	}
	o := opts("multi:1")
	o.BasePlatform = &v1.Platform{OS: "linux", Architecture: "riscv64"}
	if _, err := publish.Build(ctx, patch, o); err == nil {
		t.Error("a platform the base's index does not have: no error")
	}

	// A base that is one image, not an index, is checked against the
	// platform named too: its config's, when it names one.
	cf, err := imgs[1].ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", "arm64"
	arm, err := mutate.ConfigFile(imgs[1], cf)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.WriteImage(ctx, arm, nil, "arm:1"); err != nil {
		t.Fatal(err)
	}
	for plat, ok := range map[string]bool{"linux/arm64": true, "linux": true, "linux/amd64": false} {
		o := opts("arm:1")
		if o.BasePlatform, err = v1.ParsePlatform(plat); err != nil {
			t.Fatal(err)
		}
		_, err := publish.Build(ctx, patch, o)
		if ok && err != nil || !ok && !errors.Is(err, unpack.ErrNoPlatform) {
			t.Errorf("an image of linux/arm64 as the base, %s named: %v", plat, err)
		}
	}
	// The platform the config names is the image's text: the refusal
	// says it in one line of printable text.
	cf.OS, cf.Architecture = "linux", "arm64\n\x1b[2Jfake"
	hostile, err := mutate.ConfigFile(imgs[1], cf)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.WriteImage(ctx, hostile, nil, "hostile:1"); err != nil {
		t.Fatal(err)
	}
	o = opts("hostile:1")
	o.BasePlatform = &v1.Platform{OS: "linux", Architecture: "amd64"}
	if _, err := publish.Build(ctx, patch, o); !errors.Is(err, unpack.ErrNoPlatform) || strings.ContainsAny(err.Error(), "\n\x1b") {
		t.Errorf("a base whose config names a platform of control characters: %q", err)
	}
}

// Destinations are written one after the other, each whole or not at
// all: when one fails, the error says which were written before it. A
// bad tag is refused before anything is built or written.
func TestBuildSaysWhatWasWritten(t *testing.T) {
	ctx := context.Background()
	dir := tree(t, "settings", map[string]string{"cm.yaml": configMap})
	st, open := store(t)
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	good := filepath.Join(t.TempDir(), "a.tar")
	_, err := publish.Build(ctx, dir, publish.Options{Tags: []string{"x:1"}, Store: open, Outputs: []source.Ref{
		{Kind: source.KindArchive, Path: good},
		{Kind: source.KindLayout, Path: filepath.Join(file, "layout")},
	}})
	if err == nil || !strings.Contains(err.Error(), "(written before it: x:1, oci-archive:"+good+")") {
		t.Errorf("a failed second output: %v, want the tag and the first output named", err)
	}
	if _, err := st.Resolve("x:1"); err != nil {
		t.Errorf("the tag written before the failure: %v", err)
	}
	_, err = publish.Build(ctx, dir, publish.Options{Tags: []string{"y:1", "oci:bad"}, Store: open})
	if !errors.Is(err, source.ErrStoreName) {
		t.Errorf("a bad tag: %v, want ErrStoreName", err)
	}
	if _, err := st.Resolve("y:1"); err == nil {
		t.Error("a build with a bad tag wrote its good one")
	}
}
