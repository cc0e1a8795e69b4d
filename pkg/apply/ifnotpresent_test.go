package apply_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/addonpkg/addonpkg/pkg/apply"
)

// ifNotPresentAddon holds, in a namespace that exists, a ConfigMap an
// admin fills in (ours), a Secret a controller fills in (Flux's
// annotation, in the case Flux also reads) and a plain ConfigMap.
const ifNotPresentAddon = `
apiVersion: v1
kind: ConfigMap
metadata:
  name: corefile
  namespace: NS
  annotations: {addonpkg.io/apply: IfNotPresent}
data: {Corefile: "VERSION"}
---
apiVersion: v1
kind: Secret
metadata:
  name: token
  namespace: NS
  annotations: {kustomize.toolkit.fluxcd.io/ssa: ifnotpresent}
stringData: {token: "VERSION"}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: plain, namespace: NS}
data: {v: "VERSION"}
`

// change is the change of cs on the object named obj.
func change(cs *apply.ChangeSet, obj string) apply.Change {
	for _, c := range cs.Changes {
		if c.Object == obj {
			return c
		}
	}
	return apply.Change{}
}

// An IfNotPresent object is created when absent (a diff says so, with
// its content) and recorded; once there it is left as it is, whatever
// the add-on or the cluster says of its content: apply, dry-run and
// diff report it skipped, with the reason, and changed nothing. Deleted,
// the next apply makes it again; uninstall deletes it, as any object
// the add-on made.
func TestIfNotPresentCreatedOnceThenLeftAlone(t *testing.T) {
	k := newCluster(t)
	if _, err := k.typed.CoreV1().Namespaces().Create(k.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: k.prefix}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = k.typed.CoreV1().Namespaces().Delete(k.ctx, k.prefix, metav1.DeleteOptions{}) })
	version := func(v string) apply.Addon {
		return k.addon(t, k.prefix, v, strings.ReplaceAll(ifNotPresentAddon, "VERSION", v))
	}
	corefile, token := "ConfigMap/"+k.prefix+"/corefile", "Secret/"+k.prefix+"/token"

	diff, err := k.admin.Diff(k.ctx, version("1"), apply.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range []string{corefile, token} {
		if c := change(diff, o); c.Action != apply.Created || c.Diff == "" {
			t.Errorf("diff before install: %s %s, want created with a diff:\n%s", o, c.Action, diff)
		}
	}
	cs := k.mustApply(t, version("1"), apply.Options{Wait: true, Timeout: time.Minute})
	if cs.Count(apply.Created) != 3 {
		t.Fatalf("install created %d objects, want 3:\n%s", cs.Count(apply.Created), cs)
	}
	want := []string{k.prefix + "_corefile__ConfigMap", k.prefix + "_plain__ConfigMap", k.prefix + "_token__Secret"}
	if got := ids(k.inventory(t, k.prefix)); !slices.Equal(got, want) {
		t.Errorf("inventory = %v, want %v", got, want)
	}

	// An admin fills them in.
	cm, err := k.typed.CoreV1().ConfigMaps(k.prefix).Get(k.ctx, "corefile", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Data["Corefile"] = "admin"
	if _, err := k.typed.CoreV1().ConfigMaps(k.prefix).Update(k.ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	sec, err := k.typed.CoreV1().Secrets(k.prefix).Get(k.ctx, "token", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sec.Data["token"] = []byte("controller")
	if _, err := k.typed.CoreV1().Secrets(k.prefix).Update(k.ctx, sec, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	before := k.resourceVersions(t, version("2"))

	for _, dry := range []bool{true, false} {
		// Wait: it is still waited for, and is ready.
		cs, err := k.admin.Apply(k.ctx, version("2"), apply.Options{DryRun: dry, Wait: !dry, Timeout: time.Minute})
		if err != nil {
			t.Fatalf("apply (dry-run %v) of v2: %v", dry, err)
		}
		for _, o := range []string{corefile, token} {
			c := change(cs, o)
			if c.Action != apply.Skipped || !strings.Contains(c.Reason, "IfNotPresent") || !strings.Contains(c.Reason, "left as it is") || c.Diff != "" {
				t.Errorf("apply (dry-run %v) of v2: %s %s %q, want skipped, left as it is, no diff:\n%s", dry, o, c.Action, c.Reason, cs)
			}
			if strings.Contains(c.Reason, "not this add-on's") {
				t.Errorf("%s is this add-on's: %q", o, c.Reason)
			}
		}
		if c := change(cs, "ConfigMap/"+k.prefix+"/plain"); c.Action != apply.Configured {
			t.Errorf("apply (dry-run %v) of v2: plain %s, want configured", dry, c.Action)
		}
	}
	after := k.resourceVersions(t, version("2"))
	for _, o := range []string{"ConfigMap/corefile", "Secret/token"} {
		if before[o] == "" || before[o] != after[o] {
			t.Errorf("%s changed (resourceVersion %s -> %s)", o, before[o], after[o])
		}
	}
	if cm, _ := k.typed.CoreV1().ConfigMaps(k.prefix).Get(k.ctx, "corefile", metav1.GetOptions{}); cm == nil || cm.Data["Corefile"] != "admin" {
		t.Errorf("the admin's Corefile was overwritten: %v", cm)
	}
	if got := ids(k.inventory(t, k.prefix)); !slices.Equal(got, want) {
		t.Errorf("inventory after v2 = %v, want %v", got, want)
	}
	diff, err = k.admin.Diff(k.ctx, version("2"), apply.Options{})
	if err != nil || diff.Changed() || change(diff, corefile).Action != apply.Skipped {
		t.Errorf("diff after v2: %v, changed %v, want nothing to change, corefile skipped:\n%s", err, diff.Changed(), diff)
	}

	// Gone, it is made again.
	if err := k.typed.CoreV1().ConfigMaps(k.prefix).Delete(k.ctx, "corefile", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	cs = k.mustApply(t, version("3"), apply.Options{})
	if c := change(cs, corefile); c.Action != apply.Created {
		t.Errorf("apply after the delete: corefile %s, want created:\n%s", c.Action, cs)
	}
	if cm, _ := k.typed.CoreV1().ConfigMaps(k.prefix).Get(k.ctx, "corefile", metav1.GetOptions{}); cm == nil || cm.Data["Corefile"] != "3" {
		t.Errorf("corefile made again = %v, want v3's", cm)
	}

	// Dropped by an upgrade, it is pruned, as any object the add-on made.
	dropped := version("4")
	dropped.Objects = dropped.Objects[1:]
	cs = k.mustApply(t, dropped, apply.Options{})
	if c := change(cs, corefile); c.Action != apply.Deleted || k.exists(t, gvrConfigMap, k.prefix, "corefile") {
		t.Errorf("upgrade that drops corefile: %s, want it deleted:\n%s", c.Action, cs)
	}

	if _, err := k.admin.Uninstall(k.ctx, k.prefix, apply.UninstallOptions{Timeout: time.Minute}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"corefile", "plain"} {
		if k.exists(t, gvrConfigMap, k.prefix, name) {
			t.Errorf("uninstall left ConfigMap %s", name)
		}
	}
	if k.exists(t, gvrSecret, k.prefix, "token") {
		t.Error("uninstall left Secret token")
	}
}

// A change the server refuses as immutable, of an IfNotPresent object
// that exists, is never sent: not by the dry-run before the first
// change (which refused the apply), not by ssa, and the object is not
// recreated, with Recreate or its annotation. Not one patch, dry-run or
// not, reaches it.
func TestIfNotPresentNeverDryRunNorRecreated(t *testing.T) {
	k := newCluster(t)
	const frozen = `
apiVersion: v1
kind: Namespace
metadata: {name: NS}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: frozen
  namespace: NS
  annotations: {addonpkg.io/apply: IfNotPresent, addonpkg.io/recreate: enabled}
immutable: true
data: {k: "VERSION"}
`
	version := func(v string) apply.Addon {
		return k.addon(t, k.prefix, v, strings.ReplaceAll(frozen, "VERSION", v))
	}
	t.Cleanup(func() {
		_, _ = k.admin.Uninstall(k.ctx, k.prefix, apply.UninstallOptions{PruneNonEmpty: true, Timeout: 30 * time.Second})
	})
	k.mustApply(t, version("1"), apply.Options{})
	live, err := k.typed.CoreV1().ConfigMaps(k.prefix).Get(k.ctx, "frozen", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}

	var patches atomic.Int64
	cfg := rest.CopyConfig(k.env.Admin)
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if r.Method != http.MethodGet && strings.HasSuffix(r.URL.Path, "/configmaps/frozen") {
				patches.Add(1)
			}
			return rt.RoundTrip(r)
		})
	}
	c, err := apply.New(cfg, apply.ClientOptions{PollInterval: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	for _, opts := range []apply.Options{{DryRun: true}, {}, {DryRun: true, Recreate: true}, {Recreate: true}} {
		cs, err := c.Apply(k.ctx, version("2"), opts)
		if err != nil {
			t.Fatalf("apply %+v of a changed immutable IfNotPresent ConfigMap: %v", opts, err)
		}
		if ch := change(cs, "ConfigMap/"+k.prefix+"/frozen"); ch.Action != apply.Skipped {
			t.Errorf("apply %+v: frozen %s %q, want skipped:\n%s", opts, ch.Action, ch.Reason, cs)
		}
	}
	if n := patches.Load(); n != 0 {
		t.Errorf("%d requests but reads reached the IfNotPresent ConfigMap", n)
	}
	now, err := k.typed.CoreV1().ConfigMaps(k.prefix).Get(k.ctx, "frozen", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if now.UID != live.UID || now.Data["k"] != "1" {
		t.Errorf("frozen is uid %s with %v, want uid %s with v1's data: recreated or changed", now.UID, now.Data, live.UID)
	}
}

// IfNotPresent is no way past the ownership checks, nor a way to adopt:
// another add-on's object, or another controller's, is refused as any
// object is (diff too); forced, it is left as it is, its owner's still,
// and not recorded in this add-on's inventory, so this one's uninstall
// leaves it. An object nobody owns is left alike, not adopted: its
// labels and content stay, and uninstall does not delete it.
func TestIfNotPresentNoWayPastOwnership(t *testing.T) {
	k := newCluster(t)
	owner := k.addon(t, k.prefix+"-a", "1", upgradeV2)
	k.mustApply(t, owner, apply.Options{})
	k.createForeign(t, k.prefix, "nobodys")
	_, err := k.typed.CoreV1().ConfigMaps(k.prefix).Create(k.ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
		Name: "fluxs", Namespace: k.prefix,
		Labels: map[string]string{"kustomize.toolkit.fluxcd.io/name": "apps", "kustomize.toolkit.fluxcd.io/namespace": "flux-system"},
	}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	claim := func(name string) apply.Addon {
		return k.addon(t, k.prefix+"-b", "1", `
apiVersion: v1
kind: ConfigMap
metadata:
  name: `+name+`
  namespace: NS
  annotations: {addonpkg.io/apply: IfNotPresent}
data: {v: "b"}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: only-b, namespace: NS}
`)
	}
	t.Cleanup(func() {
		_, _ = k.admin.Uninstall(k.ctx, k.prefix+"-b", apply.UninstallOptions{Timeout: 30 * time.Second})
		_, _ = k.admin.Uninstall(k.ctx, owner.Name, apply.UninstallOptions{PruneNonEmpty: true, Timeout: 30 * time.Second})
	})

	for _, c := range []struct{ name, by string }{{"stays", owner.Name}, {"fluxs", "Flux Kustomization flux-system/apps"}} {
		b := claim(c.name)
		for _, dry := range []bool{true, false} {
			_, err := k.admin.Apply(k.ctx, b, apply.Options{DryRun: dry})
			var oe *apply.OwnershipError
			if !errors.Is(err, apply.ErrConflict) || !errors.As(err, &oe) || !strings.Contains(err.Error(), c.by) {
				t.Errorf("apply (dry-run %v) of IfNotPresent %s: %v, want an OwnershipError naming %s", dry, c.name, err, c.by)
			}
		}
		if k.exists(t, gvrConfigMap, k.prefix, "only-b") || k.inventory(t, b.Name) != nil {
			t.Fatal("the refused add-on changed the cluster")
		}
	}

	for _, c := range []struct{ name, owner string }{{"stays", owner.Name}, {"nobodys", ""}} {
		b := claim(c.name)
		before, err := k.typed.CoreV1().ConfigMaps(k.prefix).Get(k.ctx, c.name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, opts := range []apply.Options{{Force: true, DryRun: true}, {Force: true}, {}} {
			if c.owner != "" && !opts.Force {
				continue
			}
			cs, err := k.admin.Apply(k.ctx, b, opts)
			if err != nil {
				t.Fatalf("apply %+v of IfNotPresent %s: %v", opts, c.name, err)
			}
			ch := change(cs, "ConfigMap/"+k.prefix+"/"+c.name)
			if ch.Action != apply.Skipped || !strings.Contains(ch.Reason, "neither adopted nor recorded") {
				t.Errorf("apply %+v: %s %s %q, want skipped, not adopted:\n%s", opts, c.name, ch.Action, ch.Reason, cs)
			}
		}
		now, err := k.typed.CoreV1().ConfigMaps(k.prefix).Get(k.ctx, c.name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if now.ResourceVersion != before.ResourceVersion || now.Labels[apply.LabelAddon] != c.owner {
			t.Errorf("%s: resourceVersion %s -> %s, owner %q, want untouched, owner %q", c.name, before.ResourceVersion, now.ResourceVersion, now.Labels[apply.LabelAddon], c.owner)
		}
		if got := ids(k.inventory(t, b.Name)); slices.Contains(got, k.prefix+"_"+c.name+"__ConfigMap") {
			t.Errorf("add-on b's inventory %v records %s, which is not its", got, c.name)
		}
		if _, err := k.admin.Uninstall(k.ctx, b.Name, apply.UninstallOptions{Timeout: 30 * time.Second}); err != nil {
			t.Fatal(err)
		}
		if !k.exists(t, gvrConfigMap, k.prefix, c.name) {
			t.Errorf("uninstalling add-on b deleted %s", c.name)
		}
	}
	if st, err := k.admin.Status(k.ctx, owner.Name); err != nil || len(st) != 1 || st[0].Objects != len(owner.Objects) {
		t.Errorf("the owner's status = %+v, %v: want its %d objects", st, err, len(owner.Objects))
	}
}

// A value of addonpkg.io/apply that is not IfNotPresent or Ignore exactly (a typo
// ssa would read, as it reads any case; another word; as a label too) is
// refused before any request, in one line naming the object. Flux's
// annotation with its other values (Merge) is Flux's: accepted.
func TestApplyPolicyInvalidValueRefusedBeforeAnyRequest(t *testing.T) {
	var requests atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		requests.Add(1)
		http.Error(w, "no", http.StatusInternalServerError)
	}))
	defer srv.Close()
	c, err := apply.New(&rest.Config{Host: srv.URL}, apply.ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	const cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: corefile\n  namespace: kube-system\n"
	for _, meta := range []string{
		"  annotations: {addonpkg.io/apply: ifnotpresent}\n",
		"  annotations: {addonpkg.io/apply: Always}\n",
		"  annotations: {addonpkg.io/apply: \"\"}\n",
		"  labels: {addonpkg.io/apply: ifNotPresent}\n",
		"  annotations: {addonpkg.io/apply: ignore}\n",
	} {
		objs, err := apply.DecodeObjects([]byte(cm + meta))
		if err != nil {
			t.Fatal(err)
		}
		for _, dry := range []bool{false, true} {
			_, err = c.Apply(t.Context(), apply.Addon{Name: "dns", Objects: objs}, apply.Options{DryRun: dry})
			if !errors.Is(err, apply.ErrInvalid) || strings.Contains(err.Error(), "\n") ||
				!strings.Contains(err.Error(), "ConfigMap/kube-system/corefile") || !strings.Contains(err.Error(), "addonpkg.io/apply") {
				t.Errorf("%s(dry-run %v): %v, want ErrInvalid in one line naming the object and the annotation", meta, dry, err)
			}
		}
	}
	if n := requests.Load(); n != 0 {
		t.Errorf("%d requests before the refusal", n)
	}
	objs, err := apply.DecodeObjects([]byte(cm + "  annotations: {kustomize.toolkit.fluxcd.io/ssa: Merge, addonpkg.io/apply: IfNotPresent}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Apply(t.Context(), apply.Addon{Name: "dns", Objects: objs}, apply.Options{}); errors.Is(err, apply.ErrInvalid) {
		t.Errorf("valid policies refused: %v", err)
	}
	if objs, err = apply.DecodeObjects([]byte(cm + "  labels: {addonpkg.io/apply: Ignore}\n")); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Apply(t.Context(), apply.Addon{Name: "dns", Objects: objs}, apply.Options{}); errors.Is(err, apply.ErrInvalid) {
		t.Errorf("Ignore refused: %v", err)
	}
}

// An IfNotPresent object another add-on makes after the plan was read
// (absent then) is skipped by ssa, which finds it, and is not recorded:
// this add-on did not make it, and its inventory may not claim it.
func TestIfNotPresentMadeMeanwhileNotRecorded(t *testing.T) {
	k := newCluster(t)
	if _, err := k.typed.CoreV1().Namespaces().Create(k.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: k.prefix}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	const cm = `
apiVersion: v1
kind: ConfigMap
metadata:
  name: shared
  namespace: NS
  annotations: {addonpkg.io/apply: IfNotPresent}
data: {by: "ADDON"}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: own-ADDON, namespace: NS}
`
	a := k.addon(t, k.prefix+"-a", "1", strings.ReplaceAll(cm, "ADDON", "a"))
	other := k.addon(t, k.prefix+"-b", "1", strings.ReplaceAll(cm, "ADDON", "b"))
	t.Cleanup(func() {
		for _, n := range []string{a.Name, other.Name} {
			_, _ = k.admin.Uninstall(k.ctx, n, apply.UninstallOptions{Timeout: 30 * time.Second})
		}
		_ = k.typed.CoreV1().Namespaces().Delete(k.ctx, k.prefix, metav1.DeleteOptions{})
	})
	made := false
	apply.SetTestHook(func(stage string) {
		if stage == "pending" && !made {
			made = true
			k.mustApply(t, other, apply.Options{})
		}
	})
	t.Cleanup(func() { apply.SetTestHook(nil) })
	cs := k.mustApply(t, a, apply.Options{})
	apply.SetTestHook(nil)
	if !made {
		t.Fatal("the other add-on never made the ConfigMap: the test proves nothing")
	}
	if ch := change(cs, "ConfigMap/"+k.prefix+"/shared"); ch.Action != apply.Skipped || !strings.Contains(ch.Reason, "neither adopted nor recorded") {
		t.Errorf("shared: %s %q, want skipped, not recorded:\n%s", ch.Action, ch.Reason, cs)
	}
	if got, want := ids(k.inventory(t, a.Name)), []string{k.prefix + "_own-a__ConfigMap"}; !slices.Equal(got, want) {
		t.Errorf("inventory of a = %v, want %v", got, want)
	}
	live, err := k.typed.CoreV1().ConfigMaps(k.prefix).Get(k.ctx, "shared", metav1.GetOptions{})
	if err != nil || live.Labels[apply.LabelAddon] != other.Name || live.Data["by"] != "b" {
		t.Errorf("shared = %v, %v: want b's", live, err)
	}
}

// An IfNotPresent object made after the plan was read by another apply
// of the same add-on at once (an apply that wrote no pending record, as
// a re-apply does) is this add-on's: it stays on record. Taken for
// someone else's, it was dropped from the record, and, once the other
// apply had finished without writing, left carrying the add-on's labels
// where no prune or uninstall finds it.
func TestIfNotPresentMadeMeanwhileByItselfStaysRecorded(t *testing.T) {
	k := newCluster(t)
	if _, err := k.typed.CoreV1().Namespaces().Create(k.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: k.prefix}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	a := k.addon(t, k.prefix, "1", `
apiVersion: v1
kind: ConfigMap
metadata:
  name: once
  namespace: NS
  annotations: {addonpkg.io/apply: IfNotPresent}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: plain, namespace: NS}
`)
	t.Cleanup(func() {
		_, _ = k.admin.Uninstall(k.ctx, a.Name, apply.UninstallOptions{Timeout: 30 * time.Second})
		_ = k.typed.CoreV1().Namespaces().Delete(k.ctx, k.prefix, metav1.DeleteOptions{})
	})
	k.mustApply(t, a, apply.Options{})
	want := ids(k.inventory(t, a.Name))
	if err := k.typed.CoreV1().ConfigMaps(k.prefix).Delete(k.ctx, "once", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	made := false
	apply.SetTestHook(func(stage string) {
		if stage == "pending" && !made {
			made = true
			k.mustApply(t, a, apply.Options{}) // the other apply, which makes it again
		}
	})
	t.Cleanup(func() { apply.SetTestHook(nil) })
	k.mustApply(t, a, apply.Options{})
	apply.SetTestHook(nil)
	if !made {
		t.Fatal("the other apply never ran: the test proves nothing")
	}
	live, err := k.typed.CoreV1().ConfigMaps(k.prefix).Get(k.ctx, "once", metav1.GetOptions{})
	if err != nil || live.Labels[apply.LabelAddon] != a.Name {
		t.Fatalf("once = %v, %v: want the add-on's, made by the other apply", live, err)
	}
	if got := ids(k.inventory(t, a.Name)); !slices.Equal(got, want) {
		t.Errorf("inventory = %v, want %v: the add-on's ConfigMap is recorded nowhere", got, want)
	}
}

// An IfNotPresent object that exists is still waited for: left as it
// is, it must still be ready (a Deployment no controller runs here never
// is), unless addonpkg.io/wait: disabled.
func TestIfNotPresentStillWaitedFor(t *testing.T) {
	k := newCluster(t)
	const deploy = `
apiVersion: v1
kind: Namespace
metadata: {name: NS}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: once
  namespace: NS
  annotations: {addonpkg.io/apply: IfNotPresent WAIT}
spec:
  replicas: 1
  selector: {matchLabels: {app: once}}
  template:
    metadata: {labels: {app: once}}
    spec:
      containers: [{name: once, image: 127.0.0.1/once:1}]
`
	a := k.addon(t, k.prefix, "1", strings.ReplaceAll(deploy, " WAIT", ""))
	t.Cleanup(func() {
		_, _ = k.admin.Uninstall(k.ctx, a.Name, apply.UninstallOptions{PruneNonEmpty: true, Timeout: 30 * time.Second})
	})
	k.mustApply(t, a, apply.Options{})
	cs, err := k.admin.Apply(k.ctx, a, apply.Options{Wait: true, Timeout: 3 * time.Second})
	var we *apply.WaitError
	if !errors.Is(err, apply.ErrTimeout) || !errors.As(err, &we) || len(we.Objects) != 1 || !strings.HasPrefix(we.Objects[0], "Deployment/"+k.prefix+"/once") {
		t.Fatalf("apply with wait of an unready IfNotPresent Deployment: %v, want a WaitError naming it", err)
	}
	if c := change(cs, "Deployment/"+k.prefix+"/once"); c.Action != apply.Skipped {
		t.Errorf("Deployment once: %s, want skipped:\n%s", c.Action, cs)
	}
	noWait := k.addon(t, k.prefix, "1", strings.ReplaceAll(deploy, " WAIT", ", addonpkg.io/wait: disabled"))
	if _, err := k.admin.Apply(k.ctx, noWait, apply.Options{Wait: true, Timeout: 3 * time.Second}); err != nil {
		t.Errorf("apply with wait of an IfNotPresent Deployment not waited for: %v", err)
	}
}

// An installer whose role grants create on Secrets but no patch
// upgrades an add-on whose IfNotPresent Secret exists: the apply only
// reads that Secret, so the pre-flight asks for nothing more of it. It
// asked patch of it, and refused the least-privilege installer.
func TestIfNotPresentPreflightAsksOnlyToRead(t *testing.T) {
	k := newCluster(t)
	if _, err := k.typed.CoreV1().Namespaces().Create(k.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: k.prefix}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = k.typed.CoreV1().Namespaces().Delete(k.ctx, k.prefix, metav1.DeleteOptions{}) })
	version := func(v string) apply.Addon {
		return k.addon(t, k.prefix, v, strings.ReplaceAll(ifNotPresentAddon, "VERSION", v))
	}
	k.mustApply(t, version("1"), apply.Options{Timeout: time.Minute})
	user := "once-" + k.prefix
	as := k.asUser(t, user, []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get", "create"}},
		{APIGroups: []string{""}, Resources: []string{"secrets"}, ResourceNames: []string{apply.InventoryName(k.prefix)}, Verbs: []string{"update"}},
		{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "create", "patch"}},
		{APIGroups: []string{"authorization.k8s.io"}, Resources: []string{"selfsubjectaccessreviews"}, Verbs: []string{"create"}},
	})
	// The plain ConfigMap changes; the Secret is the one the role may
	// not patch.
	var (
		cs  *apply.ChangeSet
		err error
	)
	untilRBACSettles(func() bool {
		cs, err = as.Apply(k.ctx, version("2"), apply.Options{Timeout: time.Minute})
		return err == nil || !errors.Is(err, apply.ErrForbidden)
	})
	if err != nil {
		t.Fatalf("upgrade by an installer who may create Secrets but not patch them: %v", err)
	}
	token := "Secret/" + k.prefix + "/token"
	if c := change(cs, token); c.Action != apply.Skipped {
		t.Errorf("%s: %s, want skipped:\n%s", token, c.Action, cs)
	}
	if c := change(cs, "ConfigMap/"+k.prefix+"/plain"); c.Action != apply.Configured {
		t.Errorf("plain ConfigMap: %s, want configured:\n%s", c.Action, cs)
	}
}

// rbacSettles bounds how long untilRBACSettles retries. The API
// server's RBAC authorizer reads Roles and bindings through an informer,
// so a grant (or a revocation) takes effect a moment after it is
// written: milliseconds on a quiet machine, seconds on a loaded one,
// where the 10 s each test allowed before left little margin. A
// backstop, not a wait: the retry ends as soon as the grant is seen.
const rbacSettles = 2 * time.Minute

// untilRBACSettles calls try until it reports done (what it tried no
// longer meets the RBAC of before the test's grant) or rbacSettles has
// passed; the caller then checks what try left.
func untilRBACSettles(try func() (done bool)) {
	for deadline := time.Now().Add(rbacSettles); !try() && time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
	}
}

// asUser is a client that acts as user (impersonated by the admin),
// granted rules cluster-wide and nothing else.
func (k *cluster) asUser(t *testing.T, user string, rules []rbacv1.PolicyRule) *apply.Client {
	t.Helper()
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: user}, Rules: rules}
	if _, err := k.typed.RbacV1().ClusterRoles().Create(k.ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err := k.typed.RbacV1().ClusterRoleBindings().Create(k.ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: user},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: user},
		Subjects:   []rbacv1.Subject{{Kind: "User", Name: user, APIGroup: "rbac.authorization.k8s.io"}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx := context.Background()
		_ = k.typed.RbacV1().ClusterRoleBindings().Delete(ctx, user, metav1.DeleteOptions{})
		_ = k.typed.RbacV1().ClusterRoles().Delete(ctx, user, metav1.DeleteOptions{})
	})
	cfg := rest.CopyConfig(k.env.Admin)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
	c, err := apply.New(cfg, apply.ClientOptions{PollInterval: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// An IfNotPresent object that is there, and nobody's, when the plan is
// read, and deleted before the apply reaches it, is made by the apply
// (ssa finds it absent), with the add-on's labels: it is this add-on's
// now, and recorded, by the applied record, or by the pending one when
// a later stage fails (a webhook configuration the server refuses). It
// was left out of both, carrying the add-on's labels where no prune or
// uninstall would find it.
func TestIfNotPresentGoneMeanwhileRecorded(t *testing.T) {
	const badWebhook = `
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: NS-bad}
webhooks:
- name: bad
  admissionReviewVersions: [v1]
  sideEffects: None
  clientConfig: {}
`
	for _, tc := range []struct {
		name, extra string
		fails       bool
	}{{"applied", "", false}, {"failed", badWebhook, true}} {
		t.Run(tc.name, func(t *testing.T) {
			k := newCluster(t)
			if _, err := k.typed.CoreV1().Namespaces().Create(k.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: k.prefix}}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			a := k.addon(t, k.prefix, "1", `
apiVersion: v1
kind: ConfigMap
metadata:
  name: once
  namespace: NS
  annotations: {addonpkg.io/apply: IfNotPresent}
data: {by: addon}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: plain, namespace: NS}
`+tc.extra)
			t.Cleanup(func() {
				_, _ = k.admin.Uninstall(k.ctx, a.Name, apply.UninstallOptions{Timeout: 30 * time.Second})
				_ = k.typed.CoreV1().Namespaces().Delete(k.ctx, k.prefix, metav1.DeleteOptions{})
			})
			k.createForeign(t, k.prefix, "once")
			deleted := false
			apply.SetTestHook(func(stage string) {
				if stage == "pending" && !deleted {
					deleted = true
					if err := k.typed.CoreV1().ConfigMaps(k.prefix).Delete(k.ctx, "once", metav1.DeleteOptions{}); err != nil {
						t.Errorf("delete the ConfigMap: %v", err)
					}
				}
			})
			t.Cleanup(func() { apply.SetTestHook(nil) })
			cs, err := k.admin.Apply(k.ctx, a, apply.Options{})
			apply.SetTestHook(nil)
			if !deleted {
				t.Fatal("the ConfigMap was never deleted: the test proves nothing")
			}
			if (err != nil) != tc.fails {
				t.Fatalf("apply = %v, want an error: %v", err, tc.fails)
			}
			if ch := change(cs, "ConfigMap/"+k.prefix+"/once"); ch.Action != apply.Created {
				t.Errorf("once: %s %q, want created:\n%s", ch.Action, ch.Reason, cs)
			}
			live, err := k.typed.CoreV1().ConfigMaps(k.prefix).Get(k.ctx, "once", metav1.GetOptions{})
			if err != nil || live.Labels[apply.LabelAddon] != a.Name || live.Data["by"] != "addon" {
				t.Fatalf("once = %v, %v: want the add-on's, made by the apply", live, err)
			}
			inv := k.inventory(t, a.Name)
			if !slices.Contains(ids(inv), k.prefix+"_once__ConfigMap") {
				t.Errorf("inventory (%s) = %v: the ConfigMap the apply made, with the add-on's labels, is recorded nowhere", inv.Phase, ids(inv))
			}
		})
	}
}
