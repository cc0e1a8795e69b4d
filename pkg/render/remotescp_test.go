package render_test

import (
	"errors"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/addonpkg/addonpkg/pkg/render"
)

// kustomize takes a resource or component that is not a file for a git
// repository when it has a user name before an @ (any name, not only
// git@: user@host:org/repo, as scp and git take it) or starts with
// github.com/ or github.com: in any case, and runs git fetch of it, over
// ssh, before it looks for a directory of that name in the tree. Such an
// entry is remote: refused before kustomize runs, even when the tree
// holds a directory of its name to pass the check that it exists, and
// git is never run. A file whose name only has an @ is a file.
func TestKustomizeSCPStyleRepositoryRefused(t *testing.T) {
	// A git that records that it ran: kustomize looks git up in PATH.
	bin := t.TempDir()
	ran := filepath.Join(bin, "ran")
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte("#!/bin/sh\necho \"$@\" >> "+ran+"\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	for _, entry := range []string{
		"deploy@127.0.0.1:org/repo",
		"deploy@127.0.0.1:org/repo//base",
		"ci-bot@127.0.0.1/org/repo",
		"GitHub.com/org/repo",
		"github.com:org/repo",
	} {
		for _, field := range []string{"resources", "components"} {
			t.Run(field+"/"+entry, func(t *testing.T) {
				_, err := renderTree(t, map[string]string{
					"kustomization.yaml":                      field + ":\n- " + entry + "\n",
					path.Clean(entry) + "/kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\n",
				})
				if !errors.Is(err, render.ErrRemote) || !strings.HasPrefix(err.Error(), "kustomization.yaml:2: ") {
					t.Errorf("err = %v, want ErrRemote at kustomization.yaml:2", err)
				}
				if b, err := os.ReadFile(ran); err == nil {
					os.Remove(ran)
					t.Errorf("kustomize ran git %s", b)
				}
			})
		}
	}
	res, err := renderTree(t, map[string]string{
		"kustomization.yaml": "resources:\n- admin@cluster.yaml\n",
		"admin@cluster.yaml": configMap,
	})
	if err != nil || len(res.Documents) != 1 {
		t.Errorf("a file named admin@cluster.yaml: %v", err)
	}
}
