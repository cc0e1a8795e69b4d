package apply_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/addonpkg/addonpkg/pkg/apply"
)

// claimA and claimB are two unrelated add-ons whose configs give the
// same name: B holds none of A's objects, so an upgrade of A to B would
// prune all of them.
const (
	claimA = `
apiVersion: v1
kind: ConfigMap
metadata: {name: NS-a1, namespace: default}
data: {v: "1"}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: NS-a2, namespace: default}
data: {v: "1"}
`
	claimB = `
apiVersion: v1
kind: ConfigMap
metadata: {name: NS-b, namespace: default}
data: {v: "1"}
`
)

// claimed is an add-on named as its config names it (FromRendered
// without a name), read from source.
func (k *cluster) claimed(t *testing.T, version, source, yaml string) apply.Addon {
	t.Helper()
	a := k.addon(t, k.prefix, version, yaml)
	a.Source, a.NameFromConfig = source, true
	a.Digest, a.Identity = "", "" // a folder: named by its objects' digest
	return a
}

// An add-on whose config claims the name of an add-on installed from
// another folder is refused before any change, by Apply, its dry-run and
// Diff alike: the installed add-on's objects and inventory are as they
// were. The installed add-on's own folder at a new version upgrades it;
// an installer's name for the add-on replaces it from the other folder
// (pruning A's objects, as asked), after which the other folder is the
// add-on's origin.
func TestNameClaimedFromAnotherOriginRefused(t *testing.T) {
	k := newCluster(t)
	one, two := "/work/one/"+k.prefix, "/work/two/"+k.prefix
	k.mustApply(t, k.claimed(t, "1", one, claimA), apply.Options{})
	before := k.inventorySecret(t, k.prefix)

	b := k.claimed(t, "1", two, claimB)
	for _, opts := range []apply.Options{{}, {DryRun: true}, {Force: true}} {
		cs, err := k.admin.Apply(k.ctx, b, opts)
		var nce *apply.NameClaimError
		if !errors.As(err, &nce) || !errors.Is(err, apply.ErrConflict) || cs != nil {
			t.Fatalf("apply %+v of another folder's add-on of the same name: %v, %v; want a *NameClaimError", opts, cs, err)
		}
		if nce.Addon != k.prefix || nce.Installed != one || nce.Claimant != two {
			t.Errorf("NameClaimError = %+v, want add-on %s, installed from %s, claimed from %s", nce, k.prefix, one, two)
		}
		if msg := err.Error(); strings.Contains(msg, "\n") || !strings.Contains(msg, one) || !strings.Contains(msg, two) {
			t.Errorf("message %q: want one line naming both origins", msg)
		}
	}
	if _, err := k.admin.Diff(k.ctx, b, apply.Options{}); !errors.Is(err, apply.ErrConflict) {
		t.Errorf("diff of the claiming add-on: %v, want the same refusal", err)
	}
	for _, n := range []string{"-a1", "-a2"} {
		if !k.exists(t, gvrConfigMap, "default", k.prefix+n) {
			t.Errorf("the refused apply deleted %s%s", k.prefix, n)
		}
	}
	if k.exists(t, gvrConfigMap, "default", k.prefix+"-b") {
		t.Error("the refused apply created the claimant's ConfigMap")
	}
	if after := k.inventorySecret(t, k.prefix); after.ResourceVersion != before.ResourceVersion {
		t.Errorf("the refused apply wrote the inventory (resourceVersion %s, was %s)", after.ResourceVersion, before.ResourceVersion)
	}

	// The same folder, spelt otherwise, at a new version: an upgrade.
	k.mustApply(t, k.claimed(t, "2", one+"/", strings.ReplaceAll(claimA, `"1"`, `"2"`)), apply.Options{})

	// The installer's own name is the override.
	b.NameFromConfig = false
	k.mustApply(t, b, apply.Options{})
	if k.exists(t, gvrConfigMap, "default", k.prefix+"-a1") || !k.exists(t, gvrConfigMap, "default", k.prefix+"-b") {
		t.Error("the named apply did not replace the add-on")
	}
	if got := k.inventory(t, k.prefix).Source; got != two {
		t.Errorf("the inventory records %q, want %q", got, two)
	}
	k.mustApply(t, k.claimed(t, "2", two, claimB), apply.Options{})
	if _, err := k.admin.Uninstall(k.ctx, k.prefix, apply.UninstallOptions{}); err != nil {
		t.Fatal(err)
	}
}

// A registry add-on's new version from its repository upgrades it; the
// same add-on relocated to a mirror is another origin, refused by the
// config's name once: the installer's name moves it to the mirror, whose
// versions then upgrade it by the config's name. An inventory that
// records no source has no origin to compare, and is upgraded.
func TestNameClaimFromAMirrorIsAOneTimeStep(t *testing.T) {
	k := newCluster(t)
	digest := func(c string) string { return "@sha256:" + strings.Repeat(c, 64) }
	upstream := "registry.example.com/addons/" + k.prefix
	mirror := "mirror.example.com:5000/addons/" + k.prefix
	k.mustApply(t, k.claimed(t, "1", upstream+digest("a"), claimA), apply.Options{})
	k.mustApply(t, k.claimed(t, "2", "oci://"+upstream+":2", claimA), apply.Options{})

	relocated := k.claimed(t, "2", mirror+digest("b"), claimA)
	_, err := k.admin.Apply(k.ctx, relocated, apply.Options{})
	var nce *apply.NameClaimError
	if !errors.As(err, &nce) || nce.Installed != upstream || nce.Claimant != mirror {
		t.Fatalf("apply from the mirror: %v, want a *NameClaimError from %s to %s", err, upstream, mirror)
	}
	relocated.NameFromConfig = false
	k.mustApply(t, relocated, apply.Options{})
	k.mustApply(t, k.claimed(t, "3", mirror+digest("c"), claimA), apply.Options{})

	// No recorded source: nothing to compare.
	none := k.claimed(t, "3", "", claimA)
	none.NameFromConfig = false
	k.mustApply(t, none, apply.Options{})
	k.mustApply(t, k.claimed(t, "4", upstream+digest("d"), claimA), apply.Options{})
	// A claimant that names no source while the installed add-on
	// records one is refused: nothing shows it is the same.
	if _, err := k.admin.Apply(k.ctx, k.claimed(t, "5", "", claimA), apply.Options{}); !errors.As(err, &nce) || nce.Claimant != "" {
		t.Errorf("apply by the config's name without a source: %v, want a *NameClaimError", err)
	}
	// A relative local path, as an older addonpkg recorded an oci:DIR,
	// names no one place: nothing to compare either.
	relative := k.claimed(t, "5", "oci:layout"+digest("e"), claimA)
	relative.NameFromConfig = false
	k.mustApply(t, relative, apply.Options{})
	k.mustApply(t, k.claimed(t, "6", "oci:/srv/layout"+digest("f"), claimA), apply.Options{})
	if names := objectNames(k.inventory(t, k.prefix)); !slices.Equal(names, []string{"default_" + k.prefix + "-a1__ConfigMap", "default_" + k.prefix + "-a2__ConfigMap"}) {
		t.Errorf("inventory lists %v", names)
	}
	if _, err := k.admin.Uninstall(k.ctx, k.prefix, apply.UninstallOptions{}); err != nil {
		t.Fatal(err)
	}
}

func objectNames(inv *apply.Inventory) []string {
	out := ids(inv)
	slices.Sort(out)
	return out
}
