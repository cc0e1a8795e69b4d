package apply_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/addonpkg/addonpkg/pkg/apply"
)

// An add-on with more objects than its inventory Secret can record (a
// Secret holds 1 MiB; thousands of objects with long names) is refused
// before any change, with an error that says so: the API server's own
// answer ("data: Too long") named neither the objects nor what to do.
func TestInventoryTooLargeChangesNothing(t *testing.T) {
	k := newCluster(t)
	k.mustApply(t, k.addon(t, k.prefix+"-ns", "1", raceNS), apply.Options{})
	var b strings.Builder
	for i := range 3400 {
		fmt.Fprintf(&b, "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s-%05d, namespace: NS}\n", strings.Repeat("x", 240), i)
	}
	// The dry-run says what the apply would: it is refused.
	for _, opts := range []apply.Options{{DryRun: true}, {}} {
		_, err := k.admin.Apply(k.ctx, k.addon(t, k.prefix, "1", b.String()), opts)
		var tl *apply.InventoryTooLargeError
		if !errors.Is(err, apply.ErrInvalid) || !errors.As(err, &tl) || tl.Objects != 3400 || tl.Limit != 1<<20 || tl.Bytes <= tl.Limit || tl.Installed != 0 {
			t.Fatalf("apply (dry-run %v) of an add-on too large to record = %v (%+v), want an InventoryTooLargeError of 3400 objects, matching ErrInvalid", opts.DryRun, err, tl)
		}
		oneLine(t, err, "3400 objects", "split the add-on")
	}
	if k.inventorySecret(t, k.prefix) != nil {
		t.Error("the refused apply left an inventory")
	}
	l, err := k.dyn.Resource(gvrConfigMap).Namespace(k.prefix).List(k.ctx, metav1.ListOptions{LabelSelector: apply.LabelAddon + "=" + k.prefix})
	if err != nil || len(l.Items) > 0 {
		t.Errorf("the refused apply made objects: %v, %d", err, len(l.Items))
	}
}

// An upgrade whose objects fit a record alone, but not beside the
// installed ones that its pending record also lists (so that an apply
// cut short is finished by the next one), is refused before any change
// with an InventoryTooLargeError that counts the installed objects and
// says to uninstall first: "split the add-on" was no fix for an add-on
// that fits. The installed record is written here as an apply of 1700
// objects leaves it (the objects themselves are not needed: a prune of
// one already gone is done).
func TestInventoryTooLargeForAnUpgrade(t *testing.T) {
	k := newCluster(t)
	k.mustApply(t, k.addon(t, k.prefix+"-ns", "1", raceNS), apply.Options{})
	name := func(tag string, i int) string { return fmt.Sprintf("%s-%s%05d", strings.Repeat("x", 240), tag, i) }
	const n = 1700
	inv := apply.Inventory{Record: apply.Record{Name: k.prefix, Version: "1", Phase: apply.PhaseApplied}}
	var b strings.Builder
	for i := range n {
		inv.Objects = append(inv.Objects, apply.InventoryEntry{ID: k.prefix + "_" + name("a", i) + "__ConfigMap", Version: "v1"})
		fmt.Fprintf(&b, "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s, namespace: NS}\n", name("b", i))
	}
	data, err := json.Marshal(inv)
	if err != nil {
		t.Fatal(err)
	}
	sec := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: apply.InventoryName(k.prefix), Namespace: apply.DefaultInventoryNamespace,
			Labels: map[string]string{apply.LabelInventory: "true", apply.LabelAddon: k.prefix}},
		Type: apply.InventorySecretType,
		Data: map[string][]byte{apply.InventoryKey: data},
	}
	if sec, err = k.typed.CoreV1().Secrets(sec.Namespace).Create(k.ctx, sec, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = k.typed.CoreV1().Secrets(sec.Namespace).Delete(context.Background(), sec.Name, metav1.DeleteOptions{})
	})

	for _, opts := range []apply.Options{{DryRun: true}, {}} {
		_, err = k.admin.Apply(k.ctx, k.addon(t, k.prefix, "2", b.String()), opts)
		var tl *apply.InventoryTooLargeError
		if !errors.Is(err, apply.ErrInvalid) || !errors.As(err, &tl) || tl.Installed != n || tl.Objects != 2*n || tl.Addon != k.prefix {
			t.Fatalf("upgrade (dry-run %v) too large to record beside the installed objects = %v (%+v), want an InventoryTooLargeError counting %d installed", opts.DryRun, err, tl, n)
		}
		oneLine(t, err, "uninstall "+k.prefix+" first")
	}
	if now := k.inventorySecret(t, k.prefix); now == nil || now.ResourceVersion != sec.ResourceVersion {
		t.Error("the refused upgrade changed the installed record")
	}
	l, err := k.dyn.Resource(gvrConfigMap).Namespace(k.prefix).List(k.ctx, metav1.ListOptions{LabelSelector: apply.LabelAddon + "=" + k.prefix})
	if err != nil || len(l.Items) > 0 {
		t.Errorf("the refused upgrade made objects: %v, %d", err, len(l.Items))
	}
}
