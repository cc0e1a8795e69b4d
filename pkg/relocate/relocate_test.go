package relocate_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/addonpkg/addonpkg/pkg/imagelock"
	"github.com/addonpkg/addonpkg/pkg/mediatypes"
	"github.com/addonpkg/addonpkg/pkg/reference"
	"github.com/addonpkg/addonpkg/pkg/relocate"
	"github.com/addonpkg/addonpkg/pkg/render"
)

const (
	dA = "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	dB = "sha256:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
	dC = "sha256:cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc"
)

func lockOf(images ...string) *imagelock.Lock {
	l := &imagelock.Lock{MediaType: mediatypes.ImagesLock, Subject: dC}
	digests := []string{dA, dB, dC}
	for i, im := range images {
		d := digests[i%3]
		if _, pin, ok := strings.Cut(im, "@"); ok {
			d = pin // a lock may not change a pinned digest
		}
		m, err := imagelock.MirrorReference("", im, d)
		if err != nil {
			panic(err)
		}
		l.Images = append(l.Images, imagelock.Image{Image: im, Digest: d, Mirrored: m})
	}
	return l
}

// redirected is a lock mapping a pinned reference to another digest, as an
// attacker who replaces the unsigned lock writes it.
func redirected(image, digest string) *imagelock.Lock {
	repo, _, _ := strings.Cut(image, "@")
	repo = strings.TrimPrefix(repo, "ghcr.io/")
	return &imagelock.Lock{MediaType: mediatypes.ImagesLock, Subject: dC, Images: []imagelock.Image{
		{Image: image, Digest: digest, Mirrored: repo + "@" + digest},
	}}
}

const deployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  template:
    spec:
      initContainers:
      - name: init
        image: busybox:1.36
      containers:
      - name: web
        image: registry.k8s.io/coredns/coredns:v1.11.1
`

const cronJob = `apiVersion: batch/v1
kind: CronJob
metadata:
  name: tick
spec:
  schedule: "* * * * *"
  jobTemplate:
    spec:
      template:
        spec:
          containers:
          - name: tick
            image: ghcr.io/example/tick@` + dB + `
          restartPolicy: Never
`

const pod = `apiVersion: v1
kind: Pod
metadata:
  name: debug
spec:
  containers:
  - name: main
    image: busybox:1.36
  ephemeralContainers:
  - name: dbg
    image: ghcr.io/example/tick@` + dB + `
`

// A custom resource with a containers list: its image is not the
// add-on's (spec 6.2: the workloads' pod specs only), so it is neither
// in the inventory nor relocated, plain or kustomize, nor checked
// against the lock.
const custom = `apiVersion: example.com/v1
kind: Runner
metadata:
  name: r
spec:
  containers:
  - name: x
    image: busybox:1.36
`

func renderTree(t *testing.T, files map[string]string) (*render.Result, fstest.MapFS) {
	t.Helper()
	fsys := fstest.MapFS{}
	for n, s := range files {
		fsys[n] = &fstest.MapFile{Data: []byte(s), Mode: 0o644}
	}
	res, err := render.Render(context.Background(), fsys, render.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return res, fsys
}

func imagesOf(res *render.Result) []string {
	var out []string
	for _, d := range res.Documents {
		out = append(out, d.Images...)
	}
	slices.Sort(out)
	return out
}

func TestRelocate(t *testing.T) {
	const mirror = "127.0.0.1:5000/mirror"
	lock := lockOf("busybox:1.36", "ghcr.io/example/tick@"+dB, "registry.k8s.io/coredns/coredns:v1.11.1")
	bb := mirror + "/library/busybox@" + dA
	tick := mirror + "/example/tick@" + dB
	coredns := mirror + "/coredns/coredns@" + dC
	tests := []struct {
		name        string
		files       map[string]string
		want        []string // images of the relocated stream
		unrelocated []string
	}{
		{"plain deployment", map[string]string{"d.yaml": deployment}, []string{bb, coredns}, nil},
		{"plain cronjob", map[string]string{"c.yaml": cronJob}, []string{tick}, nil},
		{"plain pod with an ephemeral container", map[string]string{"p.yaml": pod}, []string{bb, tick}, nil},
		{"plain custom resource left", map[string]string{"a.yaml": deployment, "b.yaml": custom}, nil, nil},
		{"kustomize", map[string]string{
			"kustomization.yaml": "resources:\n- d.yaml\n- c.yaml\n- p.yaml\n",
			"d.yaml":             deployment, "c.yaml": cronJob, "p.yaml": pod,
		}, nil, nil},
		{"kustomize with its own images entry", map[string]string{
			"kustomization.yaml": "resources:\n- d.yaml\nimages:\n- name: busybox\n  newTag: \"1.36\"\n",
			"d.yaml":             strings.Replace(deployment, "busybox:1.36", "busybox:1.35", 1),
		}, []string{bb, coredns}, nil},
		{"kustomize with an empty images field", map[string]string{
			"kustomization.yaml": "resources:\n- d.yaml\nimages:\n",
			"d.yaml":             deployment,
		}, nil, nil},
		{"kustomize root named Kustomization", map[string]string{
			"Kustomization":           "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n- base\n",
			"base/kustomization.yaml": "resources:\n- c.yaml\n",
			"base/c.yaml":             cronJob,
		}, nil, nil},
		{"plain JSON manifest", map[string]string{"p.json": `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"j"},"spec":{"containers":[{"name":"c","image":"busybox:1.36"}]}}`}, []string{bb}, nil},
		{"kustomize custom resource left", map[string]string{
			"kustomization.yaml": "resources:\n- b.yaml\n",
			"b.yaml":             custom,
		}, nil, nil},
		{"kustomize custom resource beside a workload left", map[string]string{
			"kustomization.yaml": "resources:\n- d.yaml\n- b.yaml\n",
			"d.yaml":             deployment, "b.yaml": custom,
		}, nil, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, fsys := renderTree(t, tc.files)
			before := string(res.YAML())
			got, err := relocate.Relocate(context.Background(), res, fsys, relocate.Options{Mirror: mirror, Lock: lock})
			if err != nil {
				t.Fatal(err)
			}
			if string(res.YAML()) != before {
				t.Error("the input result changed")
			}
			want := tc.want
			if want == nil { // every image relocated
				for _, im := range imagesOf(res) {
					r, err := imagelock.MirrorReference(mirror, im, digestOf(lock, im))
					if err != nil {
						t.Fatal(err)
					}
					want = append(want, r)
				}
			}
			slices.Sort(want)
			if g := imagesOf(got.Result); !slices.Equal(want, g) {
				t.Errorf("images = %q, want %q\n%s", g, want, got.YAML())
			}
			if _, ok := tc.files["b.yaml"]; ok && !strings.Contains(string(got.YAML()), "image: busybox:1.36\n") {
				t.Errorf("the custom resource's image was rewritten:\n%s", got.YAML())
			}
			if !slices.Equal(tc.unrelocated, got.Unrelocated) {
				t.Errorf("unrelocated = %q, want %q", got.Unrelocated, tc.unrelocated)
			}
			// The stream names the images it was given only where they
			// were left.
			out := string(got.YAML())
			for _, im := range []string{"image: registry.k8s.io/", "image: ghcr.io/"} {
				if strings.Contains(out, im) {
					t.Errorf("%q left in:\n%s", im, out)
				}
			}
		})
	}
}

// kustomize's images transformer rewrites the containers of custom
// resources too, matching by name: a custom resource's busybox:1.35 got
// the digest of the Deployment's busybox:1.36. Relocated with kustomize,
// a custom resource keeps its text, as in plain manifests.
func TestRelocateKustomizeLeavesCustomResources(t *testing.T) {
	runner := strings.Replace(custom, "  containers:\n  - name: x\n    image: busybox:1.36\n",
		"  template:\n    spec:\n      containers:\n      - name: x\n        image: busybox:1.35\n", 1)
	res, fsys := renderTree(t, map[string]string{
		"kustomization.yaml": "resources:\n- d.yaml\n- r.yaml\n",
		"d.yaml":             deployment, "r.yaml": runner,
	})
	got, err := relocate.Relocate(context.Background(), res, fsys, relocate.Options{Mirror: "m.example", Lock: lockOf("busybox:1.36", "registry.k8s.io/coredns/coredns:v1.11.1")})
	if err != nil {
		t.Fatal(err)
	}
	for i, d := range got.Documents {
		switch d.Object.Kind {
		case "Runner":
			if string(d.Raw) != string(res.Documents[i].Raw) {
				t.Errorf("the custom resource changed:\n%s", d.Raw)
			}
		case "Deployment":
			if !strings.Contains(string(d.Raw), "image: m.example/library/busybox@"+dA) {
				t.Errorf("the deployment's busybox was not relocated:\n%s", d.Raw)
			}
		}
	}
}

func digestOf(l *imagelock.Lock, im string) string {
	e, _ := l.Lookup(im)
	return e.Digest
}

func TestRelocateRefuses(t *testing.T) {
	tests := []struct {
		name   string
		files  map[string]string
		lock   *imagelock.Lock
		mirror string
		want   error
		msg    string
	}{
		{"plain image missing", map[string]string{"d.yaml": deployment}, lockOf("busybox:1.36"), "mirror.example", relocate.ErrNotInLock, "registry.k8s.io/coredns/coredns:v1.11.1"},
		{"kustomize image missing", map[string]string{"kustomization.yaml": "resources:\n- d.yaml\n", "d.yaml": deployment}, lockOf("registry.k8s.io/coredns/coredns:v1.11.1"), "mirror.example", relocate.ErrNotInLock, "busybox:1.36"},
		{"kustomize two tags of one name", map[string]string{
			"kustomization.yaml": "resources:\n- d.yaml\n- p.yaml\n", "d.yaml": deployment,
			"p.yaml": strings.Replace(pod, "busybox:1.36", "busybox:1.37", 1),
		}, lockOf("busybox:1.36", "busybox:1.37", "ghcr.io/example/tick@"+dB, "registry.k8s.io/coredns/coredns:v1.11.1"), "mirror.example", relocate.ErrAmbiguous, "busybox"},
		{"no host in the mirror", map[string]string{"d.yaml": deployment}, lockOf("busybox:1.36"), "mirror", reference.ErrBadMirror, "mirror"},
		{"digest in the mirror", map[string]string{"d.yaml": deployment}, lockOf("busybox:1.36"), "mirror.example/x@" + dA, reference.ErrBadMirror, "mirror"},
		{"no lock", map[string]string{"d.yaml": deployment}, nil, "mirror.example", imagelock.ErrNoLock, "lock"},
		{"lock redirects a pinned image", map[string]string{"p.yaml": pod}, redirected("ghcr.io/example/tick@"+dB, dA), "mirror.example", imagelock.ErrPinnedDigest, "ghcr.io/example/tick@" + dB},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, fsys := renderTree(t, tc.files)
			got, err := relocate.Relocate(context.Background(), res, fsys, relocate.Options{Mirror: tc.mirror, Lock: tc.lock})
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v (result %v)", err, tc.want, got)
			}
			if !strings.Contains(err.Error(), tc.msg) || strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q: want one line naming %q", err, tc.msg)
			}
		})
	}
}

func TestRelocateKeepsUntouchedBytes(t *testing.T) {
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c   # a comment\ndata:\n  k: v\n"
	res, fsys := renderTree(t, map[string]string{"a.yaml": cm, "d.yaml": deployment})
	got, err := relocate.Relocate(context.Background(), res, fsys, relocate.Options{Mirror: "m.example", Lock: lockOf("busybox:1.36", "x.example/y", "registry.k8s.io/coredns/coredns:v1.11.1")})
	if err != nil {
		t.Fatal(err)
	}
	if string(got.Documents[0].Raw) != cm {
		t.Errorf("config map changed:\n%s", got.Documents[0].Raw)
	}
}

// A render that dropped its text (render.Options.DropText) relocates to
// the same stream as one that kept it.
func TestRelocateDropText(t *testing.T) {
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c   # a comment\ndata:\n  k: v"
	res, fsys := renderTree(t, map[string]string{"a.yaml": cm, "d.yaml": deployment})
	dropped, err := render.Render(context.Background(), fsys, render.Options{DropText: true})
	if err != nil {
		t.Fatal(err)
	}
	opts := relocate.Options{Mirror: "m.example", Lock: lockOf("busybox:1.36", "x.example/y", "registry.k8s.io/coredns/coredns:v1.11.1")}
	want, err := relocate.Relocate(context.Background(), res, fsys, opts)
	if err != nil {
		t.Fatal(err)
	}
	got, err := relocate.Relocate(context.Background(), dropped, fsys, opts)
	if err != nil {
		t.Fatal(err)
	}
	if g, w := string(got.YAML()), string(want.YAML()); g != w || !strings.Contains(g, "m.example/") {
		t.Errorf("relocated DropText stream:\n%s\nwant:\n%s", g, w)
	}
}

// An image written as an alias or through a merge key is rewritten too:
// the API server expands both, so a relocated stream ran it from its own
// registry, and Unrelocated did not name it.
func TestRelocateAliasedImages(t *testing.T) {
	const mirror = "m.example"
	doc := `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  annotations: {img: &img busybox:1.36}
spec:
  template:
    spec:
      containers:
      - name: a
        image: *img
      - <<: {image: "registry.k8s.io/coredns/coredns:v1.11.1"}
        name: b
`
	lock := lockOf("busybox:1.36", "registry.k8s.io/coredns/coredns:v1.11.1")
	res, fsys := renderTree(t, map[string]string{"d.yaml": doc})
	if g := imagesOf(res); len(g) != 2 {
		t.Fatalf("the render's images = %q, want both", g)
	}
	got, err := relocate.Relocate(context.Background(), res, fsys, relocate.Options{Mirror: mirror, Lock: lock})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{mirror + "/coredns/coredns@" + dB, mirror + "/library/busybox@" + dA}
	if g := imagesOf(got.Result); !slices.Equal(g, want) || len(got.Unrelocated) != 0 {
		t.Errorf("images = %q, unrelocated %q, want %q\n%s", g, got.Unrelocated, want, got.YAML())
	}
	if out := string(got.YAML()); strings.Contains(out, "*img") || strings.Contains(out, "<<") {
		t.Errorf("an alias or merge key is left:\n%s", out)
	}
}

// Two containers: keys (the API server reads the last) are rewritten
// both: the second was left at its registry, only warned about.
func TestRelocateDuplicateKeys(t *testing.T) {
	doc := strings.Replace(deployment, "      containers:\n", "      containers:\n      - {name: first, image: busybox:1.36}\n      containers:\n", 1)
	res, fsys := renderTree(t, map[string]string{"d.yaml": doc})
	got, err := relocate.Relocate(context.Background(), res, fsys, relocate.Options{Mirror: "m.example", Lock: lockOf("busybox:1.36", "registry.k8s.io/coredns/coredns:v1.11.1")})
	if err != nil {
		t.Fatal(err)
	}
	if out := string(got.YAML()); len(got.Unrelocated) != 0 || strings.Contains(out, "image: registry.k8s.io/") || strings.Contains(out, "image: busybox") {
		t.Errorf("unrelocated %q:\n%s", got.Unrelocated, out)
	}
}

// TestRelocateKustomizeNameIsNoPattern: kustomize's images transformer
// reads an images: entry's name as a regular expression (unescaped), so
// the entry for docker.io/library.nginx:1 also matched, and came first
// for, docker.io/library/nginx@DIGEST ('.' matches '/' and sorts before
// it): the pinned image was relocated to the digest the unsigned lock
// gave the other name. Each image is relocated to its own lock entry.
func TestRelocateKustomizeNameIsNoPattern(t *testing.T) {
	pinned := "docker.io/library/nginx@" + dB
	other := "docker.io/library.nginx:1"
	d := func(name, image string) string {
		return strings.NewReplacer("web", name, "busybox:1.36", image, "registry.k8s.io/coredns/coredns:v1.11.1", image).Replace(deployment)
	}
	files := map[string]string{
		"kustomization.yaml": "resources:\n- a.yaml\n- b.yaml\n",
		"a.yaml":             d("a", pinned),
		"b.yaml":             d("b", other),
	}
	res, fsys := renderTree(t, files)
	lock := lockOf(other, pinned) // other gets dA, an unsigned choice
	got, err := relocate.Relocate(context.Background(), res, fsys, relocate.Options{Mirror: "m.example", Lock: lock})
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range got.Documents {
		for _, im := range doc.Images {
			want, _ := imagelock.MirrorReference("m.example", pinned, dB)
			if doc.Object.Name == "b" {
				want, _ = imagelock.MirrorReference("m.example", other, digestOf(lock, other))
			}
			if im != want {
				t.Errorf("%s runs %s, want %s", doc.Object, im, want)
			}
		}
	}
}
