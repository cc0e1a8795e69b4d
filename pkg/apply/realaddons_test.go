package apply_test

import (
	"bytes"
	"cmp"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/restmapper"

	"github.com/addonpkg/addonpkg/pkg/apply"
	"github.com/addonpkg/addonpkg/pkg/render"
)

// realAddons is where e2e keeps upstream's add-ons, unchanged
// (e2e/testdata/real-addons/README.md says what each is).
var realAddons = filepath.Join("..", "..", "e2e", "testdata", "real-addons")

// realAddon renders one of the upstream trees as addonpkg renders it.
func (k *cluster) realAddon(t *testing.T, name, dir string) apply.Addon {
	t.Helper()
	return k.renderedAddon(t, name, realAddons, dir)
}

// renderedAddon renders the tree root/dir as addonpkg renders it.
func (k *cluster) renderedAddon(t *testing.T, name, root, dir string) apply.Addon {
	t.Helper()
	res, err := render.Render(k.ctx, os.DirFS(filepath.Join(root, dir)), render.Options{})
	if err != nil {
		t.Fatalf("render %s: %v", dir, err)
	}
	objs, err := apply.DecodeObjects(res.YAML())
	if err != nil {
		t.Fatalf("decode %s: %v", dir, err)
	}
	return apply.Addon{Name: name, Version: "upstream", Source: dir, Objects: objs}
}

// installTwice installs a, every object created; then, after between
// (what a controller would do meanwhile), a second apply and a dry-run
// must find nothing to change.
func (k *cluster) installTwice(t *testing.T, a apply.Addon, between func()) {
	t.Helper()
	// Nothing runs pods here; CRDs are waited for regardless.
	cs := k.mustApply(t, a, apply.Options{Timeout: time.Minute})
	if n := cs.Count(apply.Created); n != len(a.Objects) {
		t.Errorf("created %d objects of %d:\n%s", n, len(a.Objects), cs)
	}
	for _, o := range a.Objects {
		if _, err := k.getObject(o); err != nil {
			t.Errorf("after the apply: %s %s: %v", o.GetKind(), o.GetName(), err)
		}
	}
	if between != nil {
		between()
	}
	again := k.mustApply(t, a, apply.Options{Timeout: time.Minute})
	if again.Changed() {
		t.Errorf("the second apply of %s changed something:\n%s", a.Source, again)
	}
	dry := k.mustApply(t, a, apply.Options{DryRun: true})
	if dry.Changed() {
		t.Errorf("a dry-run after the apply reports changes:\n%s", dry)
	}
}

// Upstream's add-ons install into a real API server as they are (among
// them prometheus-operator, whose CRDs client-side kubectl apply cannot
// install), a second apply (and a dry-run) finds nothing to change, and
// an uninstall removes every object the inventory names. metrics-server stays installed while
// the others go in: its APIService has no backend here, as on a cluster
// whose metrics-server is not running yet, which leaves one API group
// failing discovery, and nothing else may depend on that group.
func TestRealAddonsInstallAndUninstall(t *testing.T) {
	if testing.Short() {
		t.Skip("installs upstream add-ons into a real API server")
	}
	k := newCluster(t)
	for _, tc := range []struct{ name, dir string }{
		{"metrics-server", "metrics-server/manifests/base"},
		{"nodelocaldns", "nodelocaldns/cluster/addons/dns/nodelocaldns"},
		{"kube-state-metrics", "kube-state-metrics/examples/standard"},
		{"gateway-api", "gateway-api-crds/config/crd"},
		{"prometheus-operator", "prometheus-operator"},
		{"guestbook", "kdp-guestbook/examples/guestbook-operator/channels/packages/guestbook/0.1.0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := k.sub(t)
			a := k.realAddon(t, tc.name, tc.dir)
			if tc.name == "prometheus-operator" {
				// The peer's known failure, asserted: client-side apply
				// stores each object in an annotation, which holds 256 KiB.
				out, err := kubectl(t, k.env.AdminKubeconfig, "", "apply", "--dry-run=server", "-f", filepath.Join(realAddons, tc.dir, "bundle.yaml"))
				if err == nil || !strings.Contains(out, "metadata.annotations: Too long") {
					t.Fatalf("kubectl apply of prometheus-operator's bundle: %v, want the annotation too long:\n%s", err, out)
				}
			}
			k.installTwice(t, a, nil)
			if tc.name == "metrics-server" {
				k.waitDiscoveryFails(t, "metrics.k8s.io")
				return // uninstalled last, below
			}
			k.uninstallAll(t, a)
		})
	}
	t.Run("uninstall metrics-server", func(t *testing.T) {
		k := k.sub(t)
		k.uninstallAll(t, k.realAddon(t, "metrics-server", "metrics-server/manifests/base"))
	})
}

// waitDiscoveryFails waits until discovery reports group as failing, as
// the aggregator does for an APIService without a backend.
func (k *cluster) waitDiscoveryFails(t *testing.T, group string) {
	t.Helper()
	var err error
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		_, _, err = k.typed.Discovery().ServerGroupsAndResources()
		var gf *discovery.ErrGroupDiscoveryFailed
		if errors.As(err, &gf) {
			for gv := range gf.Groups {
				if gv.Group == group {
					return
				}
			}
		}
	}
	t.Fatalf("discovery of %s does not fail with its APIService unavailable (last: %v): the test no longer tests that", group, err)
}

// uninstallAll uninstalls a and checks that none of its objects is left
// (a Namespace may still be terminating) and that its inventory is gone.
func (k *cluster) uninstallAll(t *testing.T, a apply.Addon) {
	t.Helper()
	if _, err := k.admin.Uninstall(k.ctx, a.Name, apply.UninstallOptions{Timeout: time.Minute}); err != nil {
		t.Fatalf("uninstall %s: %v", a.Name, err)
	}
	for _, o := range a.Objects {
		u, err := k.getObject(o)
		switch {
		case apierrors.IsNotFound(err), meta.IsNoMatchError(err): // gone with its CRD
		case err != nil:
			t.Errorf("get %s %s: %v", o.GetKind(), o.GetName(), err)
		case u.GetKind() == "Namespace" && u.GetDeletionTimestamp() != nil:
		default:
			t.Errorf("uninstall %s left %s %s/%s", a.Name, o.GetKind(), o.GetNamespace(), o.GetName())
		}
	}
	if s := k.inventorySecret(t, a.Name); s != nil {
		t.Errorf("uninstall %s left its inventory", a.Name)
	}
}

// getObject reads o from the cluster.
func (k *cluster) getObject(o *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	gvk := o.GroupVersionKind()
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(k.typed.Discovery()))
	m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return nil, err
	}
	r := k.dyn.Resource(m.Resource)
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		ns := cmp.Or(o.GetNamespace(), k.namespace, metav1.NamespaceDefault)
		return r.Namespace(ns).Get(k.ctx, o.GetName(), metav1.GetOptions{})
	}
	return r.Get(k.ctx, o.GetName(), metav1.GetOptions{})
}

// An add-on holding an object of a kind that neither the cluster nor the
// add-on defines (each of upstream's dashboard versions ends with an
// app.k8s.io Application, whose CRD it does not ship) is refused before
// anything is changed, in one line naming the object.
func TestRealAddonUnknownKindChangesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("needs a real API server")
	}
	k := newCluster(t)
	a := k.realAddon(t, "dashboard", "kdp-dashboard/examples/dashboard-operator/channels/packages/dashboard/1.10.1")
	_, err := k.admin.Apply(k.ctx, a, apply.Options{Timeout: time.Minute})
	if !errors.Is(err, apply.ErrInvalid) || !strings.Contains(err.Error(), "Application/kube-system/kubernetes-dashboard") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("apply = %v, want one line of ErrInvalid naming the Application", err)
	}
	k.assertNothingOf(t, a)
}

// assertNothingOf checks that a refused apply of a left nothing: no
// inventory, none of its objects.
func (k *cluster) assertNothingOf(t *testing.T, a apply.Addon) {
	t.Helper()
	if s := k.inventorySecret(t, a.Name); s != nil {
		t.Errorf("a refused apply wrote an inventory")
	}
	for _, o := range a.Objects {
		if _, err := k.getObject(o); !apierrors.IsNotFound(err) && !meta.IsNoMatchError(err) {
			t.Errorf("a refused apply left %s %s (get: %v)", o.GetKind(), o.GetName(), err)
		}
	}
}

// A manifest written for an older cluster names a version that is no
// longer served (apps/v1beta1 went in Kubernetes 1.16), and a custom
// resource may name a version its own CRD does not serve. Both are
// refused before any change, naming what is served instead: before, the
// CRD was installed and the inventory left pending, and the error was
// the API server's "no matches for kind".
func TestUnservedVersionChangesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("needs a real API server")
	}
	k := newCluster(t)
	for _, tc := range []struct{ name, yaml, want string }{
		{"removed-version", `
apiVersion: apps/v1beta1
kind: Deployment
metadata: {name: old, namespace: default}
spec: {}
`, "Deployment/default/old: apps/v1beta1 is not served by the cluster, which serves Deployment as apps/v1"},
		{"crd-version", crdAddon + `---
apiVersion: GROUP/v1alpha1
kind: Widget
metadata: {name: w2, namespace: NS}
`, "Widget/" + k.prefix + "/w2: the add-on's CustomResourceDefinition widgets." + k.prefix + ".example.com serves no version v1alpha1 (it serves v1)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := k.addon(t, k.prefix+"-"+tc.name, "1.0.0", tc.yaml)
			_, err := k.admin.Apply(k.ctx, a, apply.Options{Timeout: time.Minute})
			if !errors.Is(err, apply.ErrInvalid) || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("apply = %v, want one line of ErrInvalid saying %q", err, tc.want)
			}
			k.assertNothingOf(t, a)
		})
	}
}

// Gateway API ships a ValidatingAdmissionPolicy that refuses experimental
// CRDs over standard ones. Moving the add-on from the standard channel to
// the experimental one is refused by the server's dry-run, before any
// change: every CRD keeps its channel and the inventory its record, byte
// for byte. The standard channel installs, applies again with no change,
// and uninstalls whole.
func TestAddonsOwnPolicyRefusesUpgrade(t *testing.T) {
	if testing.Short() {
		t.Skip("needs a real API server")
	}
	k := newCluster(t)
	standard := k.realAddon(t, "gateway-api-channel", "gateway-api-v1.6/config/crd")
	// Its policy refuses older Gateway API CRDs: let no other test meet it.
	t.Cleanup(func() { k.uninstallAll(t, standard) })
	if cs := k.mustApply(t, standard, apply.Options{Timeout: time.Minute}); cs.Count(apply.Created) != len(standard.Objects) {
		t.Errorf("created %d objects of %d:\n%s", cs.Count(apply.Created), len(standard.Objects), cs)
	}
	if again := k.mustApply(t, standard, apply.Options{Timeout: time.Minute}); again.Changed() {
		t.Errorf("the second apply of the standard channel changed something:\n%s", again)
	}
	before := k.inventorySecret(t, standard.Name)

	experimental := k.realAddon(t, standard.Name, "gateway-api-v1.6/config/crd/experimental")
	cs, err := k.admin.Apply(k.ctx, experimental, apply.Options{Timeout: time.Minute})
	if !errors.Is(err, apply.ErrRejected) || !strings.Contains(err.Error(), "safe-upgrades.gateway.networking.k8s.io") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("apply of the experimental channel = %v, want one line of ErrRejected naming the policy", err)
	}
	if cs != nil && cs.Changed() {
		t.Errorf("the refused upgrade reports changes:\n%s", cs)
	}
	for _, o := range standard.Objects {
		live, err := k.getObject(o)
		if err != nil {
			t.Errorf("after the refused upgrade: %s %s: %v", o.GetKind(), o.GetName(), err)
			continue
		}
		if o.GetKind() == "CustomResourceDefinition" && live.GetAnnotations()["gateway.networking.k8s.io/channel"] != "standard" {
			t.Errorf("CRD %s is on channel %q after the refused upgrade", o.GetName(), live.GetAnnotations()["gateway.networking.k8s.io/channel"])
		}
	}
	for _, o := range experimental.Objects {
		if strings.Contains(o.GetName(), ".x-k8s.io") {
			if _, err := k.getObject(o); !apierrors.IsNotFound(err) && !meta.IsNoMatchError(err) {
				t.Errorf("the refused upgrade created %s %s (get: %v)", o.GetKind(), o.GetName(), err)
			}
		}
	}
	after := k.inventorySecret(t, standard.Name)
	if after == nil || !bytes.Equal(after.Data[apply.InventoryKey], before.Data[apply.InventoryKey]) {
		t.Errorf("the refused upgrade changed the inventory:\n%s\nwas\n%s", after.Data[apply.InventoryKey], before.Data[apply.InventoryKey])
	}
}
