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
	"k8s.io/apimachinery/pkg/types"

	"github.com/addonpkg/addonpkg/pkg/apply"
)

// ignoreAddon holds, in a namespace that exists, a ConfigMap the add-on
// ignores (ours), a Secret it ignores (Flux's annotation, in the case
// Flux also reads), a ConfigMap Flux's older reconcile: disabled pauses,
// and two plain ConfigMaps, handsoff (whose object in
// the cluster an admin marks ignored) and plain. Version 2 drops late.
const ignoreAddon = `
apiVersion: v1
kind: ConfigMap
metadata:
  name: never
  namespace: NS
  annotations: {addonpkg.io/apply: Ignore}
data: {v: "VERSION"}
---
apiVersion: v1
kind: Secret
metadata:
  name: theirs
  namespace: NS
  annotations: {kustomize.toolkit.fluxcd.io/ssa: ignore}
stringData: {v: "VERSION"}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: paused
  namespace: NS
  annotations: {kustomize.toolkit.fluxcd.io/reconcile: disabled}
data: {v: "VERSION"}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: handsoff, namespace: NS}
data: {v: "VERSION"}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: plain, namespace: NS}
data: {v: "VERSION"}
`

const lateObject = `
---
apiVersion: v1
kind: ConfigMap
metadata: {name: late, namespace: NS}
data: {v: "VERSION"}
`

// Ignore, ours or Flux's, on the add-on's object or on the one in the
// cluster, leaves the object alone as Flux's ssa: Ignore does: not
// created when absent (and not waited for), not changed when there
// (another add-on's neither refused nor taken), skipped with the reason
// by the dry-run, the diff and the apply, recorded only while it carries
// the add-on's labels (one an earlier apply made: InventoryEntry.Ignored),
// and kept by prune and uninstall.
// The pre-flight asks only to read it. Ignore was applied as any other
// object.
func TestIgnoreLeavesObjectsAlone(t *testing.T) {
	k := newCluster(t)
	if _, err := k.typed.CoreV1().Namespaces().Create(k.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: k.prefix}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = k.typed.CoreV1().Namespaces().Delete(k.ctx, k.prefix, metav1.DeleteOptions{}) })
	// theirs is another add-on's, with content of its own.
	_, err := k.typed.CoreV1().Secrets(k.prefix).Create(k.ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "theirs", Labels: map[string]string{apply.LabelAddon: "other"}},
		StringData: map[string]string{"v": "theirs"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	version := func(v string, extra string) apply.Addon {
		return k.addon(t, k.prefix, v, strings.ReplaceAll(ignoreAddon+extra, "VERSION", v))
	}
	paused := "ConfigMap/" + k.prefix + "/paused"
	never, theirs, handsoff, late := "ConfigMap/"+k.prefix+"/never", "Secret/"+k.prefix+"/theirs", "ConfigMap/"+k.prefix+"/handsoff", "ConfigMap/"+k.prefix+"/late"
	skippedIgnored := func(what string, cs *apply.ChangeSet, objs ...string) {
		t.Helper()
		for _, o := range objs {
			if c := change(cs, o); c.Action != apply.Skipped || !strings.Contains(c.Reason, "Ignore") || c.Diff != "" {
				t.Errorf("%s: %s %s %q, want skipped for Ignore, no diff:\n%s", what, o, c.Action, c.Reason, cs)
			}
		}
	}

	for _, dry := range []bool{true, false} {
		// Wait: an ignored object, absent, is not waited for.
		cs, err := k.admin.Apply(k.ctx, version("1", lateObject), apply.Options{DryRun: dry, Wait: !dry, Timeout: 20 * time.Second})
		if err != nil {
			t.Fatalf("install (dry-run %v): %v", dry, err)
		}
		skippedIgnored(fmt.Sprintf("install (dry-run %v)", dry), cs, never, theirs)
		if c := change(cs, paused); c.Action != apply.Skipped || !strings.Contains(c.Reason, "kustomize.toolkit.fluxcd.io/reconcile: disabled") {
			t.Errorf("install (dry-run %v): %s %s %q, want skipped for reconcile: disabled", dry, paused, c.Action, c.Reason)
		}
	}
	for _, name := range []string{"never", "paused"} {
		if _, err := k.typed.CoreV1().ConfigMaps(k.prefix).Get(k.ctx, name, metav1.GetOptions{}); err == nil {
			t.Errorf("the ignored ConfigMap %s was created", name)
		}
	}
	sec, err := k.typed.CoreV1().Secrets(k.prefix).Get(k.ctx, "theirs", metav1.GetOptions{})
	if err != nil || string(sec.Data["v"]) != "theirs" || sec.Labels[apply.LabelAddon] != "other" {
		t.Errorf("the ignored Secret was changed: %v, %v", err, sec)
	}
	want := []string{k.prefix + "_handsoff__ConfigMap", k.prefix + "_late__ConfigMap", k.prefix + "_plain__ConfigMap"}
	if got := ids(k.inventory(t, k.prefix)); !slices.Equal(got, want) {
		t.Errorf("inventory = %v, want %v", got, want)
	}

	// An admin takes handsoff over (Flux's key) and edits it, and marks
	// late (ours, as a label) to be left too.
	patch := func(name, p string) {
		t.Helper()
		if _, err := k.typed.CoreV1().ConfigMaps(k.prefix).Patch(k.ctx, name, types.MergePatchType, []byte(p), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	patch("handsoff", `{"metadata":{"annotations":{"kustomize.toolkit.fluxcd.io/ssa":"Ignore"}},"data":{"v":"admin"}}`)
	patch("late", `{"metadata":{"labels":{"addonpkg.io/apply":"Ignore"}}}`)

	// The pre-flight of a user who may do nothing asks only get of the
	// ignored objects.
	restricted, err := apply.New(k.env.Restricted, apply.ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = restricted.Apply(k.ctx, version("2", ""), apply.Options{})
	var pe *apply.PreflightError
	if !errors.As(err, &pe) {
		t.Fatalf("restricted apply: %v, want a PreflightError", err)
	}
	for _, p := range pe.Missing {
		if p.Verb != "get" && (p.Name == "never" || p.Name == "theirs" || p.Name == "handsoff" || p.Name == "late") {
			t.Errorf("the pre-flight asks %s of an object the apply leaves alone", p)
		}
	}

	for _, dry := range []bool{true, false} {
		cs, err := k.admin.Apply(k.ctx, version("2", ""), apply.Options{DryRun: dry, Wait: !dry, Timeout: 20 * time.Second})
		if err != nil {
			t.Fatalf("upgrade (dry-run %v): %v", dry, err)
		}
		what := fmt.Sprintf("upgrade (dry-run %v)", dry)
		skippedIgnored(what, cs, never, theirs, handsoff)
		if c := change(cs, handsoff); !strings.Contains(c.Reason, "in the cluster") {
			t.Errorf("%s: %s %q, want the reason to say the object in the cluster carries it", what, handsoff, c.Reason)
		}
		if c := change(cs, late); c.Action != apply.Skipped || !strings.Contains(c.Reason, "addonpkg.io/apply=Ignore") {
			t.Errorf("%s: %s %s %q, want kept for addonpkg.io/apply=Ignore:\n%s", what, late, c.Action, c.Reason, cs)
		}
	}
	for name, v := range map[string]string{"handsoff": "admin", "late": "1"} {
		cm, err := k.typed.CoreV1().ConfigMaps(k.prefix).Get(k.ctx, name, metav1.GetOptions{})
		if err != nil || cm.Data["v"] != v {
			t.Errorf("%s after the upgrade: %v %v, want it left with %q", name, err, cm.Data, v)
		}
	}
	// handsoff carries the add-on's labels still: recorded, marked
	// ignored. late, which version 2 dropped, is kept by its key and
	// leaves the inventory.
	inv := k.inventory(t, k.prefix)
	want = []string{k.prefix + "_handsoff__ConfigMap", k.prefix + "_plain__ConfigMap"}
	if got := ids(inv); !slices.Equal(got, want) || !inv.Objects[0].Ignored || inv.Objects[1].Ignored {
		t.Errorf("inventory after the upgrade = %+v, want %v, handsoff marked ignored", inv.Objects, want)
	}

	cs, err := k.admin.Uninstall(k.ctx, k.prefix, apply.UninstallOptions{Timeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if n := cs.Count(apply.Deleted); n != 1 {
		t.Errorf("uninstall deleted %d, want 1 (plain):\n%s", n, cs)
	}
	for _, name := range []string{"handsoff", "late"} {
		if _, err := k.typed.CoreV1().ConfigMaps(k.prefix).Get(k.ctx, name, metav1.GetOptions{}); err != nil {
			t.Errorf("uninstall deleted %s, which the add-on let go of: %v", name, err)
		}
	}
}

// Flux's kustomize.toolkit.fluxcd.io/prune: disabled keeps an object as
// addonpkg.io/prune: disabled does, from prune and uninstall, the reason
// naming it; the pre-flight of the uninstall asks only to read it. It
// was deleted.
func TestFluxPruneDisabledKept(t *testing.T) {
	k := newCluster(t)
	if _, err := k.typed.CoreV1().Namespaces().Create(k.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: k.prefix}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = k.typed.CoreV1().Namespaces().Delete(k.ctx, k.prefix, metav1.DeleteOptions{}) })
	const objs = `
apiVersion: v1
kind: ConfigMap
metadata: {name: plain, namespace: NS}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: kept
  namespace: NS
  annotations: {kustomize.toolkit.fluxcd.io/prune: Disabled}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: dropped
  namespace: NS
  labels: {kustomize.toolkit.fluxcd.io/prune: disabled}
`
	k.mustApply(t, k.addon(t, k.prefix, "1", objs), apply.Options{})
	cs := k.mustApply(t, k.addon(t, k.prefix, "2", objs[:strings.Index(objs, "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: dropped")]), apply.Options{})
	dropped := "ConfigMap/" + k.prefix + "/dropped"
	if c := change(cs, dropped); c.Action != apply.Skipped || c.Reason != "kept: kustomize.toolkit.fluxcd.io/prune=disabled" {
		t.Errorf("prune of %s: %s %q, want kept naming Flux's key:\n%s", dropped, c.Action, c.Reason, cs)
	}

	// A user who may read, and nothing else.
	reader := k.asUser(t, "reader-"+k.prefix, []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"secrets", "configmaps", "namespaces"}, Verbs: []string{"get", "list"}},
		{APIGroups: []string{"authorization.k8s.io"}, Resources: []string{"selfsubjectaccessreviews"}, Verbs: []string{"create"}},
	})
	var pe *apply.PreflightError
	var err error
	untilRBACSettles(func() bool {
		_, err = reader.Uninstall(k.ctx, k.prefix, apply.UninstallOptions{})
		return errors.As(err, &pe) || !errors.Is(err, apply.ErrForbidden)
	})
	if pe == nil {
		t.Fatalf("uninstall by a reader: %v, want a PreflightError", err)
	}
	if !slices.ContainsFunc(pe.Missing, func(p apply.Permission) bool { return p.Verb == "delete" && p.Name == "plain" }) {
		t.Errorf("the uninstall's pre-flight %v does not ask to delete plain", pe.Missing)
	}
	for _, p := range pe.Missing {
		if p.Name == "kept" && p.Verb != "get" {
			t.Errorf("the uninstall's pre-flight asks %s of an object it keeps", p)
		}
	}
	cs, err = k.admin.Uninstall(k.ctx, k.prefix, apply.UninstallOptions{Timeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if c := change(cs, "ConfigMap/"+k.prefix+"/kept"); c.Action != apply.Skipped {
		t.Errorf("uninstall of kept: %s, want skipped:\n%s", c.Action, cs)
	}
	for _, name := range []string{"kept", "dropped"} {
		if _, err := k.typed.CoreV1().ConfigMaps(k.prefix).Get(k.ctx, name, metav1.GetOptions{}); err != nil {
			t.Errorf("%s was deleted: %v", name, err)
		}
	}
}

// An ignored Namespace or CRD of the add-on makes nothing for the other
// objects: one in that Namespace, or of that kind, is refused before any
// change (ErrInvalid, naming what is missing), as though the add-on did
// not hold them. They were taken for pending, and the apply failed in
// its stage, after the stages before had changed the cluster.
func TestIgnoredNamespaceOrCRDDefinesNothing(t *testing.T) {
	k := newCluster(t)
	for name, objs := range map[string]string{
		"does not exist, and the add-on does not create it": `
apiVersion: v1
kind: Namespace
metadata: {name: NS, annotations: {kustomize.toolkit.fluxcd.io/ssa: Ignore}}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: NS}
`,
		"no CustomResourceDefinition of the add-on defines it": `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gizmos.GROUP, annotations: {addonpkg.io/apply: Ignore}}
spec:
  group: GROUP
  names: {kind: Gizmo, listKind: GizmoList, plural: gizmos, singular: gizmo}
  scope: Cluster
  versions:
  - {name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}
---
apiVersion: GROUP/v1
kind: Gizmo
metadata: {name: g1}
`,
	} {
		_, err := k.admin.Apply(k.ctx, k.addon(t, k.prefix, "1", objs), apply.Options{})
		if !errors.Is(err, apply.ErrInvalid) || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: %v, want ErrInvalid saying so", name, err)
		}
		if k.inventory(t, k.prefix) != nil {
			t.Errorf("%s: the refused apply wrote an inventory", name)
		}
	}
}

// An object an earlier apply made, which the add-on now marks Ignore on
// its own object alone, carries the add-on's labels still: the inventory
// records it (marked ignored), so the record and the labels agree and
// Status counts it; no prune or uninstall of the add-on deletes it. It
// was dropped from the record while it kept the labels that said it was
// the add-on's.
func TestIgnoredObjectWithLabelsStaysRecorded(t *testing.T) {
	k := newCluster(t)
	const cms = `
apiVersion: v1
kind: ConfigMap
metadata: {name: NS-left, namespace: default, annotations: {addonpkg.io/apply: POLICY}}
data: {v: "1"}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: NS-plain, namespace: default}
`
	cms1 := strings.Replace(cms, ", annotations: {addonpkg.io/apply: POLICY}", "", 1)
	k.mustApply(t, k.addon(t, k.prefix, "1", cms1), apply.Options{})
	t.Cleanup(func() {
		_ = k.typed.CoreV1().ConfigMaps("default").Delete(context.Background(), k.prefix+"-left", metav1.DeleteOptions{})
	})
	cs := k.mustApply(t, k.addon(t, k.prefix, "2", strings.Replace(cms, "POLICY", "Ignore", 1)), apply.Options{Wait: true, Timeout: 20 * time.Second})
	left := "ConfigMap/default/" + k.prefix + "-left"
	if c := change(cs, left); c.Action != apply.Skipped || !strings.Contains(c.Reason, "records it") {
		t.Errorf("the ignored ConfigMap: %s %q, want skipped and recorded:\n%s", c.Action, c.Reason, cs)
	}
	live, err := k.typed.CoreV1().ConfigMaps("default").Get(k.ctx, k.prefix+"-left", metav1.GetOptions{})
	if err != nil || live.Labels[apply.LabelAddon] != k.prefix {
		t.Fatalf("the ignored ConfigMap: %v %v, want it there with the add-on's labels", err, live)
	}
	inv := k.inventory(t, k.prefix)
	if got, want := ids(inv), []string{"default_" + k.prefix + "-left__ConfigMap", "default_" + k.prefix + "-plain__ConfigMap"}; !slices.Equal(got, want) || !inv.Objects[0].Ignored {
		t.Errorf("inventory = %+v, want %v, the ignored one marked: it carries the add-on's labels", inv.Objects, want)
	}
	if st := k.installedStatus(t, k.prefix); st.Objects != 2 || st.Ready != 2 || len(st.UnreadyObjects) != 0 {
		t.Errorf("status %+v, want 2 objects, 2 ready", st)
	}
	// Applied again, it changes nothing, the record neither.
	rv := k.inventorySecret(t, k.prefix).ResourceVersion
	if cs := k.mustApply(t, k.addon(t, k.prefix, "2", strings.Replace(cms, "POLICY", "Ignore", 1)), apply.Options{}); cs.Changed() {
		t.Errorf("re-apply changed:\n%s", cs)
	}
	if now := k.inventorySecret(t, k.prefix).ResourceVersion; now != rv {
		t.Errorf("re-apply wrote the inventory again (%s -> %s)", rv, now)
	}
	ucs, err := k.admin.Uninstall(k.ctx, k.prefix, apply.UninstallOptions{Timeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if c := change(ucs, left); c.Action != apply.Skipped || !strings.Contains(c.Reason, "Ignore") {
		t.Errorf("uninstall: %s %s %q, want kept:\n%s", left, c.Action, c.Reason, ucs)
	}
	if _, err := k.typed.CoreV1().ConfigMaps("default").Get(k.ctx, k.prefix+"-left", metav1.GetOptions{}); err != nil {
		t.Errorf("uninstall deleted the ConfigMap the add-on let go of: %v", err)
	}
	if k.inventory(t, k.prefix) != nil {
		t.Error("uninstall left the inventory")
	}
}
