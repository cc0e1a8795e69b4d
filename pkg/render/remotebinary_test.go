package render_test

import (
	"encoding/base64"
	"errors"
	"testing"

	"github.com/addonpkg/addonpkg/pkg/render"
)

// kustomize decodes a kustomization, and the configuration of a builtin,
// with a YAML library that decodes a !!binary scalar to its bytes: a URL
// written in base64 is a URL to it, which it fetched, though the text
// the checks read showed none. So was a generator's "key=URL x" (the
// path after the key). The checks read both as kustomize does.
func TestKustomizeRemoteHiddenFromTextRefused(t *testing.T) {
	srv, hits := remoteServer(t)
	u := srv.URL + "/p.yaml"
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	inline := "apiVersion: builtin\nkind: PatchTransformer\nmetadata: {name: p}\npath: " + u + "\ntarget: {kind: ConfigMap}\n"
	for _, tc := range []struct {
		name  string
		files map[string]string
	}{
		{"patch path in base64", map[string]string{
			"kustomization.yaml": "resources: [cm.yaml]\npatches:\n- path: !!binary " + b64(u) + "\n",
		}},
		{"generator file in base64", map[string]string{
			"kustomization.yaml": "resources: [cm.yaml]\nconfigMapGenerator:\n- name: g\n  files: [!!binary " + b64(u) + "]\n",
		}},
		{"generator file after its key, with a space", map[string]string{
			"kustomization.yaml": "resources: [cm.yaml]\nconfigMapGenerator:\n- name: g\n  files: ['k=" + u + " x']\n",
		}},
		// The tree holds a file of the entry's text, so it passes as a
		// path; kustomize decodes it to a configuration written in place.
		{"inline configuration in base64", map[string]string{
			"kustomization.yaml": "resources: [cm.yaml]\ntransformers:\n- !!binary " + b64(inline) + "\n",
			b64(inline):          configMap,
		}},
		{"builtin configuration's path in base64", map[string]string{
			"kustomization.yaml": "resources: [cm.yaml]\ntransformers: [t.yaml]\n",
			"t.yaml":             "apiVersion: builtin\nkind: PatchTransformer\nmetadata: {name: p}\npath: !!binary " + b64(u) + "\ntarget: {kind: ConfigMap}\n",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.files["cm.yaml"] = configMap
			if _, err := renderTree(t, tc.files); !errors.Is(err, render.ErrRemote) {
				t.Errorf("err = %v; want ErrRemote", err)
			}
		})
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the renders made %d requests", n)
	}
}
