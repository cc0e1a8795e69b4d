package apply_test

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/addonpkg/addonpkg/pkg/apply"
)

const upgradeV1 = `
apiVersion: v1
kind: Namespace
metadata: {name: NS}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: stays, namespace: NS}
data: {v: "1"}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: dropped, namespace: NS}
data: {v: "1"}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: kept
  namespace: NS
  annotations: {addonpkg.io/prune: disabled}
data: {v: "1"}
`

const upgradeV2 = `
apiVersion: v1
kind: Namespace
metadata: {name: NS}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: stays, namespace: NS}
data: {v: "2"}
`

// createForeign makes a ConfigMap no add-on owns.
func (k *cluster) createForeign(t *testing.T, ns, name string) {
	t.Helper()
	_, err := k.typed.CoreV1().ConfigMaps(ns).Create(k.ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Data: map[string]string{"owner": "someone else"},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
}

// An upgrade v1 -> v2 prunes the object v2 dropped, keeps the one
// annotated to be kept and a foreign object in the same namespace; a v3
// that drops the Namespace keeps it while the foreign object is in it.
func TestUpgradePrunesOnlyWhatItOwned(t *testing.T) {
	k := newCluster(t)
	k.mustApply(t, k.addon(t, k.prefix, "1", upgradeV1), apply.Options{})
	k.createForeign(t, k.prefix, "foreign")

	cs := k.mustApply(t, k.addon(t, k.prefix, "2", upgradeV2), apply.Options{Wait: true})
	if k.exists(t, gvrConfigMap, k.prefix, "dropped") {
		t.Errorf("v2 left ConfigMap dropped:\n%s", cs)
	}
	for _, name := range []string{"stays", "kept", "foreign"} {
		if !k.exists(t, gvrConfigMap, k.prefix, name) {
			t.Errorf("v2 deleted ConfigMap %s:\n%s", name, cs)
		}
	}
	actions := map[string]apply.Action{}
	for _, c := range cs.Changes {
		actions[c.Object] = c.Action
	}
	want := map[string]apply.Action{
		"Namespace/" + k.prefix:              apply.Unchanged,
		"ConfigMap/" + k.prefix + "/stays":   apply.Configured,
		"ConfigMap/" + k.prefix + "/dropped": apply.Deleted,
		"ConfigMap/" + k.prefix + "/kept":    apply.Skipped,
	}
	for o, a := range want {
		if actions[o] != a {
			t.Errorf("%s: %q, want %q:\n%s", o, actions[o], a, cs)
		}
	}
	inv := k.inventory(t, k.prefix)
	if got, want := ids(inv), []string{"_" + k.prefix + "__Namespace", k.prefix + "_stays__ConfigMap"}; !slices.Equal(got, want) {
		t.Errorf("inventory = %v, want %v", got, want)
	}

	// v3 holds nothing in the namespace: the Namespace still holds the
	// foreign ConfigMap (and kept), so it stays, and stays listed.
	v3 := k.addon(t, k.prefix, "3", `
apiVersion: v1
kind: ConfigMap
metadata: {name: elsewhere, namespace: default}
`)
	v3.Objects[0].SetName(k.prefix + "-elsewhere")
	cs = k.mustApply(t, v3, apply.Options{})
	if !k.exists(t, gvrNamespace, "", k.prefix) {
		t.Fatalf("v3 deleted a Namespace that holds a foreign object:\n%s", cs)
	}
	var reason string
	for _, c := range cs.Changes {
		if c.Object == "Namespace/"+k.prefix {
			reason = c.Reason
		}
	}
	if !strings.Contains(reason, "ConfigMap/"+k.prefix+"/") {
		t.Errorf("the kept Namespace's reason %q names no object it holds:\n%s", reason, cs)
	}
	if !slices.Contains(ids(k.inventory(t, k.prefix)), "_"+k.prefix+"__Namespace") {
		t.Error("the kept Namespace left the inventory: it would never be pruned once empty")
	}
}

// An add-on's objects that name no namespace stay where it was
// installed: an upgrade from a client whose default namespace is another
// one (another kubeconfig context, no -n) neither moves nor prunes them,
// and the inventory records the namespace. An explicit other Namespace
// moves the add-on: its objects are applied there, the old ones pruned.
func TestUpgradeKeepsTheInstalledNamespace(t *testing.T) {
	k := newCluster(t)
	first, second := k.prefix+"-a", k.prefix+"-b"
	for _, ns := range []string{first, second} {
		if _, err := k.typed.CoreV1().Namespaces().Create(k.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = k.typed.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{}) })
	}
	client := func(ns string) *apply.Client {
		c, err := apply.New(k.env.Admin, apply.ClientOptions{Namespace: ns, PollInterval: 200 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	stream := func(version string) apply.Addon {
		return k.addon(t, k.prefix, version, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {v: \""+version+"\"}\n")
	}
	if _, err := client(first).Apply(k.ctx, stream("1"), apply.Options{}); err != nil {
		t.Fatal(err)
	}
	if inv := k.inventory(t, k.prefix); inv.Namespace != first {
		t.Errorf("inventory namespace %q, want %q", inv.Namespace, first)
	}
	// The default client's namespace is "default": the upgrade stays.
	cs, err := k.admin.Apply(k.ctx, stream("2"), apply.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !k.exists(t, gvrConfigMap, first, "settings") || k.exists(t, gvrConfigMap, "default", "settings") {
		t.Errorf("an upgrade without a namespace moved the add-on:\n%s", cs)
	}
	if cm, err := k.get(gvrConfigMap, first, "settings"); err != nil || cm.Object["data"].(map[string]any)["v"] != "2" {
		t.Errorf("the upgrade did not reach %s/settings: %v", first, err)
	}
	// An explicit other namespace moves it.
	cs, err = client(second).Apply(k.ctx, stream("3"), apply.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if k.exists(t, gvrConfigMap, first, "settings") || !k.exists(t, gvrConfigMap, second, "settings") {
		t.Errorf("an explicit namespace did not move the add-on:\n%s", cs)
	}
	if inv := k.inventory(t, k.prefix); inv.Namespace != second || !slices.Equal(ids(inv), []string{second + "_settings__ConfigMap"}) {
		t.Errorf("after the move the inventory records %q and %v", inv.Namespace, ids(inv))
	}
	if _, err := k.admin.Uninstall(k.ctx, k.prefix, apply.UninstallOptions{}); err != nil {
		t.Fatal(err)
	}
}

// Uninstall removes exactly the inventory's objects, then the inventory:
// a foreign object of the same name and kind elsewhere stays.
func TestUninstallRemovesExactlyTheInventory(t *testing.T) {
	k := newCluster(t)
	a := k.addon(t, k.prefix, "1", crdAddon)
	k.mustApply(t, a, apply.Options{Wait: true})
	k.createForeign(t, "default", "settings-"+k.prefix)

	if _, err := k.admin.Uninstall(k.ctx, a.Name, apply.UninstallOptions{DryRun: true}); err != nil {
		t.Fatal(err)
	}
	if !k.exists(t, gvrConfigMap, k.prefix, "settings") || k.inventory(t, a.Name) == nil {
		t.Fatal("a dry-run uninstall deleted something")
	}

	var stages []apply.Stage
	cs, err := k.admin.Uninstall(k.ctx, a.Name, apply.UninstallOptions{Progress: func(st apply.Stage) { stages = append(stages, st) }})
	if err != nil {
		t.Fatal(err)
	}
	if n := cs.Count(apply.Deleted); n != 4 {
		t.Errorf("deleted %d, want 4:\n%s", n, cs)
	}
	if len(stages) != 2 || stages[0].Name != "deleting" || stages[1].Name != "gone" || stages[0].Addon != a.Name || stages[1].Addon != a.Name || len(stages[0].Changes) != 4 || len(stages[1].Changes) != 4 {
		t.Errorf("progress %+v, want the deleting stage of the 4 deletions before the wait, and gone after it", stages)
	}
	if k.exists(t, gvrNamespace, "", k.prefix) || k.exists(t, gvrCRD, "", "widgets."+k.prefix+".example.com") {
		t.Errorf("uninstall left the Namespace or the CRD:\n%s", cs)
	}
	if k.inventory(t, a.Name) != nil {
		t.Error("uninstall left the inventory")
	}
	if !k.exists(t, gvrConfigMap, "default", "settings-"+k.prefix) {
		t.Error("uninstall deleted a foreign ConfigMap")
	}
	if _, err := k.admin.Uninstall(k.ctx, a.Name, apply.UninstallOptions{}); !errors.Is(err, apply.ErrNotInstalled) {
		t.Errorf("second uninstall: %v, want ErrNotInstalled", err)
	}
}

// UninstallAll goes in the order given, passes over a name that is not
// installed (reporting it), and stops at the first other failure, leaving
// the add-ons after it installed.
func TestUninstallAll(t *testing.T) {
	k := newCluster(t)
	cm := func(name string) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: " + name + ", namespace: default}\n"
	}
	for _, n := range []string{"a", "b", "c"} {
		k.mustApply(t, k.addon(t, k.prefix+"-"+n, "1", cm(k.prefix+"-"+n)), apply.Options{})
	}
	sets, err := k.admin.UninstallAll(k.ctx, []string{k.prefix + "-a", k.prefix + "-none", k.prefix + "-b"}, apply.UninstallOptions{})
	if !errors.Is(err, apply.ErrNotInstalled) || !strings.Contains(err.Error(), k.prefix+"-none") {
		t.Errorf("UninstallAll with a name not installed: %v, want ErrNotInstalled naming it", err)
	}
	if len(sets) != 2 || sets[0].Addon != k.prefix+"-a" || sets[1].Addon != k.prefix+"-b" || sets[0].Count(apply.Deleted) != 1 || sets[1].Count(apply.Deleted) != 1 {
		t.Errorf("UninstallAll change sets %+v, want a's and b's, one deletion each", sets)
	}
	for _, n := range []string{"a", "b"} {
		if k.exists(t, gvrConfigMap, "default", k.prefix+"-"+n) || k.inventory(t, k.prefix+"-"+n) != nil {
			t.Errorf("%s is still installed", n)
		}
	}

	// A corrupt inventory stops the uninstall there: c stays.
	sec := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: apply.InventoryName(k.prefix + "-bad"), Namespace: "kube-system", Labels: map[string]string{apply.LabelInventory: "true"}},
		Data:       map[string][]byte{apply.InventoryKey: []byte("{")},
	}
	if _, err := k.typed.CoreV1().Secrets("kube-system").Create(k.ctx, sec, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = k.typed.CoreV1().Secrets("kube-system").Delete(context.Background(), sec.Name, metav1.DeleteOptions{})
	})
	sets, err = k.admin.UninstallAll(k.ctx, []string{k.prefix + "-bad", k.prefix + "-c"}, apply.UninstallOptions{})
	if !errors.Is(err, apply.ErrCorruptInventory) || !strings.Contains(err.Error(), "add-on 1 of 2") || len(sets) != 0 {
		t.Errorf("UninstallAll after a corrupt inventory: %v, %d change sets; want it to stop at add-on 1 of 2", err, len(sets))
	}
	if !k.exists(t, gvrConfigMap, "default", k.prefix+"-c") {
		t.Error("the add-on after the failure was uninstalled")
	}
	if _, err := k.admin.Uninstall(k.ctx, k.prefix+"-c", apply.UninstallOptions{}); err != nil {
		t.Fatal(err)
	}
}

// Two add-ons claiming one object conflict, named with the owner, and
// the second changes nothing; Force adopts it.
func TestTwoAddonsClaimingOneObjectConflict(t *testing.T) {
	k := newCluster(t)
	first := k.addon(t, k.prefix+"-a", "1", upgradeV2)
	k.mustApply(t, first, apply.Options{})

	second := k.addon(t, k.prefix+"-b", "1", upgradeV2+`
---
apiVersion: v1
kind: ConfigMap
metadata: {name: only-b, namespace: NS}
`)
	_, err := k.admin.Apply(k.ctx, second, apply.Options{})
	var oe *apply.OwnershipError
	if !errors.Is(err, apply.ErrConflict) || !errors.As(err, &oe) {
		t.Fatalf("second add-on: %v, want an OwnershipError", err)
	}
	if oe.Owner != first.Name || !strings.Contains(err.Error(), first.Name) || strings.Contains(err.Error(), "\n") {
		t.Errorf("error %q does not name the owner %s on one line", err, first.Name)
	}
	// Every object the first add-on owns is counted, not only the first
	// met: the user learns what Force would adopt.
	if want := len(first.Objects) - 1; oe.More != want || oe.Others != 0 || !strings.Contains(err.Error(), fmt.Sprintf("and %d more object", want)) || !strings.Contains(err.Error(), fmt.Sprintf("belong to add-on %q", first.Name)) {
		t.Errorf("error %q counts %d more objects (%d of others), want %d, all of %s", err, oe.More, oe.Others, want, first.Name)
	}
	if k.exists(t, gvrConfigMap, k.prefix, "only-b") || k.inventory(t, second.Name) != nil {
		t.Error("the refused add-on changed the cluster")
	}
	// A dry-run's error says it was one: nothing was to change.
	if _, err := k.admin.Diff(k.ctx, second, apply.Options{}); !errors.Is(err, apply.ErrConflict) || !strings.HasPrefix(err.Error(), "dry-run of "+second.Name+": ") {
		t.Errorf("dry-run of the second add-on: %v, want the conflict, said of a dry-run", err)
	}

	k.mustApply(t, second, apply.Options{Force: true})
	u, err := k.get(gvrConfigMap, k.prefix, "stays")
	if err != nil {
		t.Fatal(err)
	}
	if u.GetLabels()[apply.LabelAddon] != second.Name {
		t.Errorf("forced apply left owner %q", u.GetLabels()[apply.LabelAddon])
	}
	// The first add-on's status no longer counts what the second took.
	st, err := k.admin.Status(k.ctx, first.Name)
	if err != nil || len(st) != 1 {
		t.Fatalf("status of %s: %+v, %v", first.Name, st, err)
	}
	if st[0].Ready == st[0].Objects || !slices.Contains(st[0].Unready, "ConfigMap/"+k.prefix+"/stays: owned by add-on "+second.Name) {
		t.Errorf("status of the add-on whose object was adopted: %+v", st[0])
	}
}

// An object another controller keeps applied from its own source (Flux's
// kustomize-controller here, by the labels it writes) is refused, named,
// with nothing changed: the two would take its fields from each other on
// every reconcile. Forced, the add-on adopts it, and its own next apply
// is not refused again, though Flux's labels stay on the object.
func TestObjectOfAnotherControllerRefused(t *testing.T) {
	k := newCluster(t)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: k.prefix + "-fluxed", Namespace: "default", Labels: map[string]string{
		"kustomize.toolkit.fluxcd.io/name": "apps", "kustomize.toolkit.fluxcd.io/namespace": "flux-system"}},
		Data: map[string]string{"v": "flux"}}
	if _, err := k.typed.CoreV1().ConfigMaps("default").Create(k.ctx, cm, metav1.CreateOptions{FieldManager: "kustomize-controller"}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = k.typed.CoreV1().ConfigMaps("default").Delete(context.Background(), cm.Name, metav1.DeleteOptions{})
	})
	a := k.addon(t, k.prefix, "1", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: NS-fluxed, namespace: default}\ndata: {v: addon}\n")
	_, err := k.admin.Apply(k.ctx, a, apply.Options{})
	var oe *apply.OwnershipError
	if !errors.Is(err, apply.ErrConflict) || !errors.As(err, &oe) || oe.Controller != "Flux Kustomization flux-system/apps" {
		t.Fatalf("apply of an object Flux reconciles: %v, want an OwnershipError naming the Kustomization", err)
	}
	if got, _ := k.typed.CoreV1().ConfigMaps("default").Get(k.ctx, cm.Name, metav1.GetOptions{}); got.Data["v"] != "flux" || k.inventory(t, a.Name) != nil {
		t.Errorf("the refused apply changed the cluster: %v", got.Data)
	}
	k.mustApply(t, a, apply.Options{Force: true})
	if cs := k.mustApply(t, a, apply.Options{}); cs.Changed() {
		t.Errorf("the adopted object's next apply changed something:\n%s", cs)
	}
	if _, err := k.admin.Uninstall(k.ctx, a.Name, apply.UninstallOptions{}); err != nil {
		t.Fatal(err)
	}
}

// An add-on holding an inventory Secret (another add-on's, forced, or its
// own) is refused before any change: applied, it would rewrite the record
// of what an add-on owns, and its own made every later apply conflict
// with itself.
func TestAddonHoldingAnInventoryRefused(t *testing.T) {
	k := newCluster(t)
	victim := k.addon(t, k.prefix+"-victim", "1", killV1)
	k.mustApply(t, victim, apply.Options{})
	before := k.inventorySecret(t, victim.Name).ResourceVersion
	typed := "type: " + string(apply.InventorySecretType)
	for _, tc := range []struct {
		name, secret, namespace, typ string
		opts                         apply.ClientOptions
		want                         string // the Secret the refusal names
	}{
		{"another's", apply.InventoryName(victim.Name), "namespace: " + apply.DefaultInventoryNamespace, typed, apply.ClientOptions{}, ""},
		{"its own", apply.InventoryName(k.prefix + "-evil"), "namespace: " + apply.DefaultInventoryNamespace, typed, apply.ClientOptions{}, ""},
		{"in the client's namespace", apply.InventoryName(victim.Name), "", typed, apply.ClientOptions{Namespace: apply.DefaultInventoryNamespace}, ""},
		// Applied by a client whose inventories are elsewhere, it still
		// forges the default namespace's, which other clients read.
		{"in the default namespace", apply.InventoryName(victim.Name), "namespace: " + apply.DefaultInventoryNamespace, "", apply.ClientOptions{InventoryNamespace: k.prefix}, ""},
		// Of the inventory type under any name and namespace: an
		// inventory namespace another client uses.
		{"of the inventory type", "innocent", "namespace: NS", typed, apply.ClientOptions{}, "Secret/NS/innocent"},
		// Labelled one, under any name: status and list read every Secret
		// so labelled in their namespace as an inventory, and reported
		// this one corrupt (exit 1) for as long as the add-on was there.
		{"labelled an inventory", "innocent", "namespace: " + apply.DefaultInventoryNamespace + "\n  labels: {" + apply.LabelInventory + `: "true"}`, "", apply.ClientOptions{}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			evil := k.addon(t, k.prefix+"-evil", "1", `
apiVersion: v1
kind: Secret
metadata:
  name: `+tc.secret+`
  `+tc.namespace+`
`+tc.typ+`
stringData:
  `+apply.InventoryKey+`: '{"objects":[]}'
`)
			evilClient, err := apply.New(k.env.Admin, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			want := cmp.Or(k.stream(tc.want), "Secret/kube-system/"+tc.secret)
			_, err = evilClient.Apply(k.ctx, evil, apply.Options{Force: true})
			if !errors.Is(err, apply.ErrInvalid) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "inventor") {
				t.Fatalf("apply = %v, want ErrInvalid naming the inventory Secret %s", err, want)
			}
			if records, _ := evilClient.List(k.ctx); slices.ContainsFunc(records, func(r apply.Record) bool { return r.Name == evil.Name }) || k.inventory(t, evil.Name) != nil {
				t.Error("the refused add-on wrote an inventory")
			}
			if rv := k.inventorySecret(t, victim.Name).ResourceVersion; rv != before {
				t.Errorf("the victim's inventory changed (resourceVersion %s, was %s)", rv, before)
			}
		})
	}
}

// A restricted user is refused by the pre-flight, every missing
// permission listed, and nothing is created: of one object by its name,
// of several (two ConfigMaps) once for their resource.
func TestPreflightRefusesRestrictedUser(t *testing.T) {
	k := newCluster(t)
	restricted, err := apply.New(k.env.Restricted, apply.ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	a := k.addon(t, k.prefix, "1", crdAddon+"\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: second, namespace: NS}\n")
	_, err = restricted.Apply(k.ctx, a, apply.Options{})
	var pe *apply.PreflightError
	if !errors.Is(err, apply.ErrForbidden) || !errors.As(err, &pe) {
		t.Fatalf("restricted apply: %v, want a PreflightError", err)
	}
	var got []string
	for _, p := range pe.Missing {
		got = append(got, p.String())
	}
	for _, want := range []string{
		"create namespaces", "patch namespaces/" + k.prefix,
		"create customresourcedefinitions.apiextensions.k8s.io",
		"create configmaps in " + k.prefix, "patch configmaps in " + k.prefix,
		"create widgets." + k.prefix + ".example.com in " + k.prefix,
		"patch widgets." + k.prefix + ".example.com/w1 in " + k.prefix,
		"create secrets in kube-system", "update secrets/addonpkg-" + k.prefix + " in kube-system",
	} {
		if !slices.Contains(got, want) {
			t.Errorf("missing permissions %v lack %q", got, want)
		}
	}
	if pe.User != "restricted" || strings.Contains(err.Error(), "\n") {
		t.Errorf("error %q: want one line naming user restricted", err)
	}
	if k.exists(t, gvrNamespace, "", k.prefix) || k.inventory(t, a.Name) != nil {
		t.Error("the refused apply changed the cluster")
	}
}

// A Role or ClusterRole granting what the user does not hold (RBAC
// refuses it unless the user may escalate, which no access review of the
// add-on's objects asks) is refused before any change, though every
// permission the pre-flight asks for is granted: a Role was refused in
// its stage, after the stage before it made the add-on's Namespace.
func TestEscalatingRoleRefusedBeforeAnyChange(t *testing.T) {
	k := newCluster(t)
	restricted, err := apply.New(k.env.Restricted, apply.ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	verbs := []string{"get", "list", "watch", "create", "update", "patch", "delete"} // no escalate, no bind
	grant := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: k.prefix + "-installer"}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"namespaces", "configmaps", "secrets"}, Verbs: verbs},
		{APIGroups: []string{"rbac.authorization.k8s.io"}, Resources: []string{"roles", "clusterroles"}, Verbs: verbs},
	}}
	if _, err := k.typed.RbacV1().ClusterRoles().Create(k.ctx, grant, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: grant.Name},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: grant.Name},
		Subjects: []rbacv1.Subject{{Kind: "User", Name: "restricted", APIGroup: "rbac.authorization.k8s.io"}}}
	if _, err := k.typed.RbacV1().ClusterRoleBindings().Create(k.ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx := context.Background()
		_ = k.typed.RbacV1().ClusterRoleBindings().Delete(ctx, grant.Name, metav1.DeleteOptions{})
		_ = k.typed.RbacV1().ClusterRoles().Delete(ctx, grant.Name, metav1.DeleteOptions{})
	})
	const namespace = "apiVersion: v1\nkind: Namespace\nmetadata: {name: NS}\n---\n"
	const podReader = "rules: [{apiGroups: [\"\"], resources: [pods], verbs: [list]}]\n"
	for _, tc := range []struct{ name, role, object string }{
		// In the Namespace's own stage, which ssa dry-runs whole first.
		{"a ClusterRole", "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: NS-pod-reader}\n", "ClusterRole/" + k.prefix + "-pod-reader"},
		// Applied in a stage after the Namespace's: dry-run first.
		{"a Role", "apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata: {name: NS-pod-reader, namespace: default}\n", "Role/default/" + k.prefix + "-pod-reader"},
	} {
		a := k.addon(t, k.prefix, "1", namespace+tc.role+podReader)
		// The grant may not be seen at first.
		untilRBACSettles(func() bool {
			_, err = restricted.Apply(k.ctx, a, apply.Options{})
			return err == nil || strings.Contains(err.Error(), tc.object)
		})
		var pe *apply.PreflightError
		if !errors.Is(err, apply.ErrForbidden) || errors.As(err, &pe) || !strings.Contains(err.Error(), tc.object) {
			t.Fatalf("%s: apply of an escalating role: %v, want ErrForbidden naming %s, past the pre-flight", tc.name, err, tc.object)
		}
		if k.exists(t, gvrNamespace, "", k.prefix) || k.inventory(t, a.Name) != nil {
			t.Errorf("%s: the refused apply changed the cluster", tc.name)
		}
	}
}

// A CRD the add-on dropped is kept while custom resources the add-on did
// not make remain, and deleted with PruneNonEmpty.
func TestPruneKeepsCRDThatHoldsObjects(t *testing.T) {
	k := newCluster(t)
	k.mustApply(t, k.addon(t, k.prefix, "1", crdAddon), apply.Options{Wait: true})
	foreign := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": k.prefix + ".example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "foreign", "namespace": k.prefix},
	}}
	if _, err := k.dyn.Resource(k.gvrWidget()).Namespace(k.prefix).Create(k.ctx, foreign, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	v2 := k.addon(t, k.prefix, "2", upgradeV2)
	cs := k.mustApply(t, v2, apply.Options{})
	crd := "CustomResourceDefinition/widgets." + k.prefix + ".example.com"
	var reason string
	for _, c := range cs.Changes {
		if c.Object == crd {
			reason = c.Reason
		}
	}
	if !k.exists(t, gvrCRD, "", "widgets."+k.prefix+".example.com") || !strings.Contains(reason, "Widget/"+k.prefix+"/foreign") {
		t.Fatalf("the CRD holding a foreign Widget: reason %q:\n%s", reason, cs)
	}
	if k.exists(t, k.gvrWidget(), k.prefix, "w1") {
		t.Errorf("v2 left the add-on's own Widget:\n%s", cs)
	}
	// Waited for: without Wait the apply asks for the deletion and
	// returns, and the CRD is still there, terminating.
	cs = k.mustApply(t, v2, apply.Options{PruneNonEmpty: true, Wait: true})
	if k.exists(t, gvrCRD, "", "widgets."+k.prefix+".example.com") {
		t.Errorf("PruneNonEmpty kept the CRD:\n%s", cs)
	}
}

// TestCorruptInventoryReported: an inventory Secret that does not
// decode (edited by hand, or by another tool) does not hide the other
// add-ons from Status and List: it is a row with PhaseInvalid and its
// reason, and the error beside the list names it. Applying or
// uninstalling that add-on is refused until the Secret is fixed or
// deleted.
func TestCorruptInventoryReported(t *testing.T) {
	k := newCluster(t)
	ns := k.prefix + "-inventories"
	if _, err := k.typed.CoreV1().Namespaces().Create(k.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = k.typed.CoreV1().Namespaces().Delete(k.ctx, ns, metav1.DeleteOptions{}) })
	c, err := apply.New(k.env.Admin, apply.ClientOptions{InventoryNamespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	good := k.addon(t, k.prefix+"-good", "1", killV1)
	if _, err := c.Apply(k.ctx, good, apply.Options{}); err != nil {
		t.Fatal(err)
	}
	corrupt := map[string]string{
		k.prefix + "-notjson":  "{not json",
		k.prefix + "-badentry": `{"name":"` + k.prefix + `-badentry","phase":"applied","objects":[{"id":"no underscores here","version":"v1"}]}`,
		k.prefix + "-renamed":  `{"name":"` + good.Name + `","phase":"applied","objects":[]}`,
		k.prefix + "-nophase":  `{"name":"` + k.prefix + `-nophase","objects":[]}`,
		k.prefix + "-badns":    `{"name":"` + k.prefix + `-badns","phase":"applied","namespace":"../kube-system","objects":[]}`,
		// An entry's name may only say which name its ID stands for.
		k.prefix + "-badname": `{"name":"` + k.prefix + `-badname","phase":"applied","objects":[{"id":"_a__b_rbac.authorization.k8s.io_ClusterRole","v":"v1","name":"kube-system-admin"}]}`,
		// Valid, but not of the inventory type: an add-on's own Secret,
		// which no inventory may be read from.
		k.prefix + "-untyped": `{"name":"` + k.prefix + `-untyped","phase":"applied","objects":[]}`,
	}
	for name, data := range corrupt {
		s := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: apply.InventoryName(name), Namespace: ns, Labels: map[string]string{apply.LabelInventory: "true"}},
			Type:       apply.InventorySecretType,
			Data:       map[string][]byte{apply.InventoryKey: []byte(data)},
		}
		if strings.HasSuffix(name, "-untyped") {
			s.Type = corev1.SecretTypeOpaque
		}
		if _, err := k.typed.CoreV1().Secrets(ns).Create(k.ctx, s, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	st, err := c.Status(k.ctx)
	if !errors.Is(err, apply.ErrCorruptInventory) || strings.Contains(err.Error(), apply.InventoryName(good.Name)+":") {
		t.Errorf("status error = %v, want ErrCorruptInventory naming only the corrupt inventories", err)
	}
	if len(st) != 1+len(corrupt) {
		t.Fatalf("status = %+v, want the good add-on and both corrupt ones", st)
	}
	for _, s := range st {
		if s.Name == good.Name {
			if s.Phase != apply.PhaseApplied || s.Ready != s.Objects || s.Objects == 0 || s.Error != "" {
				t.Errorf("the good add-on: %+v, want applied and ready", s)
			}
			continue
		}
		if _, ok := corrupt[s.Name]; !ok || s.Phase != apply.PhaseInvalid || s.Error == "" || strings.Contains(s.Error, "\n") {
			t.Errorf("row %+v, want a corrupt inventory with phase invalid and a one-line reason", s)
		}
		if !strings.Contains(err.Error(), apply.InventoryName(s.Name)) {
			t.Errorf("status error %q does not name %s", err, apply.InventoryName(s.Name))
		}
	}

	// Named, each is read the same way, and a name not installed is an
	// error beside the others.
	if st, err := c.Status(k.ctx, good.Name); err != nil || len(st) != 1 {
		t.Errorf("status %s = %+v, %v", good.Name, st, err)
	}
	if st, err := c.Status(k.ctx, good.Name, k.prefix+"-never"); !errors.Is(err, apply.ErrNotInstalled) || len(st) != 1 || st[0].Name != good.Name {
		t.Errorf("status of an installed add-on and one that is not = %+v, %v, want the first and ErrNotInstalled", st, err)
	}
	if st, err := c.Status(k.ctx, k.prefix+"-notjson"); !errors.Is(err, apply.ErrCorruptInventory) || len(st) != 1 || st[0].Phase != apply.PhaseInvalid {
		t.Errorf("status of the corrupt one = %+v, %v, want its row and ErrCorruptInventory", st, err)
	}

	recs, err := c.List(k.ctx)
	if !errors.Is(err, apply.ErrCorruptInventory) || len(recs) != 1+len(corrupt) {
		t.Errorf("list = %+v, %v, want every inventory and ErrCorruptInventory", recs, err)
	}

	again := k.addon(t, k.prefix+"-notjson", "1", killV1)
	if _, err := c.Apply(k.ctx, again, apply.Options{}); !errors.Is(err, apply.ErrCorruptInventory) || !strings.Contains(err.Error(), apply.InventoryName(again.Name)) {
		t.Errorf("apply over a corrupt inventory = %v, want ErrCorruptInventory naming its Secret", err)
	} else {
		t.Log(err)
	}
	if _, err := c.Uninstall(k.ctx, k.prefix+"-badentry", apply.UninstallOptions{}); !errors.Is(err, apply.ErrCorruptInventory) {
		t.Errorf("uninstall of a corrupt inventory = %v, want ErrCorruptInventory", err)
	}
}

// TestApplyRefusedBeforeAnyChangeLeavesNoRecord: an apply whose objects
// the API server refuses at the dry-run, before anything changed, takes
// its pending inventory back: a first install leaves none (status does
// not list an add-on that was never installed), an upgrade leaves the
// previous one as it was. One that changed something first keeps its
// pending record, which lists what it made.
func TestApplyRefusedBeforeAnyChangeLeavesNoRecord(t *testing.T) {
	k := newCluster(t)
	const refused = `
apiVersion: v1
kind: ConfigMap
metadata: {name: NS-fine, namespace: default}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: Not_A_Name, namespace: default}
`
	first := k.addon(t, k.prefix+"-first", "1", refused)
	if _, err := k.admin.Apply(k.ctx, first, apply.Options{}); !errors.Is(err, apply.ErrRejected) {
		t.Fatalf("apply = %v, want ErrRejected", err)
	}
	if s := k.inventorySecret(t, first.Name); s != nil {
		t.Errorf("a first install refused before any change left an inventory: %s", s.Data[apply.InventoryKey])
	}
	if k.exists(t, corev1.SchemeGroupVersion.WithResource("configmaps"), "default", k.prefix+"-fine") {
		t.Error("the refused add-on's other object was created")
	}

	up := k.addon(t, k.prefix+"-up", "1", killV1)
	k.mustApply(t, up, apply.Options{})
	before := k.inventorySecret(t, up.Name)
	v2 := k.addon(t, up.Name, "2", killV1+"---\n"+refused)
	if _, err := k.admin.Apply(k.ctx, v2, apply.Options{}); !errors.Is(err, apply.ErrRejected) {
		t.Fatalf("upgrade = %v, want ErrRejected", err)
	}
	after := k.inventorySecret(t, up.Name)
	if string(after.Data[apply.InventoryKey]) != string(before.Data[apply.InventoryKey]) {
		t.Errorf("a refused upgrade changed the inventory:\n%s\nwas\n%s", after.Data[apply.InventoryKey], before.Data[apply.InventoryKey])
	}

	// The Namespace is made (and waited for) before the refused object is
	// tried: that apply changed the cluster, and its record says so.
	made := k.addon(t, k.prefix+"-made", "1", `
apiVersion: v1
kind: Namespace
metadata: {name: NS-made}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: Not_A_Name, namespace: NS-made}
`)
	if _, err := k.admin.Apply(k.ctx, made, apply.Options{}); !errors.Is(err, apply.ErrRejected) {
		t.Fatalf("apply = %v, want ErrRejected", err)
	}
	inv := k.inventory(t, made.Name)
	if inv == nil || inv.Phase != apply.PhasePending || len(inv.Objects) != 2 {
		t.Fatalf("after an apply that made a Namespace and failed: inventory %+v, want pending with both objects", inv)
	}
	if _, err := k.admin.Uninstall(k.ctx, made.Name, apply.UninstallOptions{}); err != nil {
		t.Fatal(err)
	}
}

// TestConcurrentAppliesOfOneAddon: two applies of one add-on at once
// (two pipelines, an installer Job and a laptop) are kept apart by the
// inventory's resourceVersion: one fails with ErrConflict (also an
// apply that had no inventory to write: it checks that none changed
// while it ran), the inventory records the one that succeeded, and
// every object the add-on's label marks in the cluster is in it, so the
// next apply or uninstall reaches it.
func TestConcurrentAppliesOfOneAddon(t *testing.T) {
	k := newCluster(t)
	v1 := k.addon(t, k.prefix, "1", killV1)
	v2 := k.addon(t, k.prefix, "2", killV2)
	k.mustApply(t, v1, apply.Options{})
	for round := range 6 {
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i, a := range []apply.Addon{v1, v2} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[i] = k.admin.Apply(k.ctx, a, apply.Options{})
			}()
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil && !errors.Is(err, apply.ErrConflict) {
				t.Fatalf("round %d: %v, want success or ErrConflict", round, err)
			}
		}
		if errs[0] != nil && errs[1] != nil {
			t.Fatalf("round %d: both failed: %v; %v", round, errs[0], errs[1])
		}
		inv := k.inventory(t, k.prefix)
		// The loser may have made an object again that the winner pruned:
		// it adds it to the winner's record, pending, for the next apply.
		lost := errs[0] != nil || errs[1] != nil
		if won := map[string]bool{"1": errs[0] == nil, "2": errs[1] == nil}; !won[inv.Version] || (inv.Phase != apply.PhaseApplied && !(lost && inv.Phase == apply.PhasePending)) {
			t.Errorf("round %d: the inventory records version %s %s, which is not an apply that succeeded (%v; %v)", round, inv.Version, inv.Phase, errs[0], errs[1])
		}
		listed := map[string]bool{}
		for _, id := range ids(inv) {
			listed[id] = true
		}
		l, err := k.dyn.Resource(gvrConfigMap).Namespace(k.prefix).List(k.ctx, metav1.ListOptions{LabelSelector: apply.LabelAddon + "=" + k.prefix})
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range l.Items {
			if id := k.prefix + "_" + o.GetName() + "__ConfigMap"; !listed[id] {
				t.Errorf("round %d: ConfigMap %s carries the add-on's label but its inventory (%s) does not list it", round, o.GetName(), inv.Phase)
			}
		}
	}
	if _, err := k.admin.Uninstall(k.ctx, k.prefix, apply.UninstallOptions{}); err != nil {
		t.Fatal(err)
	}
	l, err := k.dyn.Resource(gvrConfigMap).Namespace(k.prefix).List(k.ctx, metav1.ListOptions{LabelSelector: apply.LabelAddon + "=" + k.prefix})
	if err == nil && len(l.Items) > 0 {
		t.Errorf("after the uninstall %d of the add-on's ConfigMaps are left", len(l.Items))
	}
}

// An add-on that holds no object is refused, as kubectl apply refuses
// nothing to apply: an upgrade to it deleted everything the installed
// add-on of that name owned, with exit 0 (a folder of READMEs, a
// template that renders nothing).
func TestApplyOfNothingRefused(t *testing.T) {
	k := newCluster(t)
	k.mustApply(t, k.addon(t, k.prefix, "1", killV1), apply.Options{})
	empty := apply.Addon{Name: k.prefix, Version: "2"}
	for _, dry := range []bool{false, true} {
		if _, err := k.admin.Apply(k.ctx, empty, apply.Options{DryRun: dry}); !errors.Is(err, apply.ErrInvalid) || !strings.Contains(err.Error(), "holds no object") {
			t.Errorf("apply (dry-run %v) of an add-on with no object: %v, want ErrInvalid", dry, err)
		}
	}
	if !k.exists(t, gvrConfigMap, k.prefix, "a") || len(k.inventory(t, k.prefix).Objects) != 3 {
		t.Error("the refused apply changed the installed add-on")
	}
	if _, err := k.admin.Uninstall(k.ctx, k.prefix, apply.UninstallOptions{PruneNonEmpty: true}); err != nil {
		t.Fatal(err)
	}
}

// The owner label names an add-on, and add-ons of one name may be
// installed under two inventory namespaces: each owns only what its own
// inventory made (its ApplySet). An apply of the name under another
// inventory namespace took the objects over without Force, and an
// inventory there that listed them (copied, or written by whoever may
// write Secrets in that namespace) pruned and uninstalled them.
func TestSameNameUnderAnotherInventoryNamespace(t *testing.T) {
	k := newCluster(t)
	first := k.addon(t, k.prefix+"-a", "1", upgradeV2)
	k.mustApply(t, first, apply.Options{})
	invNS := k.prefix + "-inv"
	if _, err := k.typed.CoreV1().Namespaces().Create(k.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: invNS}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	other, err := apply.New(k.env.Admin, apply.ClientOptions{InventoryNamespace: invNS, PollInterval: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}

	// An apply of the name there is refused, naming the other inventory.
	second := k.addon(t, first.Name, "2", `
apiVersion: v1
kind: ConfigMap
metadata: {name: stays, namespace: NS}
data: {v: "taken"}
`)
	_, err = other.Apply(k.ctx, second, apply.Options{})
	var oe *apply.OwnershipError
	if !errors.Is(err, apply.ErrConflict) || !errors.As(err, &oe) || !strings.Contains(err.Error(), "another inventory") {
		t.Fatalf("apply under %s: %v, want an OwnershipError naming another inventory", invNS, err)
	}
	if u, err := k.get(gvrConfigMap, k.prefix, "stays"); err != nil || u.Object["data"].(map[string]any)["v"] != "2" {
		t.Fatalf("the refused apply changed the object: %v %v", u, err)
	}

	// An inventory there that lists the first add-on's objects deletes
	// none of them.
	sec := k.inventorySecret(t, first.Name).DeepCopy()
	sec.ObjectMeta = metav1.ObjectMeta{Name: sec.Name, Namespace: invNS, Labels: sec.Labels}
	if _, err := k.typed.CoreV1().Secrets(invNS).Create(k.ctx, sec, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Its status there counts none of them, and says whose they are.
	st, err := other.Status(k.ctx, first.Name)
	if err != nil || len(st) != 1 || st[0].Ready != 0 || len(st[0].UnreadyObjects) != 2 {
		t.Fatalf("status under %s: %+v, %v, want no object ready", invNS, st, err)
	}
	for _, u := range st[0].UnreadyObjects {
		if u.Status != apply.OwnedByOther || u.Owner != first.Name || !u.Elsewhere {
			t.Errorf("status under %s: %#v, want OwnedByOther, %s of another inventory namespace", invNS, u, first.Name)
		}
	}
	cs, err := other.Uninstall(k.ctx, first.Name, apply.UninstallOptions{Timeout: 20 * time.Second})
	if err != nil {
		t.Fatalf("uninstall under %s: %v", invNS, err)
	}
	for _, ch := range cs.Changes {
		if ch.Action == apply.Deleted {
			t.Errorf("deleted %s", ch.Object)
		}
	}
	if !k.exists(t, gvrConfigMap, k.prefix, "stays") || !k.exists(t, gvrNamespace, "", k.prefix) {
		t.Fatal("the other inventory's uninstall deleted the first add-on's objects")
	}

	// An object whose ApplySet label was taken off is not deleted either,
	// and the reason says that, not "another inventory namespace".
	patch := []byte(`{"metadata":{"labels":{"` + apply.LabelApplySetPartOf + `":null}}}`)
	if _, err := k.typed.CoreV1().ConfigMaps(k.prefix).Patch(k.ctx, "stays", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	st, err = k.admin.Status(k.ctx, first.Name)
	if err != nil || len(st) != 1 || len(st[0].UnreadyObjects) != 1 {
		t.Fatalf("status: %+v, %v, want one object not ready", st, err)
	}
	if u := st[0].UnreadyObjects[0]; u.Name != "stays" || u.Status != apply.NotOwned || u.Message != "no "+apply.LabelApplySetPartOf+" label" {
		t.Errorf("status of stays without its ApplySet label: %#v, want NotOwned, naming the label", u)
	}
	dry, err := k.admin.Uninstall(k.ctx, first.Name, apply.UninstallOptions{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, ch := range dry.Changes {
		if strings.HasSuffix(ch.Object, "/stays") && (ch.Action != apply.Skipped || !strings.Contains(ch.Reason, "does not carry this add-on's "+apply.LabelApplySetPartOf)) {
			t.Errorf("stays without its ApplySet label: %s %q", ch.Action, ch.Reason)
		}
	}
}

// An add-on's Secret that names no type, applied over an inventory in an
// inventory namespace another client uses, is refused, forced or not:
// server-side apply leaves the Secret's type as it is, so neither the
// name (not this client's inventory namespace) nor the type (none in
// the manifest) refused it, and a forced apply rewrote another client's
// record of what its add-on owns.
func TestAddonHoldingAnUntypedInventoryRefused(t *testing.T) {
	k := newCluster(t)
	team := k.prefix
	if _, err := k.typed.CoreV1().Namespaces().Create(k.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: team}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	teamClient, err := apply.New(k.env.Admin, apply.ClientOptions{InventoryNamespace: team})
	if err != nil {
		t.Fatal(err)
	}
	victim := k.addon(t, k.prefix+"-victim", "1", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: victim, namespace: NS}\n")
	if _, err := teamClient.Apply(k.ctx, victim, apply.Options{}); err != nil {
		t.Fatal(err)
	}
	read := func() *corev1.Secret {
		t.Helper()
		s, err := k.typed.CoreV1().Secrets(team).Get(k.ctx, apply.InventoryName(victim.Name), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	before := read().ResourceVersion
	evil := k.addon(t, k.prefix+"-evil", "1", `
apiVersion: v1
kind: Secret
metadata: {name: `+apply.InventoryName(victim.Name)+`, namespace: NS}
stringData:
  `+apply.InventoryKey+`: '{"name":"`+victim.Name+`","phase":"applied","objects":[]}'
`)
	for _, force := range []bool{false, true} {
		_, err := k.admin.Apply(k.ctx, evil, apply.Options{Force: force})
		if !errors.Is(err, apply.ErrInvalid) {
			t.Errorf("Force %v: apply = %v, want ErrInvalid: the Secret is an inventory", force, err)
		}
	}
	if s := read(); s.ResourceVersion != before {
		t.Errorf("the other client's inventory was rewritten: %s", s.Data[apply.InventoryKey])
	}
	_, _ = k.admin.Uninstall(k.ctx, evil.Name, apply.UninstallOptions{})
	if _, err := teamClient.Uninstall(k.ctx, victim.Name, apply.UninstallOptions{}); err != nil {
		t.Fatal(err)
	}
}

// Helm's record of a release (the Secret, or ConfigMap, that Helm's
// storage names sh.helm.release.v1.NAME.vN) is refused before any
// change, forced or not: Helm's objects are taken over, not its record
// of them. An add-on's rewrote the release's history, and uninstalling
// the add-on deleted it: helm forgot the release.
func TestAddonHoldingAHelmReleaseRefused(t *testing.T) {
	k := newCluster(t)
	name := "sh.helm.release.v1." + k.prefix + ".v1"
	_, err := k.typed.CoreV1().Secrets("default").Create(k.ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"owner": "helm", "name": k.prefix, "version": "1"}},
		Type:       "helm.sh/release.v1", Data: map[string][]byte{"release": []byte("helm's")},
	}, metav1.CreateOptions{FieldManager: "helm"})
	if err != nil {
		t.Fatal(err)
	}
	for kind, typ := range map[string]string{"Secret": "type: helm.sh/release.v1\n", "ConfigMap": ""} {
		a := k.addon(t, k.prefix, "1", "apiVersion: v1\nkind: "+kind+"\nmetadata: {name: "+name+", namespace: default}\n"+typ+"data: {release: Zm9yZ2Vk}\n")
		_, err := k.admin.Apply(k.ctx, a, apply.Options{Force: true})
		if !errors.Is(err, apply.ErrInvalid) || !strings.Contains(err.Error(), kind+"/default/"+name) || !strings.Contains(err.Error(), "Helm") {
			t.Errorf("apply of a %s named as a Helm release: %v, want ErrInvalid naming it", kind, err)
		}
	}
	s, err := k.typed.CoreV1().Secrets("default").Get(k.ctx, name, metav1.GetOptions{})
	if err != nil || string(s.Data["release"]) != "helm's" || s.Labels[apply.LabelAddon] != "" {
		t.Errorf("Helm's release record changed: %v %v", s, err)
	}
	if k.inventory(t, k.prefix) != nil || k.exists(t, gvrConfigMap, "default", name) {
		t.Error("the refused add-on left an inventory or a ConfigMap")
	}
}
