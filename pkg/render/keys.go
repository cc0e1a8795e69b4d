package render

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// ErrKustomizeFatal marks input on which kustomize would end the process
// (log.Fatal, which no recover catches) instead of returning an error.
// Such input is refused before kustomize runs; the error also matches
// ErrInvalid.
var ErrKustomizeFatal = errors.New("input on which kustomize exits the process")

// kustomize (sigs.k8s.io/kustomize/api v0.21) calls log.Fatal on two
// conditions an add-on's YAML can set up, both about mapping keys:
//
//   - a generator with behavior: merge folds the data and binaryData of
//     the object it merges into through kyaml's SetDataMap, which reads a
//     key that is empty, null (`null:`, `~:`) or not a scalar as "" and
//     then exits (log.Fatal) when it cannot set a field named "".
//   - an object whose mapping has a key that is not a string (`80: http`,
//     `true: x`, a flow mapping as a key) cannot be encoded as JSON,
//     which kustomize does for every object: where it prints one to
//     explain an ambiguous name reference (resource.MustYaml) the failure
//     is a log.Fatal. Elsewhere it is an error, so such an object never
//     rendered anyway.
//
// Where the key ends up after patches and transformers is kustomize's to
// work out, so the check is on every key kustomize may read into an
// object: those of each document that looks like an object or a patch
// (keyDocument), of the kustomizations, and of the patches written in
// them. A JSON patch path that names an empty key ("/data/") is refused
// where kustomize applies a JSON patch (jsonPatchPathIn), and only
// there: an object holds op and path mappings as data (a Cluster API
// ClusterClass's jsonPatches, a JSON patch's own value), which kustomize
// never applies. A YAML merge key (`<<`) is kustomize's to expand, and
// allowed.

// checkKeys refuses a key that kustomize cannot take in node, a document
// of file at line: the whole document for a kustomization, else a
// document that keyDocument says kustomize may read as an object or a
// patch. Patches written as text in it are checked too. patch says
// kustomize may apply the file as a JSON patch (kustomizeGraph.patchFile).
func checkKeys(file string, line int, node *yaml.RNode, kustomization, patch bool) error {
	if !kustomization && !keyDocument(node.YNode(), patch) {
		return nil
	}
	if err := badKeyIn(file, line, node.YNode()); err != nil {
		return err
	}
	if patch {
		if err := jsonPatchPathIn(file, line, node.YNode()); err != nil {
			return err
		}
	}
	return inlinePatchKeys(file, line, node.YNode())
}

// keyDocument tells whether kustomize may read doc as an object or a
// patch: a mapping with an apiVersion or kind (an object, a strategic
// merge patch, a builtin configuration, a List), or, in a file kustomize
// may apply as a JSON patch (patch), a sequence holding a mapping with
// an op. Anything else (an application's configuration file that a
// generator copies as text, JSON patches included) is left alone.
func keyDocument(doc *yaml.Node, patch bool) bool {
	switch doc.Kind {
	case yaml.MappingNode:
		return hasKey(doc, "apiVersion") || hasKey(doc, "kind")
	case yaml.SequenceNode:
		return patch && slices.ContainsFunc(doc.Content, func(n *yaml.Node) bool { return n.Kind == yaml.MappingNode && hasKey(n, "op") })
	}
	return false
}

// jsonPatchPathIn refuses, in doc (a document of file at line that
// kustomize may apply as a JSON patch), an operation whose path or from
// names an empty key: kustomize's generators exit the process when they
// merge the key it adds. Only the operations count, the mappings of the
// sequence itself, as kustomize decodes them (jsonpatch.DecodePatch):
// keys through a merge key or in a !!binary scalar (pairsOf,
// scalarText). A mapping with op and path inside an operation's value
// is data (a ClusterClass's jsonPatches that the patch adds), and so is
// one in a document that is no sequence.
func jsonPatchPathIn(file string, line int, doc *yaml.Node) error {
	if doc.Kind != yaml.SequenceNode {
		return nil
	}
	for _, op := range doc.Content {
		if op = deref(op); op.Kind != yaml.MappingNode || !hasKey(op, "op") {
			continue
		}
		for _, kv := range pairsOf(op) {
			k, v := scalarText(kv[0]), deref(kv[1])
			if (k == "path" || k == "from") && v.Kind == yaml.ScalarNode && emptySegment(scalarText(v)) {
				return &Error{File: file, Line: line + v.Line - 1, Err: fmt.Errorf("%w: %w: JSON patch %s %q names an empty key, which kustomize's generators exit on when they merge data", ErrInvalid, ErrKustomizeFatal, k, scalarText(v))}
			}
		}
	}
	return nil
}

// hasKey tells whether the mapping m has key as kustomize reads it:
// written as text or in a !!binary scalar, or brought in by a merge key
// (pairsOf). A JSON patch whose op came so went unchecked, and kustomize
// exited the process on its path.
func hasKey(m *yaml.Node, key string) bool {
	return slices.ContainsFunc(pairsOf(m), func(kv [2]*yaml.Node) bool {
		return kv[0].Kind == yaml.ScalarNode && scalarText(kv[0]) == key
	})
}

// badKeyIn finds the first key of a mapping in n that kustomize cannot
// take (keyProblem). line is that of n's document in file. Aliases are
// not followed: what they name is checked where it is written.
func badKeyIn(file string, line int, n *yaml.Node) error {
	stack := []*yaml.Node{n}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if n.Kind == yaml.AliasNode {
			continue
		}
		if n.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(n.Content); i += 2 {
				if why := keyProblem(n.Content[i]); why != "" {
					return &Error{File: file, Line: line + n.Content[i].Line - 1, Err: fmt.Errorf("%w: %w: %s", ErrInvalid, ErrKustomizeFatal, why)}
				}
			}
		}
		stack = append(stack, n.Content...)
	}
	return nil
}

// keyProblem says what is wrong with k as a key of an object, or "".
func keyProblem(k *yaml.Node) string {
	switch {
	case k.Kind == yaml.AliasNode:
		return fmt.Sprintf("the alias *%s is a key: write the key itself", k.Value)
	case k.Kind != yaml.ScalarNode:
		return fmt.Sprintf("a %s is a key (a Kubernetes object's keys are strings): kustomize cannot encode the object", nodeKindName(k.Kind))
	case k.ShortTag() == yaml.MergeTag:
		return ""
	case k.ShortTag() != yaml.NodeTagString:
		return fmt.Sprintf("key %s is a %s, not a string: quote it (%q); kustomize cannot encode the object, and exits the process when it must print it", keyText(k), k.ShortTag(), k.Value)
	case k.Value == "":
		return `the key "" is empty: kustomize exits the process when a generator merges such a key`
	}
	return ""
}

func keyText(k *yaml.Node) string {
	if k.Value == "" {
		return "(empty)"
	}
	return k.Value
}

func nodeKindName(k yaml.Kind) string {
	switch k {
	case yaml.MappingNode:
		return "mapping"
	case yaml.SequenceNode:
		return "sequence"
	}
	return "document"
}

// emptySegment tells whether a JSON pointer names an empty key on its
// way: "/data/", "/a//b".
func emptySegment(p string) bool {
	return p != "" && slices.Contains(strings.Split(p, "/")[1:], "")
}

// patchFields are the fields of a kustomization, or of a builtin
// configuration, whose entries may be a patch written as text.
var patchFields = []string{"patches", "patchesStrategicMerge", "patchesJson6902", "patch"}

// inlinePatchKeys checks the patches written as text in doc, a
// kustomization or a builtin configuration: the text of a patch field
// (a PatchTransformer's patch, a PatchStrategicMergeTransformer's
// patches, a PatchJson6902Transformer's jsonOp), an entry of patchesStrategicMerge, the
// patch of an entry of patches or patchesJson6902, and the patches of
// the configurations written in place in its transformers and
// generators (inlineConfigs): their keys (badKeyIn), and the paths of
// those kustomize may apply as JSON patches (jsonPatchPathIn). Each is
// named by the line of its text. The fields are found as kustomize decodes them: their names in any
// case (it decodes JSON), through merge keys and aliases (pairsOf), and
// their text decoded from a !!binary scalar (scalarText). A patch under
// Patches, PATCH, a merge key or in base64 went unchecked, and kustomize
// exited the process on it. A text that is an alias bomb is refused
// (aliasBombIn), as a file is.
func inlinePatchKeys(file string, line int, doc *yaml.Node) error {
	if doc.Kind != yaml.MappingNode {
		return nil
	}
	// json says kustomize may apply the text as a JSON patch: a
	// PatchTransformer's patch (an entry of patches), a
	// PatchJson6902Transformer's jsonOp (an entry of patchesJson6902).
	// A strategic merge patch (an entry of patchesStrategicMerge, a
	// PatchStrategicMergeTransformer's patches) never is.
	type text struct {
		node *yaml.Node
		json bool
	}
	var texts []text
	for _, kv := range pairsOf(doc) {
		k, v := scalarText(kv[0]), deref(kv[1])
		switch {
		case (foldIn(patchFields, k) != "" || strings.EqualFold(k, "jsonOp")) && v.Kind == yaml.ScalarNode:
			// A PatchTransformer's patch, a PatchStrategicMergeTransformer's
			// patches, a PatchJson6902Transformer's jsonOp: text.
			texts = append(texts, text{v, strings.EqualFold(k, "patch") || strings.EqualFold(k, "jsonOp")})
		case foldIn(patchFields, k) != "" && v.Kind == yaml.SequenceNode:
			for _, e := range v.Content {
				switch e = deref(e); e.Kind {
				case yaml.ScalarNode:
					texts = append(texts, text{e, false})
				case yaml.MappingNode:
					for _, ekv := range pairsOf(e) {
						if t := deref(ekv[1]); strings.EqualFold(scalarText(ekv[0]), "patch") && t.Kind == yaml.ScalarNode {
							texts = append(texts, text{t, true})
						}
					}
				}
			}
		case foldIn(inlineFields, k) != "" && v.Kind == yaml.SequenceNode:
			for _, e := range v.Content {
				if e = deref(e); e.Kind != yaml.ScalarNode {
					continue
				}
				if err := aliasBombIn(file, line+e.Line-1, scalarText(e)); err != nil {
					return err
				}
				configs, ok := inlineConfigs(foldIn(inlineFields, k), scalarText(e))
				if !ok {
					continue
				}
				for _, cfg := range configs {
					at := line + e.Line - 1
					if err := badKeyIn(file, at, cfg.YNode()); err != nil {
						return lineOf(err, at)
					}
					if err := inlinePatchKeys(file, at, cfg.YNode()); err != nil {
						return err
					}
				}
			}
		}
	}
	for _, t := range texts {
		at := line + t.node.Line - 1
		for _, c := range splitYAML([]byte(scalarText(t.node))) {
			node, err := parseDocument(c.text)
			if errors.Is(err, errAliasBomb) {
				return aliasBomb(file, at, err)
			}
			if err != nil || node == nil {
				continue // a path, or text kustomize refuses itself
			}
			if node.YNode().Kind == yaml.ScalarNode {
				continue // a path
			}
			if err := badKeyIn(file, at, node.YNode()); err != nil {
				return lineOf(err, at)
			}
			if t.json {
				if err := jsonPatchPathIn(file, at, node.YNode()); err != nil {
					return lineOf(err, at)
				}
			}
		}
	}
	return nil
}

// foldIn is the name of names that s is in any case, or "".
func foldIn(names []string, s string) string {
	for _, n := range names {
		if strings.EqualFold(n, s) {
			return n
		}
	}
	return ""
}

// deref is the node the alias n names (through aliases of aliases), or n.
func deref(n *yaml.Node) *yaml.Node {
	for i := 0; n.Kind == yaml.AliasNode && n.Alias != nil && i < maxAliasChain; i++ {
		n = n.Alias
	}
	return n
}

// maxAliasChain bounds the aliases followed from one node, and the
// merge keys followed into one mapping: YAML makes neither a cycle, and
// the bound keeps a parser's mistake from being one.
const maxAliasChain = 64

// pairsOf are the keys and values of the mapping m as kustomize reads
// them, those that merge keys (<<) bring in included, each node where it
// is written (for its line).
func pairsOf(m *yaml.Node) [][2]*yaml.Node {
	var out [][2]*yaml.Node
	var add func(n *yaml.Node, depth int)
	add = func(n *yaml.Node, depth int) {
		if depth > maxAliasChain {
			return
		}
		switch n = deref(n); n.Kind {
		case yaml.SequenceNode:
			for _, c := range n.Content {
				add(c, depth+1)
			}
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], n.Content[i+1]
				if k.Kind == yaml.ScalarNode && k.ShortTag() == yaml.MergeTag {
					add(v, depth+1)
					continue
				}
				out = append(out, [2]*yaml.Node{k, v})
			}
		}
	}
	add(m, 0)
	return out
}

// aliasBombIn refuses text written in place in file at line (a
// configuration in a kustomization's transformers, generators or
// validators) when a document of it is an alias bomb (checkAliases).
// kustomize parses such text as it parses a file, and a file's bomb is
// refused (checkReachedFiles); the checks skipped text that did not
// parse, and kustomize expanded a billion laughs written in place in
// memory until it was killed.
func aliasBombIn(file string, line int, text string) error {
	for _, c := range splitYAML([]byte(text)) {
		if _, err := parseDocument(c.text); errors.Is(err, errAliasBomb) {
			return aliasBomb(file, line, err)
		}
	}
	return nil
}

// aliasBomb is the error of an alias bomb written in place in file at
// line, as checkReachedFiles words a file's.
func aliasBomb(file string, line int, err error) error {
	return &Error{File: file, Line: line, Err: fmt.Errorf("%w: %s", ErrInvalid, err)}
}

// lineOf names the line of the text of an inline patch or configuration
// in err: the lines inside the text are not the file's.
func lineOf(err error, line int) error {
	if e, ok := errors.AsType[*Error](err); ok {
		return &Error{File: e.File, Line: line, Err: e.Err}
	}
	return err
}
