package diff

import (
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// splitNodes is the size (in nodes) past which a block mapping or
// sequence is written in pieces, and about the size of a piece; a
// variable so a test can write every document in the smallest pieces.
var splitNodes = 2048

// emit writes a normalized document as yaml.String writes it, in pieces.
//
// yaml.v3's emitter keeps every event of one Encode until the Encode
// ends (its queue is never trimmed, about 280 bytes an event): a 6 MB
// ConfigMap of short keys cost 300 MB to write in one piece, and a
// normalized diff of two of them 850 MiB (issue 25). So a block mapping
// or sequence of more than splitNodes nodes is written in pieces of
// about splitNodes nodes: consecutive pairs as a mapping of those pairs
// at the root, consecutive items as a sequence of those items, each line
// indented to where the children stand. kyaml's encoder wraps no line (yaml.v3's width is unlimited),
// so a child's lines do not depend on the column they start at; what the
// emitter decides from a node's neighbours (a flow "{}" for an empty
// collection, a "? " for a key that is not a plain line) is left to it,
// by writing such a node whole. TestEmitMatchesString holds the pieces
// to what one Encode writes.
func emit(doc *yaml.Node) (string, error) {
	var b strings.Builder
	n := doc
	if n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
		n = n.Content[0]
	}
	if err := emitNode(&b, n, ""); err != nil {
		return "", err
	}
	return b.String(), nil
}

// emitNode writes n at indent: in pieces when it is a large block
// collection, else whole.
func emitNode(b *strings.Builder, n *yaml.Node, indent string) error {
	switch {
	case n.Kind == yaml.MappingNode && splittable(n):
		var piece []*yaml.Node
		nodes := 0
		flush := func() error {
			if len(piece) == 0 {
				return nil
			}
			err := emitWhole(b, &yaml.Node{Kind: yaml.MappingNode, Tag: n.Tag, Content: piece}, indent)
			piece, nodes = nil, 0
			return err
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if line, ok := keyLine(k, v); ok {
				if err := flush(); err != nil {
					return err
				}
				// The key on its line, the value below it: a mapping
				// indented one step, a sequence (compact, as kyaml
				// writes them) at the key's own indent.
				b.WriteString(indent)
				b.WriteString(line)
				next := indent + "  "
				if v.Kind == yaml.SequenceNode {
					next = indent
				}
				if err := emitNode(b, v, next); err != nil {
					return err
				}
				continue
			}
			piece = append(piece, k, v)
			if nodes += 1 + count(v, splitNodes); nodes >= splitNodes {
				if err := flush(); err != nil {
					return err
				}
			}
		}
		return flush()
	case n.Kind == yaml.SequenceNode && splittable(n):
		for i := 0; i < len(n.Content); {
			j, nodes := i, 0
			for j < len(n.Content) && (j == i || nodes < splitNodes) {
				nodes += count(n.Content[j], splitNodes)
				j++
			}
			if err := emitWhole(b, &yaml.Node{Kind: yaml.SequenceNode, Tag: n.Tag, Content: n.Content[i:j]}, indent); err != nil {
				return err
			}
			i = j
		}
		return nil
	}
	return emitWhole(b, n, indent)
}

// splittable reports whether n is a collection written in block style,
// implicitly tagged, non-empty and larger than splitNodes.
func splittable(n *yaml.Node) bool {
	if n.Style&yaml.FlowStyle != 0 || len(n.Content) == 0 {
		return false
	}
	switch n.Tag {
	case "", yaml.NodeTagMap, yaml.NodeTagSeq:
	default:
		return false
	}
	return larger(n, splitNodes)
}

// larger reports whether n holds more than limit nodes.
func larger(n *yaml.Node, limit int) bool { return count(n, limit) > limit }

// count counts the nodes of n, no further than limit+1.
func count(n *yaml.Node, limit int) int {
	c := 0
	var walk func(*yaml.Node)
	walk = func(n *yaml.Node) {
		c++
		for _, child := range n.Content {
			if c > limit {
				return
			}
			walk(child)
		}
	}
	walk(n)
	return c
}

// keyLine is the line yaml.String writes for the key k of a value v
// written below it ("key:\n"), when v is a collection written in pieces
// and k a key the emitter writes on one line; ok is false otherwise.
func keyLine(k, v *yaml.Node) (string, bool) {
	if k.Kind != yaml.ScalarNode || !splittable(v) {
		return "", false
	}
	// The key as the emitter writes it before a block collection: a
	// pair whose value is a one-entry collection of the same kind.
	stub := &yaml.Node{Kind: v.Kind, Tag: v.Tag}
	leaf := &yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagString, Value: "x"}
	if v.Kind == yaml.MappingNode {
		stub.Content = []*yaml.Node{leaf, leaf}
	} else {
		stub.Content = []*yaml.Node{leaf}
	}
	s, err := yaml.String(&yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{k, stub}})
	if err != nil {
		return "", false
	}
	line, rest, ok := strings.Cut(s, "\n")
	if !ok || strings.HasPrefix(line, "? ") || !strings.HasSuffix(line, ":") || strings.Count(rest, "\n") != 1 {
		return "", false
	}
	return line + "\n", true
}

// encode is the one Encode of a piece; a variable so a test can see the
// pieces.
var encode = func(n *yaml.Node) (string, error) { return yaml.String(n) }

// emitWhole writes n in one Encode, each line indented; an empty line
// stays empty, as the emitter writes it inside a block scalar.
func emitWhole(b *strings.Builder, n *yaml.Node, indent string) error {
	s, err := encode(n)
	if err != nil {
		return err
	}
	if indent == "" {
		b.WriteString(s)
		return nil
	}
	for len(s) > 0 {
		line, rest, found := strings.Cut(s, "\n")
		if line != "" {
			b.WriteString(indent)
			b.WriteString(line)
		}
		if found {
			b.WriteByte('\n')
		}
		s = rest
	}
	return nil
}
