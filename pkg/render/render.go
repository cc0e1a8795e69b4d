package render

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"runtime"
	"strings"
	"sync"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/addonpkg/addonpkg/pkg/addon"
	"github.com/addonpkg/addonpkg/pkg/filetree"
	"github.com/addonpkg/addonpkg/pkg/mediatypes"
	"github.com/addonpkg/addonpkg/pkg/safetree"
	"github.com/addonpkg/addonpkg/pkg/unpack"
)

// Addon renders an unpacked add-on, passed whole: a Helm chart is
// refused (addon.ErrHelmChart), and its config's kind is used unless
// opts names one. With opts.Raw its manifests are listed instead.
func Addon(ctx context.Context, ad *unpack.Addon, opts Options) (*Result, error) {
	if ad.Form == mediatypes.FormHelm {
		return nil, helmError(ad.Config)
	}
	if opts.Kind == "" && ad.Config != nil {
		opts.Kind = ad.Config.Kind
	}
	return Render(ctx, ad.FS, opts)
}

func helmError(cfg *addon.Config) error {
	what := "this add-on"
	if cfg != nil {
		what = strings.TrimSpace(cfg.Name + " " + cfg.Version)
	}
	return fmt.Errorf("%w: %s renders with Helm's templates, which addonpkg does not run: use helm template (unpack -o DIR writes the chart's files)", addon.ErrHelmChart, what)
}

// Options change how a tree renders.
type Options struct {
	// Kind forces the kind; empty means DetectKind.
	Kind addon.Kind
	// AllowRemote lets a kustomization load remote resources. Off by
	// default: an add-on must render from its own tree.
	AllowRemote bool
	// DropText keeps the documents of plain manifest files without their
	// text: each Document has its File, Line, Offset and Length, Object and
	// Images but a nil Raw (the items of a List keep theirs), and the
	// bytes of a file are let go as soon as it is parsed. Result.WriteTo (and YAML, Text) read the text back from
	// the tree, one file at a time, so the tree must stay readable and
	// unchanged until then. It bounds what a render holds by the number of
	// documents rather than the size of the add-on, when the tree itself
	// is not in memory (a filetree tree spilled to disk, a directory). A
	// kustomize render is built in memory by kustomize: its documents keep
	// their Raw whatever DropText says.
	DropText bool
	// Raw lists the tree's manifests without rendering kustomize: the
	// documents of its YAML and JSON files, in apply order as for a
	// plain-manifest add-on (for a plain-manifest tree, what rendering
	// gives). In a kustomize tree the kustomization files are left out,
	// and so is any file whose documents are not all Kubernetes objects
	// (JSON patches, transformer configurations): those are kustomize's
	// inputs, not manifests. Kind and AllowRemote do not apply.
	Raw bool
	// Values, when not nil, fills in the values the tree declares
	// (package values, spec/addon-v1.md section 6.6): each declared value
	// as given here or else its default, substituted in every rendered
	// document. A required value missing, a value given that the tree
	// does not declare, or a document referring to an undeclared one is
	// an error. nil renders the tree as the template it is (what a build
	// does to compute the inventory); an installer passes a map, empty
	// when it has nothing to give.
	Values map[string]string
	// MaxMappingKeys caps the keys of one YAML mapping, and of one
	// generated ConfigMap or Secret, in a tree that kustomize renders
	// (safetree.Limits.MaxMappingKeys); 0 means
	// safetree.DefaultMaxMappingKeys. Past it the render is refused with
	// a *safetree.LimitError before kustomize reads the tree: kustomize
	// takes time quadratic in a mapping's keys. Plain manifests have no
	// such cap.
	MaxMappingKeys int
	// MaxKustomizeObjects caps the objects kustomize loads to render the
	// tree, and MaxPatchTargets the objects its patches and the
	// transformers of its lists (images, labels, replicas...) may touch
	// (safetree.Limits.MaxKustomizeObjects and MaxPatchTargets, counted
	// before kustomize runs); 0 means the default. Past them the render
	// is refused with a *safetree.LimitError: kustomize takes time
	// quadratic in the objects it loads, and a millisecond for each
	// object a patch touches. Plain manifests have no such caps.
	MaxKustomizeObjects int
	MaxPatchTargets     int
}

// Document is one rendered Kubernetes object.
type Document struct {
	// File and Line locate the document in the tree (plain manifests only).
	File string
	Line int
	// Offset and Length locate the document's text in File, in bytes
	// (plain manifests only): Raw is those bytes, plus a newline when they
	// do not end in one (the last document of a file without a final
	// newline), or for a JSON document those bytes written as YAML. An
	// item of a List has no text of its own: both are 0.
	Offset, Length int64
	// Raw is the document's YAML, ending in a newline: its text as
	// written, or block YAML for a JSON document (kubectl reads a stream
	// that begins with "{" as one JSON object) and for an item of a List.
	// It is nil for a document rendered with Options.DropText, except an
	// item of a List: Result.Text reads it.
	Raw []byte
	// Object identifies it.
	Object addon.Object
	// Images are the container images its pod templates reference. They
	// are read at parse time so the parsed tree need not be kept: for a
	// large add-on it weighs ten times the text.
	Images []string
}

// Result is a rendered add-on.
type Result struct {
	Kind      addon.Kind
	Documents []Document
	// Warnings are what the renderer warned about, one line each, for
	// the caller to show: kustomize's deprecated fields and the vars
	// never replaced, each named with its kustomization
	// ("base/kustomization.yaml: 'commonLabels' is deprecated. ..."), and tokens such as __PILLAR__DNS__SERVER__ that
	// a script was to fill in, named with their file (or, rendered by
	// kustomize, their object). The stream does not depend on them.
	Warnings []string
	// Values are the values filled in (Options.Values), defaults
	// included; nil when the tree declares none or none were asked for.
	Values map[string]string

	// fsys is the tree rendered with Options.DropText, which the text of
	// its documents is read back from.
	fsys fs.FS
}

// YAML is the stream for `kubectl apply -f -`: documents separated by ---.
// For a result rendered with Options.DropText it reads the tree back, and
// stops at the first document it cannot read: WriteTo says why.
func (r *Result) YAML() []byte {
	var b bytes.Buffer
	_, _ = r.WriteTo(&b)
	return b.Bytes()
}

// Error locates a problem in the tree. Its message is one line:
// "FILE:LINE: problem".
type Error struct {
	File string
	Line int
	Err  error
}

func (e *Error) Error() string {
	msg := strings.ReplaceAll(e.Err.Error(), "\n", " ")
	switch {
	case e.File == "":
		return msg
	case e.Line > 0:
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, msg)
	}
	return fmt.Sprintf("%s: %s", e.File, msg)
}

func (e *Error) Unwrap() error { return e.Err }

// ErrInvalid marks a document that is not a Kubernetes object.
var ErrInvalid = errors.New("invalid manifest")

// ErrRemote marks a kustomization that reaches outside the add-on.
var ErrRemote = errors.New("remote resource refused")

// ErrKustomizePanic marks a render that kustomize ended in a panic (a
// kustomization's openapi field naming a file that is no OpenAPI
// schema): the render returns it as an error, named with the root
// kustomization.
var ErrKustomizePanic = errors.New("kustomize panicked")

// ErrOutsideRoot marks a kustomization that reads outside the tree.
var ErrOutsideRoot = errors.New("path outside the add-on root")

// Render renders the tree fsys (or, with opts.Raw, lists its manifests):
// the one entry point, with Addon for an unpacked add-on.
func Render(ctx context.Context, fsys fs.FS, opts Options) (*Result, error) {
	kind := opts.Kind
	if kind == "" && !opts.Raw {
		kind = addon.DetectKind(fsys)
	}
	// A tree that has links (a directory, os.DirFS) is read through them,
	// by kustomize and by the splitter alike: a link that leads out of
	// the tree (cm.yaml -> /etc/passwd, or a generator's file) would put
	// the installer's files in the stream. safetree judges them, as for
	// every other reader of untrusted trees. kustomize also follows links
	// through folders, so for it a link to a folder that holds it is
	// refused too; the splitter's walk does not follow them, and the
	// format allows such a link (spec 9.4), so a plain tree keeps it.
	if lfs, ok := fsys.(fs.ReadLinkFS); ok {
		check := safetree.CheckLinks
		if kind == addon.KindKustomize {
			check = safetree.CheckWalkableLinks
		}
		if err := check(lfs); err != nil {
			return nil, fmt.Errorf("render: %w", err)
		}
	}
	if opts.Raw {
		return raw(ctx, fsys, opts)
	}
	var (
		docs     []Document
		warnings []string
		err      error
	)
	switch kind {
	case addon.KindKustomize:
		docs, warnings, err = renderKustomize(ctx, fsys, opts)
	case addon.KindManifests:
		docs, warnings, err = manifestDocuments(ctx, fsys, false, opts.DropText)
	default:
		return nil, fmt.Errorf("render: unknown kind %q", kind)
	}
	if err != nil {
		return nil, err
	}
	r := newResult(kind, docs, fsys, opts)
	r.Warnings = warnings
	if err := r.fill(fsys, opts); err != nil {
		return nil, err
	}
	return r, nil
}

// fill substitutes opts.Values into r's documents.
func (r *Result) fill(fsys fs.FS, opts Options) error {
	if opts.Values == nil {
		return nil
	}
	docs, vals, err := substitute(fsys, r.Documents, opts.Values, r.fsys)
	if err != nil {
		return err
	}
	r.Documents, r.Values = docs, vals
	return nil
}

// newResult keeps the tree in the result when its documents' text is to
// be read back from it.
func newResult(kind addon.Kind, docs []Document, fsys fs.FS, opts Options) *Result {
	r := &Result{Kind: kind, Documents: docs}
	if opts.DropText {
		r.fsys = fsys
	}
	return r
}

// raw lists the tree's manifests (Options.Raw).
func raw(ctx context.Context, fsys fs.FS, opts Options) (*Result, error) {
	lenient := addon.DetectKind(fsys) == addon.KindKustomize
	docs, warnings, err := manifestDocuments(ctx, fsys, lenient, opts.DropText)
	if err != nil {
		return nil, err
	}
	r := newResult(addon.KindManifests, docs, fsys, opts)
	r.Warnings = warnings
	if err := r.fill(fsys, opts); err != nil {
		return nil, err
	}
	return r, nil
}

// manifestDocuments splits the tree's manifest files into documents in
// apply order. lenient leaves out kustomization files and the files that
// do not split into Kubernetes objects, instead of failing on them;
// dropText keeps the documents without their text (Options.DropText).
func manifestDocuments(ctx context.Context, fsys fs.FS, lenient, dropText bool) ([]Document, []string, error) {
	var files []string
	helm := "" // the first Chart.yaml
	err := fs.WalkDir(fsys, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !addon.IsManifestFile(name) || lenient && isKustomization(name) {
			return nil
		}
		if !lenient && addon.IsHelmChartFile(name) && helm == "" {
			helm = name
		}
		files = append(files, name)
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("list manifests: %w", err)
	}
	if helm != "" {
		return nil, nil, &Error{File: helm, Err: fmt.Errorf("%w, not manifests (%s is a chart: its templates are Helm's to render): %s",
			addon.ErrHelmChart, chartDir(helm), addon.HelmAdvice)}
	}
	// Tree order (spec/addon-v1.md): depth first, names in byte order
	// within a directory, which is the order WalkDir visits. The stream
	// then goes in apply order, tree order kept within a kind.
	docs, warnings, err := splitAll(ctx, fsys, files, lenient, dropText)
	if err != nil {
		return nil, nil, err
	}
	if !lenient {
		// A kustomize tree's files may hold an object twice (a patch
		// names its target): only a plain tree's objects are its output.
		if err := checkDuplicates(docs, ""); err != nil {
			return nil, nil, err
		}
	}
	SortForApply(docs)
	return docs, warnings, nil
}

// chartDir names the directory a Chart.yaml makes a chart.
func chartDir(name string) string {
	if d := path.Dir(name); d != "." {
		return d + "/"
	}
	return "the add-on"
}

// notAnObject says what a file that is not a manifest is when its name
// says: a Helm values file (the error is ErrHelmChart too), or a
// kustomization below the root of a plain tree, which only a root
// kustomization would have made kustomize's. The error stays ErrInvalid
// (Raw leaves the file out of a kustomize tree).
func notAnObject(file string, err *Error) error {
	detail := strings.TrimPrefix(err.Err.Error(), ErrInvalid.Error()+": ")
	switch {
	case addon.IsHelmValuesFile(file):
		return &Error{File: err.File, Line: err.Line, Err: fmt.Errorf("%w: %s holds the values of %w, not a Kubernetes object (%s): %s",
			ErrInvalid, path.Base(file), addon.ErrHelmChart, detail, addon.HelmAdvice)}
	case isKustomization(file):
		return &Error{File: err.File, Line: err.Line, Err: fmt.Errorf("%w: %s is a kustomization, not a Kubernetes object (%s): the add-on's root holds no kustomization, so its files are plain manifests; use %s as the add-on, or list it in a kustomization at the root",
			ErrInvalid, path.Base(file), detail, path.Dir(file))}
	}
	return err
}

// readBuffer is the buffer of a DropText render's worker: a file up to
// this size that is read from disk goes there rather than to a new slice.
const readBuffer = 1 << 20

// splitAll parses the files on every core and keeps their order: parsing
// is most of the cost of validating a large add-on.
func splitAll(ctx context.Context, fsys fs.FS, files []string, skipInvalid, dropText bool) ([]Document, []string, error) {
	type result struct {
		docs    []Document
		warning string // placeholderWarning
		err     error
	}
	results := make([]result, len(files))
	next := make(chan int)
	var wg sync.WaitGroup
	for range max(1, min(runtime.GOMAXPROCS(0), len(files))) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Documents without their text keep nothing of a file's
			// bytes: the files read from disk share one buffer per
			// worker, up to readBuffer bytes.
			var buf []byte
			if dropText {
				buf = make([]byte, 0, readBuffer)
			}
			for i := range next {
				b, err := filetree.ReadInto(fsys, files[i], buf)
				if err != nil {
					results[i].err = fmt.Errorf("read %s: %w", files[i], err)
					continue
				}
				results[i].docs, results[i].err = splitDocuments(files[i], b, dropText)
				results[i].warning = placeholderWarning(files[i], placeholders(b))
			}
		}()
	}
	var err error
	for i := range files {
		if err = ctx.Err(); err != nil {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	if err != nil {
		return nil, nil, err
	}
	var (
		docs     []Document
		warnings []string
	)
	for _, r := range results {
		if r.err != nil && skipInvalid && errors.Is(r.err, ErrInvalid) {
			continue
		}
		if r.err != nil {
			return nil, nil, r.err // the first failing file in tree order
		}
		docs = append(docs, r.docs...)
		if r.warning != "" {
			warnings = append(warnings, r.warning)
		}
	}
	return docs, warnings, nil
}

// SplitDocuments splits a YAML or JSON file into its non-empty documents,
// checking that each is a Kubernetes object.
func SplitDocuments(file string, b []byte) ([]Document, error) {
	return splitDocuments(file, b, false)
}

// splitDocuments is SplitDocuments; dropText leaves Raw nil, so that the
// documents keep nothing of b.
func splitDocuments(file string, b []byte, dropText bool) ([]Document, error) {
	var docs []Document
	doc := func(c chunk, obj addon.Object, images []string) Document {
		d := Document{File: file, Line: c.line, Offset: int64(c.off), Length: int64(len(c.text)), Object: obj, Images: images}
		if !dropText {
			d.Raw = rawDocument(c.text)
		}
		return d
	}
	for _, chunk := range splitYAML(b) {
		// A byte order mark may begin a file, or a document of a stream
		// made by concatenating files: kustomize drops it, and so does
		// the stream, where it would sit in the middle of the text.
		if bytes.HasPrefix(chunk.text, utf8BOM) {
			chunk.text, chunk.off = chunk.text[len(utf8BOM):], chunk.off+len(utf8BOM)
		}
		// Most documents are plain enough for the fast path; the slow
		// path reads the rest and says what is wrong with them. A List
		// always takes the slow path, which flattens it.
		if q, ok := quickDocument(chunk.text); ok && !isListKind(q.obj.Kind) {
			if !q.empty {
				docs = append(docs, doc(chunk, q.obj, q.images))
			}
			continue
		}
		node, err := parseDocument(chunk.text)
		if err != nil {
			return nil, notAnObject(file, &Error{File: file, Line: chunk.line + yamlErrorLine(err, lineCount(chunk.text)) - 1, Err: fmt.Errorf("%w: %s", ErrInvalid, trimYAMLError(err))})
		}
		if node == nil {
			continue // only comments or nothing
		}
		if items, ok, err := listItems(node); ok || err != nil {
			if err != nil {
				return nil, &Error{File: file, Line: chunk.line, Err: err}
			}
			for _, item := range items {
				obj, err := objectOf(item)
				if err != nil {
					return nil, &Error{File: file, Line: chunk.line + item.YNode().Line - 1, Err: fmt.Errorf("an item of a List: %w", err)}
				}
				raw, err := blockYAML(item)
				if err != nil {
					return nil, &Error{File: file, Line: chunk.line + item.YNode().Line - 1, Err: err}
				}
				// An item has no text of its own in the file: its Raw is
				// kept whatever DropText says, and Offset and Length are 0.
				docs = append(docs, Document{File: file, Line: chunk.line + item.YNode().Line - 1, Raw: raw, Object: obj, Images: imagesOf(item)})
			}
			continue
		}
		obj, err := objectOf(node)
		if err != nil {
			return nil, notAnObject(file, &Error{File: file, Line: chunk.line, Err: err})
		}
		d := doc(chunk, obj, imagesOf(node))
		if d.Raw != nil && isJSONText(chunk.text) {
			if d.Raw, err = blockYAML(node); err != nil {
				return nil, &Error{File: file, Line: chunk.line, Err: err}
			}
		}
		docs = append(docs, d)
	}
	return docs, nil
}

var utf8BOM = []byte("\xef\xbb\xbf")

// rawDocument is a document's text, ending in a newline.
func rawDocument(text []byte) []byte {
	if !bytes.HasSuffix(text, []byte("\n")) {
		return append(append([]byte(nil), text...), '\n')
	}
	return text
}

type chunk struct {
	text []byte
	off  int // offset of text in the file
	line int // 1-based line of the chunk's first line in the file
}

// splitYAML cuts a stream at document markers ("---" and "..." lines),
// keeping each document's bytes as written so the output is the author's
// text. Only lines that begin with "---" or "..." can be markers, so it
// jumps from one such line to the next and counts lines in bulk, rather
// than visiting every line: this runs over every byte of an add-on.
func splitYAML(b []byte) []chunk {
	var out []chunk
	start, startLine := 0, 1
	counted, line := 0, 1 // line is the number of the line at offset counted
	lineAt := func(i int) int {
		line += bytes.Count(b[counted:i], newline)
		counted = i
		return line
	}
	nextDash, nextDot := -1, -1 // the next lines that start with "---" and "..."
	for i := 0; i < len(b); {
		if b[i] == '-' || b[i] == '.' {
			next := len(b)
			if end := bytes.IndexByte(b[i:], '\n'); end >= 0 {
				next = i + end + 1
			}
			l := bytes.TrimRight(b[i:next], "\r\n")
			if isDocMarker(l) {
				out = append(out, chunk{text: b[start:i], off: start, line: startLine})
				ln := lineAt(i)
				rest := bytes.TrimSpace(l[3:])
				if len(rest) > 0 && rest[0] != '#' {
					// "--- value": content starts on the marker line.
					start, startLine = i+3, ln
				} else {
					start, startLine = next, ln+1
				}
			} else if bytes.Equal(l, []byte("...")) {
				out = append(out, chunk{text: b[start:i], off: start, line: startLine})
				start, startLine = next, lineAt(i)+1
			}
		}
		if nextDash <= i {
			nextDash = lineStartAfter(b, i, lineDash)
		}
		if nextDot <= i {
			nextDot = lineStartAfter(b, i, lineDot)
		}
		i = min(nextDash, nextDot)
	}
	out = append(out, chunk{text: b[start:], off: start, line: startLine})
	return out
}

var (
	newline  = []byte("\n")
	lineDash = []byte("\n---")
	lineDot  = []byte("\n...")
)

// lineStartAfter is the offset of the first line after offset i that
// begins like sep (a newline and what follows it), or len(b).
func lineStartAfter(b []byte, i int, sep []byte) int {
	if k := bytes.Index(b[i:], sep); k >= 0 {
		return i + k + 1
	}
	return len(b)
}

func isDocMarker(l []byte) bool {
	return bytes.HasPrefix(l, []byte("---")) && (len(l) == 3 || l[3] == ' ' || l[3] == '\t')
}

// parseDocument parses one document; nil means it was empty.
func parseDocument(b []byte) (*yaml.RNode, error) {
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, nil
	}
	node, err := yaml.Parse(string(b))
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil // a document of only comments
		}
		return nil, err
	}
	if node.IsNil() || node.YNode().Kind == 0 {
		return nil, nil
	}
	// A document that is only null (kubectl skips it) is empty too.
	if n := node.YNode(); n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return nil, nil
	}
	if err := checkAliases(node.YNode()); err != nil {
		return nil, err
	}
	return node, nil
}

// maxExpandedNodes bounds what a document's aliases may expand to. go-yaml
// refuses excessive aliasing only when decoding into Go values; a parsed
// tree keeps aliases as pointers, and kubectl (or kustomize) would expand
// a billion-laughs document into billions of nodes.
const maxExpandedNodes = 1_000_000

// errAliasBomb marks a document whose aliases expand beyond reason
// (checkAliases); it also matches ErrInvalid where it is reported.
var errAliasBomb = errors.New("excessive aliasing")

// checkAliases counts the nodes a document expands to, each anchored
// subtree sized once.
func checkAliases(root *yaml.Node) error {
	sizes := map[*yaml.Node]int64{}
	var size func(n *yaml.Node, depth int) int64
	size = func(n *yaml.Node, depth int) int64 {
		if n == nil || depth > 10_000 {
			return maxExpandedNodes + 1
		}
		if s, ok := sizes[n]; ok {
			return s
		}
		sizes[n] = maxExpandedNodes + 1 // a cycle counts as too many
		var s int64 = 1
		if n.Kind == yaml.AliasNode {
			s += size(n.Alias, depth+1)
		}
		for _, c := range n.Content {
			s += size(c, depth+1)
			if s > maxExpandedNodes {
				break
			}
		}
		sizes[n] = s
		return s
	}
	total := size(root, 0)
	if total > maxExpandedNodes {
		return fmt.Errorf("%w: the document expands to over %d nodes", errAliasBomb, maxExpandedNodes)
	}
	// The ratio rule of go-yaml's decoder, which kubectl applies: mostly
	// aliased content is refused well before the hard cap.
	direct := countNodes(root)
	aliased := total - direct
	if total > 1000 && aliased > 100 && float64(aliased)/float64(total) > allowedAliasRatio(total) {
		return fmt.Errorf("%w: %d of the %d nodes the document expands to come from aliases", errAliasBomb, aliased, total)
	}
	return nil
}

func countNodes(n *yaml.Node) int64 {
	var c int64 = 1
	for _, k := range n.Content {
		c += countNodes(k)
	}
	return c
}

// allowedAliasRatio is go-yaml's: 99% aliased below 400k nodes, falling to
// 10% at 4M.
func allowedAliasRatio(total int64) float64 {
	const low, high = 400_000, 4_000_000
	switch {
	case total <= low:
		return 0.99
	case total >= high:
		return 0.10
	}
	return 0.99 - 0.89*(float64(total-low)/(high-low))
}

// objectOf checks a document names a Kubernetes object.
func objectOf(node *yaml.RNode) (addon.Object, error) {
	if node.YNode().Kind != yaml.MappingNode {
		return addon.Object{}, fmt.Errorf("%w: document is not a mapping", ErrInvalid)
	}
	// go-yaml reads the first of two keys, the API server's decoders the
	// last: a document of kind ConfigMap, then kind Pod, was listed as a
	// ConfigMap without images and applied as a Pod. A key written twice
	// with the same value reads alike either way, as kubectl takes it.
	if k := twiceOf(node.YNode(), "apiVersion", "kind", "metadata"); k != "" {
		return addon.Object{}, fmt.Errorf("%w: document has two %s keys", ErrInvalid, k)
	}
	if m := valuesOf([]*yaml.Node{node.YNode()}, "metadata"); len(m) > 0 {
		if k := twiceOf(m[0], "name", "namespace"); k != "" {
			return addon.Object{}, fmt.Errorf("%w: document has two metadata.%s keys", ErrInvalid, k)
		}
	}
	meta, err := node.GetMeta()
	if err != nil {
		return addon.Object{}, fmt.Errorf("%w: %s", ErrInvalid, err)
	}
	// kubectl's decoder and apply's read any document with a top-level
	// items field as a list, whatever its kind, and apply its items in
	// its place: a ConfigMap holding items: [a Deployment] was listed as
	// a ConfigMap without images, and installed a Deployment whose image
	// no relocation rewrote. Only a List (listItems) may hold items.
	if len(valuesOf([]*yaml.Node{Resolved(node).YNode()}, "items")) > 0 {
		return addon.Object{}, fmt.Errorf("%w: %s %s has a top-level items field, which kubectl reads as a list of objects to apply in its place (only a kind ending in List may hold items)", ErrInvalid, meta.Kind, meta.Name)
	}
	switch {
	case meta.APIVersion == "":
		return addon.Object{}, fmt.Errorf("%w: document has no apiVersion", ErrInvalid)
	case meta.Kind == "":
		return addon.Object{}, fmt.Errorf("%w: document has no kind", ErrInvalid)
	case meta.Name == "":
		// kubectl create takes generateName; apply, by name, cannot.
		if g, _ := node.Pipe(yaml.Lookup("metadata", "generateName")); g != nil {
			return addon.Object{}, fmt.Errorf("%w: %s has metadata.generateName but no metadata.name: an add-on's objects are applied by name, as kubectl apply applies them", ErrInvalid, meta.Kind)
		}
		return addon.Object{}, fmt.Errorf("%w: %s has no metadata.name", ErrInvalid, meta.Kind)
	}
	return addon.Object{APIVersion: meta.APIVersion, Kind: meta.Kind, Namespace: meta.Namespace, Name: meta.Name}, nil
}

// twiceOf is the first of keys that the mapping m holds more than once,
// with values that differ.
func twiceOf(m *yaml.Node, keys ...string) string {
	for _, k := range keys {
		vs := valuesOf([]*yaml.Node{m}, k)
		for _, v := range vs[min(len(vs), 1):] {
			if !sameNode(vs[0], v) {
				return k
			}
		}
	}
	return ""
}

// sameNode reports whether a and b are the same YAML value: kind, tag,
// scalar text and content alike (an alias by the anchor it names).
func sameNode(a, b *yaml.Node) bool {
	if a.Kind != b.Kind || a.ShortTag() != b.ShortTag() || a.Value != b.Value || len(a.Content) != len(b.Content) {
		return false
	}
	for i := range a.Content {
		if !sameNode(a.Content[i], b.Content[i]) {
			return false
		}
	}
	return true
}

// yamlErrorLine pulls the line number out of a go-yaml error, or 1.
// go-yaml's errors carry no position but their text; its parser's ("did
// not find expected ...", an unclosed flow mapping such as an unquoted
// Jinja {{...}}) count lines from 0, its scanner's from 1, so a parser's
// line gets one more, the line an editor shows; a problem found at the
// end of the document is on its last line (of lines).
func yamlErrorLine(err error, lines int) int {
	s := err.Error()
	i := strings.Index(s, "line ")
	if i < 0 {
		return 1
	}
	n, rest := 0, s[i+5:]
	for rest != "" && rest[0] >= '0' && rest[0] <= '9' {
		n = n*10 + int(rest[0]-'0')
		rest = rest[1:]
	}
	if strings.HasPrefix(rest, ": did not find expected ") {
		n++
	}
	return max(1, min(n, lines))
}

// lineCount is the number of lines of b, a last one without its newline
// counted.
func lineCount(b []byte) int {
	n := bytes.Count(b, []byte("\n"))
	if len(b) > 0 && b[len(b)-1] != '\n' {
		n++
	}
	return n
}

// trimYAMLError drops go-yaml's "yaml: line N:" prefix: Error carries the line.
func trimYAMLError(err error) string {
	s := err.Error()
	if i := strings.Index(s, "yaml: "); i >= 0 {
		s = s[i+len("yaml: "):]
	}
	if strings.HasPrefix(s, "line ") {
		if c := strings.Index(s, ": "); c >= 0 {
			return s[c+2:]
		}
	}
	return s
}
