package source_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/addonpkg/addonpkg/pkg/build"
	"github.com/addonpkg/addonpkg/pkg/folder"
	"github.com/addonpkg/addonpkg/pkg/pack"
	"github.com/addonpkg/addonpkg/pkg/source"
	"github.com/addonpkg/addonpkg/pkg/transfer"
	"github.com/addonpkg/addonpkg/pkg/unpack"
)

func TestProbeDocker25(t *testing.T) {
	ctx := context.Background()
	fsys, _ := folder.LoadDir(exampleDir(t, "coredns"))
	res, err := build.Build(ctx, fsys, build.Options{Name: "coredns", Format: pack.FormatImage})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ly := filepath.Join(dir, "l")
	ref, _ := source.Parse("oci:" + ly + ":latest")
	if _, err := transfer.Write(ctx, &source.Artifact{Image: res.Image, Digest: res.Digest}, ref, transfer.Options{}); err != nil {
		t.Fatal(err)
	}
	// rewrite index.json as docker 25 does
	m, _ := res.Image.Manifest()
	idx := map[string]any{"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json", "manifests": []any{map[string]any{
		"mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": res.Digest.String(), "size": mustSize(t, res),
		"annotations": map[string]string{"io.containerd.image.name": "docker.io/library/coredns:1", "org.opencontainers.image.ref.name": "1"}}}}
	b, _ := json.Marshal(idx)
	os.WriteFile(filepath.Join(ly, "index.json"), b, 0o644)
	var layers []string
	for _, l := range m.Layers {
		layers = append(layers, "blobs/sha256/"+l.Digest.Hex)
	}
	mj := []any{map[string]any{"Config": "blobs/sha256/" + m.Config.Digest.Hex, "RepoTags": []string{"coredns:1"}, "Layers": layers}}
	b, _ = json.Marshal(mj)
	os.WriteFile(filepath.Join(ly, "manifest.json"), b, 0o644)
	os.WriteFile(filepath.Join(ly, "repositories"), []byte(`{"coredns":{"1":"`+m.Layers[0].Digest.Hex+`"}}`), 0o644)
	tarf := filepath.Join(dir, "save.tar")
	if out, err := exec.Command("tar", "-C", ly, "-cf", tarf, ".").CombinedOutput(); err != nil {
		t.Fatal(string(out))
	}
	for _, s := range []string{"docker-archive:" + tarf, "docker-archive:" + tarf + ":coredns:1", "docker-archive:" + tarf + ":docker.io/library/coredns:1", "oci-archive:" + tarf, "oci-archive:" + tarf + ":1", "oci:" + ly} {
		ad, err := source.Resolve(ctx, s, source.Options{}, unpack.Options{})
		if err != nil {
			t.Errorf("%s: %v", s, err)
			continue
		}
		t.Logf("%s: %s %s", s, ad.Identity, ad.Pinned)
	}
}

func mustSize(t *testing.T, res *build.Result) int64 {
	n, err := res.Image.Size()
	if err != nil {
		t.Fatal(err)
	}
	return n
}
