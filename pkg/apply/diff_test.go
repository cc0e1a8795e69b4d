package apply_test

import (
	"encoding/base64"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/addonpkg/addonpkg/pkg/apply"
)

const secretAddon = `
apiVersion: v1
kind: Secret
metadata: {name: creds, namespace: NS}
stringData: {password: SECRETVALUE}
`

// Before the add-on is installed, the diff says plainly which objects
// the server could not validate (their CRD or Namespace is part of the
// add-on) instead of calling them created; after, it shows what changes,
// Secret data masked; neither dry-run nor diff changes anything.
func TestDryRunAndDiffChangeNothing(t *testing.T) {
	k := newCluster(t)
	a := k.addon(t, k.prefix, "1", crdAddon+"---\n"+strings.ReplaceAll(secretAddon, "SECRETVALUE", "first-"+k.prefix))

	cs, err := k.admin.Diff(k.ctx, a, apply.Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]apply.Change{}
	for _, c := range cs.Changes {
		got[c.Object] = c
	}
	for obj, want := range map[string]apply.Action{
		"Namespace/" + k.prefix: apply.Created,
		"CustomResourceDefinition/widgets." + k.prefix + ".example.com": apply.Created,
		"Widget/" + k.prefix + "/w1":                                    apply.Unvalidated,
		"ConfigMap/" + k.prefix + "/settings":                           apply.Unvalidated,
	} {
		if got[obj].Action != want {
			t.Errorf("%s: %q, want %q:\n%s", obj, got[obj].Action, want, cs)
		}
	}
	if r := got["Widget/"+k.prefix+"/w1"].Reason; !strings.Contains(r, "CustomResourceDefinition") || !strings.Contains(r, "not validated") {
		t.Errorf("Widget's reason %q does not say its CRD is not installed", r)
	}
	if !cs.DryRun || !cs.Changed() {
		t.Errorf("diff of a new add-on: dry-run %v, changed %v", cs.DryRun, cs.Changed())
	}
	if k.exists(t, gvrNamespace, "", k.prefix) || k.exists(t, gvrCRD, "", "widgets."+k.prefix+".example.com") || k.inventory(t, a.Name) != nil {
		t.Fatal("diff changed the cluster")
	}

	k.mustApply(t, a, apply.Options{})
	before := k.resourceVersions(t, a)
	invBefore := k.inventorySecret(t, a.Name).ResourceVersion

	b := k.addon(t, k.prefix, "2", strings.Replace(crdAddon, "key: one", "key: two", 1)+"---\n"+strings.ReplaceAll(secretAddon, "SECRETVALUE", "second-"+k.prefix))
	for _, run := range []func() (*apply.ChangeSet, error){
		func() (*apply.ChangeSet, error) { return k.admin.Diff(k.ctx, b, apply.Options{}) },
		func() (*apply.ChangeSet, error) { return k.admin.Apply(k.ctx, b, apply.Options{DryRun: true}) },
	} {
		cs, err := run()
		if err != nil {
			t.Fatal(err)
		}
		var cm, secret apply.Change
		for _, c := range cs.Changes {
			switch c.Object {
			case "ConfigMap/" + k.prefix + "/settings":
				cm = c
			case "Secret/" + k.prefix + "/creds":
				secret = c
			}
		}
		if cm.Action != apply.Configured || !strings.Contains(cm.Diff, "-  key: one") || !strings.Contains(cm.Diff, "+  key: two") {
			t.Errorf("ConfigMap change %+v, want configured with key: one -> two", cm)
		}
		if secret.Action != apply.Configured || !strings.Contains(secret.Diff, "***") {
			t.Errorf("Secret change %+v, want configured and masked", secret)
		}
		for _, v := range []string{"first-", "second-"} {
			enc := base64.StdEncoding.EncodeToString([]byte(v + k.prefix))
			if strings.Contains(secret.Diff, v+k.prefix) || strings.Contains(secret.Diff, enc[:len(enc)-4]) {
				t.Errorf("Secret diff shows its data:\n%s", secret.Diff)
			}
		}
		if n := cs.Count(apply.Unchanged); n != 3 {
			t.Errorf("%d unchanged, want 3:\n%s", n, cs)
		}
	}
	if after := k.resourceVersions(t, a); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("dry-run and diff moved resourceVersions:\nbefore %v\nafter  %v", before, after)
	}
	if k.inventorySecret(t, a.Name).ResourceVersion != invBefore {
		t.Error("dry-run or diff wrote the inventory")
	}
}

// What the apply takes over from kubectl (a label kubectl label added, a
// key kubectl edit added) it removes; the diff says so, though the
// server's dry-run, which cannot take over first, calls the object
// unchanged. After the apply, nothing is left to change.
func TestDiffShowsWhatTakeOverRemoves(t *testing.T) {
	k := newCluster(t)
	a := k.addon(t, k.prefix, "1", killV1)
	k.mustApply(t, a, apply.Options{})
	cm, err := k.typed.CoreV1().ConfigMaps(k.prefix).Get(k.ctx, "a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Labels["extra"] = "yes"
	cm.Data["hand"] = "edited"
	if _, err := k.typed.CoreV1().ConfigMaps(k.prefix).Update(k.ctx, cm, metav1.UpdateOptions{FieldManager: "kubectl-edit"}); err != nil {
		t.Fatal(err)
	}
	cs, err := k.admin.Diff(k.ctx, a, apply.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got apply.Change
	for _, c := range cs.Changes {
		if c.Object == "ConfigMap/"+k.prefix+"/a" {
			got = c
		}
	}
	if got.Action != apply.Configured || !strings.Contains(got.Reason, "kubectl-edit") ||
		!strings.Contains(got.Reason, ".metadata.labels.extra") || !strings.Contains(got.Reason, ".data.hand") ||
		!strings.Contains(got.Diff, "-    extra: \"yes\"") || !strings.Contains(got.Diff, "-  hand: edited") {
		t.Errorf("the diff of a ConfigMap kubectl edited: %+v", got)
	}
	applied := k.mustApply(t, a, apply.Options{})
	if applied.Count(apply.Configured) != 1 {
		t.Errorf("the apply after it:\n%s", applied)
	}
	cm, err = k.typed.CoreV1().ConfigMaps(k.prefix).Get(k.ctx, "a", metav1.GetOptions{})
	if err != nil || cm.Labels["extra"] != "" || cm.Data["hand"] != "" {
		t.Errorf("the apply kept what kubectl edit added: %v %v", cm, err)
	}
	if again, err := k.admin.Diff(k.ctx, a, apply.Options{}); err != nil || again.Changed() {
		t.Errorf("the diff after the apply: %v\n%s", err, again)
	}
}

// A control character anywhere in an object (an annotation anyone who
// may edit the object writes, or the add-on's own data) does not blind
// the diff: sigs.k8s.io/yaml refuses to write a C1 one (U+009B, CSI), and
// the diff of both sides was the same "# cannot encode" line, so an
// upgrade that changed the object showed no change at all. Every control
// character is written escaped, never raw to a terminal.
func TestDiffOfObjectWithControlCharacters(t *testing.T) {
	k := newCluster(t)
	const cmAddon = `
apiVersion: v1
kind: Namespace
metadata: {name: NS}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: NS}
data: {script: "echo VALUE"}
`
	a := k.addon(t, k.prefix, "1", strings.ReplaceAll(cmAddon, "VALUE", "one"))
	k.mustApply(t, a, apply.Options{})
	patch := []byte(`{"metadata":{"annotations":{"note":"a\u0001b\u001b[31mred\u009b"}}}`)
	if _, err := k.typed.CoreV1().ConfigMaps(k.prefix).Patch(k.ctx, "settings", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	b := k.addon(t, k.prefix, "2", strings.ReplaceAll(cmAddon, "VALUE", `two\a`))
	cs, err := k.admin.Diff(k.ctx, b, apply.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var cm apply.Change
	for _, c := range cs.Changes {
		if c.Object == "ConfigMap/"+k.prefix+"/settings" {
			cm = c
		}
	}
	if cm.Action != apply.Configured || !strings.Contains(cm.Diff, "-  script: echo one") || !strings.Contains(cm.Diff, `+  script: "echo two\a"`) {
		t.Errorf("ConfigMap change %s, want configured, echo one -> echo two\\a:\n%s", cm.Action, cm.Diff)
	}
	if strings.ContainsAny(cm.Diff, "\x01\x07\x1b\u009b") {
		t.Errorf("the diff holds control characters:\n%q", cm.Diff)
	}
}

// A Secret made by kubectl's client-side apply (kubectl apply, kubectl
// create --save-config) carries its whole manifest, data included, in
// the kubectl.kubernetes.io/last-applied-configuration annotation. The
// diff of an add-on that adopts it, changes it or prunes it printed that
// annotation as it is: the Secret's values, masked in data, in clear
// (base64) a few lines above, in a diff meant for CI logs.
func TestDiffMasksSecretsInLastAppliedConfiguration(t *testing.T) {
	k := newCluster(t)
	const ns = `
apiVersion: v1
kind: Namespace
metadata: {name: NS}
`
	k.mustApply(t, k.addon(t, k.prefix+"-ns", "1", ns), apply.Options{})
	old := "kubectl-" + k.prefix
	last := fmt.Sprintf(`{"apiVersion":"v1","data":{"password":%q},"kind":"Secret","metadata":{"annotations":{},"name":"creds","namespace":%q}}`,
		base64.StdEncoding.EncodeToString([]byte(old)), k.prefix)
	sec := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "creds", Namespace: k.prefix,
			Annotations: map[string]string{corev1.LastAppliedConfigAnnotation: last}},
		Data: map[string][]byte{"password": []byte(old)},
	}
	if _, err := k.typed.CoreV1().Secrets(k.prefix).Create(k.ctx, sec, metav1.CreateOptions{FieldManager: "kubectl-client-side-apply"}); err != nil {
		t.Fatal(err)
	}
	leaks := func(what string, cs *apply.ChangeSet) {
		t.Helper()
		for _, c := range cs.Changes {
			for _, v := range []string{old, base64.StdEncoding.EncodeToString([]byte(old))} {
				if strings.Contains(c.Diff, v) {
					t.Errorf("%s: the diff of %s prints the Secret's value %q:\n%s", what, c.Object, v, c.Diff)
				}
			}
		}
	}
	adopt := k.addon(t, k.prefix, "1", strings.ReplaceAll(secretAddon, "SECRETVALUE", "new-"+k.prefix))
	cs, err := k.admin.Diff(k.ctx, adopt, apply.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(cs.Changes) != 1 || cs.Changes[0].Action != apply.Configured || !strings.Contains(cs.Changes[0].Diff, "last-applied-configuration") {
		t.Fatalf("the diff does not show the adoption of the Secret:\n%s", cs)
	}
	leaks("adoption", cs)

	// Installed without take-over, the annotation stays; an upgrade that
	// no longer holds the Secret shows it deleted, whole.
	k.mustApply(t, adopt, apply.Options{TakeOver: []string{}})
	const cm = `
apiVersion: v1
kind: ConfigMap
metadata: {name: other, namespace: NS}
`
	cs, err = k.admin.Diff(k.ctx, k.addon(t, k.prefix, "2", cm), apply.Options{})
	if err != nil {
		t.Fatal(err)
	}
	leaks("prune", cs)
}

// An add-on's Secret that sets in stringData a key kubectl wrote in data
// changes that key: the diff of its adoption said the Secret lost it
// (data: {}), and that the take-over removes .data.password.
func TestDiffOfAdoptedSecretKeepsItsStringDataKeys(t *testing.T) {
	k := newCluster(t)
	k.mustApply(t, k.addon(t, k.prefix+"-ns", "1", raceNS), apply.Options{})
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "creds", Namespace: k.prefix},
		Data: map[string][]byte{"password": []byte("old"), "other": []byte("dropped")}}
	if _, err := k.typed.CoreV1().Secrets(k.prefix).Create(k.ctx, sec, metav1.CreateOptions{FieldManager: "kubectl-client-side-apply"}); err != nil {
		t.Fatal(err)
	}
	a := k.addon(t, k.prefix, "1", strings.ReplaceAll(secretAddon, "SECRETVALUE", "new"))
	cs, err := k.admin.Diff(k.ctx, a, apply.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ch := cs.Changes[0]
	if !strings.Contains(ch.Diff, "+  password: '*** (after)'") || !strings.Contains(ch.Diff, "-  other: '***'") ||
		strings.Contains(ch.Reason, ".data.password") || !strings.Contains(ch.Reason, ".data.other") {
		t.Errorf("the diff of the adoption does not say password changes and other goes (%s):\n%s", ch.Reason, ch.Diff)
	}
	k.mustApply(t, a, apply.Options{})
	s, err := k.typed.CoreV1().Secrets(k.prefix).Get(k.ctx, "creds", metav1.GetOptions{})
	if err != nil || string(s.Data["password"]) != "new" || s.Data["other"] != nil {
		t.Errorf("after the apply: %v, keys %v: the diff did not say what the apply did", err, slices.Collect(maps.Keys(s.Data)))
	}
}
