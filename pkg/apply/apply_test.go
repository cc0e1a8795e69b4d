package apply_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/addonpkg/addonpkg/internal/testing/kubeenv"
	"github.com/addonpkg/addonpkg/pkg/apply"
)

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) != "" {
		os.Exit(runHelper())
	}
	if os.Getenv(quietHelperEnv) != "" {
		os.Exit(runQuietHelper())
	}
	code := m.Run()
	kubeenv.StopShared()
	os.Exit(code)
}

// cluster is the shared API server and the clients a test needs.
type cluster struct {
	env    *kubeenv.Env
	admin  *apply.Client
	typed  *kubernetes.Clientset
	dyn    *dynamic.DynamicClient
	ctx    context.Context
	prefix string // unique per test: namespaces, CRD groups, add-on names
	// namespace is where admin puts the namespaced objects that name
	// none; empty: default.
	namespace string
}

func newCluster(t *testing.T) *cluster {
	t.Helper()
	env := kubeenv.Shared(t)
	c, err := apply.New(env.Admin, apply.ClientOptions{PollInterval: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(env.Admin)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	t.Cleanup(cancel)
	prefix := strings.ToLower(strings.NewReplacer("/", "-", "_", "-").Replace(t.Name()))
	if len(prefix) > 40 {
		prefix = prefix[:40]
	}
	prefix = strings.TrimRight(prefix, "-")
	return &cluster{env: env, admin: c, typed: kubeenv.Clientset(t, env.Admin), dyn: dyn, ctx: ctx, prefix: prefix}
}

// testTimeout bounds the context of a test (newCluster) or of a subtest
// (sub). It is a backstop only: each request is bounded already (a
// minute, apply.New's rest.Config timeout) and so is each wait
// (Options.Timeout), so a hang ends without it; its failure mode is a
// slow machine's spurious "context deadline exceeded" (or, as a deadline
// passes, client-go's "client rate limiter Wait returned an error").
// prometheus-operator's subtest, the longest, took 32 s on a quiet
// machine, 93 s under load 14 on two cores, and 249 s with the CLI's
// cluster tests running beside it (load 16); ten minutes leaves a margin
// of more than two over the worst, well inside go test's -timeout.
const testTimeout = 10 * time.Minute

// sub is k for the subtest t, with a context of its own, so that a test
// of many subtests (upstream's add-ons installed one after another)
// gives each the whole of testTimeout: when they shared the test's
// context (3 minutes then), TestRealAddonsInstallAndUninstall used 112 s
// of it under load, and a slower machine ran out.
func (k *cluster) sub(t *testing.T) *cluster {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	t.Cleanup(cancel)
	s := *k
	s.ctx = ctx
	return &s
}

// stream is an add-on's YAML with NS and GROUP replaced.
func (k *cluster) stream(yaml string) string {
	return strings.NewReplacer("NS", k.prefix, "GROUP", k.prefix+".example.com").Replace(yaml)
}

func (k *cluster) addon(t *testing.T, name, version, yaml string) apply.Addon {
	t.Helper()
	objs, err := apply.DecodeObjects([]byte(k.stream(yaml)))
	if err != nil {
		t.Fatal(err)
	}
	return apply.Addon{Name: name, Version: version, Source: "oci://127.0.0.1/" + name + "@sha256:" + strings.Repeat("a", 64),
		Digest: "sha256:" + strings.Repeat("a", 64), Identity: "sha256:" + strings.Repeat("b", 64), Objects: objs}
}

func (k *cluster) mustApply(t *testing.T, a apply.Addon, opts apply.Options) *apply.ChangeSet {
	t.Helper()
	cs, err := k.admin.Apply(k.ctx, a, opts)
	if err != nil {
		t.Fatalf("apply %s: %v", a.Name, err)
	}
	return cs
}

// exists reports whether the object is in the cluster.
func (k *cluster) exists(t *testing.T, gvr schema.GroupVersionResource, ns, name string) bool {
	t.Helper()
	_, err := k.get(gvr, ns, name)
	if apierrors.IsNotFound(err) {
		return false
	}
	if err != nil {
		t.Fatalf("get %s %s/%s: %v", gvr.Resource, ns, name, err)
	}
	return true
}

func (k *cluster) get(gvr schema.GroupVersionResource, ns, name string) (*unstructured.Unstructured, error) {
	if ns == "" {
		return k.dyn.Resource(gvr).Get(k.ctx, name, metav1.GetOptions{})
	}
	return k.dyn.Resource(gvr).Namespace(ns).Get(k.ctx, name, metav1.GetOptions{})
}

func (k *cluster) inventorySecret(t *testing.T, name string) *corev1.Secret {
	t.Helper()
	s, err := k.typed.CoreV1().Secrets(apply.DefaultInventoryNamespace).Get(k.ctx, apply.InventoryName(name), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatalf("inventory %s: %v", name, err)
	}
	return s
}

// inventory is the add-on's inventory; nil when it has none.
func (k *cluster) inventory(t *testing.T, name string) *apply.Inventory {
	t.Helper()
	s := k.inventorySecret(t, name)
	if s == nil {
		return nil
	}
	var inv apply.Inventory
	if err := json.Unmarshal(s.Data[apply.InventoryKey], &inv); err != nil {
		t.Fatal(err)
	}
	return &inv
}

func ids(inv *apply.Inventory) []string {
	var out []string
	for _, e := range inv.Objects {
		out = append(out, e.ID)
	}
	return out
}

var (
	gvrNamespace = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	gvrConfigMap = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	gvrSecret    = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	gvrCRD       = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	gvrDeploy    = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
)

func (k *cluster) gvrWidget() schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: k.prefix + ".example.com", Version: "v1", Resource: "widgets"}
}

// crdAddon holds a CRD and a custom resource of it, in a namespace of its
// own with a ConfigMap: what `kubectl apply -f -` cannot install in one
// pass. The custom resource comes first, as nothing orders a stream.
const crdAddon = `
apiVersion: GROUP/v1
kind: Widget
metadata:
  name: w1
  namespace: NS
spec:
  size: 3
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  namespace: NS
data:
  key: one
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.GROUP
spec:
  group: GROUP
  names: {kind: Widget, listKind: WidgetList, plural: widgets, singular: widget}
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
              size: {type: integer}
---
apiVersion: v1
kind: Namespace
metadata:
  name: NS
`

func kubectl(t *testing.T, kubeconfig, stdin string, args ...string) (string, error) {
	t.Helper()
	bin, err := exec.LookPath("kubectl")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("kubectl not installed: run hack/install-deps.sh (Debian kubectl)")
		}
		t.Skip("kubectl not installed")
	}
	cmd := exec.Command(bin, append([]string{"--kubeconfig", kubeconfig, "--cache-dir", t.TempDir()}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	return out.String(), err
}

// The peer's behaviour, asserted: kubectl discovers the API once, before
// the CRD exists, and fails on the custom resource whatever the stream's
// order; Apply installs the same add-on in one call, every object ready.
func TestApplyCRDAndCustomResourceInOnePass(t *testing.T) {
	k := newCluster(t)

	peer := *k
	peer.prefix = k.prefix + "-kubectl"
	out, err := kubectl(t, k.env.AdminKubeconfig, peer.stream(crdAddon), "apply", "-f", "-")
	if err == nil {
		t.Fatalf("kubectl apply -f - installed a CRD and its custom resource in one pass:\n%s", out)
	}
	if !strings.Contains(out, "ensure CRDs are installed first") {
		t.Fatalf("kubectl failed otherwise than the peer is known to:\n%s", out)
	}

	a := k.addon(t, k.prefix, "1.0.0", crdAddon)
	a.Values = map[string]string{"CLUSTER_DOMAIN": "cluster.local"}
	cs := k.mustApply(t, a, apply.Options{Wait: true, Timeout: time.Minute})
	if n := cs.Count(apply.Created); n != 4 {
		t.Errorf("created %d objects, want 4:\n%s", n, cs)
	}
	for _, o := range []struct {
		gvr      schema.GroupVersionResource
		ns, name string
	}{{gvrNamespace, "", k.prefix}, {gvrCRD, "", "widgets." + k.prefix + ".example.com"}, {gvrConfigMap, k.prefix, "settings"}, {k.gvrWidget(), k.prefix, "w1"}} {
		u, err := k.get(o.gvr, o.ns, o.name)
		if err != nil {
			t.Errorf("%s %s: %v", o.gvr.Resource, o.name, err)
			continue
		}
		if u.GetLabels()[apply.LabelAddon] != a.Name || u.GetLabels()[apply.LabelApplySetPartOf] == "" {
			t.Errorf("%s %s has labels %v, want the owner and ApplySet labels", o.gvr.Resource, o.name, u.GetLabels())
		}
	}
	st, err := k.admin.Status(k.ctx, a.Name)
	if err != nil {
		t.Fatal(err)
	}
	if len(st) != 1 || st[0].Objects != 4 || st[0].Ready != 4 || st[0].Phase != apply.PhaseApplied || st[0].Version != "1.0.0" || st[0].Digest != a.Digest {
		t.Errorf("status = %+v, want 4 of 4 objects ready, applied, version 1.0.0", st)
	}
	inv := k.inventory(t, a.Name)
	want := []string{
		"_" + k.prefix + "__Namespace",
		"_widgets." + k.prefix + ".example.com_apiextensions.k8s.io_CustomResourceDefinition",
		k.prefix + "_settings__ConfigMap",
		k.prefix + "_w1_" + k.prefix + ".example.com_Widget",
	}
	slices.Sort(want)
	if got := ids(inv); !slices.Equal(got, want) {
		t.Errorf("inventory objects = %v, want %v", got, want)
	}
	if inv.Source != a.Source || inv.Identity != a.Identity || inv.Values["CLUSTER_DOMAIN"] != "cluster.local" {
		t.Errorf("inventory = %+v, want the add-on's source, identity and values", inv)
	}
}

// resourceVersions maps each object of the inventory to its
// resourceVersion.
func (k *cluster) resourceVersions(t *testing.T, a apply.Addon) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, o := range a.Objects {
		gvk := o.GroupVersionKind()
		var gvr schema.GroupVersionResource
		switch gvk.Kind {
		case "Namespace":
			gvr = gvrNamespace
		case "ConfigMap":
			gvr = gvrConfigMap
		case "Secret":
			gvr = gvrSecret
		case "CustomResourceDefinition":
			gvr = gvrCRD
		case "Widget":
			gvr = k.gvrWidget()
		case "Deployment":
			gvr = gvrDeploy
		default:
			t.Fatalf("no resource for %s", gvk)
		}
		ns := o.GetNamespace()
		if gvk.Kind == "Namespace" || gvk.Kind == "CustomResourceDefinition" {
			ns = ""
		}
		u, err := k.get(gvr, ns, o.GetName())
		if err != nil {
			t.Fatal(err)
		}
		out[gvk.Kind+"/"+o.GetName()] = u.GetResourceVersion()
	}
	return out
}

// A second apply of the same add-on reports every object unchanged and
// bumps no resourceVersion (nor the inventory's).
func TestSecondApplyChangesNothing(t *testing.T) {
	k := newCluster(t)
	a := k.addon(t, k.prefix, "1.0.0", crdAddon)
	k.mustApply(t, a, apply.Options{Wait: true})
	before := k.resourceVersions(t, a)
	invBefore := k.inventorySecret(t, a.Name).ResourceVersion
	cs := k.mustApply(t, a, apply.Options{Wait: true})
	if n := cs.Count(apply.Unchanged); n != len(a.Objects) || cs.Changed() {
		t.Errorf("second apply: %d unchanged of %d:\n%s", n, len(a.Objects), cs)
	}
	if after := k.resourceVersions(t, a); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("resourceVersions moved:\nbefore %v\nafter  %v", before, after)
	}
	if got := k.inventorySecret(t, a.Name).ResourceVersion; got != invBefore {
		t.Errorf("the inventory was written again (resourceVersion %s, was %s)", got, invBefore)
	}
}
