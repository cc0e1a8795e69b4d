package render

import (
	"fmt"
	"io/fs"
	"math"

	"github.com/addonpkg/addonpkg/pkg/safetree"
)

// Kustomize's time grows faster than its input in two ways, measured on
// kustomize v5 (pkg/render/work_test.go says how):
//
//   - adding resources to its result is quadratic in their number: 500
//     tiny ConfigMaps take it 1.2 s, 1,000 take 3 s, 2,000 take 11 s,
//     4,000 take 90 s;
//   - a patch costs about 1 ms for each object it applies to (40
//     patches targeting every ConfigMap of 200 take 9 s), and one whose
//     target selects nothing still costs time in every object it
//     looks at: 1,000 patches of a kind no object has, over 999
//     ConfigMaps, took over a minute; and patches that each add a key
//     to one object grow it for the next ones: 250 patches of one
//     ConfigMap take 1.3 s, 500 take 6 s, 1,000 take 20 s.
//
//   - so does each transformer a list of a kustomization makes, over
//     every object: each entry of images (an ImageTagTransformer),
//     replicas, replacements, transformers and validators, and each
//     key labels, commonLabels and commonAnnotations add to every
//     object. Over 300 Deployments (0.3 s alone), 300 entries of
//     images took kustomize 16 s, of labels 10 s, of transformers 19 s,
//     of replacements 30 s, and commonAnnotations of 300 keys 19 s:
//     100 to 300 µs for each transformer and object, growing as the
//     objects grow; 300 images over 1,000 Deployments took 108 s. A
//     transformer kustomize makes once (namespace, namePrefix) is
//     linear in the objects, and vars cost 6 to 36 µs a var and object,
//     sublinear: neither is counted.
//
// So before kustomize runs, the objects it will load are counted from
// the files it will read (safetree.Limits.MaxKustomizeObjects), and so
// are the objects its patches and list transformers may touch
// (MaxPatchTargets): each counts every object of the kustomization that
// applies it, since matching a target is no cheaper to kustomize than
// it would be here, plus one for each patch or transformer of that
// kustomization, which may have grown what it touches.

// kustomizeWork is what one kustomization (or component) directory makes
// kustomize do, counted each time it is referenced: a base included
// twice (under two name prefixes) is loaded twice.
type kustomizeWork struct {
	// objects counts the objects the directory yields.
	objects int64
	// targets counts the objects the patches and list transformers of
	// the directory and of everything below it may touch.
	targets int64
	// pending counts the patches of a component: they apply to the
	// objects of the kustomization that includes it.
	pending int64
}

// checkKustomizeWork refuses a tree whose root kustomization would make
// kustomize load more than limits.MaxKustomizeObjects objects, or apply
// patches to more than limits.MaxPatchTargets of them, counted before
// kustomize runs by the walk of its kustomization graph (g).
func checkKustomizeWork(fsys fs.FS, g *kustomizeGraph, limits safetree.Limits) error {
	w := g.root
	root := rootKustomization(fsys)
	if w.objects > int64(limits.MaxKustomizeObjects) {
		return &Error{File: root, Err: fmt.Errorf("%d objects to load: %w (kustomize takes time quadratic in the objects it loads; plain manifests, without a kustomization, render in linear time)",
			w.objects, &safetree.LimitError{Name: "kustomize objects", Limit: int64(limits.MaxKustomizeObjects), Which: safetree.LimitKustomizeObjects})}
	}
	if w.targets > int64(limits.MaxPatchTargets) {
		return &Error{File: root, Err: fmt.Errorf("patch targets of %d: %w (kustomize takes up to a millisecond for each object a patch or a transformer of a list such as images or labels touches, and each may grow what the next touches)",
			w.targets, &safetree.LimitError{Name: "patch targets", Limit: int64(limits.MaxPatchTargets), Which: safetree.LimitPatchTargets})}
	}
	return nil
}

// countKustomizeWork counts what the root kustomization of fsys makes
// kustomize do (kustomizeGraph.dir): the objects of every resource file
// it loads (each document, each item of a List), one for each generator
// entry, and the objects of every base and component, once per
// reference; and, for each patch, the objects it may touch: every
// object of the kustomization that applies it, plus the patches of that
// kustomization (quadratic in them, as kustomize is). A count that
// overflows stays at math.MaxInt64. What kustomize would refuse (a
// missing file, a cycle) counts nothing: kustomize says what is wrong
// with it.
func countKustomizeWork(fsys fs.FS) *kustomizeWork {
	return walkKustomizations(fsys).root
}

func (w *kustomizeWork) addObjects(n int64) {
	w.objects = satAdd(w.objects, n)
}

// add counts sub, referenced once more from w: its objects, the patch
// work inside it, and (a component's) patches that apply to w.
func (w *kustomizeWork) add(sub *kustomizeWork) {
	w.addObjects(sub.objects)
	w.targets = satAdd(w.targets, sub.targets)
	w.pending = satAdd(w.pending, sub.pending)
}

// satMul is a*b, or math.MaxInt64 past it (both are not negative).
func satMul(a, b int64) int64 {
	if a != 0 && b > math.MaxInt64/a {
		return math.MaxInt64
	}
	return a * b
}

// satAdd is a+b, or math.MaxInt64 past it (both are not negative).
func satAdd(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}
