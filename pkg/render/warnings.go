package render

import (
	"bytes"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/api/types"
)

// kustomize warns by printing: when it loads a kustomization with a
// deprecated field (bases, commonLabels, imageTags, patchesJson6902,
// patchesStrategicMerge, vars) it writes
// types.Kustomization.CheckDeprecatedFields's messages to os.Stderr
// (fmt.Fprintf in internal/target's KustTarget.Load, with no option to
// turn it off), and a few other things to the standard logger (vars
// never replaced, a `git::` remote). Both are the process's own, not the
// render's: capturing them means swapping them while kustomize runs,
// which takes the caller's own lines from its other goroutines into an
// add-on's warnings, loses them from its log, and races. So a render
// leaves them alone and works out the warnings itself, in kustomize's
// words, named with the file that causes them:
//
//   - the same CheckDeprecatedFields over each kustomization kustomize
//     read;
//   - the vars declared and never replaced (unusedVars).
//
// kustomize's `git::` line needs no counterpart: such a remote is refused
// (ErrRemote) unless remote resources are allowed, and a git remote
// never renders from the tree a render gives kustomize (it clones to
// disk and reads the clone through the tree, where it is not).

// kustomizeWarnings returns the warnings about the files kustomize read
// (files, in the order it read them): the deprecated fields of each
// kustomization, then the vars it declares that are never replaced.
func kustomizeWarnings(fsys treeFS, files []string) []string {
	var out, unused []string
	for _, f := range files {
		if !isKustomization(f) {
			continue
		}
		b, err := fsys.ReadFile(f)
		if err != nil {
			continue
		}
		var k types.Kustomization
		if k.Unmarshal(b) != nil {
			continue // kustomize refused it: its error says why
		}
		for _, m := range *k.CheckDeprecatedFields() {
			out = append(out, rel(f)+": "+warningText(m))
		}
		if names := unusedVars(fsys, files, k.Vars); len(names) > 0 {
			unused = append(unused, rel(f)+": "+unusedVarsText+strings.Join(names, ","))
		}
	}
	return append(out, unused...)
}

// unusedVarsText is kustomize's words for vars never replaced
// (internal/accumulator's ResolveVars logs them, all in one line, to the
// standard logger).
const unusedVarsText = "well-defined vars that were never replaced: "

// unusedVars names the vars of vars that no file kustomize read (files)
// refers to as $(NAME). kustomize replaces $(NAME) only in some fields
// (its varReference field specs), and says a var whose references are
// all elsewhere is never replaced too: those are not found here, so a
// var named here is one kustomize also says is never replaced, never the
// other way round.
func unusedVars(fsys treeFS, files []string, vars []types.Var) []string {
	var names []string
	for _, v := range vars {
		names = append(names, v.Name)
	}
	if len(names) == 0 {
		return nil
	}
	for _, f := range files {
		b, err := fsys.ReadFile(f)
		if err != nil {
			continue
		}
		names = slices.DeleteFunc(names, func(n string) bool { return bytes.Contains(b, []byte("$("+n+")")) })
		if len(names) == 0 {
			return nil
		}
	}
	return names
}

// warningText drops kustomize's "# Warning: " prefix: the caller says
// it is a warning its own way.
func warningText(s string) string {
	s = strings.TrimPrefix(s, "# ")
	return strings.TrimSpace(strings.TrimPrefix(s, "Warning: "))
}
