package render_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/addonpkg/addonpkg/pkg/render"
)

// widgetSchema is an OpenAPI document in which the kind Widget of
// example.com/v1 is cluster-scoped: it has no path under a namespace.
const widgetSchema = `{"swagger": "2.0", "info": {"title": "widgets", "version": "v1"},
 "paths": {"/apis/example.com/v1/widgets/{name}": {"get": {"x-kubernetes-group-version-kind": {"group": "example.com", "version": "v1", "kind": "Widget"}}}},
 "definitions": {"com.example.v1.Widget": {"type": "object", "x-kubernetes-group-version-kind": [{"group": "example.com", "version": "v1", "kind": "Widget"}]}}}`

const widget = "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\n"

// kustomize keeps the schema a kustomization's openapi field names in
// package state, which a later kustomization without the field does not
// clear: an add-on's schema must not change how the next add-on renders.
// One whose schema calls Widget cluster-scoped made a later add-on's
// Widget lose its namespace; one whose schema file is no schema made
// kustomize panic, which the render returns as ErrKustomizePanic.
func TestKustomizeOpenAPIIsPerRender(t *testing.T) {
	plain := map[string]string{"kustomization.yaml": "namespace: prod\nresources:\n- w.yaml\n", "w.yaml": widget}
	namespaced := func(when string) {
		t.Helper()
		res, err := renderTree(t, plain)
		if err != nil {
			t.Fatalf("%s: %v", when, err)
		}
		if o := res.Documents[0].Object; o.Namespace != "prod" {
			t.Errorf("%s, the Widget of an add-on without a schema is in namespace %q, want prod:\n%s", when, o.Namespace, res.YAML())
		}
	}
	namespaced("first")

	res, err := renderTree(t, map[string]string{
		"kustomization.yaml": "namespace: prod\nopenapi:\n  path: schema.json\nresources:\n- w.yaml\n",
		"schema.json":        widgetSchema,
		"w.yaml":             widget,
	})
	if err != nil {
		t.Fatal(err)
	}
	if o := res.Documents[0].Object; o.Namespace != "" {
		t.Errorf("the schema's cluster-scoped Widget is in namespace %q", o.Namespace)
	}
	namespaced("after an add-on with its own schema")

	_, err = renderTree(t, map[string]string{
		"kustomization.yaml": "openapi:\n  path: schema.json\nresources:\n- w.yaml\n",
		"schema.json":        `{"swagger": 1}`,
		"w.yaml":             widget,
	})
	if !errors.Is(err, render.ErrKustomizePanic) || !strings.HasPrefix(err.Error(), "kustomization.yaml: ") || strings.Contains(err.Error(), "\n") {
		t.Errorf("schema file that is no schema: err = %v, want one line ErrKustomizePanic naming kustomization.yaml", err)
	}
	namespaced("after an add-on whose schema made kustomize panic")
}
