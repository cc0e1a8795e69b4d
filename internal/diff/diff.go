// Package diff compares two rendered add-ons object by object: which
// Kubernetes objects one adds, which it removes, and a unified diff of the
// YAML of each object both have but with different content. What it
// compares line by line is bounded (safetree.Limits' MaxDiffObjectBytes
// and MaxDiffBytes): past that an object is reported by its sizes.
package diff

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/addonpkg/addonpkg/internal/textdiff"
	"github.com/addonpkg/addonpkg/pkg/addon"
	"github.com/addonpkg/addonpkg/pkg/render"
	"github.com/addonpkg/addonpkg/pkg/safetree"
)

// Report is what changed from a to b. Each list is sorted by group,
// kind, namespace and name (ordered by their bytes), as kubectl diff
// lists objects (one file each, named after those, walked in order): a
// report does not change when an add-on only moves an object to
// another file or reorders its kustomization's resources, and two
// reports of the same objects read alike. Objects with the same key
// (plain manifests may repeat one) keep their order.
type Report struct {
	// Added are the objects only b renders.
	Added []addon.Object `json:"added"`
	// Removed are the objects only a renders.
	Removed []addon.Object `json:"removed"`
	// Changed are the objects both render with different content.
	Changed []Change `json:"changed"`
}

// Change is one object whose content differs.
type Change struct {
	// Object is the object as b renders it.
	Object addon.Object `json:"object"`
	// From is the object as a renders it, set when its apiVersion is
	// not b's (the same group, another version).
	From *addon.Object `json:"from,omitempty"`
	// UnifiedDiff is a unified diff of the object's normalized YAML, with
	// "--- a/KEY" and "+++ b/KEY" headers (KEY is the object's key in a
	// and in b, "apiVersion/kind namespace/name", control characters
	// replaced by '?'); empty when Summary is set.
	UnifiedDiff string `json:"diff"`
	// Summary, set instead of UnifiedDiff when the object was not
	// compared line by line (over a limit, see Options), says so and why.
	Summary string `json:"summary,omitempty"`
	// BytesA and BytesB are the sizes of the object's YAML in a and b,
	// set with Summary.
	BytesA int `json:"bytesA,omitempty"`
	BytesB int `json:"bytesB,omitempty"`
}

// Options change a Diff.
type Options struct {
	// Limits bound what is compared line by line: an object whose YAML
	// is over MaxDiffObjectBytes on either side is compared by its bytes
	// (not normalized: a change of formatting alone is a change), and
	// once the report holds MaxDiffBytes of unified diffs the objects
	// changed after are reported by their sizes. The other fields do not
	// apply; zero fields mean the defaults.
	Limits safetree.Limits
}

// Equal reports whether a and b render the same objects with the same content.
func (r *Report) Equal() bool {
	return len(r.Added) == 0 && len(r.Removed) == 0 && len(r.Changed) == 0
}

// Diff compares the objects of two renderings. The values of a Secret's
// data and stringData are masked, as kubectl diff masks them ("***",
// "*** (before)" and "*** (after)" where a value changed): a diff goes to
// CI logs and reviews, and --set puts an installer's values in it. Objects are matched as the
// API server and render.ErrDuplicate tell them apart, by group, kind,
// namespace and name: an object whose version changed (apps/v1beta2 to
// apps/v1) is the same object, changed, not one removed and one added
// (which would hide what else changed in it). Their YAML is normalized before it
// is compared (parsed and written again with kyaml, comments dropped, the
// keys of every mapping sorted, quoting and flow styles reset), so a
// change of formatting alone is no change. The default limits apply (see
// DiffWith). The report's lists are sorted (Report).
func Diff(ctx context.Context, a, b *render.Result) *Report {
	return DiffWith(ctx, a, b, Options{})
}

// DiffWith is Diff within opts.Limits: its memory grows with the largest
// object compared line by line and the diffs it holds, not with the
// add-ons (issue 25: two 6 MB one-ConfigMap folders took 850 MiB, two of
// 90 MB ran out of memory).
func DiffWith(ctx context.Context, a, b *render.Result, opts Options) *Report {
	lim := opts.Limits.WithDefaults()
	held := int64(0) // bytes of unified diffs in r
	r := &Report{Added: []addon.Object{}, Removed: []addon.Object{}, Changed: []Change{}}
	// Two documents with one key (possible in plain manifests) pair up in
	// order of appearance.
	pending := map[render.Identity][]render.Document{}
	docsA, docsB := sortedDocs(a), sortedDocs(b)
	for _, d := range docsA {
		k := render.IdentityOf(d.Object)
		pending[k] = append(pending[k], d)
	}
	// In the report's order, so that the limit on the diffs held
	// summarizes the last objects listed, not some in between.
	for _, db := range docsB {
		if ctx.Err() != nil {
			break
		}
		kb := render.IdentityOf(db.Object)
		list := pending[kb]
		if len(list) == 0 {
			r.Added = append(r.Added, db.Object)
			continue
		}
		da := list[0]
		pending[kb] = list[1:]
		if bytes.Equal(da.Raw, db.Raw) {
			continue // the same bytes normalize the same
		}
		var from *addon.Object
		if da.Object != db.Object {
			from = &da.Object
		}
		sized := Change{Object: db.Object, From: from, BytesA: len(da.Raw), BytesB: len(db.Raw)}
		if max(len(da.Raw), len(db.Raw)) > int(lim.MaxDiffObjectBytes) {
			sized.Summary = fmt.Sprintf("objects differ: %d bytes and %d bytes of YAML, compared by their bytes (an object over %d bytes is not compared line by line)", len(da.Raw), len(db.Raw), lim.MaxDiffObjectBytes)
			r.Changed = append(r.Changed, sized)
			continue
		}
		na, nb := Normalize(da.Raw), Normalize(db.Raw)
		if na == nb {
			continue
		}
		if isSecret(db.Object) {
			var ok bool
			if na, nb, ok = maskSecrets(na, nb); !ok {
				sized.Summary = fmt.Sprintf("objects differ: %d bytes and %d bytes of YAML (a Secret whose data cannot be masked is not shown)", len(da.Raw), len(db.Raw))
				r.Changed = append(r.Changed, sized)
				continue
			}
		}
		var d string
		if held < lim.MaxDiffBytes {
			d = textdiff.Unified("a/"+shown(da.Object), "b/"+shown(db.Object), na, nb, 3)
		}
		if d == "" || held+int64(len(d)) > lim.MaxDiffBytes {
			sized.Summary = fmt.Sprintf("objects differ: %d bytes and %d bytes of YAML (not shown: the diff holds at most %d bytes of unified diffs)", len(da.Raw), len(db.Raw), lim.MaxDiffBytes)
			r.Changed = append(r.Changed, sized)
			held = lim.MaxDiffBytes // the objects after are summarized too, in order
			continue
		}
		held += int64(len(d))
		r.Changed = append(r.Changed, Change{Object: db.Object, From: from, UnifiedDiff: d})
	}
	for _, da := range docsA {
		ka := render.IdentityOf(da.Object)
		if list := pending[ka]; len(list) > 0 {
			r.Removed = append(r.Removed, da.Object)
			pending[ka] = list[1:]
		}
	}
	return r
}

// The placeholders of masked Secret values, kubectl diff's: a value
// that is the same in a and b, and one that changed.
const (
	maskSame   = "***"
	maskBefore = "*** (before)"
	maskAfter  = "*** (after)"
)

// isSecret reports whether o is a core Secret, whatever its version.
func isSecret(o addon.Object) bool {
	return o.Kind == "Secret" && render.IdentityOf(o).Group == ""
}

// maskSecrets masks the values of data and stringData in the normalized
// YAML of one Secret in a and b: a value the same in both is maskSame,
// one that differs or is on one side only maskBefore in a and maskAfter
// in b. ok is false when either side is not a mapping it can re-emit:
// then nothing of it may be shown.
func maskSecrets(na, nb string) (ma, mb string, ok bool) {
	parse := func(s string) *yaml.Node {
		n, err := yaml.Parse(s)
		if err != nil || n.IsNil() || n.YNode().Kind != yaml.MappingNode {
			return nil
		}
		return n.YNode()
	}
	a, b := parse(na), parse(nb)
	if a == nil || b == nil {
		return "", "", false
	}
	for _, field := range []string{"data", "stringData"} {
		va, vb := mapping(a, field), mapping(b, field)
		if va == nil || vb == nil {
			return "", "", false
		}
		before := values(va)
		after := values(vb)
		mask := func(m *yaml.Node, other map[string]*yaml.Node, changed string) {
			for i := 0; i+1 < len(m.Content); i += 2 {
				k, v := m.Content[i], m.Content[i+1]
				placeholder := changed
				if o, found := other[k.Value]; found && sameValue(v, o) {
					placeholder = maskSame
				}
				m.Content[i+1] = &yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagString, Value: placeholder}
			}
		}
		mask(va, after, maskBefore)
		mask(vb, before, maskAfter)
	}
	// kubectl's client-side apply keeps the whole manifest it applied,
	// the Secret's values included, in an annotation: a manifest exported
	// with kubectl get -o yaml carries it.
	la, lb := annotation(a, lastApplied), annotation(b, lastApplied)
	same := la != nil && lb != nil && sameValue(la, lb)
	for _, n := range []struct {
		node    *yaml.Node
		changed string
	}{{la, maskBefore}, {lb, maskAfter}} {
		if n.node == nil {
			continue
		}
		placeholder := n.changed
		if same {
			placeholder = maskSame
		}
		*n.node = yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagString, Value: placeholder}
	}
	var err error
	if ma, err = emit(a); err != nil {
		return "", "", false
	}
	if mb, err = emit(b); err != nil {
		return "", "", false
	}
	return ma, mb, true
}

// lastApplied is the annotation where kubectl's client-side apply keeps
// the manifest it applied.
const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// annotation is the value of the annotation key of the object m; nil
// when it has none (or its metadata or annotations are no mapping).
func annotation(m *yaml.Node, key string) *yaml.Node {
	md := mapping(m, "metadata")
	if md == nil {
		return nil
	}
	an := mapping(md, "annotations")
	if an == nil {
		return nil
	}
	for i := 0; i+1 < len(an.Content); i += 2 {
		if an.Content[i].Value == key {
			return an.Content[i+1]
		}
	}
	return nil
}

// mapping is the value of the top-level key field of the mapping m: an
// empty mapping when m has no such key (nothing to mask), nil when the
// value is not a mapping (it cannot be masked key by key).
func mapping(m *yaml.Node, field string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value != field {
			continue
		}
		v := m.Content[i+1]
		switch {
		case v.Kind == yaml.MappingNode:
			return v
		case v.Kind == yaml.ScalarNode && v.Tag == yaml.NodeTagNull:
			return &yaml.Node{Kind: yaml.MappingNode}
		}
		return nil
	}
	return &yaml.Node{Kind: yaml.MappingNode}
}

// values maps the keys of the mapping m to their values.
func values(m *yaml.Node) map[string]*yaml.Node {
	out := make(map[string]*yaml.Node, len(m.Content)/2)
	for i := 0; i+1 < len(m.Content); i += 2 {
		out[m.Content[i].Value] = m.Content[i+1]
	}
	return out
}

// sameValue reports whether two normalized values are the same.
func sameValue(x, y *yaml.Node) bool {
	if x.Kind != yaml.ScalarNode || y.Kind != yaml.ScalarNode {
		return false // not a string: shown as changed, never compared by its text
	}
	return x.Tag == y.Tag && x.Value == y.Value
}

// sortedDocs are r's documents in the report's order (Report): by group,
// kind, namespace and name, stable for a key that repeats.
func sortedDocs(r *render.Result) []render.Document {
	if r == nil {
		return nil
	}
	out := slices.Clone(r.Documents)
	slices.SortStableFunc(out, func(x, y render.Document) int {
		kx, ky := render.IdentityOf(x.Object), render.IdentityOf(y.Object)
		return cmp.Or(
			strings.Compare(kx.Group, ky.Group),
			strings.Compare(kx.Kind, ky.Kind),
			strings.Compare(kx.Namespace, ky.Namespace),
			strings.Compare(kx.Name, ky.Name),
		)
	})
	return out
}

// WriteText prints the report for people: the added, removed and changed
// objects, then the diff of each changed one (or, for one not compared
// line by line, a line saying so, as diff(1) does for binary files).
func (r *Report) WriteText(w io.Writer) error {
	b := bufio.NewWriter(w)
	if r.Equal() {
		b.WriteString("no differences\n")
	}
	section := func(title string, objs []addon.Object) {
		if len(objs) == 0 {
			return
		}
		fmt.Fprintf(b, "%s (%d):\n", title, len(objs))
		for _, o := range objs {
			fmt.Fprintf(b, "  %s\n", shown(o))
		}
	}
	section("Added", r.Added)
	section("Removed", r.Removed)
	changed := make([]addon.Object, 0, len(r.Changed))
	for _, c := range r.Changed {
		changed = append(changed, c.Object)
	}
	section("Changed", changed)
	for _, c := range r.Changed {
		b.WriteString("\n")
		if c.Summary != "" {
			from := c.Object
			if c.From != nil {
				from = *c.From
			}
			fmt.Fprintf(b, "Objects a/%s and b/%s differ: %s\n", shown(from), shown(c.Object), strings.TrimPrefix(c.Summary, "objects differ: "))
			continue
		}
		b.WriteString(c.UnifiedDiff)
	}
	return b.Flush()
}

// shown is o's key as diff prints it: an add-on is another party's
// text, and a name may hold terminal escapes (a title, a cleared
// screen), so control characters are replaced, as status prints names
// (safetree.Sanitize), but nothing is cut.
func shown(o addon.Object) string {
	s := o.String()
	return safetree.SanitizeN(s, len(s))
}

// Normalize returns the canonical YAML of one document: comments dropped,
// aliases expanded, mapping keys sorted (apiVersion, kind and metadata
// first at the top), scalar and collection styles reset. A document that
// does not parse, or whose aliases expand too far, is returned as it is.
func Normalize(raw []byte) string {
	node, err := yaml.Parse(string(raw))
	if err != nil || node.IsNil() {
		return string(raw)
	}
	n := node.YNode()
	nz := &normalizer{budget: maxNodes}
	nz.node(n, 0, 0)
	if nz.budget < 0 {
		return string(raw)
	}
	out, err := emit(n)
	if err != nil {
		return string(raw)
	}
	return out
}

// maxNodes bounds the nodes that expanding a document's aliases may add:
// a few aliases nested can otherwise stand for billions.
const maxNodes = 1 << 17

// maxAliasDepth bounds aliases within aliases (an alias inside its own
// anchor never ends).
const maxAliasDepth = 32

type normalizer struct{ budget int }

func (nz *normalizer) node(n *yaml.Node, depth, aliases int) {
	if nz.budget < 0 {
		return
	}
	n.HeadComment, n.LineComment, n.FootComment = "", "", ""
	n.Anchor = ""
	switch n.Kind {
	case yaml.AliasNode:
		if n.Alias == nil || aliases >= maxAliasDepth {
			nz.budget = -1
			return
		}
		*n = *nz.copy(n.Alias)
		nz.node(n, depth, aliases+1)
	case yaml.ScalarNode:
		n.Style = 0
	case yaml.DocumentNode, yaml.SequenceNode:
		n.Style = 0
		next := depth
		if n.Kind == yaml.SequenceNode {
			next++
		}
		for _, c := range n.Content {
			nz.node(c, next, aliases)
		}
	case yaml.MappingNode:
		n.Style = 0
		type pair struct{ k, v *yaml.Node }
		pairs := make([]pair, 0, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			nz.node(n.Content[i], depth+1, aliases)
			nz.node(n.Content[i+1], depth+1, aliases)
			pairs = append(pairs, pair{n.Content[i], n.Content[i+1]})
		}
		slices.SortStableFunc(pairs, func(x, y pair) int {
			rx, ry := keyRank(x.k.Value, depth), keyRank(y.k.Value, depth)
			if rx != ry {
				return rx - ry
			}
			return strings.Compare(x.k.Value, y.k.Value)
		})
		n.Content = n.Content[:0]
		for _, p := range pairs {
			n.Content = append(n.Content, p.k, p.v)
		}
	}
}

// copy copies a subtree (aliases inside stay aliases, expanded when the
// copy is normalized), charging the budget.
func (nz *normalizer) copy(n *yaml.Node) *yaml.Node {
	nz.budget--
	c := *n
	c.Content = nil
	if nz.budget < 0 {
		return &c
	}
	c.Content = make([]*yaml.Node, len(n.Content))
	for i, child := range n.Content {
		c.Content[i] = nz.copy(child)
	}
	return &c
}

// keyRank puts apiVersion, kind and metadata first in an object.
func keyRank(k string, depth int) int {
	if depth != 0 {
		return 3
	}
	switch k {
	case "apiVersion":
		return 0
	case "kind":
		return 1
	case "metadata":
		return 2
	}
	return 3
}
