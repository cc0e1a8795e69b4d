package apply_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/addonpkg/addonpkg/pkg/apply"
)

// A webhook that refuses every ConfigMap of the add-on's namespace (its
// server does not exist, and it fails closed) does not stop the add-on's
// own ConfigMap: webhook configurations are applied last. Roles come
// before RoleBindings, ClusterRoles with the definitions.
func TestStagesWebhooksLastRolesBeforeBindings(t *testing.T) {
	k := newCluster(t)
	a := k.addon(t, k.prefix, "1", `
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: NS-deny}
webhooks:
- name: deny.GROUP
  admissionReviewVersions: [v1]
  sideEffects: None
  failurePolicy: Fail
  timeoutSeconds: 2
  clientConfig:
    service: {name: nobody, namespace: NS, path: /validate}
  namespaceSelector:
    matchLabels: {kubernetes.io/metadata.name: NS}
  rules:
  - {apiGroups: [""], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [configmaps]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: reader, namespace: NS}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: reader}
subjects: [{kind: ServiceAccount, name: default, namespace: NS}]
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: NS}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: reader, namespace: NS}
rules: [{apiGroups: [""], resources: [configmaps], verbs: [get]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: NS-reader}
rules: [{apiGroups: [""], resources: [configmaps], verbs: [get]}]
---
apiVersion: v1
kind: Namespace
metadata: {name: NS}
`)
	t.Cleanup(func() {
		_ = k.typed.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(context.Background(), k.prefix+"-deny", metav1.DeleteOptions{})
	})
	var stages []string
	progress := func(st apply.Stage) {
		if st.Addon != a.Name {
			t.Errorf("stage %s of add-on %q, want %q", st.Name, st.Addon, a.Name)
		}
		var objs []string
		for _, c := range st.Changes {
			objs = append(objs, strings.SplitN(c.Object, "/", 2)[0])
		}
		stages = append(stages, st.Name+": "+strings.Join(objs, " "))
	}
	cs := k.mustApply(t, a, apply.Options{Progress: progress, Wait: true})
	all := "Namespace ClusterRole Role RoleBinding ConfigMap ValidatingWebhookConfiguration"
	wantStages := []string{"definitions: Namespace ClusterRole", "resources: Role RoleBinding ConfigMap", "webhooks: ValidatingWebhookConfiguration", "pruned: ", "waiting: " + all, "ready: " + all}
	if !slices.Equal(stages, wantStages) {
		t.Errorf("progress %q, want %q", stages, wantStages)
	}
	var order []string
	for _, c := range cs.Changes {
		order = append(order, strings.SplitN(c.Object, "/", 2)[0])
	}
	want := []string{"Namespace", "ClusterRole", "Role", "RoleBinding", "ConfigMap", "ValidatingWebhookConfiguration"}
	if !slices.Equal(order, want) {
		t.Errorf("applied in order %v, want %v", order, want)
	}
	// The webhook is live: a ConfigMap it has not seen is refused.
	b := k.addon(t, k.prefix+"-other", "1", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: late, namespace: NS}\n")
	_, err := k.admin.Apply(k.ctx, b, apply.Options{})
	if err == nil || !strings.Contains(err.Error(), "ConfigMap/"+k.prefix+"/late") {
		t.Errorf("a ConfigMap after the webhook: %v, want refused by the webhook, named", err)
	}
	t.Log(err)
}

const immutableV1 = `
apiVersion: v1
kind: ConfigMap
metadata: {name: frozen, namespace: default}
immutable: true
data: {v: "1"}
`

// A change the server refuses as immutable fails, named, unless Recreate
// (the option or the object's annotation): then the object is deleted,
// waited for, and created again.
func TestRecreateImmutable(t *testing.T) {
	k := newCluster(t)
	stream := strings.Replace(immutableV1, "frozen", k.prefix, 1)
	k.mustApply(t, k.addon(t, k.prefix, "1", stream), apply.Options{})
	before, err := k.typed.CoreV1().ConfigMaps("default").Get(k.ctx, k.prefix, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	v2 := k.addon(t, k.prefix, "2", strings.Replace(stream, `v: "1"`, `v: "2"`, 1))
	_, err = k.admin.Apply(k.ctx, v2, apply.Options{})
	if !errors.Is(err, apply.ErrRejected) || !errors.Is(err, apply.ErrImmutable) || !strings.Contains(err.Error(), "ConfigMap/default/"+k.prefix) {
		t.Fatalf("immutable change without Recreate: %v, want ErrRejected and ErrImmutable naming the ConfigMap", err)
	}

	// The dry-run says it would be recreated.
	cs, err := k.admin.Diff(k.ctx, v2, apply.Options{Recreate: true})
	if err != nil || len(cs.Changes) != 1 || cs.Changes[0].Action != apply.Recreated || !cs.Changed() {
		t.Errorf("dry-run with Recreate: %v\n%s", err, cs)
	}

	for _, tc := range []struct {
		name  string
		a     apply.Addon
		opts  apply.Options
		value string
	}{
		{"option", v2, apply.Options{Recreate: true}, "2"},
		{"annotation", k.addon(t, k.prefix, "3", strings.Replace(strings.Replace(stream, `v: "1"`, `v: "3"`, 1),
			"namespace: default}", "namespace: default, annotations: {addonpkg.io/recreate: enabled}}", 1)+
			"---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: "+k.prefix+"-new, namespace: default}\n"), apply.Options{}, "3"},
	} {
		cs, err := k.admin.Apply(k.ctx, tc.a, tc.opts)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		// Said as done: recreated, not created; a new object is created.
		for _, ch := range cs.Changes {
			want := apply.Recreated
			if strings.HasSuffix(ch.Object, "-new") {
				want = apply.Created
			}
			if ch.Action != want {
				t.Errorf("%s: %s %s, want %s", tc.name, ch.Action, ch.Object, want)
			}
		}
		after, err := k.typed.CoreV1().ConfigMaps("default").Get(k.ctx, k.prefix, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if after.UID == before.UID || after.Data["v"] != tc.value {
			t.Errorf("%s: not recreated (uid %s, data %v):\n%s", tc.name, after.UID, after.Data, cs)
		}
		before = after
	}
}

// A CRD the server refuses to establish (its kind is taken in its group)
// stops the apply before anything depends on it, without waiting out the
// timeout: kstatus says Failed, and the error names the CRD and why.
func TestUnestablishedCRDTimesOutNamed(t *testing.T) {
	k := newCluster(t)
	k.mustApply(t, k.addon(t, k.prefix+"-a", "1", crdAddon), apply.Options{})
	clash := k.addon(t, k.prefix+"-b", "1", `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gadgets.GROUP}
spec:
  group: GROUP
  names: {kind: Widget, listKind: WidgetList, plural: gadgets, singular: gadget}
  scope: Namespaced
  versions:
  - {name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: after-crd, namespace: NS}
`)
	start := time.Now()
	_, err := k.admin.Apply(k.ctx, clash, apply.Options{Timeout: time.Minute})
	var we *apply.WaitError
	if !errors.Is(err, apply.ErrNotReady) || errors.Is(err, apply.ErrTimeout) || !errors.As(err, &we) {
		t.Fatalf("apply of a CRD that is never established: %v, want a WaitError, failed", err)
	}
	if len(we.Objects) != 1 || !strings.HasPrefix(we.Objects[0], "CustomResourceDefinition/gadgets."+k.prefix+".example.com: Failed: ") ||
		!strings.Contains(we.Objects[0], "already in use") {
		t.Errorf("error names %v, want only the CRD and why", we.Objects)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("failing took %s: it waited out the timeout", d)
	}
	if k.exists(t, gvrConfigMap, k.prefix, "after-crd") {
		t.Error("the ConfigMap after the CRD was applied anyway")
	}
	if inv := k.inventory(t, clash.Name); inv == nil || inv.Phase != apply.PhasePending {
		t.Errorf("inventory after the failed apply = %+v, want pending", inv)
	}
}

// certgenV1 is a ClusterRole and, in a later stage, a Job whose template
// (immutable) an upgrade changes, as ingress-nginx's certgen Jobs.
const certgenV1 = `
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: NS-role}
rules: [{apiGroups: [""], resources: [configmaps], verbs: [get]}]
---
apiVersion: batch/v1
kind: Job
metadata: {name: NS-certgen, namespace: default}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: create, image: registry.example/certgen:v1}]
`

// An upgrade that changes an immutable field in a late stage (a Job's
// template: every ingress-nginx upgrade changes its certgen Jobs) is
// refused before any change, ErrImmutable named: before, the stages
// ahead of it (the ClusterRole) were changed first, and the upgrade was
// left half made.
func TestImmutableRefusedBeforeAnyChange(t *testing.T) {
	k := newCluster(t)
	k.mustApply(t, k.addon(t, k.prefix, "1", certgenV1), apply.Options{})
	inv := k.inventorySecret(t, k.prefix).ResourceVersion
	role := func() string {
		t.Helper()
		r, err := k.typed.RbacV1().ClusterRoles().Get(k.ctx, k.prefix+"-role", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return strings.Join(r.Rules[0].Verbs, ",")
	}
	v2 := k.addon(t, k.prefix, "2", strings.NewReplacer("verbs: [get]", "verbs: [get, list]", "certgen:v1", "certgen:v2").Replace(certgenV1))
	_, err := k.admin.Apply(k.ctx, v2, apply.Options{})
	if !errors.Is(err, apply.ErrImmutable) || !strings.Contains(err.Error(), "Job/default/"+k.prefix+"-certgen") {
		t.Fatalf("upgrade with a changed Job template: %v, want ErrImmutable naming the Job", err)
	}
	if got := role(); got != "get" || k.inventorySecret(t, k.prefix).ResourceVersion != inv {
		t.Errorf("the refused upgrade changed the cluster: ClusterRole verbs %s, inventory changed %v", got, k.inventorySecret(t, k.prefix).ResourceVersion != inv)
	}
	k.mustApply(t, v2, apply.Options{Recreate: true})
	if got := role(); got != "get,list" {
		t.Errorf("the upgrade with Recreate left the ClusterRole's verbs %s", got)
	}
}

// A caller that names no content (no digest, no identity) and changes
// the objects under the same version gets the same dry-run before any
// change as an upgrade: the record alone does not say the content is
// the same.
func TestImmutableRefusedUnderTheSameVersion(t *testing.T) {
	k := newCluster(t)
	unnamed := func(yaml string) apply.Addon {
		a := k.addon(t, k.prefix, "1", yaml)
		a.Source, a.Digest, a.Identity = "", "", ""
		return a
	}
	k.mustApply(t, unnamed(certgenV1), apply.Options{})
	_, err := k.admin.Apply(k.ctx, unnamed(strings.NewReplacer("verbs: [get]", "verbs: [get, list]", "certgen:v1", "certgen:v2").Replace(certgenV1)), apply.Options{})
	if !errors.Is(err, apply.ErrImmutable) || !strings.Contains(err.Error(), "dry-run failed") {
		t.Fatalf("the same version with a changed Job template: %v, want ErrImmutable from the dry-run before any change", err)
	}
	r, err := k.typed.RbacV1().ClusterRoles().Get(k.ctx, k.prefix+"-role", metav1.GetOptions{})
	if err != nil || strings.Join(r.Rules[0].Verbs, ",") != "get" {
		t.Errorf("the refused apply changed the ClusterRole: %v, %v", r.Rules, err)
	}
}

// An upgrade whose CRD drops the rule that made a field of its custom
// resources immutable, and changes that field, applies: the CRD's stage
// comes first, and the custom resource is applied under the new rule.
// The dry-run before any change read the custom resource under the old
// one, and refused the upgrade as immutable (its only way out, Recreate,
// deletes the custom resource).
func TestImmutableByAnOldCRDRuleNotRefused(t *testing.T) {
	k := newCluster(t)
	crd := func(rule string) string {
		return `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gadgets.GROUP}
spec:
  group: GROUP
  names: {kind: Gadget, listKind: GadgetList, plural: gadgets, singular: gadget}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: string` + rule + `}
`
	}
	const cr = `---
apiVersion: GROUP/v1
kind: Gadget
metadata: {name: g, namespace: default}
spec: {size: SIZE}
`
	v1 := crd(`, x-kubernetes-validations: [{rule: "self == oldSelf", message: "Value is immutable"}]`) + strings.ReplaceAll(cr, "SIZE", "small")
	v2 := crd("") + strings.ReplaceAll(cr, "SIZE", "large")
	k.mustApply(t, k.addon(t, k.prefix, "1", v1), apply.Options{Wait: true, Timeout: time.Minute})
	if _, err := k.admin.Apply(k.ctx, k.addon(t, k.prefix, "2", v2), apply.Options{}); err != nil {
		t.Fatalf("upgrade whose CRD drops the immutability rule: %v", err)
	}
	got, err := k.get(schema.GroupVersionResource{Group: k.prefix + ".example.com", Version: "v1", Resource: "gadgets"}, "default", "g")
	if err != nil {
		t.Fatal(err)
	}
	if size, _, _ := unstructured.NestedString(got.Object, "spec", "size"); size != "large" {
		t.Errorf("spec.size %q, want large", size)
	}
	if _, err := k.admin.Uninstall(k.ctx, k.prefix, apply.UninstallOptions{Timeout: time.Minute}); err != nil {
		t.Fatal(err)
	}
}

// A Namespace is never recreated, by the option or by the add-on's own
// annotation: ssa recreates an object on any change the server refuses
// (here a label value it finds invalid), and deleting a Namespace
// deletes all it holds. An add-on that named someone's Namespace with
// the annotation deleted it, with what it held, on its first install.
func TestRecreateNeverDeletesANamespace(t *testing.T) {
	k := newCluster(t)
	ns, err := k.typed.CoreV1().Namespaces().Create(k.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: k.prefix}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	k.createForeign(t, k.prefix, "someones")
	const bad = `
apiVersion: v1
kind: Namespace
metadata:
  name: NS
  labels: {example.com/bad: "not a label value!"}
  annotations: {addonpkg.io/recreate: enabled}
`
	for _, opts := range []apply.Options{{}, {Recreate: true}} {
		_, err := k.admin.Apply(k.ctx, k.addon(t, k.prefix, "1", bad), opts)
		if !errors.Is(err, apply.ErrRejected) {
			t.Errorf("Recreate %v: apply of an invalid Namespace: %v, want ErrRejected", opts.Recreate, err)
		}
		live, err := k.typed.CoreV1().Namespaces().Get(k.ctx, k.prefix, metav1.GetOptions{})
		if err != nil || live.UID != ns.UID || live.DeletionTimestamp != nil {
			t.Fatalf("Recreate %v: the apply deleted the Namespace (%v)", opts.Recreate, err)
		}
		if cs, err := k.admin.Diff(k.ctx, k.addon(t, k.prefix, "1", bad), opts); cs != nil && slices.ContainsFunc(cs.Changes, func(c apply.Change) bool { return c.Action == apply.Recreated }) {
			t.Errorf("Recreate %v: the diff says the Namespace would be recreated (%v):\n%s", opts.Recreate, err, cs)
		}
	}
	if !k.exists(t, gvrConfigMap, k.prefix, "someones") {
		t.Error("the ConfigMap in the Namespace is gone")
	}
}

// Recreate deletes and creates again an object whose change is refused
// as immutable, not one the server finds invalid: ssa recreates on any
// 422, and the create failed as the patch did, so the object was deleted
// and not made again. The apply is refused with nothing changed.
func TestRecreateOnlyWhatIsImmutable(t *testing.T) {
	k := newCluster(t)
	const v1 = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: NS, namespace: default, annotations: {addonpkg.io/recreate: enabled}}\ndata: {v: \"1\"}\n"
	k.mustApply(t, k.addon(t, k.prefix, "1", v1), apply.Options{})
	before, err := k.typed.CoreV1().ConfigMaps("default").Get(k.ctx, k.prefix, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	bad := strings.Replace(v1, "namespace: default,", `namespace: default, labels: {example.com/bad: "not a label value!"},`, 1)
	for _, opts := range []apply.Options{{}, {Recreate: true}, {Recreate: true, DryRun: true}} {
		cs, err := k.admin.Apply(k.ctx, k.addon(t, k.prefix, "2", bad), opts)
		if !errors.Is(err, apply.ErrRejected) || errors.Is(err, apply.ErrImmutable) {
			t.Errorf("Recreate %v, DryRun %v: apply of an invalid change: %v, want ErrRejected, not ErrImmutable (changes: %v)", opts.Recreate, opts.DryRun, err, cs)
		}
		after, err := k.typed.CoreV1().ConfigMaps("default").Get(k.ctx, k.prefix, metav1.GetOptions{})
		if err != nil || after.UID != before.UID {
			t.Fatalf("Recreate %v: the apply deleted the ConfigMap (%v)", opts.Recreate, err)
		}
	}
	if _, err := k.admin.Uninstall(k.ctx, k.prefix, apply.UninstallOptions{}); err != nil {
		t.Fatal(err)
	}
}
