package addon

import (
	"io/fs"
	"path"
	"strings"
)

// What kind of tree an add-on is decides how it renders; these rules are
// here, below every reader and renderer, so that telling the kind needs
// no renderer.

// KustomizationNames are the file names that make a directory a kustomize
// root, in kustomize's order of preference.
var KustomizationNames = []string{"kustomization.yaml", "kustomization.yml", "Kustomization"}

// DetectKind says whether the tree's root is a kustomization.
func DetectKind(fsys fs.FS) Kind {
	for _, n := range KustomizationNames {
		if st, err := fs.Stat(fsys, n); err == nil && st.Mode().IsRegular() {
			return KindKustomize
		}
	}
	return KindManifests
}

// IsManifestFile reports whether a plain-manifest tree renders this file.
func IsManifestFile(name string) bool {
	switch strings.ToLower(path.Ext(name)) {
	case ".yaml", ".yml", ".json":
		return true
	}
	return false
}
