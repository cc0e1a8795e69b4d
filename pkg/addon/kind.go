package addon

import (
	"errors"
	"fmt"
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

// ErrTwoKustomizations marks a tree whose root holds more than one of
// KustomizationNames: spec 6.3 makes it invalid (kustomize refuses it),
// and build and unpack refuse it through KindOf.
var ErrTwoKustomizations = errors.New("more than one kustomization file")

// DetectKind says whether the tree's root is a kustomization. It tells
// the kind of a tree already checked; a reader or writer that checks the
// tree calls KindOf.
func DetectKind(fsys fs.FS) Kind {
	if len(kustomizations(fsys)) > 0 {
		return KindKustomize
	}
	return KindManifests
}

// KindOf is the kind of the tree (spec 6.3), refusing a root with more
// than one kustomization file, named in the error (ErrTwoKustomizations).
func KindOf(fsys fs.FS) (Kind, error) {
	switch ks := kustomizations(fsys); len(ks) {
	case 0:
		return KindManifests, nil
	case 1:
		return KindKustomize, nil
	default:
		return "", fmt.Errorf("%w: the root holds %s (keep one)", ErrTwoKustomizations, strings.Join(ks, " and "))
	}
}

// kustomizations lists the kustomization files of the tree's root.
func kustomizations(fsys fs.FS) []string {
	var found []string
	for _, n := range KustomizationNames {
		if st, err := fs.Stat(fsys, n); err == nil && st.Mode().IsRegular() {
			found = append(found, n)
		}
	}
	return found
}

// IsManifestFile reports whether a plain-manifest tree renders this file.
func IsManifestFile(name string) bool {
	switch strings.ToLower(path.Ext(name)) {
	case ".yaml", ".yml", ".json":
		return true
	}
	return false
}

// Helm's inputs are not manifests: a chart's templates and values only
// become Kubernetes objects through `helm template`. These names are how
// a tree gives them away, so that a reader can say "this is a Helm chart"
// rather than "invalid manifest".

// HelmChartFile is the file that makes a directory a Helm chart.
const HelmChartFile = "Chart.yaml"

// IsHelmChartFile reports whether name (a slash path) is a chart's
// Chart.yaml.
func IsHelmChartFile(name string) bool { return path.Base(name) == HelmChartFile }

// IsHelmValuesFile reports whether name (a slash path) is named as Helm's
// values files are: values.yaml, values-ENV.yaml, ENV-values.yaml or
// ENV.values.yaml (and .yml).
func IsHelmValuesFile(name string) bool {
	base := strings.ToLower(path.Base(name))
	stem := strings.TrimSuffix(strings.TrimSuffix(base, ".yaml"), ".yml")
	if stem == base {
		return false
	}
	return stem == "values" || strings.HasPrefix(stem, "values-") || strings.HasPrefix(stem, "values.") ||
		strings.HasSuffix(stem, "-values") || strings.HasSuffix(stem, ".values") || strings.HasSuffix(stem, "_values")
}

// KustomizeHelmFields are the kustomization fields that inflate a Helm
// chart, which needs `kustomize build --enable-helm` and the helm binary.
var KustomizeHelmFields = []string{"helmCharts", "helmChartInflationGenerator"}

// HelmAdvice is what to run instead, said once for every reader and
// writer that meets a Helm input.
const HelmAdvice = "run `helm template NAME CHART > addon.yaml` (with -f for values files) and build that file"
