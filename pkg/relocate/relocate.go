package relocate

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/api/pkg/util"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/addonpkg/addonpkg/pkg/addon"
	"github.com/addonpkg/addonpkg/pkg/imagelock"
	"github.com/addonpkg/addonpkg/pkg/reference"
	"github.com/addonpkg/addonpkg/pkg/render"
)

// Options of a relocation.
type Options struct {
	// Mirror is the registry prefix, HOST[:PORT][/PATH], the images were
	// copied under.
	Mirror string
	// Lock lists the images and their digests.
	Lock *imagelock.Lock
	// Render renders a kustomize tree again (Kind is set to kustomize).
	Render render.Options
}

// Result is a relocated render.
type Result struct {
	*render.Result
	// Unrelocated lists the images of the render (its inventory's, spec
	// 6.2) left as they were, sorted: none where every one is in the
	// lock, as the images of the workloads' pod specs are exactly those
	// rewritten. A custom resource's image fields are not the add-on's
	// images and are left as written.
	Unrelocated []string
}

// Errors callers can test with errors.Is.
var (
	// ErrNotInLock marks an image the stream references that the lock
	// does not list (see MissingError).
	ErrNotInLock = errors.New("image not in the image lock")
	// ErrAmbiguous marks a kustomize tree with two images of one name
	// (nginx:1.26 and nginx:1.27): kustomize's images transformer matches
	// by name and cannot give them two digests.
	ErrAmbiguous = errors.New("two images of one name")
)

// MissingError lists the images missing from the lock.
type MissingError struct {
	Images []string
}

func (e *MissingError) Error() string {
	return fmt.Sprintf("%s: %s (copy the add-on with its images again)", ErrNotInLock, strings.Join(e.Images, ", "))
}

// Is makes errors.Is(err, ErrNotInLock) true.
func (e *MissingError) Is(target error) bool { return target == ErrNotInLock }

// Relocate rewrites the images of res, the render of fsys, to the mirror.
// res is left unchanged. A res rendered with render.Options.DropText is
// read back from fsys: the result holds every document's text.
func Relocate(ctx context.Context, res *render.Result, fsys fs.FS, opts Options) (*Result, error) {
	targets, err := targetsOf(opts)
	if err != nil {
		return nil, err
	}
	if err := checkInLock(res, targets); err != nil {
		return nil, err
	}
	out := &render.Result{Kind: res.Kind, Documents: slices.Clone(res.Documents)}
	// A render with DropText keeps no text: the relocated stream is
	// written from out, which does not read the tree, so it holds it.
	for i, d := range out.Documents {
		if d.Raw == nil {
			if out.Documents[i].Raw, err = res.Text(d); err != nil {
				return nil, err
			}
		}
	}
	if res.Kind == addon.KindKustomize {
		again, err := kustomize(ctx, res, fsys, targets, opts)
		if err != nil {
			return nil, err
		}
		if err := keepOthers(again, out); err != nil {
			return nil, err
		}
		out = again
	}
	for i := range out.Documents {
		if err := rewriteDocument(&out.Documents[i], targets); err != nil {
			return nil, err
		}
	}
	r := &Result{Result: out}
	left := map[string]bool{}
	for _, d := range out.Documents {
		for _, im := range d.Images {
			if !isTarget(targets, im) {
				left[im] = true
			}
		}
	}
	for im := range left {
		r.Unrelocated = append(r.Unrelocated, im)
	}
	slices.Sort(r.Unrelocated)
	return r, nil
}

// targetsOf maps each image of the lock to its mirrored reference.
func targetsOf(opts Options) (map[string]string, error) {
	m := strings.TrimSuffix(opts.Mirror, "/")
	if err := reference.CheckMirror(opts.Mirror); err != nil {
		return nil, err
	}
	if opts.Lock == nil {
		return nil, fmt.Errorf("%w: no lock", imagelock.ErrNoLock)
	}
	if err := opts.Lock.Validate(); err != nil {
		return nil, err
	}
	t := map[string]string{}
	for _, im := range opts.Lock.Images {
		ref, err := imagelock.MirrorReference(m, im.Image, im.Digest)
		if err != nil {
			return nil, err
		}
		t[im.Image] = ref
	}
	return t, nil
}

func isTarget(targets map[string]string, im string) bool {
	for _, t := range targets {
		if t == im {
			return true
		}
	}
	return false
}

// checkInLock refuses a stream that references an image the lock lacks.
func checkInLock(res *render.Result, targets map[string]string) error {
	missing := map[string]bool{}
	for _, d := range res.Documents {
		for _, im := range d.Images {
			if _, ok := targets[im]; !ok && !isTarget(targets, im) {
				missing[im] = true
			}
		}
	}
	if len(missing) == 0 {
		return nil
	}
	e := &MissingError{}
	for im := range missing {
		e.Images = append(e.Images, im)
	}
	slices.Sort(e.Images)
	return e
}

// kustomize renders the tree again with the images added to the root
// kustomization's images: field.
func kustomize(ctx context.Context, res *render.Result, fsys fs.FS, targets map[string]string, opts Options) (*render.Result, error) {
	root := ""
	for _, n := range addon.KustomizationNames {
		if st, err := fs.Stat(fsys, n); err == nil && st.Mode().IsRegular() {
			root = n
			break
		}
	}
	if root == "" {
		return nil, fmt.Errorf("relocate: no kustomization at the root of the tree")
	}
	b, err := fs.ReadFile(fsys, root)
	if err != nil {
		return nil, err
	}
	patched, err := addImages(b, res, targets)
	if err != nil {
		return nil, &render.Error{File: root, Err: err}
	}
	ropts := opts.Render
	ropts.Kind = addon.KindKustomize
	return render.Render(ctx, &overlayFS{FS: fsys, name: root, data: patched}, ropts)
}

// keepOthers puts back in again, the render with the images transformer,
// every document of orig, the add-on's render, that is not one of the
// core workload kinds. kustomize's images transformer rewrites the
// containers of every object, custom resources among them, and matches
// by name: a custom resource's busybox:1.35 would get the digest of a
// Deployment's busybox:1.36. Its images are its own (spec 6.2), and are
// left as written, as in plain manifests.
func keepOthers(again, orig *render.Result) error {
	if len(again.Documents) != len(orig.Documents) {
		return fmt.Errorf("relocate: the render with the mirror's images has %d objects, the add-on's %d", len(again.Documents), len(orig.Documents))
	}
	for i, d := range again.Documents {
		if o := orig.Documents[i].Object; d.Object != o {
			return fmt.Errorf("relocate: the render with the mirror's images has %s where the add-on's has %s", d.Object, o)
		}
		if render.PodSpecPath(d.Object.APIVersion, d.Object.Kind) == nil {
			again.Documents[i] = orig.Documents[i]
		}
	}
	return nil
}

// addImages appends one images: entry per image name the stream uses,
// after the kustomization's own entries (which kustomize applies first).
func addImages(kustomization []byte, res *render.Result, targets map[string]string) ([]byte, error) {
	node, err := yaml.Parse(string(kustomization))
	if err != nil {
		return nil, err
	}
	type entry struct{ newName, digest, image string }
	byName := map[string]entry{}
	var names []string
	for _, d := range res.Documents {
		for _, im := range d.Images {
			t, ok := targets[im]
			if !ok {
				continue // already a mirror reference
			}
			n, _, _ := util.SplitImageName(im)
			newName, version := reference.Split(t) // MIRROR/PATH@DIGEST
			digest := strings.TrimPrefix(version, "@")
			e := entry{newName: newName, digest: digest, image: im}
			if prev, seen := byName[n]; seen {
				if prev.newName != e.newName || prev.digest != e.digest {
					return nil, fmt.Errorf("%w: %s and %s: kustomize's images transformer matches by name and cannot give them two digests", ErrAmbiguous, prev.image, im)
				}
				continue
			}
			byName[n] = e
			names = append(names, n)
		}
	}
	slices.Sort(names)
	list, err := node.Pipe(yaml.LookupCreate(yaml.SequenceNode, "images"))
	if err != nil {
		return nil, err
	}
	for _, n := range names {
		e := byName[n]
		// kustomize reads name as a regular expression (unescaped): the
		// name's dots would match any character, and an entry for
		// docker.io/library.nginx rewrite docker.io/library/nginx too.
		item := yaml.NewMapRNode(&map[string]string{"name": regexp.QuoteMeta(n), "newName": e.newName, "digest": e.digest})
		if err := list.PipeE(yaml.Append(item.YNode())); err != nil {
			return nil, err
		}
	}
	s, err := node.String()
	if err != nil {
		return nil, err
	}
	return []byte(s), nil
}
