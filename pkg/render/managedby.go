package render

import (
	"fmt"
	"regexp"
	"runtime/debug"
	"sync"

	"sigs.k8s.io/kustomize/api/konfig"
	"sigs.k8s.io/kustomize/api/provenance"
	"sigs.k8s.io/kustomize/api/resmap"
)

// A kustomization's buildMetadata: [managedByLabel] labels every object
// app.kubernetes.io/managed-by: kustomize-VERSION, VERSION being what
// kustomize reads from the build info of the program it runs in: the
// kustomize command's own module, else the program's main module. In
// addonpkg that is "(devel)" (a build from a clone: an invalid label
// value, so the API server refused every object), or addonpkg's own
// version, "+dirty" and all (invalid too, and another value with every
// build, so a new addonpkg changed every object). The label names the
// kustomize library that renders instead: kustomize-api-vX.Y.Z, the
// version of sigs.k8s.io/kustomize/api compiled in, the same for every
// program that compiles it, or plain "kustomize" when that is unknown.

// kustomizeAPIModule is the module whose version the label names.
const kustomizeAPIModule = "sigs.k8s.io/kustomize/api"

// labelValueRE is the API server's rule for a label value (63 bytes at
// most, checked apart), written here: apimachinery's validation would
// bring klog and a dozen more packages into every program that renders.
var labelValueRE = regexp.MustCompile(`^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$`)

// managedBy is the value kustomize writes (wrote) and the one that
// replaces it (value), worked out once.
var managedBy = sync.OnceValues(func() (wrote, value string) {
	wrote = fmt.Sprintf("kustomize-%s", provenance.GetProvenance().Semver())
	value = "kustomize"
	if info, ok := debug.ReadBuildInfo(); ok {
		value = managedByValue(info)
	}
	return wrote, value
})

// managedByValue is the label's value for a program of build info info.
func managedByValue(info *debug.BuildInfo) string {
	for _, dep := range info.Deps {
		if dep.Path != kustomizeAPIModule {
			continue
		}
		if dep.Replace != nil {
			dep = dep.Replace
		}
		if v := "kustomize-api-" + dep.Version; len(v) <= 63 && labelValueRE.MatchString(v) {
			return v
		}
	}
	return "kustomize"
}

// fixManagedBy gives the objects kustomize labelled managed-by itself
// the value managedBy names.
func fixManagedBy(m resmap.ResMap) error {
	wrote, value := managedBy()
	for _, res := range m.Resources() {
		labels := res.GetLabels()
		if labels[konfig.ManagedbyLabelKey] != wrote {
			continue
		}
		labels[konfig.ManagedbyLabelKey] = value
		if err := res.SetLabels(labels); err != nil {
			return fmt.Errorf("kustomize build: label %s: %w", res.CurId(), err)
		}
	}
	return nil
}
