package render

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"

	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/addonpkg/addonpkg/pkg/safetree"
)

// Two kinds of YAML cost kustomize far more than their size, so a tree
// it renders is read for them first:
//
//   - aliases that expand beyond reason (a billion laughs), which
//     kustomize expands in memory;
//   - a mapping of very many keys: kustomize's YAML library looks each
//     key up in a list when it expands anchors and again when it encodes
//     a resource, time quadratic in the keys. A 1 MB ConfigMap of 40,000
//     keys costs it 40 s of CPU, a 10 MB one hours. The cap
//     (safetree.Limits.MaxMappingKeys) also counts the keys a generator
//     gives one ConfigMap or Secret (checkGenerators).
//
// Plain manifests do not go through kustomize and render in linear time.

// checkReachedFiles reads each file kustomize may read (g, whose read
// keeps the text kustomize then reads), and refuses one with an alias bomb or a mapping of
// more than maxKeys keys, a key kustomize cannot take (checkKeys), or
// (unless allowRemote) a builtin configuration that names a remote
// location (builtinConfigsIn). A file is reached by the kustomizations
// that name it, whatever its name: kustomize loads a resource, a patch
// or a configuration from any file a kustomization names (resources:
// [cm.txt]), and a check on names that end in .yaml is one that cm.txt
// passes. A file no kustomization reaches (a README, Helm values, an
// example) is not read: kustomize does not read it either.
func checkReachedFiles(g *kustomizeGraph, maxKeys int, allowRemote bool) error {
	files, err := g.files()
	if err != nil {
		return err
	}
	for _, name := range files {
		b, err := g.read(name)
		if err != nil {
			return err
		}
		kustomization := isKustomization(name)
		if !allowRemote && !kustomization {
			if err := builtinConfigsIn(name, b); err != nil {
				return err
			}
		}
		for _, c := range splitYAML(b) {
			node, err := parseDocument(c.text)
			if errors.Is(err, errAliasBomb) {
				return &Error{File: name, Line: c.line, Err: fmt.Errorf("%w: %s", ErrInvalid, err)}
			}
			if err != nil || node == nil {
				continue // kustomize says what is wrong with it, if it reads it
			}
			if keys, line := widestMapping(node.YNode()); keys > maxKeys {
				return &Error{File: name, Line: c.line + line - 1, Err: tooManyKeys("a mapping", keys, maxKeys)}
			}
			if err := checkKeys(name, c.line, node, kustomization, g.patchFile(name)); err != nil {
				return err
			}
		}
	}
	return nil
}

// isFile tells whether name, of entry d, is a file, or a link to one.
func isFile(fsys fs.FS, name string, d fs.DirEntry) bool {
	if d.Type().IsRegular() {
		return true
	}
	st, err := fs.Stat(fsys, name)
	return err == nil && st.Mode().IsRegular()
}

// widestMapping is the number of keys of n's largest mapping, and its
// line. Aliases are not followed: what they name is counted where it is
// written (checkAliases bounds what they expand to).
func widestMapping(n *yaml.Node) (keys, line int) {
	stack := []*yaml.Node{n}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if n.Kind == yaml.MappingNode && len(n.Content)/2 > keys {
			keys, line = len(n.Content)/2, n.Line
		}
		if n.Kind != yaml.AliasNode {
			stack = append(stack, n.Content...)
		}
	}
	return keys, line
}

// tooManyKeys is the limit error of what, holding keys keys.
func tooManyKeys(what string, keys, max int) error {
	return fmt.Errorf("%s of %d keys: %w (kustomize takes time quadratic in a mapping's keys; plain manifests, without a kustomization, render in linear time)",
		what, keys, &safetree.LimitError{Name: "mapping keys", Limit: int64(max), Which: safetree.LimitMappingKeys})
}

// checkGenerators refuses a generator of the kustomization file that
// would make a ConfigMap or Secret of more than maxKeys keys: one a
// literal, a line of an env file, or a file. The generators are those
// kustomize decodes (the walk's, g.decoded): a field or key in another
// case (ENVS, ConfigMapGenerator), a merge key or a !!binary scalar
// escaped a count of the text as written. node, the kustomization as
// written, only gives the error its line.
func checkGenerators(g *kustomizeGraph, file string, node *yaml.RNode, maxKeys int) error {
	k := g.decoded[file]
	if k == nil {
		return nil // kustomize does not read it, or refuses it
	}
	var cms, secrets []types.KvPairSources
	for _, a := range k.ConfigMapGenerator {
		cms = append(cms, a.KvPairSources)
	}
	for _, a := range k.SecretGenerator {
		secrets = append(secrets, a.KvPairSources)
	}
	expanded := expandedCopy(node)
	for _, gen := range []struct {
		field   string
		sources []types.KvPairSources
	}{{"configMapGenerator", cms}, {"secretGenerator", secrets}} {
		items := entriesOf(expanded, gen.field)
		for i, s := range gen.sources {
			if keys := generatedKeys(g, path.Dir(file), s); keys > maxKeys {
				line := 0
				if i < len(items) {
					line = items[i].Line
				}
				return &Error{File: file, Line: line, Err: tooManyKeys("a "+gen.field+" entry", keys, maxKeys)}
			}
		}
	}
	return nil
}

// generatedKeys counts the keys one generator entry of the
// kustomization of dir makes: its literals and files, and the lines of
// its env files that set a key. A file source is one key even when it
// names a folder: kustomize (api v0.21, kv.loader) loads each source as
// one file and refuses a folder ("must resolve to a file"), where
// kubectl's --from-file makes a key of each file in it
// (TestKustomizeGeneratorFolderRefused holds kustomize to that).
func generatedKeys(g *kustomizeGraph, dir string, s types.KvPairSources) int {
	keys := len(s.LiteralSources) + len(s.FileSources)
	for _, e := range append(slices.Clone(s.EnvSources), s.EnvSource) {
		if e == "" || looksRemote(e) {
			continue // refused unless allowed (checkKustomizations)
		}
		b, err := g.read(treePath(dir, e))
		if err != nil {
			continue // kustomize says it is missing
		}
		keys += envKeys(b)
	}
	return keys
}

// envKeys counts the lines of an env file that set a key: not blank, not
// a comment.
func envKeys(b []byte) int {
	n := 0
	for line := range bytes.Lines(b) {
		if l := bytes.TrimSpace(line); len(l) > 0 && l[0] != '#' {
			n++
		}
	}
	return n
}
