package apply_test

import (
	"errors"
	"testing"
	"time"

	"github.com/addonpkg/addonpkg/pkg/apply"
)

// Two add-ons that both declare one Namespace conflict, as two that
// declare any one object do: an object has one owner (LabelAddon and the
// ApplySet part-of label hold one value each, as kubectl's ApplySets
// do), and the owner's prune or uninstall would delete the Namespace and
// everything in it, the other add-on's objects too. (Flux's
// kustomize-controller does not refuse: the last Kustomization to apply
// takes the Namespace's labels, and its removal deletes the Namespace
// with the other's objects.) The second add-on is refused before any
// change, naming both; the way to share is for one add-on to hold the
// Namespace and the other only to put objects in it: uninstalling the
// owner then keeps the Namespace while it holds the other's objects,
// and a later uninstall finishes.
func TestTwoAddonsDeclaringOneNamespace(t *testing.T) {
	k := newCluster(t)
	owner := k.addon(t, k.prefix+"-a", "1", "apiVersion: v1\nkind: Namespace\nmetadata: {name: NS}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: NS}\n")
	k.mustApply(t, owner, apply.Options{})

	second := k.addon(t, k.prefix+"-b", "1", "apiVersion: v1\nkind: Namespace\nmetadata: {name: NS}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: b, namespace: NS}\n")
	_, err := k.admin.Apply(k.ctx, second, apply.Options{})
	var oe *apply.OwnershipError
	if !errors.As(err, &oe) || !errors.Is(err, apply.ErrConflict) || oe.Object != "Namespace/"+k.prefix || oe.Owner != owner.Name || oe.Addon != second.Name || oe.More != 0 {
		t.Fatalf("the second add-on declaring the Namespace: %v (%+v), want an OwnershipError naming Namespace/%s, owner %s, claimant %s", err, oe, k.prefix, owner.Name, second.Name)
	}
	oneLine(t, err, "Namespace/"+k.prefix, `"`+owner.Name+`"`, `"`+second.Name+`"`)
	if k.exists(t, gvrConfigMap, k.prefix, "b") || k.inventory(t, second.Name) != nil {
		t.Fatal("the refused add-on changed the cluster")
	}

	// Without the Namespace, it only puts objects in it.
	user := k.addon(t, k.prefix+"-b", "1", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b, namespace: NS}\n")
	k.mustApply(t, user, apply.Options{})
	if _, err := k.admin.Uninstall(k.ctx, owner.Name, apply.UninstallOptions{Timeout: time.Minute}); err != nil {
		t.Fatalf("uninstall the owner: %v", err)
	}
	if !k.exists(t, gvrNamespace, "", k.prefix) || !k.exists(t, gvrConfigMap, k.prefix, "b") || k.exists(t, gvrConfigMap, k.prefix, "a") {
		t.Fatal("uninstalling the Namespace's owner deleted it, or the other add-on's object in it, or left its own")
	}
	if inv := k.inventory(t, owner.Name); inv == nil || len(inv.Objects) != 1 || inv.Objects[0].ID != "_"+k.prefix+"__Namespace" {
		t.Fatalf("the owner's inventory after its uninstall: %+v, want the Namespace it kept, alone", inv)
	}
	if _, err := k.admin.Uninstall(k.ctx, user.Name, apply.UninstallOptions{Timeout: time.Minute}); err != nil {
		t.Fatal(err)
	}
	if _, err := k.admin.Uninstall(k.ctx, owner.Name, apply.UninstallOptions{Timeout: time.Minute}); err != nil {
		t.Fatalf("the owner's second uninstall: %v", err)
	}
	if k.inventory(t, owner.Name) != nil {
		t.Error("the owner's second uninstall left its inventory")
	}
}
