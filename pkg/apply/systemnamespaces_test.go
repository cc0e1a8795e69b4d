package apply_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/addonpkg/addonpkg/pkg/apply"
)

// An add-on may hold the Namespace kube-system (a kustomization's
// namespace: kube-system renames the Namespace of its base so), which
// the API server never deletes. Uninstall lets go of it: the add-on's
// labels come off, the inventory goes, and another add-on may hold it
// next. Before, it was kept, and stayed in the inventory for ever (the
// add-on could not be uninstalled); with PruneNonEmpty the delete was
// refused, and the inventory left pending.
func TestUninstallLetsGoOfKubeSystem(t *testing.T) {
	k := newCluster(t)
	const holder = `
apiVersion: v1
kind: Namespace
metadata:
  name: kube-system
  labels: {example.com/NS: "true"}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: NS, namespace: kube-system}
`
	for _, pruneNonEmpty := range []bool{false, true} {
		a := k.addon(t, k.prefix, "1", holder)
		k.mustApply(t, a, apply.Options{})
		cs, err := k.admin.Uninstall(k.ctx, a.Name, apply.UninstallOptions{PruneNonEmpty: pruneNonEmpty, Timeout: time.Minute})
		if err != nil {
			t.Fatalf("PruneNonEmpty %v: %v", pruneNonEmpty, err)
		}
		for _, c := range cs.Changes {
			if c.Object == "Namespace/kube-system" && (c.Action != apply.Skipped || !strings.Contains(c.Reason, "makes namespace kube-system itself")) {
				t.Errorf("PruneNonEmpty %v: %s %q, want skipped: the API server makes it itself", pruneNonEmpty, c.Action, c.Reason)
			}
		}
		if k.inventorySecret(t, a.Name) != nil {
			t.Errorf("PruneNonEmpty %v: the uninstall left the inventory", pruneNonEmpty)
		}
		if k.exists(t, gvrConfigMap, "kube-system", k.prefix) {
			t.Errorf("PruneNonEmpty %v: the uninstall left the ConfigMap", pruneNonEmpty)
		}
		ns, err := k.typed.CoreV1().Namespaces().Get(k.ctx, "kube-system", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range []string{apply.LabelAddon, apply.LabelApplySetPartOf, "example.com/" + k.prefix} {
			if _, ok := ns.Labels[l]; ok {
				t.Errorf("PruneNonEmpty %v: kube-system still carries the add-on's label %s: %v", pruneNonEmpty, l, ns.Labels)
			}
		}
	}
	// Let go of, it is anyone's: another add-on holds it without Force.
	b := k.addon(t, k.prefix+"-b", "1", holder)
	k.mustApply(t, b, apply.Options{})
	if _, err := k.admin.Uninstall(k.ctx, b.Name, apply.UninstallOptions{Timeout: time.Minute}); err != nil {
		t.Fatal(err)
	}
}

// An upgrade that drops kube-public and kube-node-lease lets go of them
// too, PruneNonEmpty or not: the API server refused to delete the first,
// so the upgrade failed every time, and deleted the second, with every
// node's lease in it.
func TestUpgradeLetsGoOfSystemNamespaces(t *testing.T) {
	k := newCluster(t)
	holds := "apiVersion: v1\nkind: Namespace\nmetadata: {name: kube-public}\n---\napiVersion: v1\nkind: Namespace\nmetadata: {name: kube-node-lease}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: NS-probe, namespace: kube-public}\n"
	without := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: NS-probe, namespace: kube-public}\n"
	for _, pruneNonEmpty := range []bool{false, true} {
		k.mustApply(t, k.addon(t, k.prefix, "1", holds), apply.Options{})
		cs, err := k.admin.Apply(k.ctx, k.addon(t, k.prefix, "2", without), apply.Options{PruneNonEmpty: pruneNonEmpty})
		if err != nil {
			t.Fatalf("PruneNonEmpty %v: upgrade that drops the system namespaces: %v", pruneNonEmpty, err)
		}
		for _, ns := range []string{"kube-public", "kube-node-lease"} {
			i := slices.IndexFunc(cs.Changes, func(c apply.Change) bool { return c.Object == "Namespace/"+ns })
			if i < 0 || cs.Changes[i].Action != apply.Skipped || !strings.Contains(cs.Changes[i].Reason, "lets go of it") {
				t.Errorf("PruneNonEmpty %v: Namespace/%s: %+v, want skipped, let go of", pruneNonEmpty, ns, cs.Changes)
			}
			live, err := k.typed.CoreV1().Namespaces().Get(k.ctx, ns, metav1.GetOptions{})
			if err != nil || live.DeletionTimestamp != nil || live.Labels[apply.LabelAddon] != "" {
				t.Errorf("PruneNonEmpty %v: Namespace/%s: %v (labels %v), want it there, without the add-on's label", pruneNonEmpty, ns, err, live.GetLabels())
			}
		}
		if inv := k.inventory(t, k.prefix); inv == nil || len(inv.Objects) != 1 {
			t.Errorf("PruneNonEmpty %v: inventory %+v, want the ConfigMap alone", pruneNonEmpty, inv)
		}
	}
	if _, err := k.admin.Uninstall(k.ctx, k.prefix, apply.UninstallOptions{}); err != nil {
		t.Fatal(err)
	}
}

// Letting go of a system namespace is a server-side apply of nothing
// under FieldManager, which every add-on shares: it takes off whatever
// that manager holds when it runs, not what the add-on held when the
// plan was read. Another add-on that took the namespace over (Force)
// while the upgrade applied kept its labels: the upgrade read the
// namespace again, and let go only of what is still its own, on the
// version it read.
func TestLetGoSparesTheNamespaceAnotherAddonTookOver(t *testing.T) {
	k := newCluster(t)
	holds := "apiVersion: v1\nkind: Namespace\nmetadata: {name: kube-public, labels: {example.com/NS-a: \"true\"}}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: NS-a, namespace: kube-public}\n"
	without := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: NS-a, namespace: kube-public}\n"
	other := "apiVersion: v1\nkind: Namespace\nmetadata: {name: kube-public, labels: {example.com/NS-b: \"true\"}}\n"
	k.mustApply(t, k.addon(t, k.prefix, "1", holds), apply.Options{})
	b := k.addon(t, k.prefix+"-b", "1", other)
	took := false
	apply.SetTestHook(func(stage string) {
		if stage == "webhooks" && !took {
			took = true
			k.mustApply(t, b, apply.Options{Force: true})
		}
	})
	t.Cleanup(func() { apply.SetTestHook(nil) })
	if _, err := k.admin.Apply(k.ctx, k.addon(t, k.prefix, "2", without), apply.Options{}); err != nil {
		t.Fatalf("upgrade that drops kube-public: %v", err)
	}
	apply.SetTestHook(nil)
	if !took {
		t.Fatal("the other add-on never took kube-public over: the test proves nothing")
	}
	ns, err := k.typed.CoreV1().Namespaces().Get(k.ctx, "kube-public", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range []string{apply.LabelAddon, apply.LabelApplySetPartOf, "example.com/" + k.prefix + "-b"} {
		if _, ok := ns.Labels[l]; !ok {
			t.Errorf("the upgrade took the label %s off the namespace the other add-on holds: %v", l, ns.Labels)
		}
	}
	if ns.Labels[apply.LabelAddon] != b.Name {
		t.Errorf("kube-public's owner label is %q, want %q", ns.Labels[apply.LabelAddon], b.Name)
	}
	for _, name := range []string{k.prefix, b.Name} {
		if _, err := k.admin.Uninstall(k.ctx, name, apply.UninstallOptions{Timeout: time.Minute}); err != nil {
			t.Fatal(err)
		}
	}
}

// An add-on may hold a Namespace where inventories are kept: its
// client's (an installer's own "addons" namespace, made before the first
// inventory was written there), or another client's. Uninstall lets go
// of it, as of kube-system: it was kept for the inventories it held (its
// own among them, so the add-on could never be uninstalled), and
// PruneNonEmpty, which the kept reason suggests, deleted it with every
// other add-on's inventory: their objects stayed, recorded nowhere.
func TestUninstallLetsGoOfAnInventoryNamespace(t *testing.T) {
	k := newCluster(t)
	invNS := k.prefix + "-inv"
	if _, err := k.typed.CoreV1().Namespaces().Create(k.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: invNS}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	there, err := apply.New(k.env.Admin, apply.ClientOptions{InventoryNamespace: invNS, PollInterval: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	other := k.addon(t, k.prefix+"-other", "1", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: other, namespace: NS-inv}\n")
	if _, err := there.Apply(k.ctx, other, apply.Options{}); err != nil {
		t.Fatal(err)
	}
	holder := k.addon(t, k.prefix, "1", "apiVersion: v1\nkind: Namespace\nmetadata: {name: NS-inv}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: holder, namespace: NS-inv}\n")
	for _, c := range []struct {
		name string
		c    *apply.Client
	}{{"its client's", there}, {"another client's", k.admin}} {
		for _, pruneNonEmpty := range []bool{false, true} {
			if _, err := c.c.Apply(k.ctx, holder, apply.Options{}); err != nil {
				t.Fatal(err)
			}
			cs, err := c.c.Uninstall(k.ctx, holder.Name, apply.UninstallOptions{PruneNonEmpty: pruneNonEmpty, Timeout: 20 * time.Second})
			if err != nil {
				t.Fatalf("%s, PruneNonEmpty %v: %v", c.name, pruneNonEmpty, err)
			}
			ns, err := k.typed.CoreV1().Namespaces().Get(k.ctx, invNS, metav1.GetOptions{})
			if err != nil || ns.DeletionTimestamp != nil {
				t.Fatalf("%s, PruneNonEmpty %v: the uninstall deleted the inventory namespace (%v):\n%s", c.name, pruneNonEmpty, err, cs)
			}
			if _, ok := ns.Labels[apply.LabelAddon]; ok {
				t.Errorf("%s, PruneNonEmpty %v: the inventory namespace still carries the add-on's label: %v", c.name, pruneNonEmpty, ns.Labels)
			}
			if _, err := c.c.Status(k.ctx, holder.Name); !errors.Is(err, apply.ErrNotInstalled) {
				t.Errorf("%s, PruneNonEmpty %v: status after uninstall: %v, want not installed:\n%s", c.name, pruneNonEmpty, err, cs)
			}
			if records, err := there.List(k.ctx); err != nil || len(records) != 1 || records[0].Name != other.Name {
				t.Errorf("%s, PruneNonEmpty %v: inventories %+v, %v, want %s's alone", c.name, pruneNonEmpty, records, err, other.Name)
			}
		}
	}
	if _, err := there.Uninstall(k.ctx, other.Name, apply.UninstallOptions{}); err != nil {
		t.Fatal(err)
	}
}

// A user who may not list the Secrets of a Namespace the add-on holds
// cannot tell whether it holds inventories: uninstall neither deletes it
// nor lets go of it, and the inventory keeps it, as prune keeps a
// Namespace it cannot list (holds). Before, a failed list counted as
// holding inventories: the add-on let go of its own Namespace, saying it
// held inventories, and the uninstall finished with the Namespace left
// behind, recorded nowhere.
func TestUninstallKeepsANamespaceWhoseSecretsItCannotList(t *testing.T) {
	k := newCluster(t)
	a := k.addon(t, k.prefix, "1", "apiVersion: v1\nkind: Namespace\nmetadata: {name: NS}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: NS}\n")
	k.mustApply(t, a, apply.Options{Timeout: 20 * time.Second})
	user := "nolist-" + k.prefix
	as := k.asUser(t, user, []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"namespaces", "configmaps"}, Verbs: []string{"get", "list", "patch", "delete"}},
		{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get", "update", "delete"}},
		{APIGroups: []string{"authorization.k8s.io"}, Resources: []string{"selfsubjectaccessreviews"}, Verbs: []string{"create"}},
	})
	t.Cleanup(func() {
		_, _ = k.admin.Uninstall(context.Background(), a.Name, apply.UninstallOptions{Timeout: 20 * time.Second})
	})
	var (
		cs  *apply.ChangeSet
		err error
	)
	untilRBACSettles(func() bool {
		cs, err = as.Uninstall(k.ctx, a.Name, apply.UninstallOptions{Timeout: 20 * time.Second})
		return err == nil || !errors.Is(err, apply.ErrForbidden)
	})
	if err != nil {
		t.Fatal(err)
	}
	ns, err := k.typed.CoreV1().Namespaces().Get(k.ctx, k.prefix, metav1.GetOptions{})
	if err != nil || ns.Labels[apply.LabelAddon] != a.Name {
		t.Errorf("the Namespace was deleted, or let go of (%v, labels %v):\n%s", err, ns.Labels, cs)
	}
	if inv := k.inventory(t, a.Name); inv == nil || len(inv.Objects) != 1 {
		t.Errorf("inventory after the uninstall: %+v, want the Namespace kept in it:\n%s", inv, cs)
	}
	if s := cs.String(); strings.Contains(s, "lets go") || !strings.Contains(s, "cannot list its Secrets") {
		t.Errorf("the kept Namespace's reason does not say its Secrets could not be listed:\n%s", s)
	}
}
