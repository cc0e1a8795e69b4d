package render

import (
	"io/fs"
	"path"
	"reflect"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/addonpkg/addonpkg/pkg/addon"
)

// kustomize reads only the files its kustomizations name, and a tree
// carries others: READMEs, Helm values, example configurations, test
// fixtures. The checks of hostile content (alias bombs, keys kustomize
// exits on, builtin configurations that name remote locations) exist to
// keep kustomize from dying or blowing up, so they apply to the files it
// may read, which the one walk of the kustomization graph here finds; a
// file it does not reach is not parsed and cannot make a render fail.
// The same walk counts kustomize's work (work.go). Links out of the tree
// are judged on every file (safetree.CheckLinks), whatever the walk
// says.
//
// The walk follows every field of a kustomization that kustomize (api
// v0.21) reads a file or folder from, its legacy fields included, and
// reads each kustomization as kustomize does (types.Kustomization's
// Unmarshal: field names in any case, YAML merge keys expanded). Where it
// cannot tell what kustomize reads, it says every file of the tree is
// reached (kustomizeGraph.everything), never less: a kustomization it
// cannot decode, a field it does not follow (kustomizationFields), a
// builtin transformer or generator configuration that names files of its
// own (builtinNamesFiles: kustomize resolves them against the
// kustomization that lists the configuration, wherever it is written), a
// folder of configurations whose kustomization changes them
// (changedConfigs).
//
// The walk also keeps, as kustomize decodes them, the remote locations
// the kustomizations name (kustomizeGraph.remote: the text checks can be
// misled by a !!binary scalar), and the text of each file it reaches,
// which the checks and kustomize then read (kustomizeGraph.read).
// TestWalkReachesWhatKustomizeReads holds the walk to what kustomize
// reads, by running kustomize.

// fieldUse says what the walk does with a field of a kustomization.
type fieldUse int

const (
	// noFiles: kustomize reads no file or folder from the field.
	noFiles fieldUse = iota
	// walked: the walk follows the files and folders the field names.
	walked
	// notFollowed: the walk does not follow the field; a kustomization
	// that sets it makes every file of the tree reached.
	notFollowed
)

// kustomizationFields are the fields of types.Kustomization, by their
// JSON names, and what the walk does with each. A field missing here (a
// newer kustomize's) is not followed: TestKustomizationFieldsKnown names
// it when kustomize is upgraded.
var kustomizationFields = map[string]fieldUse{
	"apiVersion": noFiles, "kind": noFiles, "metadata": noFiles,
	"namePrefix": noFiles, "nameSuffix": noFiles, "namespace": noFiles,
	"commonLabels": noFiles, "labels": noFiles, "commonAnnotations": noFiles,
	"images": noFiles, "imageTags": noFiles, "replicas": noFiles,
	"vars": noFiles, "sortOptions": noFiles, "generatorOptions": noFiles,
	"buildMetadata": noFiles,

	"resources": walked, "bases": walked, "components": walked,
	"crds": walked, "configurations": walked, "openapi": walked,
	"generators": walked, "transformers": walked, "validators": walked,
	"replacements": walked, "patches": walked, "patchesJson6902": walked,
	"patchesStrategicMerge": walked,
	"configMapGenerator":    walked, "secretGenerator": walked,

	// Refused by checkKustomization (addon.KustomizeHelmFields) when
	// spelled as kustomize documents them; in any other case, or
	// helmGlobals alone, not followed.
	"helmGlobals": notFollowed, "helmCharts": notFollowed, "helmChartInflationGenerator": notFollowed,
}

// kustomizeGraph is one walk of a kustomize tree from its root
// kustomization: the files kustomize may read, and the work it does
// (kustomizeWork) for each kustomization folder it loads.
type kustomizeGraph struct {
	fsys fs.FS
	// reached are the files kustomize may read, by their names in fsys.
	reached map[string]bool
	// everything, when not "", says why the walk cannot tell what
	// kustomize reads: every file of the tree counts as reached.
	everything string
	// changedConfigs, when its file is not "", is a kustomization of a
	// folder of configurations that changes them (changedConfigs).
	changedConfigs changedConfigs
	// remote are the remote locations (looksRemote) that the
	// kustomizations name, as kustomize reads them: the walk does not
	// follow them, and checkKustomizations refuses them unless remote
	// resources are allowed. That check reads each kustomization's text,
	// which may show a location otherwise than kustomize reads it (a
	// !!binary scalar); this list is what kustomize decodes.
	remote []remoteEntry
	// decoded are the kustomizations the walk read, by their files'
	// names, as kustomize decodes them.
	decoded map[string]*types.Kustomization
	// patchFiles are the files kustomize applies as patches (the path
	// of an entry of patches or patchesJson6902), by their names in fsys
	// (patchFile).
	patchFiles map[string]bool
	// content holds the files the walk reached, read once (read) for
	// the walk, the checks and kustomize itself (treeFS.files).
	content map[string][]byte
	// root is the work of the root kustomization.
	root  *kustomizeWork
	done  map[string]*kustomizeWork
	doing map[string]bool
}

// remoteEntry is a remote location named by the kustomization of dir.
type remoteEntry struct {
	dir, location string
}

// isRemote tells whether entry, of the kustomization of dir, names a
// remote location, and notes it (kustomizeGraph.remote).
func (g *kustomizeGraph) isRemote(dir, entry string) bool {
	if !looksRemote(entry) {
		return false
	}
	g.remote = append(g.remote, remoteEntry{dir: dir, location: entry})
	return true
}

// walkKustomizations walks the kustomization graph of fsys from its root
// kustomization.
func walkKustomizations(fsys fs.FS) *kustomizeGraph {
	g := newKustomizeGraph(fsys)
	g.root = g.dir(".")
	if g.everything == "" {
		g.findBuiltinFileNames()
	}
	return g
}

func newKustomizeGraph(fsys fs.FS) *kustomizeGraph {
	return &kustomizeGraph{fsys: fsys, reached: map[string]bool{}, decoded: map[string]*types.Kustomization{}, patchFiles: map[string]bool{}, content: map[string][]byte{}, done: map[string]*kustomizeWork{}, doing: map[string]bool{}}
}

// read is the content of the file name of the tree. A file the walk
// reached is read once, and kept: the walk, the checks and kustomize
// (treeFS.files) read the same bytes, so kustomize reads no other text
// than the one checked. Any other file (each file of a tree the walk
// gave up on) is read each time, and not kept, since kustomize reads
// few of them.
func (g *kustomizeGraph) read(name string) ([]byte, error) {
	if b, ok := g.content[name]; ok {
		return b, nil
	}
	b, err := fs.ReadFile(g.fsys, name)
	if err == nil && g.reached[name] {
		g.content[name] = b
	}
	return b, err
}

// reaches tells whether kustomize may read the file name.
func (g *kustomizeGraph) reaches(name string) bool {
	return g.everything != "" || g.reached[name]
}

// files are the files kustomize may read, in tree order, then those it
// reads through a link to a folder (linked/cm.yaml), which a walk of the
// tree does not enter: each by the name kustomize reads it by. When the
// walk gave up, they are every file of the tree.
func (g *kustomizeGraph) files() ([]string, error) {
	var out []string
	seen := map[string]bool{}
	err := fs.WalkDir(g.fsys, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !g.reaches(name) || !isFile(g.fsys, name, d) {
			return err
		}
		seen[name] = true
		out = append(out, name)
		return nil
	})
	if err != nil {
		return nil, err
	}
	var linked []string
	for name := range g.reached {
		if st, err := fs.Stat(g.fsys, name); !seen[name] && err == nil && st.Mode().IsRegular() {
			linked = append(linked, name)
		}
	}
	slices.Sort(linked)
	return append(out, linked...), nil
}

// patchFile tells whether kustomize may apply the file name as a JSON
// patch: a file an entry of patches or patchesJson6902 names, or any
// file when the walk gave up (a PatchTransformer's path, which the walk
// does not follow, may name it).
func (g *kustomizeGraph) patchFile(name string) bool {
	return g.everything != "" || g.patchFiles[name]
}

// giveUp makes every file reached, for the reason why.
func (g *kustomizeGraph) giveUp(why string) {
	if g.everything == "" {
		g.everything = why
	}
}

// dir walks the kustomization of the folder dir, and counts its work
// each time it is referenced (a base included twice is loaded twice).
func (g *kustomizeGraph) dir(dir string) *kustomizeWork {
	if w, ok := g.done[dir]; ok {
		return w
	}
	w := &kustomizeWork{}
	if g.doing[dir] {
		return w // a cycle, which kustomize refuses
	}
	g.doing[dir] = true
	defer delete(g.doing, dir)
	_, k := g.kustomization(dir)
	if k == nil {
		g.done[dir] = w
		return w
	}
	for _, e := range slices.Concat(k.Resources, k.Bases, k.Components) {
		g.resource(w, dir, e)
	}
	for _, e := range slices.Concat(k.Crds, k.Configurations) {
		g.file(dir, e)
	}
	if p, ok := k.OpenAPI["path"]; ok {
		g.file(dir, p)
	}
	g.generatorFiles(dir, k)
	w.addObjects(int64(len(k.ConfigMapGenerator) + len(k.SecretGenerator)))
	for _, e := range k.Generators {
		w.addObjects(g.configs(dir, "generators", e))
	}
	// Each transformer a list makes runs over every object, as a patch
	// does (work.go): they count with the patches.
	transformers := g.replacements(dir, k)
	for _, e := range slices.Concat(k.Transformers, k.Validators) {
		transformers = satAdd(transformers, g.configs(dir, "transformers", e))
	}
	transformers = satAdd(transformers, listTransformers(k))
	patches := satAdd(satAdd(g.patches(dir, k), transformers), w.pending)
	w.pending = 0
	if k.Kind == types.ComponentKind {
		w.pending = patches
	} else {
		w.targets = satAdd(w.targets, satMul(patches, satAdd(w.objects, patches)))
	}
	g.done[dir] = w
	return w
}

// kustomization reads the kustomization of dir as kustomize does, and
// returns its file's name, or nil when kustomize reads none there. Every
// kustomization file of dir is reached: kustomize reads each name it
// knows, and refuses a folder of two.
func (g *kustomizeGraph) kustomization(dir string) (string, *types.Kustomization) {
	var found []string
	for _, n := range addon.KustomizationNames {
		p := path.Join(dir, n)
		if st, err := fs.Stat(g.fsys, p); err == nil && !st.IsDir() {
			g.reached[p] = true
			found = append(found, p)
		}
	}
	if len(found) != 1 {
		return "", nil
	}
	b, err := g.read(found[0])
	if err != nil {
		return "", nil // kustomize says why
	}
	// An alias bomb is refused as reached content; it is not decoded.
	for _, c := range splitYAML(b) {
		if _, err := parseDocument(c.text); err != nil {
			g.giveUp(found[0] + " does not parse")
			return "", nil
		}
	}
	var k types.Kustomization
	if err := k.Unmarshal(b); err != nil {
		g.giveUp(found[0] + " does not decode as kustomize decodes it")
		return "", nil
	}
	followed := func(name string) bool {
		use, ok := kustomizationFields[name]
		return ok && use != notFollowed
	}
	if f := fieldSetOutside(reflect.ValueOf(k), followed); f != "" {
		g.giveUp(found[0] + " sets " + f)
	}
	g.decoded[found[0]] = &k
	return found[0], &k
}

// fieldSetOutside is the JSON name of the first field set in v (a
// types.Kustomization) for which in is false, or "".
func fieldSetOutside(v reflect.Value, in func(name string) bool) string {
	for i := range v.NumField() {
		f, fv := v.Type().Field(i), v.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.Anonymous && strings.Contains(opts, "inline") {
			if s := fieldSetOutside(fv, in); s != "" {
				return s
			}
			continue
		}
		if !in(name) && !fv.IsZero() {
			return name
		}
	}
	return ""
}

// changedConfigs is a kustomization (file) of a folder listed in
// transformers, generators or validators, or of a folder below one, that
// sets field, which changes the objects kustomize then reads as
// configurations: a patch, a replacement, a transformer or a field
// specification may give one an apiVersion of builtin or a path (a
// PatchTransformer's, over HTTP) that no file of the tree holds, so
// neither the walk nor the remote check can see what kustomize will
// read. The walk then reaches everything, and the render refuses the
// tree unless remote resources are allowed (checkKustomizations).
type changedConfigs struct {
	file, field string
}

// gatherFields are the fields of a kustomization that gather objects
// without changing them.
var gatherFields = map[string]bool{
	"apiVersion": true, "kind": true, "metadata": true,
	"resources": true, "bases": true, "components": true, "sortOptions": true,
}

// findChangedConfigs finds, in the kustomization of the configurations
// folder dir and in those of the folders below it, one that changes its
// objects (changedConfigs). seen holds the folders already looked at.
func (g *kustomizeGraph) findChangedConfigs(dir string, seen map[string]bool) changedConfigs {
	if seen[dir] {
		return changedConfigs{}
	}
	seen[dir] = true
	file, k := g.kustomization(dir)
	if k == nil {
		return changedConfigs{} // kustomize refuses it
	}
	if f := fieldSetOutside(reflect.ValueOf(*k), func(name string) bool { return gatherFields[name] }); f != "" {
		return changedConfigs{file: file, field: f}
	}
	for _, e := range slices.Concat(k.Resources, k.Bases, k.Components) {
		if e == "" || looksRemote(e) {
			continue
		}
		p := treePath(dir, e)
		if st, err := fs.Stat(g.fsys, p); err == nil && st.IsDir() {
			if c := g.findChangedConfigs(p, seen); c.file != "" {
				return c
			}
		}
	}
	return changedConfigs{}
}

// treePath is where kustomize, in the kustomization folder dir, reads
// entry from the tree: a relative path from dir, an absolute one from
// the tree's root (treeFS), neither leaving the tree.
func treePath(dir, entry string) string {
	if path.IsAbs(entry) {
		return rel(entry)
	}
	return rel(path.Join("/"+dir, entry))
}

// file reaches the file entry names from dir, and returns its name, or
// "" when it is remote or no file of the tree.
func (g *kustomizeGraph) file(dir, entry string) string {
	if entry == "" || g.isRemote(dir, entry) {
		return "" // refused unless allowed (checkKustomization); not in the tree
	}
	return g.treeFile(dir, entry)
}

// treeFile reaches the file of the tree entry names from dir, whatever
// entry looks like, and returns its name, or "" when there is none.
func (g *kustomizeGraph) treeFile(dir, entry string) string {
	p := treePath(dir, entry)
	if st, err := fs.Stat(g.fsys, p); err != nil || st.IsDir() {
		return ""
	}
	g.reached[p] = true
	return p
}

// resource walks an entry of resources, bases or components: a folder's
// kustomization, or a file's objects.
func (g *kustomizeGraph) resource(w *kustomizeWork, dir, entry string) {
	if entry == "" || g.isRemote(dir, entry) {
		return
	}
	p := treePath(dir, entry)
	if st, err := fs.Stat(g.fsys, p); err == nil && st.IsDir() {
		w.add(g.dir(p))
		return
	}
	if p := g.file(dir, entry); p != "" {
		w.addObjects(int64(len(g.documents(p))))
	}
}

// generatorFiles reaches the files and env files of the kustomization's
// configMapGenerator and secretGenerator entries. A file source is
// "key=path" or "path": both readings are reached.
func (g *kustomizeGraph) generatorFiles(dir string, k *types.Kustomization) {
	var sources []types.KvPairSources
	for _, a := range k.ConfigMapGenerator {
		sources = append(sources, a.KvPairSources)
	}
	for _, a := range k.SecretGenerator {
		sources = append(sources, a.KvPairSources)
	}
	for _, s := range sources {
		for _, f := range s.FileSources {
			g.file(dir, f)
			if _, p, ok := strings.Cut(f, "="); ok {
				g.file(dir, p)
			}
		}
		for _, e := range append(slices.Clone(s.EnvSources), s.EnvSource) {
			g.file(dir, e)
		}
	}
}

// configs walks an entry of generators, transformers or validators: the
// configurations written in place, or those of the file or folder it
// names (both, when it could be either). It returns the number of
// configurations, the objects a generator entry makes at least.
func (g *kustomizeGraph) configs(dir, field, entry string) int64 {
	n := int64(0)
	if configs, ok := inlineConfigs(field, entry); ok {
		for _, cfg := range configs {
			if builtinNamesFiles(cfg) {
				g.giveUp("an inline configuration names files")
			}
			if s, _, ok := remoteIn(cfg.YNode()); ok && isBuiltinConfig(cfg) {
				g.remote = append(g.remote, remoteEntry{dir: dir, location: s})
			}
		}
		n = int64(len(configs))
	}
	if g.isRemote(dir, entry) || strings.Contains(entry, "\n") {
		return n
	}
	p := treePath(dir, entry)
	if st, err := fs.Stat(g.fsys, p); err == nil && st.IsDir() {
		if c := g.findChangedConfigs(p, map[string]bool{}); c.file != "" && g.changedConfigs.file == "" {
			g.changedConfigs = c
			g.giveUp(c.file + " changes the configurations of its folder")
		}
		return satAdd(n, g.dir(p).objects)
	}
	if p := g.file(dir, entry); p != "" {
		for _, d := range g.documents(p) {
			if d.GetKind() != "" {
				n++
			}
		}
	}
	return n
}

// replacements reaches the files of the kustomization's replacements
// and counts them: each entry written in place, each entry of a file.
func (g *kustomizeGraph) replacements(dir string, k *types.Kustomization) int64 {
	n := int64(0)
	for _, r := range k.Replacements {
		if r.Path == "" {
			n++
			continue
		}
		entries := 1
		if p := g.file(dir, r.Path); p != "" {
			for _, d := range g.fileDocumentsOfKind(p, yaml.SequenceNode) {
				entries = max(entries, len(d.YNode().Content))
			}
		}
		n += int64(entries)
	}
	return n
}

// listTransformers counts the transformers over every object that the
// kustomization's lists make (one for each entry of images, imageTags
// and replicas), and the keys its labels and annotations add to every
// object: each costs kustomize time in each object, and an object grown
// by one key costs more to the next (measured in work.go).
func listTransformers(k *types.Kustomization) int64 {
	n := len(k.Images) + len(k.ImageTags) + len(k.Replicas) + len(k.CommonLabels) + len(k.CommonAnnotations)
	for _, l := range k.Labels {
		n += len(l.Pairs)
	}
	return int64(n)
}

// documentsOfKind are the documents of b that parse as nodes of kind
// (a mapping, a sequence); the others kustomize refuses, or the checks
// of reached files do.
func documentsOfKind(b []byte, kind yaml.Kind) []*yaml.RNode {
	var docs []*yaml.RNode
	for _, ch := range splitYAML(b) {
		if node, err := parseDocument(ch.text); err == nil && node != nil && node.YNode().Kind == kind {
			docs = append(docs, node)
		}
	}
	return docs
}

// fileDocumentsOfKind are the documents of file p of kind
// (documentsOfKind); none when p cannot be read.
func (g *kustomizeGraph) fileDocumentsOfKind(p string, kind yaml.Kind) []*yaml.RNode {
	b, err := g.read(p)
	if err != nil {
		return nil
	}
	return documentsOfKind(b, kind)
}

// patches reaches the patch files of the kustomization of dir and counts
// its patches: each entry of its patch fields, each document of a patch
// file (kustomize applies each).
func (g *kustomizeGraph) patches(dir string, k *types.Kustomization) int64 {
	n := int64(0)
	for _, e := range k.PatchesStrategicMerge {
		// kustomize reads an entry as a patch written in place, else as
		// a path: the file is reached when there is one. An entry it
		// never fetches (smpNeverFetched) is no remote location.
		docs := 0
		reach := g.file
		if smpNeverFetched(string(e)) {
			reach = g.treeFile
		}
		if p := reach(dir, string(e)); p != "" {
			docs = len(g.documents(p))
		}
		n += int64(max(1, docs, len(documentsOfKind([]byte(e), yaml.MappingNode))))
	}
	for _, p := range slices.Concat(k.Patches, k.PatchesJson6902) {
		docs := 0
		switch {
		case p.Path != "":
			if f := g.file(dir, p.Path); f != "" {
				g.patchFiles[f] = true
				docs = len(g.documents(f))
			}
		case p.Patch != "":
			docs = len(documentsOfKind([]byte(p.Patch), yaml.MappingNode))
		}
		n += int64(max(1, docs))
	}
	return n
}

// documents are the objects of file p, the items of a List in its
// place; none when p cannot be read or parsed (kustomize says why, or
// the checks of reached files refuse it).
func (g *kustomizeGraph) documents(p string) []*yaml.RNode {
	var docs []*yaml.RNode
	for _, node := range g.fileDocumentsOfKind(p, yaml.MappingNode) {
		if items, ok, _ := listItems(node); ok {
			docs = append(docs, items...)
			continue
		}
		docs = append(docs, node)
	}
	return docs
}

// findBuiltinFileNames gives up when a reached file holds a builtin
// configuration that names files of its own (builtinNamesFiles).
// Configurations are found in every reached file, not only in those a
// kustomization lists as configurations: a resource of a folder listed
// in transformers is one too.
func (g *kustomizeGraph) findBuiltinFileNames() {
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for n := range g.reached {
			if !yield(n) {
				return
			}
		}
	}) {
		if isKustomization(name) {
			continue
		}
		b, err := g.read(name)
		if err != nil || !mayHoldBuiltin(b) {
			continue
		}
		for _, c := range splitYAML(b) {
			node, err := parseDocument(c.text)
			if err != nil || node == nil {
				continue
			}
			for _, cfg := range configsOf(node) {
				if builtinNamesFiles(cfg) {
					g.giveUp(name + " holds a builtin configuration that names files")
					return
				}
			}
		}
	}
}

// noFileKinds are the builtin transformers and generators whose
// configuration names no file.
var noFileKinds = map[string]bool{
	"AnnotationsTransformer": true, "HashTransformer": true, "ImageTagTransformer": true,
	"LabelTransformer": true, "NamespaceTransformer": true, "PrefixSuffixTransformer": true,
	"PrefixTransformer": true, "SuffixTransformer": true, "ReplicaCountTransformer": true,
	"SortOrderTransformer": true, "IAMPolicyGenerator": true,
}

// fileKeys are, for the builtin kinds whose configuration may name files,
// the keys that do. Any other builtin kind (ValueAddTransformer,
// HelmChartInflationGenerator, one kustomize may add) names files.
var fileKeys = map[string][]string{
	"PatchTransformer":               {"path"},
	"PatchJson6902Transformer":       {"path"},
	"PatchStrategicMergeTransformer": {"paths"},
	"ReplacementTransformer":         {"path"},
	"ConfigMapGenerator":             {"files", "envs", "env"},
	"SecretGenerator":                {"files", "envs", "env"},
}

// builtinNamesFiles tells whether cfg configures one of kustomize's
// builtin transformers or generators and may name a file for it to
// read: a key of fileKeys anywhere in it, in any case (kustomize decodes
// a configuration as JSON, whose field names match in any case), and
// written as text or as a !!binary scalar (scalarText). cfg is read as
// kustomize reads it, its anchors and merge keys expanded (configsOf). A configuration that is no builtin's names none:
// kustomize runs no plugins, and refuses it.
func builtinNamesFiles(cfg *yaml.RNode) bool {
	n := cfg.YNode()
	if !isBuiltinConfig(cfg) {
		return false
	}
	kind := cfg.GetKind()
	if noFileKinds[kind] {
		return false
	}
	keys, ok := fileKeys[kind]
	if !ok {
		return true
	}
	stack := []*yaml.Node{n}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if n.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(n.Content); i += 2 {
				k := n.Content[i]
				if slices.ContainsFunc(keys, func(s string) bool { return strings.EqualFold(s, scalarText(k)) }) {
					return true
				}
			}
		}
		stack = append(stack, n.Content...)
	}
	return false
}
