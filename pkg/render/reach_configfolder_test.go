package render_test

import (
	"errors"
	"testing"

	"github.com/addonpkg/addonpkg/pkg/render"
)

// A folder listed in transformers, generators or validators is built by
// kustomize, and the objects it makes are then read as configurations:
// a patch (or a replacement, a transformer, a field specification) in
// that folder's kustomization, or in one below it, can give one an
// apiVersion of builtin or a path no file of the tree holds, so a
// PatchTransformer fetched a remote patch though no file named it. Such
// a folder is refused unless remote resources are allowed; when they
// are, every file of the tree is checked.
func TestKustomizeChangedConfigurationsFolderRefused(t *testing.T) {
	srv, hits := remoteServer(t)
	remote := srv.URL + "/patch.yaml"
	for _, tc := range []struct {
		name  string
		files map[string]string
		file  string
	}{
		{"patch adds a remote path", map[string]string{
			"kustomization.yaml":   "resources:\n- cm.yaml\ntransformers:\n- t\n",
			"t/kustomization.yaml": "resources:\n- cfg.yaml\npatches:\n- target: {kind: PatchTransformer}\n  patch: |-\n    [{\"op\": \"add\", \"path\": \"/path\", \"value\": \"" + remote + "\"}]\n",
			"t/cfg.yaml":           "apiVersion: builtin\nkind: PatchTransformer\nmetadata:\n  name: p\ntarget:\n  kind: ConfigMap\n",
		}, "t/kustomization.yaml"},
		{"patch makes an object builtin", map[string]string{
			"kustomization.yaml":   "resources:\n- cm.yaml\ngenerators:\n- t\n",
			"t/kustomization.yaml": "resources:\n- cfg.yaml\npatches:\n- target: {kind: Foo}\n  patch: |-\n    [{\"op\": \"replace\", \"path\": \"/apiVersion\", \"value\": \"builtin\"}, {\"op\": \"replace\", \"path\": \"/kind\", \"value\": \"ConfigMapGenerator\"}]\n",
			"t/cfg.yaml":           "apiVersion: example.com/v1\nkind: Foo\nmetadata:\n  name: p\nfiles:\n- " + remote + "\n",
		}, "t/kustomization.yaml"},
		{"a folder below, through a component", map[string]string{
			"kustomization.yaml":        "resources:\n- cm.yaml\nvalidators:\n- t\n",
			"t/kustomization.yaml":      "resources:\n- sub\n",
			"t/sub/kustomization.yaml":  "resources:\n- cfg.yaml\ncomponents:\n- ../comp\n",
			"t/sub/cfg.yaml":            "apiVersion: builtin\nkind: PatchTransformer\nmetadata:\n  name: p\ntarget:\n  kind: ConfigMap\n",
			"t/comp/kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\npatches:\n- target: {kind: PatchTransformer}\n  patch: |-\n    [{\"op\": \"add\", \"path\": \"/path\", \"value\": \"" + remote + "\"}]\n",
		}, "t/comp/kustomization.yaml"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.files["cm.yaml"] = configMap
			_, err := renderTree(t, tc.files)
			var re *render.Error
			if !errors.Is(err, render.ErrRemote) || !errors.As(err, &re) || re.File != tc.file {
				t.Errorf("err = %v; want ErrRemote naming %s", err, tc.file)
			}
			// Allowed, the walk cannot tell what kustomize reads: every
			// file is checked.
			tc.files["fixtures/unreferenced.yaml"] = hostileContents("")[0].text
			_, err = render.Render(t.Context(), tree(tc.files), render.Options{AllowRemote: true})
			if !errors.As(err, &re) || !errors.Is(err, render.ErrKustomizeFatal) || re.File != "fixtures/unreferenced.yaml" {
				t.Errorf("remote allowed: err = %v; want ErrKustomizeFatal naming fixtures/unreferenced.yaml", err)
			}
		})
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the renders made %d requests", n)
	}
}
