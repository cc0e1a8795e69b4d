package apply_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/addonpkg/addonpkg/pkg/apply"
)

// widgetsV1alpha1 serves its custom resources as v1alpha1 only.
var widgetsV1alpha1 = `
apiVersion: v1
kind: Namespace
metadata: {name: NS}
---
` + crdYAML("Widget", crdVersion{"v1alpha1", true, true}) + `---
apiVersion: GROUP/v1alpha1
kind: Widget
metadata: {name: kept, namespace: NS}
---
apiVersion: GROUP/v1alpha1
kind: Widget
metadata: {name: dropped, namespace: NS}
`

// widgetsV1 moves the CRD to v1 and stops serving v1alpha1 (which stays
// listed: the cluster stored objects in it), and drops one Widget.
var widgetsV1 = `
apiVersion: v1
kind: Namespace
metadata: {name: NS}
---
` + crdYAML("Widget", crdVersion{"v1alpha1", false, false}, crdVersion{"v1", true, true}) + `---
apiVersion: GROUP/v1
kind: Widget
metadata: {name: kept, namespace: NS}
`

// An upgrade whose CRD stops serving the version the previous inventory
// recorded its custom resources in prunes the one it dropped: it is
// deleted through a version the CRD serves after the upgrade, not
// reported deleted while it stays (the API server answers 404 for an
// unserved version, which the delete took for gone), and the one kept
// moves to the new version in the inventory. The upgrade runs in a new
// client, as the command does.
func TestUpgradeThatStopsServingACRDVersionPrunes(t *testing.T) {
	k := newCluster(t)
	k.mustApply(t, k.addon(t, k.prefix, "1", widgetsV1alpha1), apply.Options{Wait: true, Timeout: time.Minute})
	fresh, err := apply.New(k.env.Admin, apply.ClientOptions{PollInterval: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	k.upgradeWidgetsToV1(t, fresh)
}

// The same upgrade, through an API server whose discovery lags behind
// the CRD's change, as a loaded one's does (its discovery documents are
// remade after the CRD is written, asynchronously: tens of milliseconds
// on an idle machine, more under load). The client that looked at
// discovery right after the CRD changed learned the old versions again:
// the readiness wait read Widget kept in v1alpha1, which is no longer
// served, so the wait saw it NotFound until it timed out (the error it
// then gave was its last read's, as often as not client-go's "client rate
// limiter Wait returned an error: rate: Wait(n=1) would exceed context
// deadline"), and prune took the 404 of deleting Widget dropped in
// v1alpha1 for its being gone. Apply now waits until discovery serves
// what the changed CRD does before it looks.
func TestUpgradeThatStopsServingACRDVersionWhileDiscoveryLags(t *testing.T) {
	k := newCluster(t)
	k.mustApply(t, k.addon(t, k.prefix, "1", widgetsV1alpha1), apply.Options{Wait: true, Timeout: time.Minute})
	// 3 s: longer than any lag seen here, so that the client cannot
	// step past it by chance; the wait is bounded by Options.Timeout.
	lag := k.laggingDiscovery(t, "widgets."+k.prefix+".example.com", 3*time.Second)
	k.upgradeWidgetsToV1(t, k.faultyClient(t, lag))
}

// Discovery that never catches up with the CRD's change is a timeout of
// the definitions' wait, bounded by Options.Timeout, naming the CRD:
// nothing of the custom resources is applied through a version the API
// server no longer serves.
func TestDiscoveryBehindTheCRDIsATimeout(t *testing.T) {
	k := newCluster(t)
	k.mustApply(t, k.addon(t, k.prefix, "1", widgetsV1alpha1), apply.Options{Wait: true, Timeout: time.Minute})
	t.Cleanup(func() {
		// The CRD too, which holds the Widgets when they are judged: it
		// stores v1 now, which the next run's v1alpha1-only CRD could
		// not drop (-count=2).
		_, _ = k.admin.Uninstall(context.Background(), k.prefix, apply.UninstallOptions{PruneNonEmpty: true, Timeout: time.Minute})
	})
	lagging := k.faultyClient(t, k.laggingDiscovery(t, "widgets."+k.prefix+".example.com", time.Hour))
	start := time.Now()
	_, err := lagging.Apply(k.ctx, k.addon(t, k.prefix, "2", widgetsV1), apply.Options{Timeout: 2 * time.Second})
	var we *apply.WaitError
	if !errors.Is(err, apply.ErrTimeout) || !errors.As(err, &we) || len(we.Statuses) != 1 {
		t.Fatalf("apply while discovery serves the CRD's old versions: %v, want a *WaitError naming the CRD, matching ErrTimeout", err)
	}
	if st := we.Statuses[0]; st.Kind != "CustomResourceDefinition" || st.Name != "widgets."+k.prefix+".example.com" || st.Status != apply.InProgress || !strings.Contains(st.Message, "version v1 ") {
		t.Errorf("the CRD's status: %+v, want InProgress, saying discovery does not serve v1", st)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("the apply took %s with a timeout of 2s", d)
	}
	v1 := schema.GroupVersionResource{Group: k.prefix + ".example.com", Version: "v1", Resource: "widgets"}
	if !k.exists(t, v1, k.prefix, "dropped") {
		t.Error("the apply that timed out pruned Widget dropped")
	}
}

// upgradeWidgetsToV1 upgrades the add-on of widgetsV1alpha1 to widgetsV1
// through c and checks the prune, the inventory and the uninstall.
func (k *cluster) upgradeWidgetsToV1(t *testing.T, c *apply.Client) {
	t.Helper()
	cs, err := c.Apply(k.ctx, k.addon(t, k.prefix, "2", widgetsV1), apply.Options{Wait: true, Timeout: time.Minute})
	if err != nil {
		t.Fatalf("upgrade: %v", err)
	}
	v1 := schema.GroupVersionResource{Group: k.prefix + ".example.com", Version: "v1", Resource: "widgets"}
	if k.exists(t, v1, k.prefix, "dropped") {
		t.Errorf("the upgrade left Widget dropped, which it no longer holds:\n%s", cs)
	}
	if !k.exists(t, v1, k.prefix, "kept") {
		t.Errorf("the upgrade deleted Widget kept:\n%s", cs)
	}
	for _, e := range k.inventory(t, k.prefix).Objects {
		if e.ID == k.prefix+"_kept_"+k.prefix+".example.com_Widget" && e.Version != "v1" {
			t.Errorf("inventory records Widget kept as %s, want v1", e.Version)
		}
	}
	if _, err := c.Uninstall(k.ctx, k.prefix, apply.UninstallOptions{Timeout: time.Minute}); err != nil {
		t.Fatal(err)
	}
}

// RBAC names are path segments: the API server takes any character but
// "/" and "%", terminal escapes included, from anyone who may create a
// Role in a namespace. A Namespace prune keeps because it holds such a
// Role is kept with a reason that names it as everything else is named
// (describe): on one line, without the escapes, so `addonpkg apply`'s
// table cannot drive the terminal of whoever runs it.
func TestKeptReasonNamesWithoutEscapes(t *testing.T) {
	k := newCluster(t)
	const evil = "\x1b]0;pwned\x07\u009b2J"
	k.mustApply(t, k.addon(t, k.prefix, "1", killV1), apply.Options{})
	_, err := k.typed.RbacV1().Roles(k.prefix).Create(k.ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "tenant" + evil}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	v2 := k.addon(t, k.prefix, "2", `
apiVersion: v1
kind: ConfigMap
metadata: {name: NS-elsewhere, namespace: default}
`)
	cs := k.mustApply(t, v2, apply.Options{})
	t.Cleanup(func() {
		_, _ = k.admin.Uninstall(context.Background(), v2.Name, apply.UninstallOptions{PruneNonEmpty: true})
	})
	var reason string
	for _, c := range cs.Changes {
		if c.Object == "Namespace/"+k.prefix {
			reason = c.Reason
		}
	}
	if !strings.Contains(reason, "Role/"+k.prefix+"/tenant") {
		t.Fatalf("the kept Namespace's reason %q does not name the Role it holds:\n%s", reason, cs)
	}
	if strings.ContainsFunc(reason, func(r rune) bool { return r < 0x20 || (r >= 0x7f && r <= 0x9f) }) || strings.ContainsAny(cs.String(), "\x1b\x07\u009b") {
		t.Errorf("the change set carries terminal escapes: reason %q", reason)
	}
}

// A Namespace prune would delete is kept while it holds another's object,
// also when the objects being deleted with it fill more than one page of
// the list that looks (it asks for 100 at a time): the first page alone
// held nothing but the add-on's own, and the Namespace went, with the
// foreign ConfigMap on the next page.
func TestPruneKeepsNamespaceHoldingObjectsPastAPage(t *testing.T) {
	k := newCluster(t)
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: Namespace\nmetadata: {name: NS}\n")
	for i := range 101 {
		fmt.Fprintf(&b, "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: a%03d, namespace: NS}\n", i)
	}
	k.mustApply(t, k.addon(t, k.prefix, "1", b.String()), apply.Options{})
	k.createForeign(t, k.prefix, "zzz")

	v2 := k.addon(t, k.prefix, "2", `
apiVersion: v1
kind: ConfigMap
metadata: {name: NS-elsewhere, namespace: default}
`)
	cs := k.mustApply(t, v2, apply.Options{})
	t.Cleanup(func() {
		_, _ = k.admin.Uninstall(context.Background(), v2.Name, apply.UninstallOptions{PruneNonEmpty: true})
	})
	ns, err := k.typed.CoreV1().Namespaces().Get(k.ctx, k.prefix, metav1.GetOptions{})
	if err != nil || ns.DeletionTimestamp != nil || !k.exists(t, gvrConfigMap, k.prefix, "zzz") {
		t.Fatalf("prune deleted the Namespace that holds a foreign ConfigMap (get: %v):\n%s", err, cs)
	}
	if k.exists(t, gvrConfigMap, k.prefix, "a100") {
		t.Errorf("prune left the add-on's ConfigMap a100:\n%s", cs)
	}
	for _, c := range cs.Changes {
		if c.Object == "Namespace/"+k.prefix && (c.Action != apply.Skipped || !strings.Contains(c.Reason, "ConfigMap/"+k.prefix+"/zzz")) {
			t.Errorf("the Namespace: %s %q, want skipped naming ConfigMap zzz", c.Action, c.Reason)
		}
	}
}

// A tenant who may do only what the pre-flight listed, in its own
// namespace (a Role, its inventory there too), installs an add-on of
// namespaced objects into that existing namespace: reading the Namespace
// itself, which nothing the apply does needs and the pre-flight does not
// ask for, is no reason to refuse it. It was, with the API server's own
// "forbidden" for the Namespace, after a pre-flight that found nothing
// missing.
func TestTenantWithThePreflightsRoleInstalls(t *testing.T) {
	k := newCluster(t)
	if _, err := k.typed.CoreV1().Namespaces().Create(k.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: k.prefix}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = k.typed.CoreV1().Namespaces().Delete(context.Background(), k.prefix, metav1.DeleteOptions{})
	})
	tenant, err := apply.New(k.env.Restricted, apply.ClientOptions{Namespace: k.prefix, InventoryNamespace: k.prefix, PollInterval: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	a := k.addon(t, k.prefix, "1", `
apiVersion: v1
kind: ConfigMap
metadata: {name: settings}
data: {k: v}
`)
	_, err = tenant.Apply(k.ctx, a, apply.Options{})
	var pe *apply.PreflightError
	if !errors.As(err, &pe) {
		t.Fatalf("apply before any grant: %v, want a PreflightError", err)
	}
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "installer", Namespace: k.prefix}}
	for _, p := range pe.Missing {
		if p.Namespace != k.prefix {
			t.Fatalf("the pre-flight asks for %s, outside the tenant's namespace", p)
		}
		role.Rules = append(role.Rules, rbacv1.PolicyRule{APIGroups: []string{p.Group}, Resources: []string{p.Resource}, Verbs: []string{p.Verb}})
	}
	if _, err := k.typed.RbacV1().Roles(k.prefix).Create(k.ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err = k.typed.RbacV1().RoleBindings(k.prefix).Create(k.ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "installer", Namespace: k.prefix},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "installer"},
		Subjects:   []rbacv1.Subject{{Kind: "User", Name: "restricted", APIGroup: "rbac.authorization.k8s.io"}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	untilRBACSettles(func() bool {
		_, err = tenant.Apply(k.ctx, a, apply.Options{})
		return err == nil || !errors.Is(err, apply.ErrForbidden)
	})
	if err != nil {
		t.Fatalf("apply with the role the pre-flight asked for: %v", err)
	}
	if !k.exists(t, gvrConfigMap, k.prefix, "settings") {
		t.Error("the tenant's apply created no ConfigMap")
	}
	c, err := apply.New(k.env.Admin, apply.ClientOptions{InventoryNamespace: k.prefix})
	if err != nil {
		t.Fatal(err)
	}
	if recs, err := c.List(k.ctx); err != nil || len(recs) != 1 || recs[0].Phase != apply.PhaseApplied {
		t.Errorf("the tenant's inventory: %+v, %v, want one, applied", recs, err)
	}
}

// An add-on's custom resources recorded in a version their CRD (another
// add-on's, or the cluster's) no longer serves are read for Status in the
// version served now: they were reported NotFound while they were there.
func TestStatusReadsAVersionTheCRDServesNow(t *testing.T) {
	k := newCluster(t)
	var crd, crs []string
	for _, doc := range strings.Split(widgetsV1alpha1, "\n---\n") {
		if strings.Contains(doc, "kind: Widget\n") {
			crs = append(crs, doc)
		} else {
			crd = append(crd, doc)
		}
	}
	k.mustApply(t, k.addon(t, k.prefix+"-crd", "1", strings.Join(crd, "\n---\n")), apply.Options{Wait: true, Timeout: time.Minute})
	k.mustApply(t, k.addon(t, k.prefix, "1", strings.Join(crs, "\n---\n")), apply.Options{Wait: true, Timeout: time.Minute})
	var moved []string
	for _, doc := range strings.Split(widgetsV1, "\n---\n") {
		if !strings.Contains(doc, "kind: Widget\n") {
			moved = append(moved, doc)
		}
	}
	k.mustApply(t, k.addon(t, k.prefix+"-crd", "2", strings.Join(moved, "\n---\n")), apply.Options{Wait: true, Timeout: time.Minute})

	fresh, err := apply.New(k.env.Admin, apply.ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	st, err := fresh.Status(k.ctx, k.prefix)
	if err != nil {
		t.Fatal(err)
	}
	if len(st) != 1 || st[0].Objects != 2 || st[0].Ready != 2 {
		t.Errorf("status = %+v, want both Widgets ready", st)
	}
}

// addonpkg.io/prune=disabled keeps an object as ssa's delete reads it, and
// as Flux users write its own: as a label too, in any case. Prune read
// only the annotation, exactly: it asked ssa to delete the object, ssa
// kept it, and prune waited for it to be gone until the timeout, on
// every apply after.
func TestPruneDisabledAsFluxReadsIt(t *testing.T) {
	k := newCluster(t)
	v1 := k.addon(t, k.prefix, "1", upgradeV2+`
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: by-label
  namespace: NS
  labels: {addonpkg.io/prune: disabled}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: by-case
  namespace: NS
  annotations: {addonpkg.io/prune: Disabled}
`)
	k.mustApply(t, v1, apply.Options{})
	v2 := k.addon(t, k.prefix, "2", upgradeV2)
	if diff, err := k.admin.Diff(k.ctx, v2, apply.Options{}); err != nil || diff.Count(apply.Deleted) != 0 {
		t.Errorf("diff: %v, want nothing deleted:\n%s", err, diff)
	}
	cs, err := k.admin.Apply(k.ctx, v2, apply.Options{Timeout: 10 * time.Second})
	if err != nil {
		t.Fatalf("upgrade: %v", err)
	}
	for _, name := range []string{"by-label", "by-case"} {
		if !k.exists(t, gvrConfigMap, k.prefix, name) {
			t.Errorf("prune deleted ConfigMap %s:\n%s", name, cs)
		}
	}
	for _, c := range cs.Changes {
		if strings.HasSuffix(c.Object, "/by-label") || strings.HasSuffix(c.Object, "/by-case") {
			if c.Action != apply.Skipped || !strings.Contains(c.Reason, "kept") {
				t.Errorf("%s: %s %q, want skipped, kept", c.Object, c.Action, c.Reason)
			}
		}
	}
	if _, err := k.admin.Uninstall(k.ctx, v2.Name, apply.UninstallOptions{Timeout: 10 * time.Second}); err != nil {
		t.Fatal(err)
	}
}

// Uninstall leaves an object annotated addonpkg.io/prune=disabled, and one
// another add-on took over (Force): so it keeps their Namespace too,
// though the Namespace is the add-on's. Both counted among the objects
// being deleted, so the Namespace was deleted, and they with it. Diff and
// a dry-run uninstall say so (they said the Namespace would be deleted).
func TestUninstallKeepsTheNamespaceOfWhatItLeaves(t *testing.T) {
	k := newCluster(t)
	a := k.addon(t, k.prefix, "1", upgradeV1)
	k.mustApply(t, a, apply.Options{})
	other := k.addon(t, k.prefix+"-other", "1", `
apiVersion: v1
kind: ConfigMap
metadata: {name: stays, namespace: NS}
data: {v: "other"}
`)
	k.mustApply(t, other, apply.Options{Force: true})

	// What a dry-run says of the Namespace is what is done: kept. Both
	// said it would be deleted.
	elsewhere := k.addon(t, a.Name, "2", `
apiVersion: v1
kind: ConfigMap
metadata: {name: NS-elsewhere, namespace: default}
`)
	diff, err := k.admin.Diff(k.ctx, elsewhere, apply.Options{})
	if err != nil {
		t.Fatal(err)
	}
	dry, err := k.admin.Uninstall(k.ctx, a.Name, apply.UninstallOptions{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	for what, cs := range map[string]*apply.ChangeSet{"diff": diff, "dry-run uninstall": dry} {
		for _, c := range cs.Changes {
			if c.Object == "Namespace/"+k.prefix && (c.Action != apply.Skipped || !strings.Contains(c.Reason, "ConfigMap/"+k.prefix+"/")) {
				t.Errorf("%s: the Namespace %s %q, want skipped, naming a ConfigMap it holds:\n%s", what, c.Action, c.Reason, cs)
			}
		}
	}

	cs, err := k.admin.Uninstall(k.ctx, a.Name, apply.UninstallOptions{Timeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ns, err := k.typed.CoreV1().Namespaces().Get(k.ctx, k.prefix, metav1.GetOptions{})
	if err != nil || ns.DeletionTimestamp != nil {
		t.Fatalf("uninstall deleted the Namespace of what it leaves (get: %v):\n%s", err, cs)
	}
	// The uninstall lists what it did in the dry-run's order, reverse
	// apply order: the Namespace it keeps was listed ahead of every
	// deletion.
	if !slices.Equal(objectsOf(dry), objectsOf(cs)) {
		t.Errorf("the uninstall lists its changes in another order than its dry-run:\n%s\ndry-run:\n%s", cs, dry)
	}
	for _, name := range []string{"kept", "stays"} {
		if !k.exists(t, gvrConfigMap, k.prefix, name) {
			t.Errorf("ConfigMap %s is gone:\n%s", name, cs)
		}
	}
	if k.exists(t, gvrConfigMap, k.prefix, "dropped") {
		t.Errorf("ConfigMap dropped is left:\n%s", cs)
	}
	inv := k.inventory(t, a.Name)
	if inv == nil || !slices.Equal(ids(inv), []string{"_" + k.prefix + "__Namespace"}) {
		t.Errorf("inventory %+v, want the kept Namespace alone", inv)
	}
	if _, err := k.admin.Uninstall(k.ctx, other.Name, apply.UninstallOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := k.admin.Uninstall(k.ctx, a.Name, apply.UninstallOptions{PruneNonEmpty: true, Timeout: 20 * time.Second}); err != nil {
		t.Fatal(err)
	}
}

// An RBAC name may hold "__", which the inventory's ID format reads back
// as ':' (it writes ':' so): the entry records the name, so Status reads
// the ClusterRole, an upgrade that drops it prunes it, and Uninstall
// deletes it. It was left behind, reported by no one, the inventory gone.
func TestRBACNameWithDoubleUnderscore(t *testing.T) {
	k := newCluster(t)
	const roles = `
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: NS__reader}
rules: [{apiGroups: [""], resources: [configmaps], verbs: [get]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: NS__writer}
rules: [{apiGroups: [""], resources: [configmaps], verbs: [update]}]
`
	k.mustApply(t, k.addon(t, k.prefix, "1", roles), apply.Options{})
	gvr := schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"}
	if st, err := k.admin.Status(k.ctx, k.prefix); err != nil || len(st) != 1 || st[0].Ready != 2 {
		t.Errorf("status = %+v, %v, want both ClusterRoles ready", st, err)
	}
	cs := k.mustApply(t, k.addon(t, k.prefix, "2", strings.SplitN(roles, "---", 2)[0]), apply.Options{Timeout: 20 * time.Second})
	if k.exists(t, gvr, "", k.prefix+"__writer") {
		t.Errorf("the upgrade left the ClusterRole it dropped:\n%s", cs)
	}
	cs, err := k.admin.Uninstall(k.ctx, k.prefix, apply.UninstallOptions{Timeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if k.exists(t, gvr, "", k.prefix+"__reader") || cs.Count(apply.Deleted) != 1 {
		t.Errorf("uninstall left the ClusterRole:\n%s", cs)
	}
}

// The ID format writes ':' as "__", so NS:reader and NS__reader share an
// ID; the entry's name tells them apart. An add-on may hold both, and an
// upgrade from one to the other prunes the one it drops (it was neither
// pruned nor kept in the inventory, left behind with the add-on's label).
func TestRBACNamesSharingAnID(t *testing.T) {
	k := newCluster(t)
	const colon = `
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: "NS:reader"}
rules: [{apiGroups: [""], resources: [configmaps], verbs: [get]}]
`
	const underscores = `
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: NS__reader}
rules: [{apiGroups: [""], resources: [configmaps], verbs: [list]}]
`
	gvr := schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"}
	k.mustApply(t, k.addon(t, k.prefix, "1", underscores), apply.Options{})
	cs := k.mustApply(t, k.addon(t, k.prefix, "2", colon), apply.Options{Timeout: 20 * time.Second})
	if k.exists(t, gvr, "", k.prefix+"__reader") {
		t.Errorf("the upgrade to %s:reader left %s__reader behind:\n%s", k.prefix, k.prefix, cs)
	}
	k.mustApply(t, k.addon(t, k.prefix, "3", colon+"---"+underscores), apply.Options{})
	if st, err := k.admin.Status(k.ctx, k.prefix); err != nil || len(st) != 1 || st[0].Objects != 2 || st[0].Ready != 2 {
		t.Errorf("status = %+v, %v, want both ClusterRoles listed and ready", st, err)
	}
	cs, err := k.admin.Uninstall(k.ctx, k.prefix, apply.UninstallOptions{Timeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if k.exists(t, gvr, "", k.prefix+":reader") || k.exists(t, gvr, "", k.prefix+"__reader") || cs.Count(apply.Deleted) != 2 {
		t.Errorf("uninstall left a ClusterRole:\n%s", cs)
	}
}

// The add-on that owns a CRD cannot take another add-on's custom resource
// without Force by naming it in a version its CRD upgrade adds: the
// resource exists, served in the old version, and is read there for the
// ownership check. It was not read at all (its version was not served
// yet), and the upgrade adopted it silently.
func TestNewCRDVersionDoesNotBypassOwnership(t *testing.T) {
	k := newCluster(t)
	var crd, crs []string
	for _, doc := range strings.Split(widgetsV1alpha1, "\n---\n") {
		if strings.Contains(doc, "kind: Widget\n") {
			crs = append(crs, doc)
		} else {
			crd = append(crd, doc)
		}
	}
	k.mustApply(t, k.addon(t, k.prefix+"-crd", "1", strings.Join(crd, "\n---\n")), apply.Options{Wait: true, Timeout: time.Minute})
	k.mustApply(t, k.addon(t, k.prefix+"-owner", "1", strings.Join(crs, "\n---\n")), apply.Options{})

	_, err := k.admin.Apply(k.ctx, k.addon(t, k.prefix+"-crd", "2", widgetsV1), apply.Options{})
	var oe *apply.OwnershipError
	if !errors.As(err, &oe) || oe.Owner != k.prefix+"-owner" {
		t.Fatalf("upgrade naming another's Widget in the new version: %v, want an OwnershipError naming %s-owner", err, k.prefix)
	}
	w, err := k.get(schema.GroupVersionResource{Group: k.prefix + ".example.com", Version: "v1alpha1", Resource: "widgets"}, k.prefix, "kept")
	if err != nil {
		t.Fatal(err)
	}
	if owner := w.GetLabels()[apply.LabelAddon]; owner != k.prefix+"-owner" {
		t.Errorf("the Widget is now owned by %q", owner)
	}
}

// A name that is not installed, uninstalled or asked about, suggests the
// installed add-ons that look like it (a typo), as a store name does.
func TestNotInstalledSuggestsClosest(t *testing.T) {
	k := newCluster(t)
	a := k.addon(t, k.prefix, "1", `
apiVersion: v1
kind: ConfigMap
metadata: {name: c, namespace: default}
`)
	k.mustApply(t, a, apply.Options{})
	defer k.admin.Uninstall(k.ctx, a.Name, apply.UninstallOptions{})
	typo := k.prefix[:len(k.prefix)-1]
	_, err := k.admin.Uninstall(k.ctx, typo, apply.UninstallOptions{})
	if !errors.Is(err, apply.ErrNotInstalled) || !strings.HasSuffix(err.Error(), "; did you mean "+k.prefix+"?") {
		t.Errorf("uninstall %s: %v, want not installed, suggesting %s", typo, err, k.prefix)
	}
	_, err = k.admin.Status(k.ctx, typo)
	if !errors.Is(err, apply.ErrNotInstalled) || !strings.HasSuffix(err.Error(), "; did you mean "+k.prefix+"?") {
		t.Errorf("status %s: %v, want not installed, suggesting %s", typo, err, k.prefix)
	}
	if _, err := k.admin.Uninstall(k.ctx, "zzz-nothing-like-it", apply.UninstallOptions{}); err == nil || strings.Contains(err.Error(), "did you mean") {
		t.Errorf("uninstall of a name like none: %v, want no suggestion", err)
	}
}

// Two ClusterRoles whose IDs collide (NS:reader and NS__reader) are
// told apart in the change set too: under Recreate, the one created new
// beside the other, which was already there, is said created, not
// recreated, whichever of the two comes first.
func TestRecreatedTellsSharedIDsApart(t *testing.T) {
	k := newCluster(t)
	role := func(name string) string {
		return "\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: \"" + name + "\"}\nrules: [{apiGroups: [\"\"], resources: [configmaps], verbs: [get]}]\n"
	}
	for i, first := range []string{":", "__"} {
		other := map[string]string{":": "__", "__": ":"}[first]
		name := fmt.Sprintf("%s-%d", k.prefix, i)
		k.mustApply(t, k.addon(t, name, "1", role("NS"+first+"reader"+fmt.Sprint(i))), apply.Options{})
		cs := k.mustApply(t, k.addon(t, name, "2", role("NS"+first+"reader"+fmt.Sprint(i))+"---"+role("NS"+other+"reader"+fmt.Sprint(i))), apply.Options{Recreate: true})
		for _, ch := range cs.Changes {
			if ch.Action == apply.Recreated {
				t.Errorf("%s: said recreated, created beside the other:\n%s", ch.Object, cs)
			}
		}
		if cs.Count(apply.Created) != 1 {
			t.Errorf("want one created:\n%s", cs)
		}
		if _, err := k.admin.Uninstall(k.ctx, name, apply.UninstallOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// A Role's name is any path segment, escapes included: a permission of
// one object by name, as the pre-flight lists it, is said sanitized, as
// every object is named in this package's errors.
func TestPermissionNameSanitized(t *testing.T) {
	p := apply.Permission{Verb: "patch", Group: "rbac.authorization.k8s.io", Resource: "roles", Namespace: "ns", Name: "r\x1b]0;pwned\x07\n"}
	if s := (&apply.PreflightError{Missing: []apply.Permission{p}}).Error(); strings.ContainsAny(s, "\x1b\x07\n") {
		t.Errorf("PreflightError %q holds the name's control characters", s)
	}
}

// An Event is one object the API serves in two groups (v1 and
// events.k8s.io/v1), under two inventory IDs. An upgrade that names it in
// the other group pruned it as an object the add-on no longer holds:
// the upgrade deleted what it had just applied, and its inventory listed
// an Event that was gone. An object is judged by its uid, not its ID.
func TestUpgradeNamingAnObjectInAnotherGroupKeepsIt(t *testing.T) {
	k := newCluster(t)
	const core = `
apiVersion: v1
kind: Namespace
metadata: {name: NS}
---
apiVersion: v1
kind: Event
metadata: {name: installed, namespace: NS}
involvedObject: {apiVersion: v1, kind: ConfigMap, name: x, namespace: NS}
reason: Installed
message: installed
type: Normal
`
	const events = `
apiVersion: v1
kind: Namespace
metadata: {name: NS}
---
apiVersion: events.k8s.io/v1
kind: Event
metadata: {name: installed, namespace: NS}
regarding: {apiVersion: v1, kind: ConfigMap, name: x, namespace: NS}
reason: Installed
note: installed
type: Normal
`
	gvrEvent := schema.GroupVersionResource{Group: "events.k8s.io", Version: "v1", Resource: "events"}
	for i, step := range []string{core, events, core} {
		cs := k.mustApply(t, k.addon(t, k.prefix, fmt.Sprint(i+1), step), apply.Options{Timeout: 20 * time.Second})
		if !k.exists(t, gvrEvent, k.prefix, "installed") {
			t.Fatalf("apply %d deleted the Event it names in another group:\n%s", i+1, cs)
		}
		if cs.Count(apply.Deleted) != 0 {
			t.Errorf("apply %d deleted something:\n%s", i+1, cs)
		}
		if st, err := k.admin.Status(k.ctx, k.prefix); err != nil || len(st) != 1 || st[0].Objects != 2 || st[0].Ready != 2 {
			t.Errorf("status after apply %d = %+v, %v, want the Namespace and the Event, ready", i+1, st, err)
		}
	}
	if _, err := k.admin.Uninstall(k.ctx, k.prefix, apply.UninstallOptions{Timeout: time.Minute}); err != nil {
		t.Fatal(err)
	}
}

// objectsOf is the objects of cs's changes, in its order.
func objectsOf(cs *apply.ChangeSet) []string {
	var out []string
	for _, c := range cs.Changes {
		out = append(out, c.Object)
	}
	return out
}

// A CRD whose conversion webhook does not answer (its Service is the
// add-on's, and nothing serves it: a controller broken or gone) is
// deleted with the custom resources the uninstall deletes, which it lists
// in its storage version, converting nothing. Before, it listed them in
// the first version the CRD serves, which the webhook converts to; the
// list failed, and the CRD and the inventory were kept ("custom resources
// it may hold (cannot list Gadget)"). MetalLB's bgppeers serves v1beta1
// first and stores v1beta2.
func TestUninstallListsACRDInItsStorageVersion(t *testing.T) {
	k := newCluster(t)
	a := k.addon(t, k.prefix, "1", `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gadgets.GROUP}
spec:
  group: GROUP
  names: {kind: Gadget, listKind: GadgetList, plural: gadgets, singular: gadget}
  scope: Namespaced
  conversion:
    strategy: Webhook
    webhook:
      conversionReviewVersions: [v1]
      clientConfig:
        service: {name: nobody, namespace: NS, path: /convert}
  versions:
  - name: v1alpha1
    served: true
    storage: false
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
---
apiVersion: v1
kind: Namespace
metadata: {name: NS}
---
apiVersion: GROUP/v1
kind: Gadget
metadata: {name: g1, namespace: NS}
`)
	k.mustApply(t, a, apply.Options{Timeout: time.Minute})
	cs, err := k.admin.Uninstall(k.ctx, a.Name, apply.UninstallOptions{Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if k.exists(t, gvrCRD, "", "gadgets."+k.prefix+".example.com") || k.inventorySecret(t, a.Name) != nil {
		t.Errorf("the uninstall kept the CRD, or its inventory:\n%s", cs)
	}
}
