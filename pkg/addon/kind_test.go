package addon_test

import (
	"errors"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/addonpkg/addonpkg/pkg/addon"
)

func TestKindOf(t *testing.T) {
	f := &fstest.MapFile{Data: []byte("resources: []\n")}
	for _, tc := range []struct {
		files []string
		want  addon.Kind
		both  string
	}{
		{[]string{"a.yaml"}, addon.KindManifests, ""},
		{[]string{"kustomization.yaml"}, addon.KindKustomize, ""},
		{[]string{"Kustomization", "a.yaml"}, addon.KindKustomize, ""},
		{[]string{"sub/kustomization.yaml", "sub/Kustomization"}, addon.KindManifests, ""},
		{[]string{"kustomization.yaml", "kustomization.yml"}, "", "kustomization.yaml and kustomization.yml"},
		{[]string{"Kustomization", "kustomization.yml", "kustomization.yaml"}, "", "kustomization.yaml and kustomization.yml and Kustomization"},
	} {
		fsys := fstest.MapFS{}
		for _, n := range tc.files {
			fsys[n] = f
		}
		got, err := addon.KindOf(fsys)
		if tc.both != "" {
			if !errors.Is(err, addon.ErrTwoKustomizations) || !strings.Contains(err.Error(), tc.both) {
				t.Errorf("%v: %v, want ErrTwoKustomizations naming %s", tc.files, err, tc.both)
			}
			continue
		}
		if err != nil || got != tc.want || addon.DetectKind(fsys) != tc.want {
			t.Errorf("%v: %s, %v; want %s", tc.files, got, err, tc.want)
		}
	}
}
