package e2e

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/addonpkg/addonpkg/internal/testing/testregistry"
)

// airgapImage is one container image the test add-on runs.
type airgapImage struct {
	repo   string // repository in registry A
	ref    string // as the manifests write it
	digest string // of what A holds
	index  bool
}

// pushAirgapImages builds three images with go-containerregistry and
// pushes them to r: a single image by tag, a two-platform index by tag,
// and an image referenced by digest.
func pushAirgapImages(t *testing.T, r *testregistry.Registry) []airgapImage {
	t.Helper()
	img := func() v1.Image {
		i, err := random.Image(512, 2)
		if err != nil {
			t.Fatal(err)
		}
		return mutate.MediaType(i, types.OCIManifestSchema1)
	}
	digest := func(d interface{ Digest() (v1.Hash, error) }) string {
		h, err := d.Digest()
		if err != nil {
			t.Fatal(err)
		}
		return h.String()
	}
	one, three := img(), img()
	multi := mutate.IndexMediaType(mutate.AppendManifests(empty.Index,
		mutate.IndexAddendum{Add: img(), Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: "amd64"}}},
		mutate.IndexAddendum{Add: img(), Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: "arm64"}}},
	), types.OCIImageIndex)
	push := func(ref string, w func(name.Reference) error) {
		r, err := name.ParseReference(ref)
		if err != nil {
			t.Fatal(err)
		}
		if err := w(r); err != nil {
			t.Fatalf("push %s: %v", ref, err)
		}
	}
	push(r.Host+"/app/one:1.0", func(ref name.Reference) error { return remote.Write(ref, one) })
	push(r.Host+"/app/multi:2.0", func(ref name.Reference) error { return remote.WriteIndex(ref, multi) })
	push(r.Host+"/lib/three:x", func(ref name.Reference) error { return remote.Write(ref, three) })
	return []airgapImage{
		{repo: "app/one", ref: r.Host + "/app/one:1.0", digest: digest(one)},
		{repo: "app/multi", ref: r.Host + "/app/multi:2.0", digest: digest(multi), index: true},
		{repo: "lib/three", ref: r.Host + "/lib/three@" + digest(three), digest: digest(three)},
	}
}

// airgapTrees are the test add-on as plain manifests and as a kustomize
// tree, running the three images.
func airgapTrees(t *testing.T, images []airgapImage) map[string]string {
	deploy := `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: demo
spec:
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      initContainers:
      - name: init
        image: ` + images[0].ref + `
      containers:
      - name: web
        image: ` + images[1].ref + `
---
apiVersion: batch/v1
kind: CronJob
metadata:
  name: tick
  namespace: demo
spec:
  schedule: "0 * * * *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: Never
          containers:
          - name: tick
            image: ` + images[2].ref + `
`
	plain := writeTree(t, filepath.Join(t.TempDir(), "airgap-plain"), map[string]string{"deploy.yaml": deploy})
	kust := writeTree(t, filepath.Join(t.TempDir(), "airgap-kustomize"), map[string]string{
		"kustomization.yaml": "resources:\n- deploy.yaml\ncommonLabels:\n  team: infra\n",
		"deploy.yaml":        deploy,
	})
	return map[string]string{"plain": plain, "kustomize": kust}
}

// TestAirgapWithImages is the air gap: an add-on and its three images are
// copied from registry A to an oci-archive, then with A stopped into
// registry B; unpack --relocate B renders only B's references, by digest,
// and B holds each image under the digest A had.
func TestAirgapWithImages(t *testing.T) {
	a := startRegistry(t, testregistry.Plain)
	b := startRegistry(t, testregistry.Plain)
	c := newCLI(t)
	images := pushAirgapImages(t, a)
	trees := airgapTrees(t, images)
	kinds := []string{"kustomize", "plain"}
	archives := map[string]string{}

	// Connected side: build, push to A, copy with images to an archive.
	for _, kind := range kinds {
		c.build(trees[kind], "-t", "airgap-"+kind+":1")
		c.ok("push", "airgap-"+kind+":1", a.Host+"/addons/airgap-"+kind+":1")
		archives[kind] = filepath.Join(t.TempDir(), kind+".tar")
		var out struct {
			Addon struct{ Reference string }
			Lock  struct {
				Images []struct{ Image, Digest, Mirrored string }
			}
		}
		c.okJSON(&out, "copy", "--with-images", "--json", a.Host+"/addons/airgap-"+kind+":1", "oci-archive:"+archives[kind]+":1")
		if len(out.Lock.Images) != 3 {
			t.Fatalf("%s: lock lists %d images, want 3: %+v", kind, len(out.Lock.Images), out.Lock)
		}
		for _, im := range images {
			i := slices.IndexFunc(out.Lock.Images, func(e struct{ Image, Digest, Mirrored string }) bool { return e.Image == im.ref })
			if i < 0 || out.Lock.Images[i].Digest != im.digest || out.Lock.Images[i].Mirrored != im.repo+"@"+im.digest {
				t.Errorf("%s: lock entry of %s = %+v, want digest %s mirrored %s@%s", kind, im.ref, out.Lock.Images, im.digest, im.repo, im.digest)
			}
		}
	}

	// The gap: A is gone.
	a.Stop()

	// The archive alone relocates, offline.
	for _, kind := range kinds {
		checkRelocated(t, kind, c.ok("unpack", "--relocate", b.Host, "oci-archive:"+archives[kind]+":1"), a, b, images)
	}

	// Disconnected side: the archive into B, then unpack from B.
	for _, kind := range kinds {
		ref := b.Host + "/addons/airgap-" + kind + ":1"
		c.ok("copy", "--with-images", "oci-archive:"+archives[kind]+":1", ref)
		checkRelocated(t, kind, c.ok("unpack", "--relocate", b.Host, ref), a, b, images)
	}

	// B holds every image, and both platforms of the index, under A's
	// digests.
	for _, im := range images {
		raw, _ := registryManifest(t, b, im.repo, im.digest)
		if got := sha256Digest(raw); got != im.digest {
			t.Errorf("%s in B: digest %s, want A's %s", im.repo, got, im.digest)
		}
		if !im.index {
			continue
		}
		var idx v1.IndexManifest
		if err := json.Unmarshal(raw, &idx); err != nil {
			t.Fatal(err)
		}
		if len(idx.Manifests) != 2 {
			t.Errorf("%s in B: %d platforms, want 2", im.repo, len(idx.Manifests))
		}
		for _, d := range idx.Manifests {
			child, _ := registryManifest(t, b, im.repo, d.Digest.String())
			if sha256Digest(child) != d.Digest.String() {
				t.Errorf("%s in B: platform %v digest changed", im.repo, d.Platform)
			}
		}
	}

	// An add-on copied without its images or its referrers has no lock:
	// refused, one line, nothing on stdout. (A plain copy carries the lock,
	// a referrer of the add-on, as it carries signatures.)
	c.ok("copy", "--no-referrers", "oci-archive:"+archives["plain"]+":1", b.Host+"/addons/bare:1")
	r := c.run("unpack", "--relocate", b.Host, b.Host+"/addons/bare:1")
	if line := mustFailOneLine(t, r); !strings.Contains(line, "no image lock") || r.stdout != "" {
		t.Errorf("unpack --relocate without a lock: %q, stdout %q", line, r.stdout)
	}
}

// checkRelocated checks a relocated stream names only B's references, by
// digest: each of the three images at B/REPO@DIGEST, nothing of A.
func checkRelocated(t *testing.T, kind, stream string, a, b *testregistry.Registry, images []airgapImage) {
	t.Helper()
	if strings.Contains(stream, a.Host) {
		t.Errorf("%s: the relocated stream still names registry A:\n%s", kind, stream)
	}
	var got []string
	for _, line := range strings.Split(stream, "\n") {
		if _, img, ok := strings.Cut(strings.TrimSpace(line), "image: "); ok {
			got = append(got, strings.Trim(img, `"`))
		}
	}
	var want []string
	for _, im := range images {
		want = append(want, b.Host+"/"+im.repo+"@"+im.digest)
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("%s: images = %q, want %q\n%s", kind, got, want, stream)
	}
	if kind == "kustomize" && !strings.Contains(stream, "team: infra") {
		t.Errorf("kustomize: the relocated stream lost the kustomization's own transformers:\n%s", stream)
	}
}
