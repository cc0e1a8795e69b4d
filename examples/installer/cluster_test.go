package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/addonpkg/addonpkg/internal/testing/kubeenv"
	"github.com/addonpkg/addonpkg/pkg/addonset"
	"github.com/addonpkg/addonpkg/pkg/apply"
)

func TestMain(m *testing.M) {
	code := m.Run()
	kubeenv.StopShared()
	os.Exit(code)
}

// TestInstallIntoCluster: a set whose first-declared member holds custom
// resources of a CRD that the member it dependsOn brings installs in
// dependsOn order against a real API server (in the declared order the
// Sprocket's kind would not exist yet), each member with its own inventory; a second
// run changes nothing.
func TestInstallIntoCluster(t *testing.T) {
	env := kubeenv.Shared(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dir := t.TempDir()
	files := map[string]string{
		"addons.yaml": "apiVersion: addon.cncf.io/v1alpha1\nkind: AddonSet\naddons:\n" +
			"  - name: inst-widgets\n    source: ./widgets\n    dependsOn: [inst-crds]\n" +
			"  - name: inst-crds\n    source: ./crds\n",
		"crds/crd.yaml": `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: sprockets.installer.example.com
spec:
  group: installer.example.com
  names: {kind: Sprocket, listKind: SprocketList, plural: sprockets, singular: sprocket}
  scope: Cluster
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
`,
		"widgets/sprocket.yaml": "apiVersion: installer.example.com/v1\nkind: Sprocket\nmetadata:\n  name: s1\n",
	}
	for name, text := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	decl := filepath.Join(dir, "addons.yaml")
	set, err := addonset.Load(ctx, decl)
	if err != nil {
		t.Fatal(err)
	}
	lock, err := addonset.Lock(ctx, set, addonset.LockOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := addonset.WriteLock(lock, addonset.LockPath(decl)); err != nil {
		t.Fatal(err)
	}

	conn := apply.ConnectOptions{Kubeconfig: env.AdminKubeconfig}
	opts := apply.Options{Wait: true, Timeout: time.Minute}
	if err := installInto(ctx, decl, "", conn, opts); err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", env.AdminKubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	dyn := dynamic.NewForConfigOrDie(cfg)
	gvr := schema.GroupVersionResource{Group: "installer.example.com", Version: "v1", Resource: "sprockets"}
	if _, err := dyn.Resource(gvr).Get(ctx, "s1", metav1.GetOptions{}); err != nil {
		t.Fatalf("the dependent member's Sprocket: %v", err)
	}
	c, err := apply.Connect(ctx, conn)
	if err != nil {
		t.Fatal(err)
	}
	st, err := c.Status(ctx, "inst-crds", "inst-widgets")
	if err != nil || len(st) != 2 || st[0].Ready != st[0].Objects || st[1].Ready != st[1].Objects {
		t.Fatalf("status %+v, %v: want both members installed and ready", st, err)
	}
	// Again: nothing changes (installInto would fail on a conflict).
	if err := installInto(ctx, decl, "", conn, opts); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"inst-widgets", "inst-crds"} {
		if _, err := c.Uninstall(ctx, n, apply.UninstallOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}
