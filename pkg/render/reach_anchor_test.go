package render_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/addonpkg/addonpkg/pkg/render"
)

// kustomize reads a builtin configuration with its anchors and merge
// keys expanded (kyaml's ByteReader de-anchors every document): an
// apiVersion, a kind or a key that names a file may come from a merge
// key or an alias. The checks read it the same way: the patch file such
// a PatchTransformer names is checked (the walk cannot tell where it is,
// so it checks everything), and a remote one is refused before kustomize
// fetches it.
func TestKustomizeBuiltinConfigThroughAnchorsChecked(t *testing.T) {
	srv, hits := remoteServer(t)
	hostile := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: hostile\ndata:\n  9000: x\n"
	for _, tc := range []struct {
		name, patcher string
	}{
		{"apiVersion and kind from a merge key", "<<: {apiVersion: builtin, kind: PatchTransformer}\nmetadata:\n  name: p\npath: %s\ntarget:\n  kind: ConfigMap\n"},
		{"apiVersion from an alias", "metadata:\n  name: p\n  annotations:\n    a: &v builtin\napiVersion: *v\nkind: PatchTransformer\npath: %s\ntarget:\n  kind: ConfigMap\n"},
		{"path key from an alias", "apiVersion: builtin\nkind: PatchTransformer\nmetadata:\n  name: p\n  annotations:\n    &k path: x\n*k : %s\ntarget:\n  kind: ConfigMap\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := map[string]string{
				"kustomization.yaml":         "resources:\n- cm.yaml\ntransformers:\n- patcher.yaml\n",
				"patcher.yaml":               fmtPath(tc.patcher, "patch.yaml"),
				"patch.yaml":                 configMap + "data:\n  patched: \"yes\"\n",
				"cm.yaml":                    configMap,
				"fixtures/unreferenced.yaml": hostile,
			}
			_, err := renderTree(t, files)
			var re *render.Error
			if !errors.Is(err, render.ErrKustomizeFatal) || !errors.As(err, &re) || re.File != "fixtures/unreferenced.yaml" {
				t.Errorf("local patch: err = %v; want ErrKustomizeFatal naming fixtures/unreferenced.yaml", err)
			}
			delete(files, "fixtures/unreferenced.yaml")
			files["patcher.yaml"] = fmtPath(tc.patcher, srv.URL+"/patch.yaml")
			if _, err := renderTree(t, files); !errors.Is(err, render.ErrRemote) {
				t.Errorf("remote patch: err = %v; want ErrRemote", err)
			}
		})
	}
	// The same in a configuration written in place.
	_, err := renderTree(t, map[string]string{
		"kustomization.yaml": "resources:\n- cm.yaml\ntransformers:\n- |\n  <<: {apiVersion: builtin, kind: PatchTransformer}\n  metadata:\n    name: p\n  path: " + srv.URL + "/patch.yaml\n  target:\n    kind: ConfigMap\n",
		"cm.yaml":            configMap,
	})
	if !errors.Is(err, render.ErrRemote) {
		t.Errorf("inline, remote patch: err = %v; want ErrRemote", err)
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the renders made %d requests", n)
	}
}

func fmtPath(format, p string) string {
	return strings.Replace(format, "%s", p, 1)
}

// kustomize decodes a kustomization as JSON, with its anchors and merge
// keys expanded and its field names in any case: a configuration written
// in place in transformers that came through a merge key, or under
// Transformers, is checked as one under transformers. Its remote path
// was fetched.
func TestKustomizeInlineConfigsThroughMergeKeysAndCase(t *testing.T) {
	srv, hits := remoteServer(t)
	inline := "- |\n  apiVersion: builtin\n  kind: PatchTransformer\n  metadata: {name: p}\n  path: " + srv.URL + "/patch.yaml\n  target: {kind: ConfigMap}\n"
	for name, k := range map[string]string{
		"merge key":  "<<:\n  resources: [cm.yaml]\n  transformers:\n  " + strings.ReplaceAll(inline, "\n", "\n  "),
		"other case": "resources: [cm.yaml]\nTransformers:\n" + inline,
		"upper case": "resources: [cm.yaml]\nTRANSFORMERS:\n" + inline,
	} {
		_, err := renderTree(t, map[string]string{"kustomization.yaml": k, "cm.yaml": configMap})
		if !errors.Is(err, render.ErrRemote) {
			t.Errorf("%s: err = %v; want ErrRemote", name, err)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the renders made %d requests", n)
	}
}
