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
	node = Resolved(node)
	path, ok := podSpecPath(node)
	if !ok {
		return nil
	}
	spec, err := node.Pipe(yaml.Lookup(path...))
	if err != nil || spec == nil {
		return nil
	}
	found := map[string]bool{}
	for _, field := range []string{"initContainers", "containers", "ephemeralContainers"} {
		list := spec.Field(field)
		if list == nil || list.Value.YNode().Kind != yaml.SequenceNode {
			continue
		}
		for _, c := range list.Value.YNode().Content {
			if c.Kind != yaml.MappingNode {
				continue
			}
			for i := 0; i+1 < len(c.Content); i += 2 {
				if k, v := c.Content[i].Value, c.Content[i+1]; k == "image" && v.Kind == yaml.ScalarNode && v.Value != "" {
					found[v.Value] = true
				}
			}
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
