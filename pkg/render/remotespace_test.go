package render_test

import (
	"errors"
	"testing"

	"github.com/addonpkg/addonpkg/pkg/render"
)

// kustomize fetches a location that starts like a URL whatever follows:
// its loader's URL parser takes a space in the path, so "URL x" was
// fetched over HTTP from a patch's path, an openapi path, a replacements
// path, a patchesStrategicMerge entry, and from a generators entry that
// reads as YAML but as no object ("URL: x", which kustomize then loads
// as a path). Such an entry is remote, refused before kustomize runs.
func TestKustomizeRemoteWithSpaceRefused(t *testing.T) {
	srv, hits := remoteServer(t)
	u := srv.URL + "/p.yaml"
	for name, k := range map[string]string{
		"patches path":          "patches:\n- path: '" + u + " x'\n",
		"patchesStrategicMerge": "patchesStrategicMerge:\n- '" + u + " x'\n",
		"openapi path":          "openapi:\n  path: '" + u + " x'\n",
		"replacements path":     "replacements:\n- path: '" + u + " x'\n",
		"crds":                  "crds:\n- '" + u + " x'\n",
		"bases":                 "bases:\n- '" + u + " x'\n",
		"generators, as a path": "generators:\n- '" + u + ": x'\n",
		"leading space":         "patches:\n- path: ' " + u + "'\n",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := renderTree(t, map[string]string{
				"kustomization.yaml": "resources:\n- cm.yaml\n" + k,
				"cm.yaml":            configMap,
			})
			if !errors.Is(err, render.ErrRemote) {
				t.Errorf("err = %v; want ErrRemote", err)
			}
		})
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the renders made %d requests", n)
	}
	// A patch written in place is text, whatever URL it holds.
	_, err := renderTree(t, map[string]string{
		"kustomization.yaml": "resources:\n- cm.yaml\npatches:\n- patch: |\n    apiVersion: v1\n    kind: ConfigMap\n    metadata:\n      name: cm\n    data:\n      docs: see " + u + " x\n",
		"cm.yaml":            configMap,
	})
	if err != nil {
		t.Errorf("a patch written in place that holds a URL: %v", err)
	}
}
