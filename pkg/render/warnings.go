package render

import (
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
// leaves them alone and works out the warnings itself: the same
// CheckDeprecatedFields over each kustomization kustomize read, so the
// words are kustomize's, named with the file that has the field.

// kustomizeWarnings returns the deprecation warnings of the
// kustomizations in files (those kustomize read, in order), each named
// with its file.
func kustomizeWarnings(fsys treeFS, files []string) []string {
	var out []string
	for _, f := range files {
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
	}
	return out
}

// warningText drops kustomize's "# Warning: " prefix: the caller says
// it is a warning its own way.
func warningText(s string) string {
	s = strings.TrimPrefix(s, "# ")
	return strings.TrimSpace(strings.TrimPrefix(s, "Warning: "))
}
