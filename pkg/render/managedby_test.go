package render_test

import (
	"context"
	"regexp"
	"testing"

	"github.com/addonpkg/addonpkg/pkg/render"
)

// A kustomization's buildMetadata: [managedByLabel] gives every object a
// managed-by label the API server accepts, naming the kustomize library
// that rendered it: kustomize wrote "kustomize-(devel)" (it names the
// version of the program it runs in), which the API server refuses, so
// such an add-on could not be installed at all.
func TestKustomizeManagedByLabelIsValid(t *testing.T) {
	res, err := render.Render(context.Background(), tree(map[string]string{
		"kustomization.yaml": "buildMetadata: [managedByLabel]\nresources: [cm.yaml]\nconfigMapGenerator:\n- name: gen\n  literals: [a=b]\n",
		"cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: plain\n",
	}), render.Options{})
	if err != nil {
		t.Fatal(err)
	}
	valid := regexp.MustCompile(`^kustomize(-api-v[0-9][-A-Za-z0-9_.]*[A-Za-z0-9])?$`)
	labels := regexp.MustCompile(`(?m)^    app\.kubernetes\.io/managed-by: (.*)$`).FindAllStringSubmatch(string(res.YAML()), -1)
	if len(labels) != 2 {
		t.Fatalf("%d managed-by labels, want one on each of 2 objects:\n%s", len(labels), res.YAML())
	}
	for _, l := range labels {
		if v := l[1]; !valid.MatchString(v) || len(v) > 63 {
			t.Errorf("managed-by %q, want kustomize or kustomize-api-VERSION, a valid label value:\n%s", v, res.YAML())
		}
	}
}
