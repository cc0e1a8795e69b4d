package render_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/addonpkg/addonpkg/pkg/addon"
	"github.com/addonpkg/addonpkg/pkg/render"
)

// Documents of an add-on whose files, in tree order, hold a Deployment in
// namespace ns1, a custom resource, its CRD and then the Namespace: the
// order in which `kubectl apply -f -` of the stream fails.
const (
	orderDeployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: ns1
spec:
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: registry.example/web:1
`
	orderWidget = `apiVersion: example.com/v1
kind: Widget
metadata:
  name: w1
  namespace: ns1
`
	orderCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  names: {kind: Widget, plural: widgets}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object}
`
	orderNamespace = `apiVersion: v1
kind: Namespace
metadata:
  name: ns1
`
	orderWebhook = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: check
`
)

func cmNamed(name string) string {
	return fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\n  namespace: ns1\n", name)
}

func objectKeys(docs []render.Document) []string {
	var out []string
	for _, d := range docs {
		out = append(out, d.Object.Kind+"/"+d.Object.Name)
	}
	return out
}

// TestApplyOrder renders trees whose files sort Deployment, custom
// resource, CRD, Namespace and checks the stream comes out in apply order,
// for both kinds of add-on, with the inventory in the same order.
func TestApplyOrder(t *testing.T) {
	files := map[string]string{
		"1-deployment.yaml": orderDeployment,
		"2-widget.yaml":     orderWidget,
		"3-crd.yaml":        orderCRD,
		"4-namespace.yaml":  orderNamespace,
	}
	withKustomization := func(k string) map[string]string {
		m := map[string]string{"kustomization.yaml": k}
		for n, v := range files {
			m[n] = v
		}
		return m
	}
	resources := "resources:\n- 1-deployment.yaml\n- 2-widget.yaml\n- 3-crd.yaml\n- 4-namespace.yaml\n"
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  []string
	}{
		{
			name:  "manifests",
			files: files,
			want:  []string{"Namespace/ns1", "CustomResourceDefinition/widgets.example.com", "Deployment/web", "Widget/w1"},
		},
		{
			name: "manifests/stable within a kind",
			files: map[string]string{
				"a.yaml":   orderWebhook + "---\n" + cmNamed("zz") + "---\n" + orderDeployment,
				"b.yaml":   cmNamed("aa") + "---\n" + orderNamespace,
				"c/d.yaml": cmNamed("mm") + "---\n" + orderWidget + "---\n" + orderCRD,
			},
			want: []string{
				"Namespace/ns1", "CustomResourceDefinition/widgets.example.com",
				"ConfigMap/zz", "ConfigMap/aa", "ConfigMap/mm", // tree order, not name order
				"Deployment/web", "Widget/w1", "ValidatingWebhookConfiguration/check",
			},
		},
		{
			name:  "kustomize",
			files: withKustomization(resources),
			want:  []string{"Namespace/ns1", "CustomResourceDefinition/widgets.example.com", "Deployment/web", "Widget/w1"},
		},
		{
			// kustomize build honours a kustomization's own sortOptions.
			name:  "kustomize/sortOptions fifo",
			files: withKustomization(resources + "sortOptions:\n  order: fifo\n"),
			want:  []string{"Deployment/web", "Widget/w1", "CustomResourceDefinition/widgets.example.com", "Namespace/ns1"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := renderTree(t, tc.files)
			if err != nil {
				t.Fatal(err)
			}
			if got := objectKeys(res.Documents); !slices.Equal(got, tc.want) {
				t.Errorf("stream order\n got %q\nwant %q", got, tc.want)
			}
			// The stream is the documents in that order.
			var kinds []string
			for _, doc := range strings.Split(string(res.YAML()), "---\n") {
				for _, line := range strings.Split(doc, "\n") {
					if k, ok := strings.CutPrefix(line, "kind: "); ok {
						kinds = append(kinds, k)
					}
				}
			}
			var wantKinds []string
			for _, k := range tc.want {
				wantKinds = append(wantKinds, strings.Split(k, "/")[0])
			}
			if !slices.Equal(kinds, wantKinds) {
				t.Errorf("YAML stream kinds %q, want %q", kinds, wantKinds)
			}
			inv := res.Inventory()
			for i, o := range inv.Objects {
				if o != res.Documents[i].Object {
					t.Errorf("inventory object %d is %v, stream has %v", i, o, res.Documents[i].Object)
				}
			}
		})
	}
}

func TestCompareApplyOrder(t *testing.T) {
	obj := func(apiVersion, kind string) addon.Object {
		return addon.Object{APIVersion: apiVersion, Kind: kind, Name: "x"}
	}
	// Each object goes strictly before the next.
	ordered := []addon.Object{
		obj("v1", "Namespace"),
		obj("storage.k8s.io/v1", "StorageClass"),
		obj("apiextensions.k8s.io/v1", "CustomResourceDefinition"),
		obj("v1", "ServiceAccount"),
		obj("rbac.authorization.k8s.io/v1", "ClusterRole"),
		obj("v1", "Secret"),
		obj("v1", "Service"),
		obj("apps/v1", "Deployment"),
		obj("policy/v1", "PodDisruptionBudget"),
		// Kinds of no rank: by group, version, kind.
		obj("apps/v1", "DaemonSet"),
		obj("batch/v1", "Job"),
		obj("example.com/v1", "Widget"),
		obj("example.com/v2", "Widget"),
		obj("networking.k8s.io/v1", "Ingress"),
		obj("v1", "Pod"), // core group sorts as "~G", after every named group
		obj("admissionregistration.k8s.io/v1", "MutatingWebhookConfiguration"),
		obj("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration"),
	}
	for i := range ordered {
		for j := range ordered {
			got := render.CompareApplyOrder(ordered[i], ordered[j])
			want := 0
			switch {
			case i < j:
				want = -1
			case i > j:
				want = 1
			}
			if got != want {
				t.Errorf("CompareApplyOrder(%v, %v) = %d, want %d", ordered[i], ordered[j], got, want)
			}
		}
	}
}

func ExampleSortForApply() {
	res, err := render.Render(context.Background(), tree(map[string]string{
		"deployment.yaml": orderDeployment,
		"namespace.yaml":  orderNamespace,
	}), render.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	// Render has already sorted the stream; sorting again changes nothing.
	render.SortForApply(res.Documents)
	for _, d := range res.Documents {
		fmt.Println(d.Object.Kind, d.File)
	}
	// Output:
	// Namespace namespace.yaml
	// Deployment deployment.yaml
}

// Raw prints a kustomize tree's manifests as written: no kustomization,
// no kustomize inputs that are not objects, no transformation applied.
func TestRaw(t *testing.T) {
	files := map[string]string{
		"kustomization.yaml":      "namespace: prod\nnamePrefix: p-\nresources:\n- base\npatches:\n- path: patch.yaml\n  target: {kind: Deployment}\n",
		"patch.yaml":              "- op: replace\n  path: /spec/replicas\n  value: 2\n",
		"base/kustomization.yaml": "resources:\n- deployment.yaml\n- namespace.yaml\n",
		"base/deployment.yaml":    orderDeployment,
		"base/namespace.yaml":     orderNamespace,
	}
	res, err := render.Render(context.Background(), tree(files), render.Options{Raw: true})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := objectKeys(res.Documents), []string{"Namespace/ns1", "Deployment/web"}; !slices.Equal(got, want) {
		t.Errorf("raw documents %q, want %q", got, want)
	}
	if got, want := string(res.YAML()), orderNamespace+"---\n"+orderDeployment; got != want {
		t.Errorf("raw stream\n%s\nwant the files as written:\n%s", got, want)
	}
	// A plain-manifest tree: Raw is Render, invalid documents refused.
	if _, err := render.Render(context.Background(), tree(map[string]string{"a.yaml": orderNamespace, "b.yaml": "- op: x\n"}), render.Options{Raw: true}); !errors.Is(err, render.ErrInvalid) {
		t.Errorf("Raw of a manifests tree with a non-object: %v, want ErrInvalid", err)
	}
}
