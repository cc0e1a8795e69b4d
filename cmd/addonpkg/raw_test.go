package main

import (
	"strings"
	"testing"

	"github.com/addonpkg/addonpkg/pkg/render"
)

// unpack --raw on a kustomize add-on prints the tree's manifests as
// written, without the kustomization files and without rendering.
func TestCLIUnpackRawKustomize(t *testing.T) {
	t.Parallel()
	cliNewHome(t)
	cliMust(t, "build", cliExampleDir("metrics-server"), "-t", "ms:1")
	out := cliMust(t, "unpack", "ms:1", "--raw")
	docs, err := render.SplitDocuments("stdout", []byte(out))
	if err != nil {
		t.Fatalf("unpack --raw printed YAML that does not split: %v", err)
	}
	if len(docs) == 0 {
		t.Fatal("unpack --raw printed no documents")
	}
	for _, d := range docs {
		if d.Object.Kind == "Kustomization" {
			t.Errorf("unpack --raw printed a kustomization")
		}
	}
	rendered := cliMust(t, "unpack", "ms:1")
	if out == rendered {
		t.Error("unpack --raw printed the rendered stream")
	}
	if !strings.Contains(cliMust(t, "unpack", "--help"), "kustomization files") {
		t.Error("unpack --help does not say what --raw does with kustomization files")
	}
}
