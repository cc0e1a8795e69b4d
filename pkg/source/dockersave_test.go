package source_test

import (
	"archive/tar"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/addonpkg/addonpkg/pkg/build"
	"github.com/addonpkg/addonpkg/pkg/pack"
	"github.com/addonpkg/addonpkg/pkg/source"
	"github.com/addonpkg/addonpkg/pkg/transfer"
	"github.com/addonpkg/addonpkg/pkg/unpack"
)

// Since Docker 25, `docker save` writes an OCI image layout (index.json
// naming the image as containerd does, with io.containerd.image.name and
// a bare-tag ref.name) together with the legacy manifest.json, whose
// paths point into blobs/sha256. One file is then read the same through
// every kind that claims it: docker-archive: (with or without a name, as
// written or normalized) and oci-archive: (with or without the tag).
func TestDockerSaveOCIArchive(t *testing.T) {
	ctx := context.Background()
	res := buildExample(t, build.Options{Name: "coredns", Format: pack.FormatImage})
	dir := t.TempDir()
	ly := filepath.Join(dir, "layout")
	ref, err := source.Parse("oci:" + ly + ":latest")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := transfer.Write(ctx, &source.Artifact{Image: res.Image, Digest: res.Digest}, ref, transfer.Options{}); err != nil {
		t.Fatal(err)
	}
	m, err := res.Image.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	size, err := res.Image.Size()
	if err != nil {
		t.Fatal(err)
	}
	writeJSON(t, filepath.Join(ly, "index.json"), map[string]any{
		"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json",
		"manifests": []any{map[string]any{
			"mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": res.Digest.String(), "size": size,
			"annotations": map[string]string{"io.containerd.image.name": "docker.io/library/coredns:1", "org.opencontainers.image.ref.name": "1"},
		}},
	})
	var layers []string
	for _, l := range m.Layers {
		layers = append(layers, "blobs/sha256/"+l.Digest.Hex)
	}
	writeJSON(t, filepath.Join(ly, "manifest.json"), []any{map[string]any{
		"Config": "blobs/sha256/" + m.Config.Digest.Hex, "RepoTags": []string{"coredns:1"}, "Layers": layers,
	}})
	archive := filepath.Join(dir, "save.tar")
	tarDir(t, ly, archive)

	want := ""
	for _, s := range []string{
		"docker-archive:" + archive,
		"docker-archive:" + archive + ":coredns:1",
		"docker-archive:" + archive + ":docker.io/library/coredns:1",
		"oci-archive:" + archive,
		"oci-archive:" + archive + ":1",
	} {
		ad, err := source.Resolve(ctx, s, source.Options{}, unpack.Options{})
		if err != nil {
			t.Errorf("%s: %v", s, err)
			continue
		}
		if want == "" {
			want = ad.Identity
		}
		if ad.Identity != want {
			t.Errorf("%s: identity %s, want %s as through the other kinds", s, ad.Identity, want)
		}
	}
}

func writeJSON(t *testing.T, file string, v any) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// tarDir writes the files below dir into the tar file out, as `docker
// save` lays them out (paths relative to dir, no leading ./).
func tarDir(t *testing.T, dir, out string) {
	t.Helper()
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	tw := tar.NewWriter(f)
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		h, err := tar.FileInfoHeader(info, "")
		if err != nil {
			return err
		}
		h.Name = filepath.ToSlash(rel)
		if d.IsDir() {
			h.Name += "/"
		}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		_, err = tw.Write(b)
		return err
	})
	if err == nil {
		err = tw.Close()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
}

// `docker save a b` and `crane pull a b FILE` write one archive with two
// images. Without a REFERENCE it is refused in one line that names the
// images to pick from (the tarball reader said "tarball must contain only
// a single image to be used with tarball.Image"); with one, it reads.
func TestDockerArchiveSeveralImages(t *testing.T) {
	ctx := context.Background()
	var imgs []v1.Image
	for _, ex := range []string{"coredns", "metrics-server"} {
		res := buildExample(t, build.Options{Name: ex, Format: pack.FormatImage})
		imgs = append(imgs, res.Image)
	}
	a, err := name.NewTag("example.com/addons/coredns:1")
	if err != nil {
		t.Fatal(err)
	}
	b, err := name.NewTag("example.com/addons/metrics-server:2")
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "two.tar")
	if err := tarball.MultiRefWriteToFile(file, map[name.Reference]v1.Image{a: imgs[0], b: imgs[1]}); err != nil {
		t.Fatal(err)
	}

	_, err = source.Resolve(ctx, "docker-archive:"+file, source.Options{}, unpack.Options{})
	if !errors.Is(err, source.ErrBadSource) || !strings.Contains(err.Error(), "holds 2 images") ||
		!strings.Contains(err.Error(), a.String()) || !strings.Contains(err.Error(), b.String()) {
		t.Fatalf("unnamed image of a two-image archive: %v, want ErrBadSource naming both images", err)
	}
	ad, err := source.Resolve(ctx, "docker-archive:"+file+":"+b.String(), source.Options{}, unpack.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if ad.Config.Name != "metrics-server" {
		t.Errorf("docker-archive:FILE:%s gave %s", b, ad.Config.Name)
	}
}
