package apply_test

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/addonpkg/addonpkg/internal/testing/kubeenv"
	"github.com/addonpkg/addonpkg/pkg/apply"
)

// Connect reads a kubeconfig and its context as kubectl does, and tells
// an unreachable server, refused credentials and a missing context apart.
func TestConnect(t *testing.T) {
	k := newCluster(t)
	ctx := context.Background()
	c, err := apply.Connect(ctx, apply.ConnectOptions{Kubeconfig: k.env.AdminKubeconfig})
	if err != nil {
		t.Fatal(err)
	}
	if c.Host() != k.env.URL {
		t.Errorf("host %s, want %s", c.Host(), k.env.URL)
	}
	t.Setenv("KUBECONFIG", k.env.RestrictedKubeconfig)
	if _, err := apply.Connect(ctx, apply.ConnectOptions{}); err != nil {
		t.Errorf("connect with KUBECONFIG: %v", err)
	}
	// The admin acting as the restricted user is refused what it is.
	as, err := apply.Connect(ctx, apply.ConnectOptions{Kubeconfig: k.env.AdminKubeconfig, Impersonate: "restricted"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := as.Apply(ctx, k.addon(t, k.prefix, "1", upgradeV2), apply.Options{}); !errors.Is(err, apply.ErrForbidden) {
		t.Errorf("apply as restricted: %v, want ErrForbidden", err)
	}
	// A namespace the API server would refuse is refused before any
	// request, whichever option names it.
	for _, opts := range []apply.ClientOptions{{Namespace: "Not_A_Label"}, {InventoryNamespace: "../kube-system"}} {
		_, err := apply.Connect(ctx, apply.ConnectOptions{Kubeconfig: k.env.AdminKubeconfig, ClientOptions: opts})
		if !errors.Is(err, apply.ErrInvalidOption) || !strings.Contains(err.Error(), "namespace \"") {
			t.Errorf("connect with %+v: %v, want ErrInvalidOption naming the namespace", opts, err)
		}
	}
	// A kubeconfig problem is ErrKubeconfig in one line naming the file
	// and what is wrong with it, in place of client-go's messages.
	noContext := filepath.Join(t.TempDir(), "no-current-context")
	raw, err := os.ReadFile(k.env.AdminKubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(noContext, regexp.MustCompile(`(?m)^current-context:.*$`).ReplaceAll(raw, nil), 0o600); err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	for _, tc := range []struct {
		name, kubeconfigEnv string
		opts                apply.ConnectOptions
		want                []string
	}{
		{"unknown context", k.env.RestrictedKubeconfig, apply.ConnectOptions{Context: "nope"}, []string{k.env.RestrictedKubeconfig, `no context "nope" (it has `}},
		{"missing file", "", apply.ConnectOptions{Kubeconfig: filepath.Join(home, "missing")}, []string{filepath.Join(home, "missing")}},
		{"none at all", filepath.Join(home, "a") + string(os.PathListSeparator) + filepath.Join(home, "b"), apply.ConnectOptions{},
			[]string{"none found", filepath.Join(home, "a") + ", " + filepath.Join(home, "b"), "not running in a Pod"}},
		// Not "kubeconfig : no context "nope" (it has none)".
		{"none at all, a context named", filepath.Join(home, "a"), apply.ConnectOptions{Context: "nope"},
			[]string{`kubeconfig: none found (looked for ` + filepath.Join(home, "a") + `), so no context "nope"`}},
		{"no current context", noContext, apply.ConnectOptions{}, []string{noContext, "no current-context"}},
	} {
		t.Setenv("KUBECONFIG", tc.kubeconfigEnv)
		_, err := apply.Connect(ctx, tc.opts)
		if !errors.Is(err, apply.ErrKubeconfig) {
			t.Errorf("%s: %v, want ErrKubeconfig", tc.name, err)
			continue
		}
		if strings.Contains(err.Error(), "KUBERNETES_MASTER") {
			t.Errorf("%s: %v names a variable nothing reads", tc.name, err)
		}
		oneLine(t, err, tc.want...)
	}

	bad := rest.CopyConfig(k.env.Admin)
	bad.BearerToken = "not-a-token"
	c, err = apply.New(bad, apply.ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Ping(ctx); !errors.Is(err, apply.ErrUnauthorized) {
		t.Errorf("bad token: %v, want ErrUnauthorized", err)
	}

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	gone := rest.CopyConfig(k.env.Admin)
	gone.Host = "https://" + addr
	gone.Timeout = 5 * time.Second
	c, err = apply.New(gone, apply.ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	err = c.Ping(ctx)
	if !errors.Is(err, apply.ErrUnreachable) || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), addr) {
		t.Errorf("closed port: %v, want ErrUnreachable on one line naming %s", err, addr)
	}
}

// What the pre-flight asks for is enough: a user granted exactly the
// permissions it listed as missing (and nothing else) installs the
// add-on, upgrades it with a prune, and uninstalls it.
func TestPreflightListIsSufficient(t *testing.T) {
	k := newCluster(t)
	restricted, err := apply.New(k.env.Restricted, apply.ClientOptions{PollInterval: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	v1 := k.addon(t, k.prefix, "1", upgradeV1)
	_, err = restricted.Apply(k.ctx, v1, apply.Options{})
	var pe *apply.PreflightError
	if !errors.As(err, &pe) {
		t.Fatalf("restricted apply: %v, want a PreflightError", err)
	}
	// Grant what it listed, plus what the upgrade and uninstall will ask
	// for (delete and update), cluster-wide per resource.
	rules := map[string]*rbacv1.PolicyRule{}
	for _, p := range append(pe.Missing,
		apply.Permission{Verb: "delete", Resource: "configmaps"}, apply.Permission{Verb: "delete", Resource: "namespaces"},
		apply.Permission{Verb: "update", Resource: "secrets"}, apply.Permission{Verb: "delete", Resource: "secrets"}) {
		key := p.Group + "/" + p.Resource
		if rules[key] == nil {
			rules[key] = &rbacv1.PolicyRule{APIGroups: []string{p.Group}, Resources: []string{p.Resource}}
		}
		rules[key].Verbs = append(rules[key].Verbs, p.Verb)
	}
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: k.prefix}}
	for _, r := range rules {
		role.Rules = append(role.Rules, *r)
	}
	if _, err := k.typed.RbacV1().ClusterRoles().Create(k.ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err = k.typed.RbacV1().ClusterRoleBindings().Create(k.ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: k.prefix},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: k.prefix},
		Subjects:   []rbacv1.Subject{{Kind: "User", Name: "restricted", APIGroup: "rbac.authorization.k8s.io"}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx := context.Background()
		_ = k.typed.RbacV1().ClusterRoleBindings().Delete(ctx, k.prefix, metav1.DeleteOptions{})
		_ = k.typed.RbacV1().ClusterRoles().Delete(ctx, k.prefix, metav1.DeleteOptions{})
	})
	untilRBACSettles(func() bool {
		_, err = restricted.Apply(k.ctx, v1, apply.Options{Wait: true})
		return err == nil || !errors.Is(err, apply.ErrForbidden)
	})
	if err != nil {
		t.Fatalf("apply with the listed permissions: %v", err)
	}
	if _, err := restricted.Apply(k.ctx, k.addon(t, k.prefix, "2", upgradeV2), apply.Options{}); err != nil {
		t.Fatalf("upgrade with the listed permissions: %v", err)
	}
	if _, err := restricted.Uninstall(k.ctx, k.prefix, apply.UninstallOptions{PruneNonEmpty: true}); err != nil {
		t.Fatalf("uninstall with the listed permissions: %v", err)
	}
}

// DecodeObjects reads a rendered stream, expands lists, drops empty
// documents, and refuses an object without a kind, or with a field only
// the API server writes, naming its document.
func TestDecodeObjects(t *testing.T) {
	objs, err := apply.DecodeObjects([]byte(`
---
apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: ConfigMap, metadata: {name: a}}
- {apiVersion: v1, kind: ConfigMap, metadata: {name: b}}
---
# only a comment
---
{"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "c"}}
`))
	if err != nil {
		t.Fatal(err)
	}
	// What the API server ignores is accepted: creationTimestamp: null is
	// in most generated manifests.
	if _, err := apply.DecodeObjects([]byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, creationTimestamp: null, generation: 3}\n")); err != nil {
		t.Errorf("a manifest with creationTimestamp: null: %v", err)
	}
	var names []string
	for _, o := range objs {
		names = append(names, o.GetKind()+"/"+o.GetName())
	}
	if got := strings.Join(names, " "); got != "ConfigMap/a ConfigMap/b Secret/c" {
		t.Errorf("decoded %s", got)
	}
	// Lists in Lists are flattened, and an empty List gives nothing, as
	// render reads them.
	nested, err := apply.DecodeObjects([]byte("apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: ConfigMapList, items: [{apiVersion: v1, kind: ConfigMap, metadata: {name: a}}]}\n---\napiVersion: v1\nkind: List\nitems: null\n"))
	if err != nil || len(nested) != 1 || nested[0].GetName() != "a" {
		t.Errorf("nested and empty Lists decoded as %v, %v; want ConfigMap/a", nested, err)
	}
	for _, bad := range []struct{ in, want string }{
		{"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\napiVersion: v1\nmetadata: {name: b}\n", "document 2"},
		{"apiVersion: v1\nkind: ConfigMap\n", "metadata.name"},
		{"apiVersion: v1\nkind: [\n", "document 1"},
		// Fields only the API server writes, as kubectl get -o yaml
		// exports them: refused, not stripped, before any change.
		{"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, resourceVersion: \"1\"}\n", "metadata.resourceVersion"},
		{"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, uid: 0b3ad1d8-3b8b-4e8a-9a2b-1b1b1b1b1b1b}\n", "metadata.uid"},
		{"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, managedFields: [{manager: kubectl}]}\n", "metadata.managedFields"},
		{"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, deletionTimestamp: \"2024-01-01T00:00:00Z\"}\n", "metadata.deletionTimestamp"},
		{"apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: a, resourceVersion: \"7\"}}\n", "metadata.resourceVersion"},
		// Only a List holds items (spec/addon-v1.md 6.4, as render reads
		// it): apimachinery took any object with items for a list, and a
		// ConfigMap that render listed, without images, installed the
		// Deployment it held.
		{"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: note}\nitems:\n- {apiVersion: apps/v1, kind: Deployment, metadata: {name: hidden}}\n", "ConfigMap/note has a top-level items field"},
		{"apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: note}, items: []}\n", "ConfigMap/note has a top-level items field"},
		{"apiVersion: v1\nkind: List\nitems: {a: b}\n", "not a list"},
	} {
		_, err := apply.DecodeObjects([]byte(bad.in))
		if !errors.Is(err, apply.ErrInvalid) || !strings.Contains(err.Error(), bad.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("DecodeObjects(%q) = %v, want ErrInvalid naming %s", bad.in, err, bad.want)
		}
	}
	a := apply.Addon{Name: "Not_A_Name"}
	c, err := apply.New(&rest.Config{Host: "https://127.0.0.1:1"}, apply.ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Apply(context.Background(), a, apply.Options{}); !errors.Is(err, apply.ErrInvalid) {
		t.Errorf("bad add-on name: %v, want ErrInvalid", err)
	}
}

// Contexts lists what --context may name, from the same files Connect
// reads: $KUBECONFIG's, merged, or the one file given.
func TestContexts(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, contexts ...string) string { return kubeenv.WriteContexts(t, dir, name, contexts...) }
	a, b := write("a", "prod", "dev"), write("b", "kind-dev")
	t.Setenv("KUBECONFIG", a+string(os.PathListSeparator)+b)
	for _, tc := range []struct {
		kubeconfig string
		want       string
	}{
		{"", "dev kind-dev prod"},
		{b, "kind-dev"},
	} {
		got, err := apply.Contexts(tc.kubeconfig)
		if err != nil || strings.Join(got, " ") != tc.want {
			t.Errorf("Contexts(%q) = %q, %v; want %s", tc.kubeconfig, got, err, tc.want)
		}
	}
	t.Setenv("KUBECONFIG", filepath.Join(dir, "none"))
	if got, err := apply.Contexts(""); err != nil || len(got) != 0 {
		t.Errorf("Contexts without a kubeconfig = %q, %v; want none and no error", got, err)
	}
	if _, err := apply.Contexts(filepath.Join(dir, "missing")); !errors.Is(err, apply.ErrKubeconfig) {
		t.Errorf("Contexts of a missing file: %v, want ErrKubeconfig", err)
	}
}

// A user who may read the inventories but not the add-on's objects gets
// the add-on listed and an error beside it (ErrForbidden, naming the
// add-on): its objects' readiness is unknown, not "not ready". Status
// said 0/N ready and no error, so a script took a healthy add-on for a
// broken one.
func TestStatusObjectsUnreadable(t *testing.T) {
	k := newCluster(t)
	inv := k.prefix + "-inv"
	if _, err := k.typed.CoreV1().Namespaces().Create(k.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: inv}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	admin, err := apply.New(k.env.Admin, apply.ClientOptions{InventoryNamespace: inv})
	if err != nil {
		t.Fatal(err)
	}
	a := k.addon(t, k.prefix, "1", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: unreadable, namespace: default}\n")
	if _, err := admin.Apply(k.ctx, a, apply.Options{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = admin.Uninstall(context.Background(), a.Name, apply.UninstallOptions{}) })
	_, err = k.typed.RbacV1().Roles(inv).Create(k.ctx, &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "inventories"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get", "list"}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = k.typed.RbacV1().RoleBindings(inv).Create(k.ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "inventories"},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "inventories"},
		Subjects:   []rbacv1.Subject{{Kind: "User", Name: "restricted", APIGroup: "rbac.authorization.k8s.io"}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	restricted, err := apply.New(k.env.Restricted, apply.ClientOptions{InventoryNamespace: inv})
	if err != nil {
		t.Fatal(err)
	}
	var list []apply.Installed
	untilRBACSettles(func() bool {
		list, err = restricted.Status(k.ctx)
		return list != nil
	})
	if len(list) != 1 || list[0].Name != a.Name || list[0].Objects != 1 || list[0].Ready != 0 || len(list[0].Unready) != 1 {
		t.Fatalf("status as a user who may read inventories only: %+v, %v", list, err)
	}
	// A caller tells "unknown" from "not ready" by the status word.
	if u := list[0].UnreadyObjects; len(u) != 1 || u[0].Status != apply.Unreadable || u[0].Kind != "ConfigMap" || u[0].Name != "unreadable" || u[0].Message == "" {
		t.Errorf("status as a user who may read inventories only: objects %#v, want the ConfigMap Unreadable, and why", u)
	}
	if !errors.Is(err, apply.ErrForbidden) || !strings.Contains(err.Error(), "status "+a.Name+": could not read 1 of its 1 objects") {
		t.Errorf("status as a user who may read inventories only: %v, want ErrForbidden naming %s", err, a.Name)
	}
	// The admin reads them: no error.
	if list, err := admin.Status(k.ctx, a.Name); err != nil || len(list) != 1 || list[0].Ready != 1 {
		t.Errorf("status as the admin: %+v, %v", list, err)
	}
}

// Namespaces lists the cluster's namespaces, sorted (what -n completes
// with); a user who may not list them gets ErrForbidden.
func TestNamespaces(t *testing.T) {
	k := newCluster(t)
	got, err := k.admin.Namespaces(k.ctx)
	if err != nil || !slices.IsSorted(got) || !slices.Contains(got, "default") || !slices.Contains(got, "kube-system") {
		t.Errorf("Namespaces = %q, %v; want them sorted, default and kube-system among them", got, err)
	}
	restricted, err := apply.New(k.env.Restricted, apply.ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := restricted.Namespaces(k.ctx); !errors.Is(err, apply.ErrForbidden) {
		t.Errorf("Namespaces as a user who may not list them: %v, want ErrForbidden", err)
	}
}
