package render_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/addonpkg/addonpkg/pkg/render"
	"github.com/addonpkg/addonpkg/pkg/values"
)

// TestValuesCoreDNS fills in the values examples/coredns declares:
// given, defaulted, and refused when the required one is missing.
func TestValuesCoreDNS(t *testing.T) {
	fsys := os.DirFS("../../examples/coredns")
	for _, dropText := range []bool{false, true} {
		res, err := render.Render(context.Background(), fsys, render.Options{DropText: dropText, Values: map[string]string{"DNS_SERVER_IP": "10.0.0.10"}})
		if err != nil {
			t.Fatal(err)
		}
		out := string(res.YAML())
		for _, want := range []string{"clusterIP: 10.0.0.10\n", "kubernetes cluster.local in-addr.arpa", "memory: 170Mi\n"} {
			if !strings.Contains(out, want) {
				t.Errorf("DropText %v: the stream lacks %q", dropText, want)
			}
		}
		if strings.Contains(out, "${") {
			t.Errorf("DropText %v: a value is left unfilled:\n%s", dropText, out)
		}
		if res.Values["DNS_DOMAIN"] != "cluster.local" || res.Values["DNS_SERVER_IP"] != "10.0.0.10" || len(res.Values) != 3 {
			t.Errorf("Result.Values = %v", res.Values)
		}
		if len(res.Documents) != 6 || len(res.Inventory().Objects) != 6 {
			t.Errorf("%d documents, want 6", len(res.Documents))
		}
	}

	_, err := render.Render(context.Background(), fsys, render.Options{Values: map[string]string{}})
	var me *values.MissingError
	if !errors.As(err, &me) || me.Missing[0].Name != "DNS_SERVER_IP" {
		t.Errorf("render without DNS_SERVER_IP: %v", err)
	}

	// nil Values: the template, as a build renders it for the inventory.
	res, err := render.Render(context.Background(), fsys, render.Options{})
	if err != nil || !strings.Contains(string(res.YAML()), "clusterIP: ${DNS_SERVER_IP}") || res.Values != nil {
		t.Errorf("render of the template: %v", err)
	}
}

const valuesDecl = "apiVersion: addon.cncf.io/v1alpha1\nkind: AddonValues\nvalues:\n- name: NS\n- name: IMAGE\n  default: registry.example/app:1\n"

func TestValuesKustomizeAndImages(t *testing.T) {
	fsys := fstest.MapFS{
		".addonvalues":       {Data: []byte(valuesDecl)},
		"kustomization.yaml": {Data: []byte("resources: [deploy.yaml]\ncommonAnnotations: {note: \"$${NOT_A_VALUE}\"}\n")},
		"deploy.yaml": {Data: []byte(`apiVersion: apps/v1
kind: Deployment
metadata: {name: app, namespace: "${NS}"}
spec:
  selector: {matchLabels: {app: a}}
  template:
    metadata: {labels: {app: a}}
    spec: {containers: [{name: a, image: "${IMAGE}"}]}
`)},
	}
	res, err := render.Render(context.Background(), fsys, render.Options{Values: map[string]string{"NS": "tools", "IMAGE": "mirror.example/app:2"}})
	if err != nil {
		t.Fatal(err)
	}
	d := res.Documents[0]
	if d.Object.Namespace != "tools" || len(d.Images) != 1 || d.Images[0] != "mirror.example/app:2" {
		t.Errorf("object %+v, images %v: want the filled-in namespace and image", d.Object, d.Images)
	}
	if inv := res.Inventory(); inv.Objects[0].Namespace != "tools" || inv.Images[0] != "mirror.example/app:2" {
		t.Errorf("inventory %+v", inv)
	}
	if out := string(res.YAML()); !strings.Contains(out, "note: ${NOT_A_VALUE}") {
		t.Errorf("$${...} is not the text ${...}:\n%s", out)
	}
}

func TestValuesRefused(t *testing.T) {
	tree := func(doc string) fstest.MapFS {
		return fstest.MapFS{".addonvalues": {Data: []byte(valuesDecl)}, "a.yaml": {Data: []byte(doc)}}
	}
	given := map[string]string{"NS": "x"}
	for name, tc := range map[string]struct {
		fsys  fstest.MapFS
		given map[string]string
		want  string
	}{
		"undeclared reference": {tree("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: \"${OTHER}\"}\n"), given, "a.yaml:1: ${OTHER} is not a declared value"},
		"a second object":      {tree("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: \"${NS}\"}\n"), map[string]string{"NS": "x\"}\n---\napiVersion: v1\nkind: Secret\nmetadata: {name: s}\ndata: {b: \"y"}, "turn it into something else than one ConfigMap"},
		"objects in items":     {tree("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: \"${NS}\"}\n"), map[string]string{"NS": "x\"}\nitems: [{apiVersion: v1, kind: Secret, metadata: {name: s}}]\nbinaryData: {b: \"eQ=="}, "top-level items field"},
		"undeclared given":     {tree("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n"), map[string]string{"NS": "x", "NX": "y"}, "value NX: the add-on does not declare it"},
		"no declaration":       {fstest.MapFS{"a.yaml": {Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n")}}, map[string]string{"NS": "x"}, "it declares none"},
		"bad declaration":      {fstest.MapFS{".addonvalues": {Data: []byte("kind: AddonValues\n")}, "a.yaml": {Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n")}}, given, "invalid values: apiVersion"},
	} {
		_, err := render.Render(context.Background(), tc.fsys, render.Options{Values: tc.given})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", name, err, tc.want)
		}
	}
	// An add-on that declares nothing is never filled in.
	plain := fstest.MapFS{"a.yaml": {Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {sh: \"echo ${HOME}\"}\n")}}
	res, err := render.Render(context.Background(), plain, render.Options{Values: map[string]string{}})
	if err != nil || !strings.Contains(string(res.YAML()), "echo ${HOME}") {
		t.Errorf("a tree without .addonvalues was changed: %v", err)
	}
}

// Filling in treats every document of an add-on that declares values
// alike: Flux's substitution turns "$$" into "$" wherever it occurs, so a
// document without "${" must not keep the "$$" that the same text gets
// collapsed in a document that also refers to a value.
func TestValuesDollarDollarInEveryDocument(t *testing.T) {
	fsys := fstest.MapFS{
		".addonvalues": {Data: []byte(valuesDecl)},
		"a.yaml":       {Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {run: \"echo $$\"}\n")},
		"b.yaml":       {Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b, namespace: \"${NS}\"}\ndata: {run: \"echo $$\"}\n")},
	}
	for _, dropText := range []bool{false, true} {
		res, err := render.Render(context.Background(), fsys, render.Options{DropText: dropText, Values: map[string]string{"NS": "tools"}})
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range res.Documents {
			text, err := res.Text(d)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(text), "run: \"echo $\"") {
				t.Errorf("DropText %v: %s is filled in as\n%s\nwant echo $, as in every document", dropText, d.Object.Name, text)
			}
		}
	}
}
