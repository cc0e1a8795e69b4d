package render

import (
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/addonpkg/addonpkg/pkg/addon"
)

// Inventory lists the objects, provided CRDs and referenced images of a
// rendered add-on.
func (r *Result) Inventory() addon.Inventory {
	inv := addon.Inventory{Objects: []addon.Object{}}
	images := map[string]bool{}
	for _, d := range r.Documents {
		inv.Objects = append(inv.Objects, d.Object)
		if d.Object.Kind == "CustomResourceDefinition" {
			inv.CRDs = append(inv.CRDs, d.Object.Name)
		}
		for _, img := range d.Images {
			images[img] = true
		}
	}
	for img := range images {
		inv.Images = append(inv.Images, img)
	}
	slices.Sort(inv.Images)
	slices.Sort(inv.CRDs)
	inv.CRDs = slices.Compact(inv.CRDs)
	return inv
}

// imagesOf lists the images a document references: spec 6.2 takes the
// containers of the pod specs of the core workload kinds only, where each
// keeps its pod spec (podSpecPaths). A custom resource's `image:` fields
// are its own business (an operator's CR may name images it never runs,
// or run them under other names), so they are not the add-on's images.
func imagesOf(node *yaml.RNode) []string {
	found := map[string]bool{}
	for _, v := range ImageNodes(Resolved(node)) {
		if v.Value != "" {
			found[v.Value] = true
		}
	}
	if len(found) == 0 {
		return nil
	}
	out := make([]string, 0, len(found))
	for img := range found {
		out = append(out, img)
	}
	slices.Sort(out)
	return out
}

// containerFields are the pod spec fields whose entries carry an image.
var containerFields = []string{"initContainers", "containers", "ephemeralContainers"}

// ImageNodes are the image scalars of the containers of a workload
// document's pod spec (PodSpecPath), for the inventory to list and
// relocation to rewrite: node should be Resolved. A key written twice
// on the way (two template: or containers: keys, which the decoders
// read as the last and go-yaml's Lookup as the first) is followed in
// each place, as the fast path does: an image in the second of two
// templates was missing from the inventory.
func ImageNodes(node *yaml.RNode) []*yaml.Node {
	path, ok := podSpecPath(node)
	if !ok {
		return nil
	}
	specs := []*yaml.Node{node.YNode()}
	for _, k := range path {
		specs = valuesOf(specs, k)
	}
	var out []*yaml.Node
	for _, list := range valuesOf(specs, containerFields...) {
		if list.Kind != yaml.SequenceNode {
			continue
		}
		for _, c := range list.Content {
			if c.Kind != yaml.MappingNode {
				continue
			}
			for i := 0; i+1 < len(c.Content); i += 2 {
				if k, v := c.Content[i].Value, c.Content[i+1]; k == "image" && v.Kind == yaml.ScalarNode {
					out = append(out, v)
				}
			}
		}
	}
	return out
}

// valuesOf are the values of every key of the mappings ms that is one of
// keys, duplicates included.
func valuesOf(ms []*yaml.Node, keys ...string) []*yaml.Node {
	var out []*yaml.Node
	for _, m := range ms {
		if m.Kind != yaml.MappingNode {
			continue
		}
		for i := 0; i+1 < len(m.Content); i += 2 {
			if slices.Contains(keys, m.Content[i].Value) {
				out = append(out, m.Content[i+1])
			}
		}
	}
	return out
}

// Resolved is node as the API server receives it: its aliases expanded
// and its merge keys (<<) merged, as kubectl's and addonpkg apply's
// decoders do. An image written as an alias (image: *img) or through a
// merge key was missing from the inventory, so copy --with-images left it
// behind and a relocated stream still pulled it from its registry,
// unreported. A node without aliases or merge keys is returned as it is;
// else a copy, node left as it was. Its expansion is bounded: the
// renderer refused the document's alias bombs before (checkAliases).
func Resolved(node *yaml.RNode) *yaml.RNode {
	if node == nil || !hasAliasOrMerge(node.YNode()) {
		return node
	}
	c := yaml.NewRNode(cloneNode(node.YNode(), map[*yaml.Node]*yaml.Node{}))
	if err := c.DeAnchor(); err != nil {
		// kyaml refuses what it cannot expand (a merge of a scalar): the
		// decoders refuse it too, and the document never applies.
		return node
	}
	return c
}

func hasAliasOrMerge(n *yaml.Node) bool {
	if n.Kind == yaml.AliasNode || n.Tag == yaml.MergeTag {
		return true
	}
	for _, c := range n.Content {
		if hasAliasOrMerge(c) {
			return true
		}
	}
	return false
}

// cloneNode copies n deeply, its aliases pointing into the copy, so that
// expanding the copy leaves n's anchors as they were.
func cloneNode(n *yaml.Node, done map[*yaml.Node]*yaml.Node) *yaml.Node {
	if n == nil {
		return nil
	}
	if c, ok := done[n]; ok {
		return c
	}
	c := *n
	done[n] = &c
	c.Content = make([]*yaml.Node, len(n.Content))
	for i, k := range n.Content {
		c.Content[i] = cloneNode(k, done)
	}
	c.Alias = cloneNode(n.Alias, done)
	return &c
}

// podSpecPaths are the workload kinds of spec 6.2, by API group, and
// where each keeps its pod spec.
var podSpecPaths = map[string]map[string][]string{
	"": {
		"Pod":                   {"spec"},
		"PodTemplate":           {"template", "spec"},
		"ReplicationController": {"spec", "template", "spec"},
	},
	"apps": {
		"ReplicaSet":  {"spec", "template", "spec"},
		"Deployment":  {"spec", "template", "spec"},
		"StatefulSet": {"spec", "template", "spec"},
		"DaemonSet":   {"spec", "template", "spec"},
	},
	"batch": {
		"Job":     {"spec", "template", "spec"},
		"CronJob": {"spec", "jobTemplate", "spec", "template", "spec"},
	},
	// Manifests written before apps/v1.
	"extensions": {
		"ReplicaSet": {"spec", "template", "spec"},
		"Deployment": {"spec", "template", "spec"},
		"DaemonSet":  {"spec", "template", "spec"},
	},
}

// podSpecPath is where the document keeps its pod spec, if it is one of
// the workload kinds.
func podSpecPath(node *yaml.RNode) ([]string, bool) {
	p := PodSpecPath(node.GetApiVersion(), node.GetKind())
	return p, p != nil
}

// PodSpecPath is where an object of this apiVersion and kind keeps its
// pod spec (the fields from the object's root), when it is one of the
// workload kinds whose containers' images make the inventory's images
// (spec 6.2); nil for any other kind. The fast path (quick.go) and
// relocation ask it too, so the images counted are the images rewritten.
// The slice is shared: do not change it.
func PodSpecPath(apiVersion, kind string) []string {
	group := ""
	if i := strings.IndexByte(apiVersion, '/'); i >= 0 {
		group = apiVersion[:i]
	}
	return podSpecPaths[group][kind]
}
