package apply_test

import (
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kubectlapply "k8s.io/kubectl/pkg/cmd/apply"

	"github.com/addonpkg/addonpkg/pkg/apply"
)

// The inventory Secret's ApplySet id is the one kubectl computes for the
// same parent, so `kubectl` sees the set (KEP-3659).
func TestApplySetIDIsKubectls(t *testing.T) {
	for _, p := range []struct{ name, ns string }{{"addonpkg-coredns", "kube-system"}, {"addonpkg-x", "addons"}} {
		ref := &kubectlapply.ApplySetParentRef{Name: p.name, Namespace: p.ns, RESTMapping: &meta.RESTMapping{
			Resource:         schema.GroupVersionResource{Version: "v1", Resource: "secrets"},
			GroupVersionKind: schema.GroupVersionKind{Version: "v1", Kind: "Secret"},
			Scope:            meta.RESTScopeNamespace,
		}}
		want := kubectlapply.NewApplySet(ref, kubectlapply.ApplySetTooling{Name: "addonpkg", Version: "v1"}, nil, nil).ID()
		if got := apply.ApplySetID(p.name, p.ns); got != want {
			t.Errorf("ApplySetID(%s, %s) = %s, kubectl says %s", p.name, p.ns, got, want)
		}
	}
}

// A member of another tool's ApplySet (part-of another id, no add-on
// label: what kubectl's ApplySet apply makes) is refused unless Force,
// naming the set, and its parent when a Secret or ConfigMap of the
// member's namespace is one: one whose name gives the id, not any that
// carries the id label.
func TestAnotherToolsApplySetMemberRefused(t *testing.T) {
	k := newCluster(t)
	ns := k.prefix
	if _, err := k.typed.CoreV1().Namespaces().Create(k.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	set := apply.ApplySetID("kset", ns)
	secret := func(name, tooling string) {
		t.Helper()
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns,
			Labels:      map[string]string{apply.LabelApplySetID: set},
			Annotations: map[string]string{apply.AnnotationApplySetTooling: tooling, apply.AnnotationApplySetGroupKinds: "ConfigMap"}}}
		if _, err := k.typed.CoreV1().Secrets(ns).Create(k.ctx, s, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	secret("decoy", "decoy/v1")
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "member", Namespace: ns, Labels: map[string]string{apply.LabelApplySetPartOf: set}}, Data: map[string]string{"v": "1"}}
	if _, err := k.typed.CoreV1().ConfigMaps(ns).Create(k.ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	a := k.addon(t, k.prefix, "1", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: member, namespace: NS}\ndata: {v: \"2\"}\n")

	refused := func(parent string) {
		t.Helper()
		for _, dry := range []bool{true, false} {
			_, err := k.admin.Apply(k.ctx, a, apply.Options{DryRun: dry})
			var oe *apply.OwnershipError
			if !errors.Is(err, apply.ErrConflict) || !errors.As(err, &oe) {
				t.Fatalf("apply (dry-run %v) of another tool's ApplySet member: %v, want an OwnershipError", dry, err)
			}
			if oe.Set != set || oe.Parent != parent || oe.Owner != "" || !strings.Contains(err.Error(), set) || strings.Contains(err.Error(), "decoy") {
				t.Errorf("apply (dry-run %v): %v (set %q, parent %q), want the set %s and the parent %q", dry, err, oe.Set, oe.Parent, set, parent)
			}
		}
		live, err := k.typed.CoreV1().ConfigMaps(ns).Get(k.ctx, "member", metav1.GetOptions{})
		if err != nil || live.Labels[apply.LabelApplySetPartOf] != set || live.Labels[apply.LabelAddon] != "" || live.Data["v"] != "1" {
			t.Fatalf("the refused apply changed the member: %v %v", live, err)
		}
	}
	refused("")
	secret("kset", "kubectl/v1.32.4")
	refused("Secret/" + ns + `/kset (tooling "kubectl/v1.32.4")`)

	k.mustApply(t, a, apply.Options{Force: true})
	live, err := k.typed.CoreV1().ConfigMaps(ns).Get(k.ctx, "member", metav1.GetOptions{})
	if err != nil || live.Labels[apply.LabelApplySetPartOf] != apply.ApplySetID(apply.InventoryName(a.Name), apply.DefaultInventoryNamespace) {
		t.Errorf("forced apply left the member in the other set: %v %v", live, err)
	}
	if _, err := k.admin.Uninstall(k.ctx, a.Name, apply.UninstallOptions{}); err != nil {
		t.Fatal(err)
	}
}

// An object with this add-on's label and another ApplySet's part-of is
// said to be the add-on's of another inventory namespace only when that
// set's parent is not found or is the add-on's inventory Secret: when
// kubectl's ApplySet apply took the objects the add-on once applied (the
// add-on's label stays), the refusal names kubectl's set and parent.
func TestAddonLabelInAnotherToolsApplySet(t *testing.T) {
	k := newCluster(t)
	ns := k.prefix
	if _, err := k.typed.CoreV1().Namespaces().Create(k.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	a := k.addon(t, k.prefix, "1", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: member, namespace: NS}\ndata: {v: \"2\"}\n")
	for _, c := range []struct {
		parent, tooling string
		elsewhere       bool
	}{
		{"kset", "kubectl/v1.32.4", false},
		{apply.InventoryName(a.Name), "addonpkg/v1", true},
	} {
		set := apply.ApplySetID(c.parent, ns)
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: c.parent, Namespace: ns,
			Labels:      map[string]string{apply.LabelApplySetID: set},
			Annotations: map[string]string{apply.AnnotationApplySetTooling: c.tooling, apply.AnnotationApplySetGroupKinds: "ConfigMap"}}}
		if _, err := k.typed.CoreV1().Secrets(ns).Create(k.ctx, s, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "member", Namespace: ns,
			Labels: map[string]string{apply.LabelApplySetPartOf: set, apply.LabelAddon: a.Name}}, Data: map[string]string{"v": "1"}}
		if _, err := k.typed.CoreV1().ConfigMaps(ns).Create(k.ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		_, err := k.admin.Apply(k.ctx, a, apply.Options{DryRun: true})
		var oe *apply.OwnershipError
		if !errors.As(err, &oe) {
			t.Fatalf("parent %s: apply: %v, want an OwnershipError", c.parent, err)
		}
		if c.elsewhere {
			if !oe.Elsewhere || oe.Owner != a.Name || oe.Set != "" || !strings.Contains(err.Error(), "another inventory namespace") {
				t.Errorf("parent %s: %v (%+v), want the add-on of another inventory namespace", c.parent, err, *oe)
			}
		} else {
			wantParent := "Secret/" + ns + "/" + c.parent + ` (tooling "` + c.tooling + `")`
			if oe.Elsewhere || oe.Owner != "" || oe.Set != set || oe.Parent != wantParent || strings.Contains(err.Error(), "inventory namespace") {
				t.Errorf("parent %s: %v (%+v), want ApplySet %s of %s", c.parent, err, *oe, set, wantParent)
			}
		}
		if err := k.typed.CoreV1().ConfigMaps(ns).Delete(k.ctx, "member", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// The parent of another tool's ApplySet (a Secret whose name gives the
// id it carries, as kubectl's ApplySet apply makes) is that tool's record
// of what it applied, as an inventory is addonpkg's: an add-on that names
// it is refused unless Force, naming the set. It was adopted silently:
// take-over removed the id label kubectl's manager wrote, so kubectl
// lost its set, and uninstalling the add-on deleted the parent.
func TestAnotherToolsApplySetParentRefused(t *testing.T) {
	k := newCluster(t)
	ns := k.prefix
	if _, err := k.typed.CoreV1().Namespaces().Create(k.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	set := apply.ApplySetID("kset", ns)
	parent := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "kset", Namespace: ns,
		Labels:      map[string]string{apply.LabelApplySetID: set},
		Annotations: map[string]string{apply.AnnotationApplySetTooling: "kubectl/v1.32.4", apply.AnnotationApplySetGroupKinds: "ConfigMap"}}}
	if _, err := k.typed.CoreV1().Secrets(ns).Create(k.ctx, parent, metav1.CreateOptions{FieldManager: "kubectl"}); err != nil {
		t.Fatal(err)
	}
	a := k.addon(t, k.prefix, "1", "apiVersion: v1\nkind: Secret\nmetadata: {name: kset, namespace: NS}\nstringData: {v: \"2\"}\n")
	for _, dry := range []bool{true, false} {
		_, err := k.admin.Apply(k.ctx, a, apply.Options{DryRun: dry})
		var oe *apply.OwnershipError
		if !errors.Is(err, apply.ErrConflict) || !errors.As(err, &oe) || oe.Set != set || !strings.Contains(err.Error(), "parent") {
			t.Fatalf("apply (dry-run %v) of another tool's ApplySet parent: %v, want an OwnershipError naming the set %s", dry, err, set)
		}
	}
	live, err := k.typed.CoreV1().Secrets(ns).Get(k.ctx, "kset", metav1.GetOptions{})
	if err != nil || live.Labels[apply.LabelApplySetID] != set || live.Labels[apply.LabelAddon] != "" || len(live.Data) != 0 {
		t.Fatalf("the refused apply changed the parent: %v %v", live, err)
	}
	k.mustApply(t, a, apply.Options{Force: true})
	if _, err := k.admin.Uninstall(k.ctx, a.Name, apply.UninstallOptions{}); err != nil {
		t.Fatal(err)
	}
}
