package apply_test

import (
	"encoding/json"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/addonpkg/addonpkg/pkg/apply"
)

// Whoever may edit the Secrets of the inventory namespace (a tenant of
// it, or another tool) can write any entry into an add-on's inventory:
// cluster-admin's ClusterRole, kube-system, another namespace's objects,
// another add-on's, duplicates. A cluster admin's next uninstall or
// upgrade of the add-on must delete and let go of none of them: prune
// confirms ownership on the live object (the add-on's owner label and
// its inventory's ApplySet), never on the record alone.
func TestTamperedInventoryDeletesOnlyWhatTheAddonOwns(t *testing.T) {
	k := newCluster(t)
	k.mustApply(t, k.addon(t, k.prefix+"-ns", "1", raceNS), apply.Options{})
	// Another add-on's object, and an object labelled with this add-on's
	// name by hand (no ApplySet): neither is this add-on's.
	other := k.addon(t, k.prefix+"-other", "1", `
apiVersion: v1
kind: ConfigMap
metadata: {name: others, namespace: NS}
`)
	k.mustApply(t, other, apply.Options{})
	handmade := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "handmade", Namespace: k.prefix,
		Labels: map[string]string{apply.LabelAddon: k.prefix}}}
	victim := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: k.prefix + "-victim", Namespace: "kube-system"}}
	for _, cm := range []*corev1.ConfigMap{handmade, victim} {
		if _, err := k.typed.CoreV1().ConfigMaps(cm.Namespace).Create(k.ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		_ = k.typed.CoreV1().ConfigMaps("kube-system").Delete(k.ctx, victim.Name, metav1.DeleteOptions{})
	})
	forged := []apply.InventoryEntry{
		{ID: "_cluster-admin_rbac.authorization.k8s.io_ClusterRole", Version: "v1"},
		{ID: "_kube-system__Namespace", Version: "v1"},
		{ID: "_default__Namespace", Version: "v1"},
		{ID: "_" + k.prefix + "__Namespace", Version: "v1"},
		{ID: "kube-system_" + victim.Name + "__ConfigMap", Version: "v1"},
		{ID: k.prefix + "_others__ConfigMap", Version: "v1"},
		{ID: k.prefix + "_handmade__ConfigMap", Version: "v1"},
		{ID: k.prefix + "_a__ConfigMap", Version: "v1"}, // a duplicate
	}
	tamper := func() {
		t.Helper()
		s := k.inventorySecret(t, k.prefix)
		inv := k.inventory(t, k.prefix)
		inv.Objects = append(inv.Objects, forged...)
		b, err := json.Marshal(inv)
		if err != nil {
			t.Fatal(err)
		}
		s.Data[apply.InventoryKey] = b
		if _, err := k.typed.CoreV1().Secrets(s.Namespace).Update(k.ctx, s, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	versions := func() map[string]string {
		t.Helper()
		out := map[string]string{}
		for _, ns := range []string{"kube-system", "default", k.prefix} {
			n, err := k.typed.CoreV1().Namespaces().Get(k.ctx, ns, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			out["Namespace/"+ns] = n.ResourceVersion
		}
		cr, err := k.typed.RbacV1().ClusterRoles().Get(k.ctx, "cluster-admin", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		out["ClusterRole/cluster-admin"] = cr.ResourceVersion
		for _, cm := range []struct{ ns, name string }{{"kube-system", victim.Name}, {k.prefix, "others"}, {k.prefix, "handmade"}} {
			o, err := k.typed.CoreV1().ConfigMaps(cm.ns).Get(k.ctx, cm.name, metav1.GetOptions{})
			if err != nil {
				t.Fatalf("ConfigMap %s/%s: %v", cm.ns, cm.name, err)
			}
			out["ConfigMap/"+cm.ns+"/"+cm.name] = o.ResourceVersion
		}
		return out
	}
	check := func(what string, before map[string]string) {
		t.Helper()
		after := versions()
		for obj, rv := range before {
			if after[obj] != rv {
				t.Errorf("%s of the tampered inventory changed %s (resourceVersion %s, then %s)", what, obj, rv, after[obj])
			}
		}
	}

	v1 := k.addon(t, k.prefix, "1", raceV1)
	k.mustApply(t, v1, apply.Options{})
	tamper()
	before := versions()
	if _, err := k.admin.Apply(k.ctx, k.addon(t, k.prefix, "2", raceV2), apply.Options{Timeout: 30 * time.Second}); err != nil {
		t.Fatalf("the upgrade: %v", err)
	}
	check("the upgrade", before)
	if k.exists(t, gvrConfigMap, k.prefix, "b") {
		t.Error("the upgrade left b, which it owned")
	}

	tamper()
	before = versions()
	if _, err := k.admin.Uninstall(k.ctx, k.prefix, apply.UninstallOptions{Timeout: 30 * time.Second, PruneNonEmpty: true}); err != nil {
		t.Fatalf("the uninstall: %v", err)
	}
	check("the uninstall", before)
	if k.exists(t, gvrConfigMap, k.prefix, "a") || k.exists(t, gvrConfigMap, k.prefix, "c") {
		t.Error("the uninstall left what it owned")
	}
}
