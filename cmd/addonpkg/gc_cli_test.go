package main

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/addonpkg/addonpkg/pkg/imagelock"
	"github.com/addonpkg/addonpkg/pkg/layout"
)

// gcLayout builds into oci:DIR:1 an add-on that runs n tiny images,
// writes the images beside it and its image lock pinning them: what copy
// --with-images reads.
func gcLayout(t *testing.T, n int) string {
	t.Helper()
	ctx := context.Background()
	tree := t.TempDir()
	var containers strings.Builder
	for i := range n {
		fmt.Fprintf(&containers, "      - name: c%d\n        image: registry.example/app/i%d:1\n", i, i)
	}
	cliWriteFile(t, filepath.Join(tree, "deploy.yaml"), "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  template:\n    spec:\n      containers:\n"+containers.String())
	dir := filepath.Join(t.TempDir(), "layout")
	cliMust(t, "build", tree, "--name", "web", "--output", "oci:"+dir+":1")
	st, err := layout.Open(dir)
	must(t, err)
	subject, err := st.Resolve("1")
	must(t, err)
	subject.Annotations = nil
	base := mutate.MediaType(mutate.ConfigMediaType(empty.Image, types.OCIConfigJSON), types.OCIManifestSchema1)
	lock := &imagelock.Lock{Images: []imagelock.Image{}}
	for i := range n {
		img, err := mutate.AppendLayers(base, static.NewLayer([]byte(fmt.Sprintf("image %d", i)), types.OCILayer))
		must(t, err)
		d, err := st.WriteImage(ctx, img, nil)
		must(t, err)
		ref := fmt.Sprintf("registry.example/app/i%d:1", i)
		m, err := imagelock.MirrorReference("", ref, d.Digest.String())
		must(t, err)
		lock.Images = append(lock.Images, imagelock.Image{Image: ref, Digest: d.Digest.String(), MediaType: string(d.MediaType), Mirrored: m})
	}
	_, err = imagelock.Store(ctx, lock, subject, st)
	must(t, err)
	return dir
}

// Issue 25: gc never collected the untagged entries of the store (the
// images and image lock copy --with-images wrote, signatures), nor said
// why it kept them. After rm of the add-on, gc removes what only it
// held (its images, lock and signature) and keeps what another tag
// holds; it prints what it removed and the bytes freed, and --json says
// which entries went and why each kept one stays.
func TestCLIGCCollectsWhatOnlyARemovedAddonHeld(t *testing.T) {
	t.Parallel()
	home := cliNewHome(t)
	cliMust(t, "build", cliExampleDir("coredns"), "-t", "keep:1")
	kept := cliBlobNames(t, home)
	src := gcLayout(t, 3)
	cliMust(t, "copy", "--with-images", "-q", "oci:"+src+":1", "web:1")
	priv, _ := cliKeys(t, "a")
	cliMust(t, "sign", "--key", priv, "web:1")
	withWeb := cliBlobNames(t, home)

	// Everything is reached: the images through the lock, the lock and
	// the signature through the add-on.
	r := cliRun(t, "gc")
	if r.code != 0 || !strings.Contains(r.stderr, "removed 0 files") {
		t.Errorf("gc with web:1 tagged: exit %d, %q", r.code, r.stderr)
	}
	if got := cliBlobNames(t, home); !slices.Equal(got, withWeb) {
		t.Fatalf("gc removed blobs web:1 reaches: %d left of %d", len(got), len(withWeb))
	}

	cliMust(t, "rm", "web:1")
	r = cliRun(t, "gc")
	if r.code != 0 {
		t.Fatalf("gc: exit %d, %s", r.code, r.stderr)
	}
	if got := cliBlobNames(t, home); !slices.Equal(got, kept) {
		t.Errorf("after rm web:1 and gc, %d blobs left, want keep:1's %d", len(got), len(kept))
	}
	t.Logf("gc said:\n%s", r.stderr)
	for _, want := range []string{"image lock", "freed"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("gc's report lacks %q:\n%s", want, r.stderr)
		}
	}
	if rows := cliImagesJSON(t); len(rows) != 1 || rows[0].Name != "keep:1" {
		t.Errorf("images after gc: %+v", rows)
	}
	cliMust(t, "unpack", "keep:1", "-o", filepath.Join(t.TempDir(), "out"))
}

// gc --json lists the entries it removed, each with why, and the entries
// no tag names that it kept, each with what keeps it.
func TestCLIGCJSONSaysWhy(t *testing.T) {
	t.Parallel()
	home := cliNewHome(t)
	src := gcLayout(t, 2)
	cliMust(t, "copy", "--with-images", "-q", "oci:"+src+":1", "web:1")
	type entry struct {
		Name, Digest, ArtifactType, Why string
	}
	var res struct {
		Removed    int     `json:"removed"`
		FreedBytes int64   `json:"freedBytes"`
		Entries    []entry `json:"entries"`
		Kept       []entry `json:"kept"`
	}
	out := cliMust(t, "gc", "--json")
	must(t, json.Unmarshal([]byte(out), &res))
	// The two images, the lock, and the add-on's own untagged entry
	// (copy writes it by digest, then tags it).
	if res.Removed != 0 || len(res.Entries) != 0 || len(res.Kept) != 4 {
		t.Fatalf("gc --json with web:1 tagged: %s", out)
	}
	for _, k := range res.Kept {
		if !strings.Contains(k.Why, "tagged web:1") {
			t.Errorf("kept %s: %q, want it to say web:1 reaches it", k.Digest, k.Why)
		}
	}
	cliMust(t, "rm", "web:1")
	res.Entries, res.Kept = nil, nil
	out = cliMust(t, "gc", "--json")
	must(t, json.Unmarshal([]byte(out), &res))
	if len(res.Entries) != 4 || len(res.Kept) != 0 || res.FreedBytes <= 0 || res.Removed == 0 {
		t.Errorf("gc --json after rm web:1: %s", out)
	}
	for _, e := range res.Entries {
		if e.Why == "" || e.Digest == "" {
			t.Errorf("removed entry without a digest or a reason: %+v", e)
		}
	}
	if left := cliBlobNames(t, home); len(left) != 0 {
		t.Errorf("blobs left in an empty store: %q", left)
	}
}
