package render

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io/fs"
	"net/url"
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/openapi"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/addonpkg/addonpkg/pkg/addon"
	"github.com/addonpkg/addonpkg/pkg/safetree"
)

// kustomizeMu serializes kustomize runs: kustomize keeps global state
// (plugin and openapi registries) that is not safe for concurrent use.
var kustomizeMu sync.Mutex

// renderKustomize builds the tree's root kustomization in memory. Remote
// references are refused before kustomize runs, because kustomize would
// fetch them itself (HTTP or `git clone`) even from an in-memory tree.
func renderKustomize(ctx context.Context, fsys fs.FS, opts Options) (docs []Document, warnings []string, err error) {
	limits := safetree.Limits{MaxMappingKeys: opts.MaxMappingKeys, MaxKustomizeObjects: opts.MaxKustomizeObjects, MaxPatchTargets: opts.MaxPatchTargets}.WithDefaults()
	maxKeys := limits.MaxMappingKeys
	// One walk of the kustomization graph says what kustomize reads: the
	// checks below look at those files only (reach.go), and the caps
	// count its work.
	g := walkKustomizations(fsys)
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	if err := checkKustomizations(fsys, g, opts.AllowRemote, maxKeys); err != nil {
		return nil, nil, err
	}
	if err := checkReachedFiles(g, maxKeys, opts.AllowRemote); err != nil {
		return nil, nil, err
	}
	if err := checkKustomizeWork(fsys, g, limits); err != nil {
		return nil, nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	// kustomize takes no context: it runs on its own goroutine, and a
	// render whose ctx ends returns then, while kustomize stops at its
	// next read of the tree (treeFS fails every read once ctx ends) or,
	// busy between reads (patches and transformers over the objects,
	// which the caps bound), finishes on its own. A command exits; a
	// library caller has its goroutine back at once.
	type outcome struct {
		docs     []Document
		warnings []string
		err      error
	}
	done := make(chan outcome, 1)
	go func() {
		var o outcome
		o.docs, o.warnings, o.err = runKustomize(ctx, treeFS{fsys: fsys, files: g.content})
		done <- o
	}()
	select {
	case o := <-done:
		return o.docs, o.warnings, o.err
	case <-ctx.Done():
		return nil, nil, ctx.Err()
	}
}

// runKustomize runs kustomize over the checked tree, one render at a
// time, unless ctx ended while it waited for its turn, and turns its
// resources into documents. The warnings are those kustomizeWarnings
// works out from the files it read.
func runKustomize(ctx context.Context, tree treeFS) (docs []Document, warnings []string, err error) {
	fsys := tree.fsys
	kustomizeMu.Lock()
	defer kustomizeMu.Unlock()
	// A render whose caller left while it waited for the lock (another
	// render's kustomize running long) does not run kustomize for nobody:
	// it would hold the lock from the renders still waited for.
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	defer func() {
		if r := recover(); r != nil {
			docs, warnings = nil, nil
			err = &Error{File: rootKustomization(fsys), Err: fmt.Errorf("%w: %v", ErrKustomizePanic, r)}
		}
	}()
	// kustomize keeps the OpenAPI schema a kustomization's openapi field
	// names in kyaml's package state, and a root kustomization without
	// the field does not clear it: one add-on's schema (a kind it calls
	// cluster-scoped) changed how every later add-on in the process
	// rendered (that kind's objects lost their namespace). Each render
	// starts from kustomize's builtin schema and leaves it so.
	openapi.ResetOpenAPI()
	defer openapi.ResetOpenAPI()
	// Reorder "unspecified" is what `kustomize build` does: the
	// kustomization's sortOptions when it has them, else the legacy
	// order (the apply order of this package). It is also the one
	// setting under which kustomize does not log that sortOptions
	// overrides its option.
	kopts := krusty.MakeDefaultOptions()
	kopts.Reorder = krusty.ReorderOptionUnspecified
	var read readFiles
	tree.ctx, tree.read = ctx, &read
	resMap, err := krusty.MakeKustomizer(kopts).Run(tree, "/")
	// A run that ended with ctx (its reads failed, or its result came
	// too late) is the caller's leaving, not the add-on's error.
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	if err != nil {
		return nil, nil, &Error{File: rootKustomization(fsys), Err: fmt.Errorf("kustomize build: %w", err)}
	}
	warnings = kustomizeWarnings(treeFS{fsys: fsys, files: tree.files}, read.names)
	if err := fixManagedBy(resMap); err != nil {
		return nil, nil, err
	}
	for _, res := range resMap.Resources() {
		b, err := res.AsYAML()
		if err != nil {
			return nil, nil, fmt.Errorf("kustomize build: encode %s: %w", res.CurId(), err)
		}
		node, err := yaml.Parse(string(b))
		if err != nil {
			return nil, nil, fmt.Errorf("kustomize build: %w", err)
		}
		obj, err := objectOf(node)
		if err != nil {
			return nil, nil, &Error{File: rootKustomization(fsys), Err: err}
		}
		docs = append(docs, Document{Raw: b, Object: obj, Images: imagesOf(node)})
		if w := placeholderWarning(obj.String(), placeholders(b)); w != "" {
			warnings = append(warnings, w)
		}
	}
	if err := checkDuplicates(docs, rootKustomization(fsys)); err != nil {
		return nil, nil, err
	}
	return docs, warnings, nil
}

func rootKustomization(fsys fs.FS) string {
	return kustomizationFile(fsys, ".")
}

// kustomizationFile is the name of the kustomization of the folder dir.
func kustomizationFile(fsys fs.FS, dir string) string {
	for _, n := range addon.KustomizationNames {
		if _, err := fs.Stat(fsys, path.Join(dir, n)); err == nil {
			return path.Join(dir, n)
		}
	}
	return path.Join(dir, addon.KustomizationNames[0])
}

// checkKustomizations refuses a kustomization kustomize reads (g) that
// inflates a Helm chart, or (unless allowRemote) names a remote resource
// or a path outside the tree, or changes the objects of a folder of
// configurations (kustomizeGraph.changedConfigs); the configurations of builtin transformers
// and generators in other files are checkReachedFiles's
// (builtinConfigsIn).
func checkKustomizations(fsys fs.FS, g *kustomizeGraph, allowRemote bool, maxKeys int) error {
	if c := g.changedConfigs; c.file != "" && !allowRemote {
		return &Error{File: c.file, Err: fmt.Errorf("%w: %s changes the objects of a folder listed in transformers, generators or validators, which kustomize then reads as configurations: it may give one a remote path (a PatchTransformer's, fetched over HTTP) that no file of the tree holds; list the configurations as written, or allow remote resources", ErrRemote, c.field)}
	}
	files, err := g.files()
	if err != nil {
		return err
	}
	for _, name := range files {
		if !isKustomization(name) {
			continue
		}
		b, err := g.read(name)
		if err != nil {
			return err
		}
		node, err := yaml.Parse(string(b))
		if err != nil {
			return &Error{File: name, Line: yamlErrorLine(err, lineCount(b)), Err: fmt.Errorf("%w: %s", ErrInvalid, trimYAMLError(err))}
		}
		if err := checkKustomization(fsys, name, node, allowRemote); err != nil {
			return err
		}
		if err := checkGenerators(g, name, node, maxKeys); err != nil {
			return err
		}
	}
	// What the text did not show (a !!binary scalar), kustomize's own
	// reading of the kustomizations did (kustomizeGraph.remote).
	if r := g.remote; len(r) > 0 && !allowRemote {
		return &Error{File: kustomizationFile(fsys, r[0].dir), Err: fmt.Errorf("%w: %q (an add-on renders from its own tree unless remote resources are allowed)", ErrRemote, r[0].location)}
	}
	return nil
}

// builtinConfigsIn refuses a remote location in the configuration of
// one of kustomize's builtin transformers or generators (apiVersion
// builtin) in file, whose bytes are b: a kustomization's transformers,
// generators and validators name such files, and kustomize loads the
// files their fields name (a PatchTransformer's path, a
// ConfigMapGenerator's files) over HTTP when they are URLs, whatever its
// load restrictions say.
func builtinConfigsIn(file string, b []byte) error {
	if !mayHoldBuiltin(b) {
		return nil
	}
	for _, c := range splitYAML(b) {
		node, err := parseDocument(c.text)
		if err != nil || node == nil {
			continue // not a configuration kustomize reads
		}
		for _, cfg := range configsOf(node) {
			if err := checkBuiltinConfig(file, c.line, cfg, true); err != nil {
				return err
			}
		}
	}
	return nil
}

// inlineFields are the kustomization fields whose entries may be a
// configuration written in place, rather than the path of one.
var inlineFields = []string{"transformers", "generators", "validators"}

// inlineConfigs reads an entry of field as kustomize does: in the fields
// that take configurations (inlineFields), an entry that parses as YAML
// objects is a configuration written in place (kustomize's inline
// transformers and generators), not a path. It returns the objects and
// true for such an entry.
func inlineConfigs(field, entry string) ([]*yaml.RNode, bool) {
	if !slices.Contains(inlineFields, field) {
		return nil, false
	}
	var configs []*yaml.RNode
	for _, c := range splitYAML([]byte(entry)) {
		node, err := parseDocument(c.text)
		if err != nil {
			return nil, false
		}
		if node == nil {
			continue
		}
		if node.YNode().Kind != yaml.MappingNode {
			return nil, false
		}
		configs = append(configs, configsOf(node)...)
	}
	return configs, len(configs) > 0
}

// configsOf are the configurations kustomize reads from the parsed
// document node, as it reads them: with its aliases and merge keys
// expanded (kyaml's ByteReader de-anchors every document before
// kustomize looks at it, so an apiVersion, a kind or a path may come
// from an anchor or a merge key), and the items of a List in its place.
// node is expanded in place (parseDocument bounds what its aliases
// expand to); none when kustomize could not expand it either.
func configsOf(node *yaml.RNode) []*yaml.RNode {
	if err := node.DeAnchor(); err != nil {
		return nil
	}
	if items, ok, _ := listItems(node); ok {
		return items
	}
	return []*yaml.RNode{node}
}

// builtinAPIVersion is the apiVersion of the configuration of a
// transformer or generator built into kustomize.
const builtinAPIVersion = "builtin"

// mayHoldBuiltin tells whether the file b may hold a configuration of
// apiVersion builtin, so that a file that does not is not parsed for
// one. The word need not be in its bytes: a double-quoted scalar writes
// it with escapes ("b\u0075iltin"), and a file in UTF-16 (with its byte
// order mark, which YAML reads) in other bytes; kustomize read both as
// builtin, and loaded the remote path of such a PatchTransformer.
func mayHoldBuiltin(b []byte) bool {
	return bytes.Contains(b, []byte(builtinAPIVersion)) || bytes.IndexByte(b, '\\') >= 0 ||
		bytes.HasPrefix(b, []byte{0xFF, 0xFE}) || bytes.HasPrefix(b, []byte{0xFE, 0xFF})
}

// checkBuiltinConfig refuses a remote location in cfg, when it configures
// a builtin transformer or generator. line is that of cfg's document in
// file; inner says the error names the line of the location in that
// document rather than line itself.
func checkBuiltinConfig(file string, line int, cfg *yaml.RNode, inner bool) error {
	if !isBuiltinConfig(cfg) {
		return nil
	}
	if s, l, ok := remoteIn(cfg.YNode()); ok {
		if inner {
			line += l - 1
		}
		return &Error{File: file, Line: line, Err: fmt.Errorf("%w: %q, which the builtin %s would load (an add-on renders from its own tree unless remote resources are allowed)", ErrRemote, s, cfg.GetKind())}
	}
	return nil
}

// isBuiltinConfig tells whether cfg configures one of kustomize's
// builtin transformers or generators, the only configurations it loads
// (it runs no plugins).
func isBuiltinConfig(cfg *yaml.RNode) bool {
	return cfg.YNode().Kind == yaml.MappingNode && strings.TrimPrefix(cfg.GetApiVersion(), "/") == builtinAPIVersion
}

func isKustomization(name string) bool {
	for _, n := range addon.KustomizationNames {
		if path.Base(name) == n {
			return true
		}
	}
	return false
}

// Fields whose entries kustomize loads as files or directories.
var pathFields = []string{"resources", "bases", "components", "crds", "configurations", "transformers", "generators", "validators"}

func checkKustomization(fsys fs.FS, file string, node *yaml.RNode, allowRemote bool) error {
	for _, field := range addon.KustomizeHelmFields {
		if f := node.Field(field); f != nil && !f.Value.IsNilOrEmpty() {
			return &Error{File: file, Line: f.Key.YNode().Line, Err: fmt.Errorf("%s inflates %w, which needs kustomize's --enable-helm and the helm binary, and addonpkg runs neither: run `kustomize build --enable-helm DIR > addon.yaml` (or helm template) and build that file",
				field, addon.ErrHelmChart)}
		}
	}
	if allowRemote {
		return nil
	}
	dir := path.Dir(file)
	if s, line, ok := remoteIn(node.YNode()); ok {
		return &Error{File: file, Line: line, Err: fmt.Errorf("%w: %q (an add-on renders from its own tree unless remote resources are allowed)", ErrRemote, s)}
	}
	expanded := expandedCopy(node)
	for _, field := range pathFields {
		for _, item := range entriesOf(expanded, field) {
			if item.Kind != yaml.ScalarNode {
				continue
			}
			if slices.Contains(inlineFields, field) {
				// Not a path that is missing: a configuration kustomize
				// would expand.
				if err := aliasBombIn(file, item.Line, item.Value); err != nil {
					return err
				}
			}
			if configs, ok := inlineConfigs(field, item.Value); ok {
				for _, cfg := range configs {
					// The entry's line: the text's own lines are not the file's.
					if err := checkBuiltinConfig(file, item.Line, cfg, false); err != nil {
						return err
					}
				}
				continue
			}
			p, err := safetree.JoinInside(dir, item.Value)
			if err != nil {
				return &Error{File: file, Line: item.Line, Err: fmt.Errorf("%w: %s %q", ErrOutsideRoot, field, item.Value)}
			}
			if _, err := fs.Stat(fsys, p); err != nil {
				return &Error{File: file, Line: item.Line, Err: fmt.Errorf("%s %q: not found in the add-on tree", field, item.Value)}
			}
		}
	}
	return nil
}

// expandedCopy is the kustomization node as kustomize reads it
// (types.Kustomization's Unmarshal): a copy with its anchors and merge
// keys expanded, node itself where kyaml cannot expand it; nil when its
// aliases are past the bound (checkAliases), which checkReachedFiles
// refuses. A list that came through a merge key had its inline
// configurations' remote paths fetched unchecked.
func expandedCopy(node *yaml.RNode) *yaml.RNode {
	if checkAliases(node.YNode()) != nil {
		return nil
	}
	text, err := node.String()
	if err != nil {
		return nil
	}
	expanded, err := yaml.Parse(text)
	if err != nil || expanded.DeAnchor() != nil {
		return node // what it says as written
	}
	return expanded
}

// entriesOf are the entries of the list field of expanded (an
// expandedCopy), under the field's name in any case, as kustomize reads
// it: a list under Transformers had its inline configurations' remote
// paths fetched unchecked. Every key of that name counts, whichever one
// kustomize keeps.
func entriesOf(expanded *yaml.RNode, field string) []*yaml.Node {
	if expanded == nil {
		return nil
	}
	var entries []*yaml.Node
	m := expanded.YNode().Content
	for i := 0; i+1 < len(m); i += 2 {
		if strings.EqualFold(m[i].Value, field) && m[i+1].Kind == yaml.SequenceNode {
			entries = append(entries, m[i+1].Content...)
		}
	}
	return entries
}

// textFields are the keys whose values kustomize copies into objects
// as text and never loads: labels and annotations, names, namespaces,
// images, generator literals, selectors, and a patch written in place
// (patch, a PatchJson6902Transformer's jsonOp: kustomize applies that
// text; a patch it loads is named by path). A URL there (an annotation
// naming the project's documentation, a one-line JSON patch setting
// one) is not a remote resource. Any
// other field is scanned: kustomize loads files from fields of many
// names (resources, patches' path, generators' files and envs, openapi's
// path...), and a field it may load from is better refused than missed.
var textFields = map[string]bool{
	"annotations": true, "commonAnnotations": true,
	"labels": true, "commonLabels": true, "pairs": true,
	"metadata": true, "namePrefix": true, "nameSuffix": true, "prefix": true, "suffix": true,
	"namespace": true, "images": true, "replicas": true, "literals": true,
	"target": true, "select": true, "reject": true, "fieldSpecs": true,
	"patch": true, "jsonOp": true,
}

// remoteIn finds a scalar of n that kustomize would load from a remote
// location (looksRemote), outside the values of textFields: the first
// such scalar (as kustomize reads it: scalarText), its line and true.
// An alias is followed (a URL anchored in an annotation and named in
// resources is loaded), each node once.
func remoteIn(n *yaml.Node) (s string, line int, ok bool) {
	seen := map[*yaml.Node]bool{}
	var walk func(n *yaml.Node) bool
	walk = func(n *yaml.Node) bool {
		if n == nil || seen[n] {
			return false
		}
		seen[n] = true
		switch n.Kind {
		case yaml.ScalarNode:
			s, line = scalarText(n), n.Line
			ok = looksRemote(s)
			return ok
		case yaml.AliasNode:
			return walk(n.Alias)
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := scalarText(n.Content[i]), n.Content[i+1]
				if strings.EqualFold(k, "patchesStrategicMerge") && v.Kind == yaml.SequenceNode {
					// Its entries kustomize never fetches are text,
					// skipped as a textField's value is: not marked seen,
					// so what an alias names from them is still walked.
					for _, e := range v.Content {
						if t := deref(e); t.Kind == yaml.ScalarNode && smpNeverFetched(scalarText(t)) {
							continue
						}
						if walk(e) {
							return true
						}
					}
					continue
				}
				if !textFields[k] && walk(v) {
					return true
				}
			}
			return false
		}
		for _, c := range n.Content {
			if walk(c) {
				return true
			}
		}
		return false
	}
	if !walk(n) {
		return "", 0, false
	}
	return s, line, true
}

// smpNeverFetched tells whether kustomize never fetches entry, an entry
// of a kustomization's patchesStrategicMerge, whatever text it holds: it
// is YAML of mappings (a patch written in place, JSON on one line
// included) that kustomize's loader does not take for a URL. kustomize
// (PatchStrategicMergeTransformer's loadFromPaths) reads an entry as
// patch text first, and only when that fails loads it as a path, which
// its loader fetches only when it parses as an http or https URL
// (loader.IsRemoteFile). A one-line JSON patch whose values hold a URL
// was refused as remote, and kustomize never fetched it.
func smpNeverFetched(entry string) bool {
	if u, err := url.Parse(entry); err == nil && (u.Scheme == "http" || u.Scheme == "https") {
		return false
	}
	docs := 0
	for _, c := range splitYAML([]byte(entry)) {
		node, err := parseDocument(c.text)
		if err != nil {
			return false
		}
		if node == nil {
			continue
		}
		if node.YNode().Kind != yaml.MappingNode {
			return false
		}
		docs++
	}
	return docs > 0
}

// scalarText is the text kustomize reads from the scalar n. It decodes
// kustomizations and the configurations of its builtins with a YAML
// library that decodes a !!binary scalar to its bytes, so
// "path: !!binary aHR0cHM6Ly8uLi4=" names a URL that the text of the
// node does not show, and that kustomize fetched. Base64 that does not
// decode is the node's text: kustomize refuses it.
func scalarText(n *yaml.Node) string {
	if n.ShortTag() == binaryTag {
		if b, err := base64.StdEncoding.DecodeString(n.Value); err == nil {
			return string(b)
		}
	}
	return n.Value
}

const binaryTag = "!!binary"

// scpLike matches a user name as kustomize's git URL parser takes one
// (a letter, then letters, digits and dashes, then @), a host and a path
// after : or /. A name with an @ and no path (admin@cluster.yaml) is not
// a repository to kustomize either.
var scpLike = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9-]*@[^/:]+[:/].`)

// looksRemote tells whether kustomize would treat s as a remote location.
// A URL without a host is one too: kustomize tries every resource and
// component as a git repository before it looks in the tree, and runs
// `git clone` on file:///srv/repo (a repository on the installer's disk)
// and on git::file:///srv/repo (go-getter's prefix, which it strips),
// so a directory of the tree named like them was no protection. So does
// a host with a user before it (deploy@host:org/repo, not only git@) or
// github.com in any case: kustomize runs git fetch of those over ssh.
//
// Those forms are known by how the text starts, whatever follows it:
// kustomize fetched "https://host/p.yaml x" (its loader's URL parser
// takes a space in the path) and cloned "https://host/org/repo x", so a
// space makes no location local. Text with a space is only exempt from
// the looser rules after them (a "://" anywhere), which would take a
// patch written in place for a location. Spaces around s count for
// nothing: kustomize reads " https://host/p.yaml" from the tree, and
// refusing it costs no add-on anything.
func looksRemote(s string) bool {
	s = strings.TrimSpace(s)
	t, forced := trimPrefixFold(s, "git::")
	if forced {
		return true
	}
	for _, p := range []string{"http://", "https://", "ssh://", "file://", "git@", "github.com/", "github.com:", "gitlab.com/", "bitbucket.org/"} {
		if _, ok := trimPrefixFold(t, p); ok {
			return true
		}
	}
	// scp's user@host:path, with any user (kustomize's extractUsername),
	// or user@host/path: kustomize runs git fetch of it over ssh.
	if scpLike.MatchString(s) {
		return true
	}
	if strings.ContainsAny(s, " \t\r\n") {
		return false
	}
	if u, err := url.Parse(s); err == nil && u.Scheme != "" && u.Host != "" {
		return true
	}
	return strings.Contains(s, "://") || strings.Contains(s, "?ref=") || strings.Contains(s, ".git//") || strings.Contains(s, "_git/")
}

// trimPrefixFold is s without prefix, matched in any case, and whether
// s had it.
func trimPrefixFold(s, prefix string) (string, bool) {
	if len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix) {
		return s[len(prefix):], true
	}
	return s, false
}
