package unpack_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/addonpkg/addonpkg/pkg/layout"
	"github.com/addonpkg/addonpkg/pkg/mediatypes"
	"github.com/addonpkg/addonpkg/pkg/unpack"
)

// randomImage is a generated multi-layer image-form image together with
// the tree the OCI changeset rules give (the generator's own model).
type randomImage struct {
	layers [][]ent
	model  tree // expected add-on tree, relative to /addon
}

// genRandomImage generates, deterministically from seed, 3 to 5 layers of
// files, directories and links under addon/, with whiteouts of existing
// paths, opaque directories, overwrites, type changes (file <-> dir, dir
// -> link) and junk outside addon/. The layers are shaped as real tools
// write them: in a layer, whiteouts and opaque markers come before the
// entries they could be confused with, no path is written twice, and no
// entry passes through a link.
func genRandomImage(seed uint64) randomImage {
	r := rand.New(rand.NewPCG(seed, 0xadd0_0c1))
	names := []string{"a.yaml", "b.yaml", "c.json", "d", "e", "sub", "x", "y.yml", "base", "overlays"}
	state := tree{} // the add-on tree so far (paths relative to addon/)
	var out randomImage
	n := 3 + r.IntN(3)

	pick := func(kind string) (string, bool) { // a random existing path of a kind
		var ps []string
		for p, nd := range state {
			if kind == "" || nd.Kind == kind {
				ps = append(ps, p)
			}
		}
		if len(ps) == 0 {
			return "", false
		}
		slices.Sort(ps)
		return ps[r.IntN(len(ps))], true
	}
	removeTree := func(p string) {
		for q := range state {
			if q == p || strings.HasPrefix(q, p+"/") {
				delete(state, q)
			}
		}
	}
	clearDir := func(p string) {
		for q := range state {
			if p == "." || strings.HasPrefix(q, p+"/") {
				delete(state, q)
			}
		}
	}
	full := func(p string) string {
		if p == "." {
			return "addon"
		}
		return "addon/" + p
	}

	for li := range n {
		var es []ent
		written := map[string]bool{} // paths this layer wrote or marked
		var layerFiles []string      // regular files this layer wrote
		dotSlash := r.IntN(5) == 0   // this layer names entries ./addon/...
		emit := func(e ent) {
			if dotSlash {
				e.name = "./" + e.name
			}
			es = append(es, e)
		}
		// mkParents emits (or, at random, implies) the directories above p
		// and records them.
		mkParents := func(p string) {
			dir := path.Dir(p)
			if dir == "." {
				if li == 0 || r.IntN(3) == 0 {
					if !written["."] {
						emit(dirE("addon/"))
						written["."] = true
					}
				}
				return
			}
			parts := strings.Split(dir, "/")
			for i := range parts {
				d := strings.Join(parts[:i+1], "/")
				if !written[d] && (state[d].Kind != "dir" || r.IntN(2) == 0) {
					emit(dirE(full(d) + "/"))
					written[d] = true
				}
				state[d] = D
			}
		}
		// newPath picks a fresh or existing file path under an existing
		// directory, not written by this layer, not below a link or file.
		newPath := func() (string, bool) {
			for range 20 {
				parent := "."
				if d, ok := pick("dir"); ok && r.IntN(3) > 0 {
					parent = d
				}
				p := path.Join(parent, names[r.IntN(len(names))])
				if r.IntN(4) == 0 { // a new subdirectory on the way
					p = path.Join(parent, names[r.IntN(len(names))], names[r.IntN(len(names))])
				}
				ok := !written[p] && state[p].Kind != "dir" && state[p].Kind != "link"
				for q := path.Dir(p); q != "."; q = path.Dir(q) {
					if written[q] && state[q].Kind != "dir" {
						ok = false // replaced by a file or link in this layer
					}
				}
				if ok {
					return p, true
				}
			}
			return "", false
		}
		content := func(p string) string { return fmt.Sprintf("seed %d layer %d %s\n", seed, li, p) }

		if li > 0 {
			// Whiteouts of existing paths (files, dirs and links).
			for range r.IntN(3) {
				p, ok := pick("")
				if !ok || written[p] {
					continue
				}
				dir := path.Dir(p)
				emit(whiteout(full(dir), path.Base(p)))
				written[p] = true
				removeTree(p)
			}
			// An opaque directory, sometimes the content directory itself.
			if r.IntN(2) == 0 {
				d, ok := pick("dir")
				if !ok || r.IntN(4) == 0 {
					d = "."
				}
				if !written[d] {
					emit(dirE(full(d) + "/"))
					emit(opaque(full(d)))
					written[d] = true
					clearDir(d)
					if d != "." {
						state[d] = D
					}
				}
			}
			// Type changes: a file becomes a directory, a directory a file
			// or a link.
			if r.IntN(2) == 0 {
				if p, ok := pick("file"); ok && !written[p] {
					emit(dirE(full(p) + "/"))
					c := p + "/inner.yaml"
					emit(file(full(c), content(c)))
					written[p], written[c] = true, true
					state[p], state[c] = D, F(content(c))
				}
			}
			if r.IntN(2) == 0 {
				if p, ok := pick("dir"); ok && !written[p] && !writtenBelow(written, p) {
					removeTree(p)
					if f, ok := pick("file"); ok && r.IntN(2) == 0 {
						t := relLink(p, f)
						emit(symlink(full(p), t))
						state[p] = L(t)
					} else {
						emit(file(full(p), content(p)))
						state[p] = F(content(p))
					}
					written[p] = true
				}
			}
			// Overwrites of existing files.
			for range r.IntN(3) {
				if p, ok := pick("file"); ok && !written[p] && !writtenAbove(written, state, p) {
					emit(file(full(p), content(p)))
					written[p] = true
					state[p] = F(content(p))
				}
			}
		}
		// New files, the last layer at least one.
		k := 1 + r.IntN(5)
		for range k {
			p, ok := newPath()
			if !ok {
				continue
			}
			mkParents(p)
			emit(file(full(p), content(p)))
			written[p] = true
			state[p] = F(content(p))
			layerFiles = append(layerFiles, p)
		}
		// A hard link to a file this layer wrote, now and then; upper
		// layers may then replace or delete the target.
		if len(layerFiles) > 0 && r.IntN(2) == 0 {
			f := layerFiles[r.IntN(len(layerFiles))]
			if p, ok := newPath(); ok && p != f {
				mkParents(p)
				target := full(f)
				if dotSlash {
					target = "./" + target
				}
				emit(hardlink(full(p), target))
				written[p] = true
				state[p] = state[f]
			}
		}
		// A link to an existing file, now and then.
		if r.IntN(3) == 0 {
			if f, ok := pick("file"); ok {
				if p, ok := newPath(); ok && p != f {
					mkParents(p)
					t := relLink(p, f)
					emit(symlink(full(p), t))
					written[p] = true
					state[p] = L(t)
				}
			}
		}
		// Junk outside addon/, and whiteouts of it.
		for range r.IntN(3) {
			j := []string{"etc/os-release", "usr/share/doc/x", "var/lib/y", "addon.bak/z", "opt/addon/w"}[r.IntN(5)]
			if r.IntN(4) == 0 {
				emit(whiteout(path.Dir(j), path.Base(j)))
			} else {
				emit(file(j, content(j)))
			}
		}
		// Make sure the last layer adds a file that nothing hides.
		if li == n-1 {
			p := fmt.Sprintf("final-%d.yaml", seed)
			if !written["."] {
				emit(dirE("addon/"))
			}
			emit(file(full(p), content(p)))
			state[p] = F(content(p))
		}
		out.layers = append(out.layers, es)
	}
	out.model = state
	return out
}

// writtenBelow reports whether the layer already wrote something below p.
func writtenBelow(written map[string]bool, p string) bool {
	for q := range written {
		if strings.HasPrefix(q, p+"/") {
			return true
		}
	}
	return false
}

// writtenAbove reports whether one of p's ancestors is written by this
// layer as something other than a directory or is not a directory.
func writtenAbove(written map[string]bool, state tree, p string) bool {
	for q := path.Dir(p); q != "."; q = path.Dir(q) {
		if state[q].Kind != "dir" {
			return true
		}
	}
	return false
}

// relLink is the relative target of a link at p pointing to the tree path
// target.
func relLink(p, target string) string {
	depth := strings.Count(p, "/")
	return strings.Repeat("../", depth) + target
}

// image builds the OCI image of the generated layers, alternating gzip
// and uncompressed layers.
func (ri randomImage) image(t testing.TB) v1.Image {
	var ls []v1.Layer
	for i, es := range ri.layers {
		if i%3 == 2 {
			ls = append(ls, tarLayer(tarBytes(es...), mediatypes.None, types.OCIUncompressedLayer))
		} else {
			ls = append(ls, ociLayer(es...))
		}
	}
	return imageOf(t, imageOpts{}, ls...)
}

func (ri randomImage) describe() string {
	var b strings.Builder
	for i, es := range ri.layers {
		fmt.Fprintf(&b, "layer %d:\n", i+1)
		for _, e := range es {
			switch e.typ {
			case '5':
				fmt.Fprintf(&b, "    dir  %s\n", e.name)
			case '2':
				fmt.Fprintf(&b, "    link %s -> %s\n", e.name, e.link)
			case '1':
				fmt.Fprintf(&b, "    hard %s => %s\n", e.name, e.link)
			default:
				fmt.Fprintf(&b, "    file %s\n", e.name)
			}
		}
	}
	return b.String()
}

const randomImages = 12

// randomSeeds are the seeds of the generated images: the first
// randomImages, and seeds that once showed a difference.
func randomSeeds() []uint64 {
	var seeds []uint64
	for s := range uint64(randomImages) {
		seeds = append(seeds, s)
	}
	// 244 (a file) and 896 (a symlink): a middle layer replaced a
	// directory that the next layer made again; addonpkg brought the
	// bottom layer's files back.
	return append(seeds, 244, 896)
}

// The generated images use every feature the cross-check is about.
func TestRandomImagesCoverage(t *testing.T) {
	count := map[string]int{}
	for _, seed := range randomSeeds() {
		ri := genRandomImage(seed)
		count["layers"] += len(ri.layers)
		count["entries in the tree"] += len(ri.model)
		for _, es := range ri.layers {
			for _, e := range es {
				base := path.Base(e.name)
				switch {
				case base == ".wh..wh..opq":
					count["opaque markers"]++
				case strings.HasPrefix(base, ".wh."):
					count["whiteouts"]++
				case e.typ == '2':
					count["symlinks"]++
				case e.typ == '1':
					count["hardlinks"]++
				case !strings.HasPrefix(strings.TrimPrefix(e.name, "./"), "addon"):
					count["entries outside addon/"]++
				case strings.HasPrefix(e.name, "./"):
					count["./ names"]++
				}
			}
		}
	}
	t.Logf("%d images: %v", randomImages, count)
	for _, k := range []string{"opaque markers", "whiteouts", "symlinks", "hardlinks", "entries outside addon/", "./ names"} {
		if count[k] < 3 {
			t.Errorf("only %d %s in %d images", count[k], k, randomImages)
		}
	}
	if count["layers"] < 3*randomImages || count["entries in the tree"] < 5*randomImages {
		t.Errorf("images too small: %v", count)
	}
}

// The generator's model and addonpkg agree on every generated image; this
// needs no umoci.
func TestRandomImagesModel(t *testing.T) {
	for _, seed := range randomSeeds() {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			t.Parallel()
			ri := genRandomImage(seed)
			a, err := unpack.Image(context.Background(), ri.image(t), unpack.Options{})
			if err != nil {
				t.Fatalf("unpack: %v\n%s", err, ri.describe())
			}
			if d := diffTrees(ri.model, treeOf(t, a.FS)); d != "" {
				t.Errorf("addonpkg differs from the model (- model, + addonpkg):\n%s%s", d, ri.describe())
			}
		})
	}
}

// addonpkg's tree equals rootfs/addon of `umoci unpack --rootless` on
// generated multi-layer images.
func TestUmociCrossCheck(t *testing.T) {
	umoci, err := exec.LookPath("umoci")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("umoci is not installed (apt-get install -y umoci)")
		}
		t.Skip("umoci is not installed (apt-get install -y umoci)")
	}
	for _, seed := range randomSeeds() {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			ri := genRandomImage(seed)
			im := ri.image(t)

			dir := t.TempDir()
			store, err := layout.Init(filepath.Join(dir, "oci"))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := store.WriteImage(ctx, im, nil, "tag"); err != nil {
				t.Fatal(err)
			}
			bundle := filepath.Join(dir, "bundle")
			cmd := exec.CommandContext(ctx, umoci, "unpack", "--rootless", "--image", filepath.Join(dir, "oci")+":tag", bundle)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("umoci unpack: %v\n%s", err, out)
			}
			want := treeOf(t, os.DirFS(filepath.Join(bundle, "rootfs", "addon")))

			a, err := unpack.Image(ctx, im, unpack.Options{})
			if err != nil {
				t.Fatalf("unpack: %v\n%s", err, ri.describe())
			}
			if d := diffTrees(want, treeOf(t, a.FS)); d != "" {
				t.Errorf("addonpkg differs from umoci (- umoci, + addonpkg):\n%s%s", d, ri.describe())
			}
		})
	}
}
