package build_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"strings"
	"testing"

	"github.com/addonpkg/addonpkg/pkg/build"
	"github.com/addonpkg/addonpkg/pkg/filetree"
	"github.com/addonpkg/addonpkg/pkg/mediatypes"
	"github.com/addonpkg/addonpkg/pkg/pack"
)

// Package a one-file add-on in the artifact form.
func ExampleBuild() {
	src := filetree.NewBuilder()
	_ = src.WriteFile("configmap.yaml", []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: hello\n"), 0o644)

	res, err := build.Build(context.Background(), src.FS(), build.Options{
		Format:  pack.FormatArtifact,
		Name:    "hello",
		Version: "1.0.0",
	})
	if err != nil {
		log.Fatal(err)
	}
	m, err := res.Image.Manifest()
	if err != nil {
		log.Fatal(err)
	}
	c := res.Config
	fmt.Println(c.Name, c.Version, c.Kind, c.ContentRoot, c.Created)
	fmt.Println(m.ArtifactType)
	for _, o := range c.Inventory.Objects {
		fmt.Println(o.Kind, o.Name)
	}
	// Output:
	// hello 1.0.0 manifests / 1970-01-01T00:00:00Z
	// application/vnd.cncf.addon.config.v1+json
	// ConfigMap hello
}

const cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n"

// writeTree creates files (a trailing / makes a directory) under dir.

// A symlink to a file inside the tree is stored as that file's content.
// A symlink to a directory inside the tree is stored as a copy of it.
// Dangling links and cycles are refused, and quickly.
func TestBuildOptions(t *testing.T) {
	src := func() *filetree.FS {
		b := filetree.NewBuilder()
		_ = b.WriteFile("a.yaml", []byte(cm), 0o644)
		return b.FS()
	}
	ctx := context.Background()
	if _, err := build.Build(ctx, src(), build.Options{Format: "foo"}); err == nil {
		t.Error("format foo accepted")
	}
	if _, err := build.Build(ctx, src(), build.Options{Compression: "lz4"}); err == nil {
		t.Error("compression lz4 accepted")
	}
	for _, n := range []string{"a/b", "a\nb", strings.Repeat("x", 254)} {
		if _, err := build.Build(ctx, src(), build.Options{Name: n}); err == nil {
			t.Errorf("name %q accepted", n)
		}
	}
	bad := filetree.NewBuilder()
	_ = bad.WriteFile("a.yaml", []byte("kind: ConfigMap\n"), 0o644)
	if _, err := build.Build(ctx, bad.FS(), build.Options{}); !errors.Is(err, build.ErrValidation) {
		t.Errorf("invalid manifest: err = %v, want ErrValidation", err)
	}
	bad = filetree.NewBuilder()
	_ = bad.WriteFile("a.yaml", []byte("kind: ConfigMap\n"), 0o644)
	if _, err := build.Build(ctx, bad.FS(), build.Options{NoValidate: true}); err != nil {
		t.Errorf("NoValidate: %v", err)
	}
	// Every compression builds, and each gives its own digest.
	seen := map[string]bool{}
	for _, c := range []string{"gzip", "zstd", "none"} {
		for _, f := range formats {
			res, err := build.Build(ctx, src(), build.Options{Format: f, Compression: mediatypes.Compression(c)})
			if err != nil {
				t.Fatalf("%s/%s: %v", f, c, err)
			}
			if seen[res.Digest.String()] {
				t.Errorf("%s/%s: digest %s seen before", f, c, res.Digest)
			}
			seen[res.Digest.String()] = true
		}
	}
}

// spec/addon-v1.md section 8: writers refuse names that are not valid
// UTF-8 or that begin with .wh. (whiteouts, section 4.4).

// A tree that renders to no object is refused (a folder of READMEs, a
// file that is not a manifest); with NoValidate it is packed as it is.
func TestBuildNoObjects(t *testing.T) {
	b := filetree.NewBuilder()
	_ = b.WriteFile("README.md", []byte("# notes\n"), 0o644)
	tree := b.FS()
	_, err := build.Build(context.Background(), tree, build.Options{})
	if !errors.Is(err, build.ErrNoObjects) || !errors.Is(err, build.ErrValidation) {
		t.Errorf("Build of a tree without manifests: %v, want ErrNoObjects", err)
	}
	if _, err := build.Build(context.Background(), tree, build.Options{NoValidate: true}); err != nil {
		t.Errorf("Build with NoValidate: %v", err)
	}
}
