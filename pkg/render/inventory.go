package render

import (
	"slices"

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

// imagesOf lists the images a document references.
func imagesOf(node *yaml.RNode) []string {
	found := map[string]bool{}
	collectImages(node.YNode(), false, found)
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

// collectImages finds `image:` of every container, init container and
// ephemeral container, wherever a pod template sits in the object.
func collectImages(n *yaml.Node, inContainers bool, out map[string]bool) {
	switch n.Kind {
	case yaml.DocumentNode, yaml.SequenceNode:
		for _, c := range n.Content {
			collectImages(c, inContainers, out)
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i].Value, n.Content[i+1]
			if inContainers && k == "image" && v.Kind == yaml.ScalarNode && v.Value != "" {
				out[v.Value] = true
				continue
			}
			isList := k == "containers" || k == "initContainers" || k == "ephemeralContainers"
			if isList && v.Kind == yaml.SequenceNode {
				for _, c := range v.Content {
					collectImages(c, true, out)
				}
				continue
			}
			collectImages(v, false, out)
		}
	}
}
