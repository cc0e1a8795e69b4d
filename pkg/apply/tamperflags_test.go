package apply_test

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/addonpkg/addonpkg/pkg/apply"
)

// The inventory's per-entry flags are the record's word, and whoever may
// edit the inventory Secret can set them: an entry marked not ignored
// (ignored: false) for an object the add-on never made, in another
// namespace or cluster-scoped, is still deleted only if the live object
// carries the add-on's owner label and its ApplySet; an entry of the
// add-on's own marked ignored only keeps it (a forged flag can keep,
// never delete). A record that is not JSON is ErrCorruptInventory before
// any change. Checked by this review (round 4); nothing needed fixing.
func TestTamperedInventoryFlags(t *testing.T) {
	k := newCluster(t)
	k.mustApply(t, k.addon(t, k.prefix+"-ns", "1", raceNS), apply.Options{})
	victim := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: k.prefix + "-flagged", Namespace: "kube-system"}}
	if _, err := k.typed.CoreV1().ConfigMaps("kube-system").Create(k.ctx, victim, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = k.typed.CoreV1().ConfigMaps("kube-system").Delete(k.ctx, victim.Name, metav1.DeleteOptions{})
	})
	k.mustApply(t, k.addon(t, k.prefix, "1", raceV1), apply.Options{})

	write := func(data []byte) {
		t.Helper()
		s := k.inventorySecret(t, k.prefix)
		s.Data[apply.InventoryKey] = data
		if _, err := k.typed.CoreV1().Secrets(s.Namespace).Update(k.ctx, s, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	rv := func(ns, name string) string {
		t.Helper()
		o, err := k.typed.CoreV1().ConfigMaps(ns).Get(k.ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("ConfigMap %s/%s: %v", ns, name, err)
		}
		return o.ResourceVersion
	}

	// Not JSON: refused before any change.
	good := k.inventorySecret(t, k.prefix).Data[apply.InventoryKey]
	before := rv(k.prefix, "a")
	write([]byte(`{"name":`))
	if _, err := k.admin.Apply(k.ctx, k.addon(t, k.prefix, "2", raceV2), apply.Options{Timeout: 30 * time.Second}); !errors.Is(err, apply.ErrCorruptInventory) {
		t.Fatalf("apply over a record that is not JSON: %v, want ErrCorruptInventory", err)
	}
	if got := rv(k.prefix, "a"); got != before || k.exists(t, gvrConfigMap, k.prefix, "c") {
		t.Errorf("apply over a corrupt record changed the cluster (a: resourceVersion %s, then %s)", before, got)
	}
	write(good)

	// Flags forged both ways.
	inv := k.inventory(t, k.prefix)
	for i := range inv.Objects {
		if inv.Objects[i].ID == k.prefix+"_b__ConfigMap" {
			inv.Objects[i].Ignored = true
		}
	}
	inv.Objects = append(inv.Objects,
		apply.InventoryEntry{ID: "kube-system_" + victim.Name + "__ConfigMap", Version: "v1", Ignored: false},
		apply.InventoryEntry{ID: "_cluster-admin_rbac.authorization.k8s.io_ClusterRole", Version: "v1", Ignored: false})
	b, err := json.Marshal(inv)
	if err != nil {
		t.Fatal(err)
	}
	write(b)
	victimRV := rv("kube-system", victim.Name)
	cr, err := k.typed.RbacV1().ClusterRoles().Get(k.ctx, "cluster-admin", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := k.admin.Apply(k.ctx, k.addon(t, k.prefix, "2", raceV2), apply.Options{Timeout: 30 * time.Second}); err != nil {
		t.Fatalf("the upgrade: %v", err)
	}
	if got := rv("kube-system", victim.Name); got != victimRV {
		t.Errorf("the upgrade changed kube-system/%s, which the add-on never made (resourceVersion %s, then %s)", victim.Name, victimRV, got)
	}
	if after, err := k.typed.RbacV1().ClusterRoles().Get(k.ctx, "cluster-admin", metav1.GetOptions{}); err != nil || after.ResourceVersion != cr.ResourceVersion {
		t.Errorf("the upgrade changed ClusterRole cluster-admin: %v", err)
	}
	if !k.exists(t, gvrConfigMap, k.prefix, "b") {
		t.Error("the upgrade deleted b, which its record (forged) marks ignored: a forged flag may keep, never delete")
	}
}
