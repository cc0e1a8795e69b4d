package render

import (
	"fmt"
	"io/fs"
	"math"
	"path"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/addonpkg/addonpkg/pkg/addon"
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
// So before kustomize runs, the objects it will load are counted from
// the files it will read (safetree.Limits.MaxKustomizeObjects), and so
// are the objects its patches may touch (MaxPatchTargets): each patch
// counts every object of the kustomization that applies it, since
// matching a target is no cheaper to kustomize than it would be here,
// plus one for each patch of that kustomization, which may have grown
// what it touches.

// kustomizeWork is what one kustomization (or component) directory makes
// kustomize do, counted each time it is referenced: a base included
// twice (under two name prefixes) is loaded twice.
type kustomizeWork struct {
	// objects counts the objects the directory yields.
	objects int64
	// targets counts the objects the patches of the directory and of
	// everything below it may touch.
	targets int64
	// pending counts the patches of a component: they apply to the
	// objects of the kustomization that includes it.
	pending int64
}

// workCounter walks the kustomizations of a tree from its root once,
// each directory's count kept for its further references.
type workCounter struct {
	fsys  fs.FS
	done  map[string]*kustomizeWork
	doing map[string]bool
}

// checkKustomizeWork refuses a tree whose root kustomization would make
// kustomize load more than limits.MaxKustomizeObjects objects, or apply
// patches to more than limits.MaxPatchTargets of them, counted before
// kustomize runs (countKustomizeWork).
func checkKustomizeWork(fsys fs.FS, limits safetree.Limits) error {
	w, err := countKustomizeWork(fsys)
	if err != nil {
		return err
	}
	root := rootKustomization(fsys)
	if w.objects > int64(limits.MaxKustomizeObjects) {
		return &Error{File: root, Err: fmt.Errorf("%d objects to load: %w (kustomize takes time quadratic in the objects it loads; plain manifests, without a kustomization, render in linear time)",
			w.objects, &safetree.LimitError{Name: "kustomize objects", Limit: int64(limits.MaxKustomizeObjects), Which: safetree.LimitKustomizeObjects})}
	}
	if w.targets > int64(limits.MaxPatchTargets) {
		return &Error{File: root, Err: fmt.Errorf("patch targets of %d: %w (kustomize takes about a millisecond for each object a patch touches, and each patch may grow what the next touches)",
			w.targets, &safetree.LimitError{Name: "patch targets", Limit: int64(limits.MaxPatchTargets), Which: safetree.LimitPatchTargets})}
	}
	return nil
}

// countKustomizeWork counts what the root kustomization of fsys makes
// kustomize do: the objects of every resource file it loads (each
// document, each item of a List), one for each generator entry, and the
// objects of every base and component, once per reference; and, for
// each patch, the objects it may touch: every object of the
// kustomization that applies it, plus the patches of that
// kustomization (quadratic in them, as kustomize is). A count that overflows stays at
// math.MaxInt64. What kustomize would refuse (a missing file, a cycle)
// counts nothing: kustomize says what is wrong with it.
func countKustomizeWork(fsys fs.FS) (*kustomizeWork, error) {
	c := &workCounter{fsys: fsys, done: map[string]*kustomizeWork{}, doing: map[string]bool{}}
	return c.dir(".")
}

func (c *workCounter) dir(dir string) (*kustomizeWork, error) {
	if w, ok := c.done[dir]; ok {
		return w, nil
	}
	w := &kustomizeWork{}
	if c.doing[dir] {
		return w, nil // a cycle, which kustomize refuses
	}
	c.doing[dir] = true
	defer delete(c.doing, dir)
	node := c.kustomization(dir)
	if node == nil {
		c.done[dir] = w
		return w, nil
	}
	for _, field := range []string{"resources", "bases", "components"} {
		for _, entry := range stringsOf(node, field) {
			p, err := safetree.JoinInside(dir, entry)
			if err != nil {
				continue // remote, or outside: checkKustomization's
			}
			if st, err := fs.Stat(c.fsys, p); err == nil && st.IsDir() {
				sub, err := c.dir(p)
				if err != nil {
					return nil, err
				}
				w.add(sub)
				continue
			}
			c.resourceFile(w, p)
		}
	}
	for _, field := range generatorFields {
		if list := node.Field(field); list != nil && list.Value.YNode().Kind == yaml.SequenceNode {
			w.addObjects(int64(len(list.Value.YNode().Content)))
		}
	}
	for _, entry := range stringsOf(node, "generators") {
		if configs, ok := inlineConfigs("generators", entry); ok {
			w.addObjects(int64(len(configs)))
			continue
		}
		if p, err := safetree.JoinInside(dir, entry); err == nil {
			n := int64(0)
			for _, d := range c.documents(p) {
				if d.GetKind() != "" {
					n++
				}
			}
			w.addObjects(n)
		}
	}
	patches := satAdd(c.patches(dir, node), w.pending)
	w.pending = 0
	if node.GetKind() == "Component" {
		w.pending = patches
	} else {
		w.targets = satAdd(w.targets, satMul(patches, satAdd(w.objects, patches)))
	}
	c.done[dir] = w
	return w, nil
}

// kustomization is the parsed kustomization file of dir, or nil when dir holds none that parses (checkKustomizations refuses
// one that does not).
func (c *workCounter) kustomization(dir string) *yaml.RNode {
	for _, n := range addon.KustomizationNames {
		b, err := fs.ReadFile(c.fsys, path.Join(dir, n))
		if err != nil {
			continue
		}
		node, err := yaml.Parse(string(b))
		if err != nil || node.YNode().Kind != yaml.MappingNode {
			return nil
		}
		return node
	}
	return nil
}

// resourceFile adds the objects of the resource file p to w: each
// document, each item of a List.
func (c *workCounter) resourceFile(w *kustomizeWork, p string) {
	w.addObjects(int64(len(c.documents(p))))
}

// documents are the objects of file p, the items of a List in its
// place; none when p cannot be read or parsed (kustomize says why).
func (c *workCounter) documents(p string) []*yaml.RNode {
	b, err := fs.ReadFile(c.fsys, p)
	if err != nil {
		return nil
	}
	var docs []*yaml.RNode
	for _, ch := range splitYAML(b) {
		node, err := parseDocument(ch.text)
		if err != nil || node == nil || node.YNode().Kind != yaml.MappingNode {
			continue
		}
		if items, ok, _ := listItems(node); ok {
			docs = append(docs, items...)
			continue
		}
		docs = append(docs, node)
	}
	return docs
}

// patches counts the patches of the kustomization node of dir: each
// entry of its patch fields, each document of a patch file (kustomize
// applies each).
func (c *workCounter) patches(dir string, node *yaml.RNode) int64 {
	n := int64(0)
	for _, entry := range stringsOf(node, "patchesStrategicMerge") {
		docs := 0
		if p, err := safetree.JoinInside(dir, entry); err == nil {
			docs = len(c.documents(p))
		}
		n += int64(max(1, docs, len(inlineDocs(entry))))
	}
	for _, field := range []string{"patches", "patchesJson6902"} {
		list := node.Field(field)
		if list == nil || list.Value.YNode().Kind != yaml.SequenceNode {
			continue
		}
		for _, item := range list.Value.YNode().Content {
			n += int64(max(1, len(c.patchDocs(dir, yaml.NewRNode(item)))))
		}
	}
	return n
}

// patchDocs are the documents of one entry of patches: its path's or
// its inline patch's.
func (c *workCounter) patchDocs(dir string, item *yaml.RNode) []*yaml.RNode {
	if f := item.Field("path"); f != nil {
		if p, err := safetree.JoinInside(dir, yaml.GetValue(f.Value)); err == nil {
			return c.documents(p)
		}
		return nil
	}
	if f := item.Field("patch"); f != nil {
		return inlineDocs(yaml.GetValue(f.Value))
	}
	return nil
}

// inlineDocs are the mapping documents of a patch written in place.
func inlineDocs(s string) []*yaml.RNode {
	var docs []*yaml.RNode
	for _, ch := range splitYAML([]byte(s)) {
		if node, err := parseDocument(ch.text); err == nil && node != nil && node.YNode().Kind == yaml.MappingNode {
			docs = append(docs, node)
		}
	}
	return docs
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

// stringsOf are the scalar entries of node's list field.
func stringsOf(node *yaml.RNode, field string) []string {
	list := node.Field(field)
	if list == nil || list.Value.YNode().Kind != yaml.SequenceNode {
		return nil
	}
	var out []string
	for _, item := range list.Value.YNode().Content {
		if item.Kind == yaml.ScalarNode {
			out = append(out, item.Value)
		}
	}
	return out
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
