package main

import (
	"os"
	"path/filepath"
	"testing"
)

// Spec 6.3: a tree whose root holds two kustomization files is invalid.
// build refused it only where kustomize did (not with --no-validate), and
// unpack not at all; now the one rule (addon.KindOf) refuses it for
// build, for unpack of an image and for unpack of a folder, naming both.
func TestTwoKustomizationsRefused(t *testing.T) {
	t.Parallel()
	cliNewHome(t)
	const k = "resources:\n- cm.yaml\n"
	const cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n"
	for _, pair := range [][2]string{
		{"kustomization.yaml", "kustomization.yml"},
		{"kustomization.yaml", "Kustomization"},
		{"kustomization.yml", "Kustomization"},
	} {
		t.Run(pair[0]+"+"+pair[1], func(t *testing.T) {
			folder := t.TempDir()
			cliWriteFile(t, filepath.Join(folder, "cm.yaml"), cm)
			cliWriteFile(t, filepath.Join(folder, pair[0]), k)
			cliWriteFile(t, filepath.Join(folder, pair[1]), k)
			layoutDir := hostileCLIWrite(t, filepath.Join(t.TempDir(), "layout"), hostileCLIImage(t, hostileCLIOne(t,
				hostileCLIFile("addon/cm.yaml", cm),
				hostileCLIFile("addon/"+pair[0], k),
				hostileCLIFile("addon/"+pair[1], k),
			)))
			out := filepath.Join(t.TempDir(), "out")
			for _, args := range [][]string{
				{"build", folder, "-t", "two:1"},
				{"build", folder, "-t", "two:1", "--no-validate"},
				{"unpack", folder, "-o", out},
				{"unpack", "oci:" + layoutDir + ":t", "-o", out},
				{"unpack", "oci:" + layoutDir + ":t"},
				{"unpack", "oci:" + layoutDir + ":t", "--raw"},
			} {
				cliCheckError(t, cliRun(t, args...), "more than one kustomization file", pair[0]+" and "+pair[1])
			}
			if _, err := os.Stat(out); err == nil {
				t.Error("unpack -o wrote the tree")
			}
		})
	}
}
