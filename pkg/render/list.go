package render

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/addonpkg/addonpkg/pkg/addon"
)

// isListKind reports whether a kind names a list of objects (`List`, and
// every `FooList` that `kubectl get -o yaml` writes): kustomize reads any
// kind ending in "List" that has `items` as a list.
func isListKind(kind string) bool { return strings.HasSuffix(kind, "List") }

// maxListDepth bounds Lists nested in Lists.
const maxListDepth = 16

// listItems returns the objects of a List (spec/addon-v1.md, section 6.4):
// a document whose kind ends in "List" and that has an `items` field is
// replaced by its items, Lists among them flattened in turn. ok is false
// for any other document, which is kept whole.
func listItems(node *yaml.RNode) (items []*yaml.RNode, ok bool, err error) {
	err = flattenList(node, 0, &items)
	if errors.Is(err, errNotList) {
		return nil, false, nil
	}
	return items, err == nil, err
}

var errNotList = errors.New("not a List")

func flattenList(node *yaml.RNode, depth int, out *[]*yaml.RNode) error {
	if node.YNode().Kind != yaml.MappingNode || !isListKind(node.GetKind()) {
		return errNotList
	}
	field := node.Field("items")
	if field == nil {
		return errNotList // a kind that ends in "List" but is not one
	}
	if depth >= maxListDepth {
		return fmt.Errorf("%w: Lists nested over %d deep", ErrInvalid, maxListDepth)
	}
	v := field.Value.YNode()
	switch {
	case v.Kind == yaml.ScalarNode && v.Tag == "!!null":
		return nil // an empty List
	case v.Kind != yaml.SequenceNode:
		return fmt.Errorf("%w: the items of a %s are not a list", ErrInvalid, node.GetKind())
	}
	for _, c := range v.Content {
		item := yaml.NewRNode(c)
		switch err := flattenList(item, depth+1, out); {
		case errors.Is(err, errNotList):
			*out = append(*out, item)
		case err != nil:
			return err
		}
	}
	return nil
}

// isJSONText reports whether a document's text begins as JSON does (a
// "{" after white space). Such a document is written to the stream as
// block YAML, as kustomize writes it: kubectl decodes a whole stream as
// JSON when it begins with "{", and stops after the first document.
func isJSONText(text []byte) bool {
	t := bytes.TrimLeft(text, " \t\r\n")
	return len(t) > 0 && t[0] == '{'
}

// streamText is a document's text as the stream has it: JSON written as
// block YAML (isJSONText), anything else as it is.
func streamText(text []byte) ([]byte, error) {
	if !isJSONText(text) {
		return text, nil
	}
	node, err := yaml.Parse(string(text))
	if err != nil {
		return nil, fmt.Errorf("%w: %s", ErrInvalid, trimYAMLError(err))
	}
	return blockYAML(node)
}

// blockYAML writes a node as a YAML document in block style. Flow
// collections become block ones, and strings that JSON had to quote lose
// their quotes where neither YAML 1.2 (the encoder quotes those) nor
// YAML 1.1 would read them as another type.
func blockYAML(node *yaml.RNode) ([]byte, error) {
	unflow(node.YNode())
	s, err := yaml.String(node.YNode())
	if err != nil {
		return nil, fmt.Errorf("write as YAML: %w", err)
	}
	return []byte(s), nil
}

func unflow(n *yaml.Node) {
	switch n.Kind {
	case yaml.MappingNode, yaml.SequenceNode:
		n.Style &^= yaml.FlowStyle
		for _, c := range n.Content {
			unflow(c)
		}
	case yaml.ScalarNode:
		// A string that YAML 1.1 reads as another type ("n", "on",
		// "0x1F") keeps its quotes: kubectl reads the stream as YAML 1.1.
		if n.Style&yaml.DoubleQuotedStyle != 0 && n.Tag == "!!str" && !strings.ContainsAny(n.Value, "\n\t") && !yaml.IsYaml1_1NonString(n) {
			n.Style &^= yaml.DoubleQuotedStyle
		}
	}
}

// ErrDuplicate marks a tree that renders two objects with one identity
// (group, kind, namespace and name): kubectl would apply the second over
// the first, so the add-on would not install what it lists.
var ErrDuplicate = errors.New("duplicate object")

// Identity is what identifies an object to the API server: the version
// does not (apps/v1 and apps/v1beta2 name the same Deployment). It is
// the key of ErrDuplicate, and the key diff matches objects by.
type Identity struct{ Group, Kind, Namespace, Name string }

// IdentityOf is o's Identity.
func IdentityOf(o addon.Object) Identity {
	group, _, ok := strings.Cut(o.APIVersion, "/")
	if !ok {
		group = ""
	}
	return Identity{group, o.Kind, o.Namespace, o.Name}
}

// checkDuplicates refuses two documents with the same key, naming where
// both come from (spec/addon-v1.md, section 6.2). kustomize output has
// no files: root names its kustomization.
func checkDuplicates(docs []Document, root string) error {
	seen := make(map[Identity]int, len(docs))
	for i, d := range docs {
		k := IdentityOf(d.Object)
		j, dup := seen[k]
		if !dup {
			seen[k] = i
			continue
		}
		what := describe(d.Object)
		first, second := where(docs[j]), where(d)
		if first == "" || first == second {
			return &Error{File: root, Err: fmt.Errorf("%w: %s is rendered twice", ErrDuplicate, what)}
		}
		return &Error{Err: fmt.Errorf("%w: %s is in both %s and %s", ErrDuplicate, what, first, second)}
	}
	return nil
}

// describe names an object the way kubectl does: kind.group, then
// namespace/name.
func describe(o addon.Object) string {
	k := IdentityOf(o)
	kind := k.Kind
	if k.Group != "" {
		kind += "." + k.Group
	}
	if k.Namespace != "" {
		return kind + " " + k.Namespace + "/" + k.Name
	}
	return kind + " " + k.Name
}

func where(d Document) string {
	switch {
	case d.File == "":
		return ""
	case d.Line > 0:
		return fmt.Sprintf("%s:%d", d.File, d.Line)
	}
	return d.File
}
