package capi_test

import (
	"context"
	"fmt"
	"os"
	"testing/fstest"

	"github.com/addonpkg/addonpkg/pkg/capi"
	"github.com/addonpkg/addonpkg/pkg/render"
)

// Two rendered members become a ConfigMap each and the
// ClusterResourceSet that lists them in order. In a program the members
// come from addonset.Render, each through capi.FromRendered.
func ExampleClusterResourceSet() {
	crds, err := render.Render(context.Background(), fstest.MapFS{
		"crd.yaml": {Data: []byte("apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: widgets.example.com\n")},
	}, render.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	app, err := render.Render(context.Background(), fstest.MapFS{
		"app.yaml": {Data: []byte("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: app\n---\napiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: app\n  namespace: app\n")},
	}, render.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := capi.ClusterResourceSet([]capi.Member{
		{Name: "crds", Pinned: "registry.example.com/crds@sha256:1111", Identity: "sha256:2222", Result: crds},
		{Name: "app", Pinned: "registry.example.com/app@sha256:3333", Identity: "sha256:4444", Result: app},
	}, capi.Options{Name: "addons", Namespace: "clusters", ClusterSelector: map[string]string{"addons": "standard"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	if _, err := res.WriteTo(os.Stdout); err != nil {
		fmt.Println(err)
	}
	// Output:
	// apiVersion: v1
	// data:
	//   0001.yaml: |
	//     apiVersion: apiextensions.k8s.io/v1
	//     kind: CustomResourceDefinition
	//     metadata:
	//       name: widgets.example.com
	// kind: ConfigMap
	// metadata:
	//   annotations:
	//     addonpkg.io/identity: sha256:2222
	//     addonpkg.io/part: 1/1
	//     addonpkg.io/pinned: registry.example.com/crds@sha256:1111
	//     addonpkg.io/set-member: crds
	//   labels:
	//     addonpkg.io/cluster-resource-set: addons
	//   name: addons-crds
	//   namespace: clusters
	// ---
	// apiVersion: v1
	// data:
	//   0001.yaml: |
	//     apiVersion: v1
	//     kind: Namespace
	//     metadata:
	//       name: app
	//   0002.yaml: |
	//     apiVersion: v1
	//     kind: ServiceAccount
	//     metadata:
	//       name: app
	//       namespace: app
	// kind: ConfigMap
	// metadata:
	//   annotations:
	//     addonpkg.io/identity: sha256:4444
	//     addonpkg.io/part: 1/1
	//     addonpkg.io/pinned: registry.example.com/app@sha256:3333
	//     addonpkg.io/set-member: app
	//   labels:
	//     addonpkg.io/cluster-resource-set: addons
	//   name: addons-app
	//   namespace: clusters
	// ---
	// apiVersion: addons.cluster.x-k8s.io/v1beta2
	// kind: ClusterResourceSet
	// metadata:
	//   name: addons
	//   namespace: clusters
	// spec:
	//   clusterSelector:
	//     matchLabels:
	//       addons: standard
	//   resources:
	//   - kind: ConfigMap
	//     name: addons-crds
	//   - kind: ConfigMap
	//     name: addons-app
	//   strategy: ApplyOnce
}
