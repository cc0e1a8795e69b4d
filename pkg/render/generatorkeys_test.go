package render_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/addonpkg/addonpkg/pkg/render"
	"github.com/addonpkg/addonpkg/pkg/safetree"
)

// The keys a generator gives one ConfigMap count against MaxMappingKeys
// as kustomize reads the generator: its fields in any case (ENVS, Env,
// ConfigMapGenerator), through a merge key, an env file named from the
// tree's root. Each escaped the count, which read the text as written,
// and kustomize made the ConfigMap of every line.
func TestKustomizeGeneratorKeysCappedAsKustomizeReadsThem(t *testing.T) {
	var env strings.Builder
	for i := range 11 {
		fmt.Fprintf(&env, "K%d=v\n", i)
	}
	literals := strings.TrimSuffix(strings.ReplaceAll(env.String(), "\n", ","), ",")
	for name, k := range map[string]string{
		"envs":               "configMapGenerator:\n- name: g\n  envs: [big.env]\n",
		"ENVS":               "configMapGenerator:\n- name: g\n  ENVS: [big.env]\n",
		"Env":                "secretGenerator:\n- name: g\n  Env: big.env\n",
		"ConfigMapGenerator": "ConfigMapGenerator:\n- name: g\n  envs: [big.env]\n",
		"merge key":          "configMapGenerator:\n- <<: {name: g, envs: [big.env]}\n",
		"from the root":      "configMapGenerator:\n- name: g\n  envs: [/big.env]\n",
		"LITERALS":           "configMapGenerator:\n- name: g\n  LITERALS: [" + literals + "]\n",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := render.Render(t.Context(), tree(map[string]string{"kustomization.yaml": k, "big.env": env.String()}), render.Options{MaxMappingKeys: 10})
			if le, ok := errors.AsType[*safetree.LimitError](err); !ok || le.Which != safetree.LimitMappingKeys {
				t.Errorf("err = %v; want the mapping keys limit", err)
			}
		})
	}
}

// A generator's file source that names a folder makes no key per file,
// as kubectl's --from-file does: kustomize refuses it, so counting it as
// one key (generatedKeys) under-counts nothing. Should a kustomize
// upgrade make a key of each file, this render succeeds and the count
// must follow.
func TestKustomizeGeneratorFolderRefused(t *testing.T) {
	files := map[string]string{"kustomization.yaml": "configMapGenerator:\n- name: g\n  files:\n  - conf\n"}
	for i := range 20 {
		files[fmt.Sprintf("conf/k%d", i)] = "v"
	}
	_, err := render.Render(t.Context(), tree(files), render.Options{MaxMappingKeys: 10})
	if re, ok := errors.AsType[*render.Error](err); !ok || re.File != "kustomization.yaml" {
		t.Fatalf("err = %v; want kustomize's refusal of a folder as a file source", err)
	}
	if _, ok := errors.AsType[*safetree.LimitError](err); ok {
		t.Errorf("err = %v: the folder made no keys to count", err)
	}
}
