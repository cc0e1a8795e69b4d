package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/addonpkg/addonpkg/internal/testing/kubeenv"
	"github.com/addonpkg/addonpkg/internal/testing/testregistry"
	"github.com/addonpkg/addonpkg/pkg/apply"
)

// clusterAddonFiles is an add-on holding a CRD, a custom resource of it,
// the Namespace they live in and a ConfigMap. Whatever the stream's order,
// kubectl discovers the API once, before the CRD exists.
var clusterAddonFiles = map[string]string{
	"a-namespace.yaml": "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: NS\n",
	"b-crd.yaml": `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gadgets.NS.example.com
spec:
  group: NS.example.com
  names: {kind: Gadget, listKind: GadgetList, plural: gadgets, singular: gadget}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
`,
	"c-config.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: NS\ndata:\n  key: one\n",
	"0-gadget.yaml": "apiVersion: NS.example.com/v1\nkind: Gadget\nmetadata:\n  name: g1\n  namespace: NS\nspec:\n  size: 3\n",
}

// clusterCLI is the addonpkg binary run against the shared test API
// server as its admin, with a store of its own.
//
// A cluster test runs in parallel only if its add-ons, namespaces and
// cluster-scoped objects are named for it alone and it lists nothing it
// did not install (status without names, kube-system's coredns or
// metrics-server, the example's RBAC are shared: those tests stay serial).
type clusterCLI struct {
	env  *kubeenv.Env
	bin  string
	tmp  string   // the test's directory; the store is tmp/store
	vars []string // ADDONPKG_HOME and KUBECONFIG, for addonpkg or kubectl
}

func newClusterCLI(t *testing.T) *clusterCLI {
	t.Helper()
	env := kubeenv.Shared(t)
	tmp := t.TempDir()
	return &clusterCLI{env: env, bin: binary(t), tmp: tmp,
		vars: []string{"ADDONPKG_HOME=" + filepath.Join(tmp, "store"), "KUBECONFIG=" + env.AdminKubeconfig}}
}

// run runs addonpkg and returns its stdout, stderr and exit code.
func (c *clusterCLI) run(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	return runKube(t, nil, c.vars, c.bin, args...)
}

// runKube runs the addonpkg binary (or another program) and returns its
// stdout, stderr and exit code.
func runKube(t *testing.T, stdin []byte, env []string, name string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(name, args...)
	// kubectl keeps a discovery cache under ~/.kube: a fresh HOME keeps it
	// in the test's directory.
	cmd.Env = append(append(os.Environ(), "HOME="+t.TempDir()), env...)
	cmd.Stdin = bytes.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%s %v: %v", name, args, err)
	}
	return stdout.String(), stderr.String(), code
}

// TestCLIApplyWhereKubectlFails: `addonpkg unpack X | kubectl apply -f -`
// fails on an add-on that holds a CRD and a custom resource of it (the
// peer's known behaviour, asserted), and `addonpkg apply X` installs it in
// one command, every object ready; a second apply changes nothing;
// status reports it; uninstall removes exactly its objects.
func TestCLIApplyWhereKubectlFails(t *testing.T) {
	env := kubeenv.Shared(t)
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("kubectl is missing: hack/install-deps.sh installs it")
		}
		t.Skip("kubectl is missing")
	}
	bin := binary(t)
	tmp := t.TempDir()
	cliEnv := []string{"ADDONPKG_HOME=" + filepath.Join(tmp, "store"), "KUBECONFIG=" + env.AdminKubeconfig}

	write := func(ns string) string {
		dir := filepath.Join(tmp, ns)
		must(t, os.MkdirAll(dir, 0o755))
		for name, text := range clusterAddonFiles {
			must(t, os.WriteFile(filepath.Join(dir, name), []byte(strings.ReplaceAll(text, "NS", ns)), 0o644))
		}
		return dir
	}

	// The peer: the stream addonpkg unpacks, piped into kubectl.
	peerDir := write("cli-peer")
	stream, stderr, code := runKube(t, nil, cliEnv, bin, "unpack", peerDir)
	if code != 0 {
		t.Fatalf("unpack: exit %d: %s", code, stderr)
	}
	home := t.TempDir()
	t.Cleanup(func() {
		// What kubectl made before it failed (the Namespace, the CRD, the
		// ConfigMap) goes: left, the CRD made kubectl's apply succeed when
		// the test ran again (-count=2).
		cmd := exec.Command(kubectl, "delete", "--ignore-not-found", "--wait=false", "-f", "-")
		cmd.Env = append(append(os.Environ(), "HOME="+home), cliEnv...)
		cmd.Stdin = strings.NewReader(stream)
		_ = cmd.Run()
	})
	out, stderr, code := runKube(t, []byte(stream), cliEnv, kubectl, "apply", "-f", "-")
	if code == 0 {
		t.Fatalf("kubectl apply -f - installed a CRD and its custom resource in one pass:\n%s", out)
	}
	if !strings.Contains(stderr, "ensure CRDs are installed first") {
		t.Fatalf("kubectl failed otherwise than the peer is known to:\n%s%s", out, stderr)
	}

	// addonpkg: one command.
	dir := write("cli-apply")
	out, stderr, code = runKube(t, nil, cliEnv, bin, "apply", dir, "--name", "cli-apply", "--json")
	if code != 0 {
		t.Fatalf("apply: exit %d: %s", code, stderr)
	}
	var cs apply.ChangeSet
	must(t, json.Unmarshal([]byte(out), &cs))
	if n := cs.Count(apply.Created); n != 4 {
		t.Errorf("apply created %d objects, want 4:\n%s", n, out)
	}

	out, stderr, code = runKube(t, nil, cliEnv, bin, "apply", dir, "--name", "cli-apply", "--json")
	if code != 0 {
		t.Fatalf("second apply: exit %d: %s", code, stderr)
	}
	cs = apply.ChangeSet{}
	must(t, json.Unmarshal([]byte(out), &cs))
	if cs.Changed() || cs.Count(apply.Unchanged) != 4 {
		t.Errorf("the second apply changed something:\n%s", out)
	}

	out, stderr, code = runKube(t, nil, cliEnv, bin, "status", "cli-apply", "--json")
	if code != 0 {
		t.Fatalf("status: exit %d: %s", code, stderr)
	}
	var st []apply.Installed
	must(t, json.Unmarshal([]byte(out), &st))
	if len(st) != 1 || st[0].Objects != 4 || st[0].Ready != 4 || st[0].Phase != apply.PhaseApplied {
		t.Errorf("status = %s, want 4 of 4 objects ready, applied", out)
	}
	out, _, _ = runKube(t, nil, cliEnv, bin, "status")
	if !strings.Contains(out, "cli-apply") || !strings.Contains(out, "4/4") {
		t.Errorf("status table does not list cli-apply with 4/4 ready:\n%s", out)
	}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if f := strings.Fields(line); len(f) != 6 {
			t.Errorf("status row %q has %d fields, want 6 (an empty cell is -)", line, len(f))
		}
	}

	// Completion offers the installed add-ons, as kubectl offers object
	// names, and stops offering once uninstall has its one name.
	completes := func(args ...string) []string {
		t.Helper()
		out, stderr, code := runKube(t, nil, cliEnv, bin, append([]string{"__complete"}, args...)...)
		if code != 0 {
			t.Fatalf("__complete %v: exit %d: %s", args, code, stderr)
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		return lines[:len(lines)-1] // the last line is cobra's directive
	}
	for _, args := range [][]string{{"uninstall", ""}, {"status", ""}} {
		if got := completes(args...); !slices.Contains(got, "cli-apply") {
			t.Errorf("__complete %v = %q, want cli-apply among them", args, got)
		}
	}
	for _, args := range [][]string{{"uninstall", "cli-apply", ""}, {"status", "cli-apply", ""}} {
		if got := completes(args...); slices.Contains(got, "cli-apply") {
			t.Errorf("__complete %v = %q, offers cli-apply again", args, got)
		}
	}

	// A foreign object in the add-on's namespace survives the uninstall's
	// prune of the add-on's own objects (the namespace is kept: it still
	// holds the foreign one).
	_, stderr, code = runKube(t, nil, cliEnv, kubectl, "create", "configmap", "foreign", "-n", "cli-apply")
	if code != 0 {
		t.Fatalf("kubectl create: %s", stderr)
	}
	out, stderr, code = runKube(t, nil, cliEnv, bin, "uninstall", "cli-apply")
	if code != 0 {
		t.Fatalf("uninstall: exit %d: %s", code, stderr)
	}
	for _, obj := range []string{"configmap/settings", "gadgets.cli-apply.example.com/g1"} {
		if _, _, code := runKube(t, nil, cliEnv, kubectl, "get", "-n", "cli-apply", obj); code == 0 {
			t.Errorf("uninstall left %s:\n%s", obj, out)
		}
	}
	if _, stderr, code := runKube(t, nil, cliEnv, kubectl, "get", "-n", "cli-apply", "configmap/foreign"); code != 0 {
		t.Errorf("uninstall removed a foreign object: %s", stderr)
	}
	// The kept Namespace stays in the inventory, so a later uninstall can
	// finish once the foreign object is gone.
	out, _, _ = runKube(t, nil, cliEnv, bin, "status", "cli-apply", "--json")
	st = nil
	must(t, json.Unmarshal([]byte(out), &st))
	if len(st) != 1 || st[0].Objects != 1 {
		t.Errorf("after an uninstall that kept the Namespace, status = %s, want its one object", out)
	}
	runKube(t, nil, cliEnv, kubectl, "delete", "configmap", "foreign", "-n", "cli-apply")
	if _, stderr, code = runKube(t, nil, cliEnv, bin, "uninstall", "cli-apply"); code != 0 {
		t.Fatalf("second uninstall: exit %d: %s", code, stderr)
	}
	if _, stderr, code = runKube(t, nil, cliEnv, bin, "status", "cli-apply"); code != 1 || !strings.Contains(stderr, "cli-apply") {
		t.Errorf("status of an uninstalled add-on: exit %d, %q", code, stderr)
	}
}

// TestCLIApplyRefusedByPreflight: a restricted user is refused before any
// change, with the missing permissions listed, exit 1 and one line.
func TestCLIApplyRefusedByPreflight(t *testing.T) {
	env := kubeenv.Shared(t)
	bin := binary(t)
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "addon")
	must(t, os.MkdirAll(dir, 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "cm.yaml"), []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cli-preflight\n  namespace: default\n"), 0o644))
	cliEnv := []string{"ADDONPKG_HOME=" + filepath.Join(tmp, "store")}
	out, stderr, code := runKube(t, nil, cliEnv, bin, "apply", dir, "--name", "cli-preflight", "--kubeconfig", env.RestrictedKubeconfig)
	if code != 1 || out != "" || strings.Count(strings.TrimSpace(stderr), "\n") != 0 || !strings.Contains(stderr, "configmaps") {
		t.Errorf("restricted apply: exit %d, stdout %q, stderr %q; want exit 1 and one line naming configmaps", code, out, stderr)
	}
	if _, _, code := runKube(t, nil, []string{"KUBECONFIG=" + env.AdminKubeconfig}, "kubectl", "get", "-n", "default", "configmap/cli-preflight"); code == 0 {
		t.Error("the refused apply created the ConfigMap")
	}
}

// TestInClusterRBACSuffices: the in-cluster example's ServiceAccount,
// impersonated, passes the pre-flight and installs, upgrades in place and
// uninstalls the add-on the example names (examples/metrics-server), with
// no more rights than examples/in-cluster/rbac.yaml grants, and waits
// for it to be ready with them (the test plays the Deployment
// controller, which the test API server does not run, and metrics-server,
// whose APIService the API server checks: answeringMetricsServer).
func TestInClusterRBACSuffices(t *testing.T) {
	env := kubeenv.Shared(t)
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		t.Fatal("kubectl is missing: hack/install-deps.sh installs it")
	}
	bin := binary(t)
	tmp := t.TempDir()
	cliEnv := []string{"ADDONPKG_HOME=" + filepath.Join(tmp, "store"), "KUBECONFIG=" + env.AdminKubeconfig}
	if _, stderr, code := runKube(t, nil, cliEnv, kubectl, "apply", "-f", filepath.Join(inClusterDir, "rbac.yaml")); code != 0 {
		t.Fatalf("kubectl apply rbac.yaml: %s", stderr)
	}
	as := []string{"--as", "system:serviceaccount:addon-installer:addon-installer"}
	ms := answeringMetricsServer(t, tmp)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	go kubeenv.PlayDeployment(ctx, kubernetes.NewForConfigOrDie(env.Admin), "kube-system", "metrics-server")
	for _, args := range [][]string{
		append([]string{"apply", ms, "--wait-timeout", "1m"}, as...),
		append([]string{"apply", ms, "--wait-timeout", "1m"}, as...), // again: a no-op
		{"uninstall", "metrics-server", "--as", as[1]},
	} {
		out, stderr, code := runKube(t, nil, cliEnv, bin, args...)
		if code != 0 {
			t.Fatalf("addonpkg %v as the example's ServiceAccount: exit %d: %s\n%s", args[:2], code, stderr, out)
		}
	}
	// And a right taken away is named before anything changes.
	if _, stderr, code := runKube(t, nil, cliEnv, kubectl, "delete", "rolebinding", "-n", "kube-system", "addon-installer-inventory"); code != 0 {
		t.Fatal(stderr)
	}
	defer runKube(t, nil, cliEnv, kubectl, "apply", "-f", filepath.Join(inClusterDir, "rbac.yaml"))
	_, stderr, code := runKube(t, nil, cliEnv, bin, append([]string{"apply", ms, "--wait=false"}, as...)...)
	if code != 1 || !strings.Contains(stderr, "secrets") {
		t.Errorf("without the inventory Role: exit %d, %q; want exit 1 naming secrets", code, stderr)
	}
	if _, _, code := runKube(t, nil, cliEnv, kubectl, "get", "-n", "kube-system", "deployment/metrics-server"); code == 0 {
		t.Error("the refused apply created the metrics-server Deployment")
	}
}

// TestCLIDiffCluster: diff --cluster exits 1 and says what apply would
// create (an object whose CRD the add-on brings: not validated yet) and
// changes nothing; after the apply it exits 0; a changed ConfigMap is a
// diff of that field, exit 1.
func TestCLIDiffCluster(t *testing.T) {
	t.Parallel()
	cc := newClusterCLI(t)
	dir := filepath.Join(cc.tmp, "cli-diff")
	must(t, os.MkdirAll(dir, 0o755))
	for name, text := range clusterAddonFiles {
		must(t, os.WriteFile(filepath.Join(dir, name), []byte(strings.ReplaceAll(text, "NS", "cli-diff")), 0o644))
	}
	out, stderr, code := cc.run(t, "diff", "--cluster", dir)
	if code != 1 || !strings.Contains(out, "unvalidated") || !strings.Contains(out, "Gadget/cli-diff/g1") {
		t.Fatalf("diff --cluster before install: exit %d, stderr %q:\n%s", code, stderr, out)
	}
	if _, _, code := runKube(t, nil, cc.vars, "kubectl", "get", "namespace", "cli-diff"); code == 0 {
		t.Fatal("diff --cluster created the namespace")
	}
	if _, stderr, code := cc.run(t, "apply", dir); code != 0 {
		t.Fatalf("apply: %s", stderr)
	}
	// Nothing to change says so, as diff A B does, and lists no
	// unchanged object (it printed a table of four "unchanged" rows).
	if out, stderr, code = cc.run(t, "diff", "--cluster", dir); code != 0 || out != "no differences\n" {
		t.Fatalf("diff --cluster after install: exit %d, stderr %q:\n%s", code, stderr, out)
	}
	must(t, os.WriteFile(filepath.Join(dir, "c-config.yaml"), []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: cli-diff\ndata:\n  key: two\n"), 0o644))
	out, stderr, code = cc.run(t, "diff", "--cluster", dir)
	if code != 1 || !strings.Contains(out, "-  key: one") || !strings.Contains(out, "+  key: two") || strings.Contains(out, "unchanged") {
		t.Errorf("diff --cluster of a changed ConfigMap: exit %d, stderr %q:\n%s", code, stderr, out)
	}
	// --json lists every object, the unchanged too, in the document diff
	// A B --json prints (a, equal, changes), which is also the change set
	// apply --dry-run=server --json prints (addon, dryRun, changes).
	out, stderr, code = cc.run(t, "diff", "--cluster", dir, "--json")
	var cs apply.ChangeSet
	var doc lcDiffJSON
	if err := errors.Join(json.Unmarshal([]byte(out), &cs), json.Unmarshal([]byte(out), &doc)); code != 1 || err != nil || len(cs.Changes) != 4 ||
		cs.Addon != "cli-diff" || !cs.DryRun || doc.A != dir || doc.B != "" || doc.Equal == nil || *doc.Equal || cs.Count(apply.Configured) != 1 || cs.Count(apply.Unchanged) != 3 {
		t.Errorf("diff --cluster --json of a changed ConfigMap: exit %d, %v, stderr %q:\n%s", code, err, stderr, out)
	}
	if _, _, code = cc.run(t, "diff", "--cluster"); code != 2 {
		t.Errorf("diff --cluster without a SOURCE: exit %d, want 2", code)
	}
	cc.run(t, "uninstall", "cli-diff", "--prune-non-empty")
}

// TestCLINamespaceAndName: -n gives namespaced objects that name none
// their namespace, as kubectl apply -n does (an invalid one is refused
// before any request); without -n an installed add-on keeps its own; and
// diff --cluster --name compares with the add-on apply --name installed,
// prune included.
func TestCLINamespaceAndName(t *testing.T) {
	cc := newClusterCLI(t)
	ns := "cli-namespace-flag"
	dir := filepath.Join(cc.tmp, "cli-ns")
	must(t, os.MkdirAll(dir, 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "objects.yaml"), []byte("apiVersion: v1\nkind: Namespace\nmetadata: {name: "+ns+"}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: cli-ns-settings}\ndata: {k: v}\n"), 0o644))
	if _, stderr, code := cc.run(t, "apply", dir, "--name", "nsflag", "-n", "Not_A_Label"); code != 1 || !strings.Contains(stderr, `invalid option: namespace "Not_A_Label"`) || strings.Count(stderr, "\n") != 1 {
		t.Errorf("apply -n Not_A_Label: exit %d, stderr %q, want 1 and one line naming the namespace", code, stderr)
	}
	if _, stderr, code := cc.run(t, "apply", dir, "--name", "nsflag", "-n", ns); code != 0 {
		t.Fatalf("apply -n %s: exit %d: %s", ns, code, stderr)
	}
	if _, stderr, code := runKube(t, nil, cc.vars, "kubectl", "get", "configmap", "cli-ns-settings", "-n", ns); code != 0 {
		t.Errorf("the ConfigMap is not in %s: %s", ns, stderr)
	}
	if out, stderr, code := cc.run(t, "diff", "--cluster", dir, "--name", "nsflag", "-n", ns); code != 0 {
		t.Errorf("diff --cluster --name of what is installed: exit %d, stderr %q:\n%s", code, stderr, out)
	}
	// Without -n the add-on stays where it was installed, whatever the
	// context's namespace.
	if out, stderr, code := cc.run(t, "diff", "--cluster", dir, "--name", "nsflag"); code != 0 {
		t.Errorf("diff --cluster --name without -n: exit %d, stderr %q, want no change:\n%s", code, stderr, out)
	}
	// -n naming another namespace moves the ConfigMap there: the one in
	// ns is pruned.
	out, stderr, code := cc.run(t, "diff", "--cluster", dir, "--name", "nsflag", "-n", "default")
	if code != 1 || !strings.Contains(out, "ConfigMap/default/cli-ns-settings") || !strings.Contains(out, "--- live/ConfigMap/"+ns+"/cli-ns-settings\n+++ applied/ConfigMap/"+ns+"/cli-ns-settings\n@@ -1,") {
		t.Errorf("diff --cluster --name -n default: exit %d, stderr %q, want the move to default:\n%s", code, stderr, out)
	}
	if _, stderr, code := cc.run(t, "diff", dir, dir, "--name", "nsflag"); code != 2 || !strings.Contains(stderr, "goes with --cluster") {
		t.Errorf("diff A B --name: exit %d, stderr %q, want a usage error", code, stderr)
	}
	cc.run(t, "uninstall", "nsflag", "--prune-non-empty")
}

// TestCLIStatusWithCorruptInventory: status still lists every add-on
// when one inventory is corrupt, shows that one as invalid, names it in
// one line on stderr and exits 1; completion still offers its name.
func TestCLIStatusWithCorruptInventory(t *testing.T) {
	cc := newClusterCLI(t)
	ns := "cli-corrupt-inventories"
	typed := kubernetes.NewForConfigOrDie(cc.env.Admin)
	ctx := context.Background()
	if _, err := typed.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// No namespace controller runs here (kubeenv): what a namespace
		// holds outlives it, and a run again (-count=2) found the
		// inventories there when it made the namespace anew.
		_ = typed.CoreV1().Secrets(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{})
		_ = typed.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{})
	})
	dir := filepath.Join(cc.tmp, "good")
	must(t, os.MkdirAll(dir, 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "cm.yaml"), []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cli-corrupt-good, namespace: default}\ndata: {v: \"1\"}\n"), 0o644))
	if _, stderr, code := cc.run(t, "apply", dir, "--name", "good", "--inventory-namespace", ns); code != 0 {
		t.Fatalf("apply: exit %d: %s", code, stderr)
	}
	broken := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: apply.InventoryName("broken"), Namespace: ns, Labels: map[string]string{apply.LabelInventory: "true"}},
		Type:       apply.InventorySecretType,
		Data:       map[string][]byte{apply.InventoryKey: []byte("{\"name\": \x1b[31m")},
	}
	if _, err := typed.CoreV1().Secrets(ns).Create(ctx, broken, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	out, stderr, code := cc.run(t, "status", "--inventory-namespace", ns)
	if code != 1 || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "corrupt inventory "+ns+"/addonpkg-broken") || strings.Contains(stderr, "\x1b") {
		t.Errorf("status: exit %d, stderr %q, want 1 and one line naming the corrupt inventory", code, stderr)
	}
	if !regexp.MustCompile(`(?m)^good\s.*applied\s+1/1`).MatchString(out) || !regexp.MustCompile(`(?m)^broken\s+-\s+invalid\s+-`).MatchString(out) {
		t.Errorf("status table does not show both add-ons:\n%s", out)
	}
	out, _, code = cc.run(t, "status", "--inventory-namespace", ns, "--json")
	var st []apply.Installed
	if err := json.Unmarshal([]byte(out), &st); err != nil || code != 1 || len(st) != 2 || st[0].Phase != apply.PhaseInvalid || st[0].Error == "" {
		t.Errorf("status --json: exit %d, %v: %s", code, err, out)
	}
	// The invalid one has no time it was updated: none is printed, not
	// "0001-01-01T00:00:00Z", which a reader sorting by it took as one.
	var rows []map[string]any
	if err := json.Unmarshal([]byte(out), &rows); err != nil || len(rows) != 2 || rows[0]["updated"] != nil || rows[1]["updated"] == nil {
		t.Errorf("status --json: the invalid add-on has an update time, or the valid one none (%v):\n%s", err, out)
	}
	out, _, code = cc.run(t, "__complete", "uninstall", "--inventory-namespace", ns, "")
	if code != 0 || !strings.Contains(out, "broken\n") || !strings.Contains(out, "good\n") {
		t.Errorf("completion: exit %d:\n%s", code, out)
	}

	// A record another tool wrote reaches the terminal without escapes,
	// and status NAME says which object is not ready, and why.
	sec, err := typed.CoreV1().Secrets(ns).Get(ctx, apply.InventoryName("good"), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var record map[string]any
	must(t, json.Unmarshal(sec.Data[apply.InventoryKey], &record))
	record["source"] = "\x1b]0;pwned\x07/tmp/good"
	// A newline and tabs in a cell forged a row of the table: an add-on
	// that is not installed, shown applied and ready.
	record["version"] = "1\nforged\t9.9\tapplied\t3/3\t-\t-"
	raw, err := json.Marshal(record)
	must(t, err)
	sec.Data[apply.InventoryKey] = raw
	if _, err := typed.CoreV1().Secrets(ns).Update(ctx, sec, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := typed.CoreV1().ConfigMaps("default").Delete(ctx, "cli-corrupt-good", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	out, stderr, code = cc.run(t, "status", "good", "--inventory-namespace", ns)
	if code != 0 || strings.ContainsAny(out, "\x1b\x07") || !strings.Contains(out, "?]0;pwned?/tmp/good") || !strings.Contains(out, "good: not ready: ConfigMap/default/cli-corrupt-good: NotFound\n") {
		t.Errorf("status good: exit %d, stderr %q, want the source without escapes and the missing ConfigMap named:\n%q", code, stderr, out)
	}
	if regexp.MustCompile(`(?m)^forged`).MatchString(out) || !strings.Contains(out, "1?forged?9.9") {
		t.Errorf("status good: the version recorded printed as a row of its own, or not as one cell:\n%s", out)
	}
	// --json says it as a program reads it: the status word and the
	// object field by field, beside the line.
	out, stderr, code = cc.run(t, "status", "good", "--inventory-namespace", ns, "--json")
	st = nil
	if err := json.Unmarshal([]byte(out), &st); err != nil || code != 0 || len(st) != 1 {
		t.Fatalf("status good --json: exit %d, %v, stderr %q:\n%s", code, err, stderr, out)
	}
	want := apply.ObjectStatus{Version: "v1", Kind: "ConfigMap", Namespace: "default", Name: "cli-corrupt-good", Status: apply.NotFound}
	if u := st[0].UnreadyObjects; len(u) != 1 || u[0] != want || !slices.Equal(st[0].Unready, []string{"ConfigMap/default/cli-corrupt-good: NotFound"}) || !strings.Contains(out, `"unreadyObjects": [`) {
		t.Errorf("status good --json: want unreadyObjects [%#v] beside unready:\n%s", want, out)
	}
}

// TestCLIRegistryToCluster is the product's path end to end: an add-on
// built, pushed to a real registry (TLS and basic auth), installed from
// its tag, upgraded to a tag built in the other form, and uninstalled.
// The inventory pins each version's digest, the upgrade prunes what v2
// dropped, and kubectl sees the cluster the change sets describe.
func TestCLIRegistryToCluster(t *testing.T) {
	t.Parallel()
	cc := newClusterCLI(t)
	reg := testregistry.Start(t, testregistry.Options{Mode: testregistry.TLSBasicAuth})
	cc.vars = append(cc.vars, "DOCKER_CONFIG="+filepath.Join(cc.tmp, "docker"))
	ns := "cli-registry-to-cluster"
	v1 := map[string]string{}
	for name, text := range clusterAddonFiles {
		v1[name] = strings.ReplaceAll(text, "NS", ns)
	}
	v2 := maps.Clone(v1)
	delete(v2, "c-config.yaml")
	v2["0-gadget.yaml"] = strings.Replace(v2["0-gadget.yaml"], "size: 3", "size: 4", 1)
	v2["d-secret.yaml"] = "apiVersion: v1\nkind: Secret\nmetadata:\n  name: token\n  namespace: " + ns + "\nstringData:\n  token: t0ken\n"
	repo := reg.Host + "/addons/gadgets"
	digests := map[string]string{}
	for _, v := range []struct {
		tag, format string
		files       map[string]string
	}{{"1", "image", v1}, {"2", "artifact", v2}} {
		dir := filepath.Join(cc.tmp, "v"+v.tag, "gadgets")
		must(t, os.MkdirAll(dir, 0o755))
		for name, text := range v.files {
			must(t, os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644))
		}
		if _, stderr, code := cc.run(t, "build", dir, "--format", v.format, "-t", "gadgets:"+v.tag); code != 0 {
			t.Fatalf("build v%s: exit %d: %s", v.tag, code, stderr)
		}
		if v.tag == "1" {
			_, stderr, code := runKube(t, []byte(reg.Password), cc.vars, cc.bin, "login", reg.Host, "-u", reg.Username, "--password-stdin", "--ca-file", reg.CAFile)
			if code != 0 {
				t.Fatalf("login: exit %d: %s", code, stderr)
			}
		}
		out, stderr, code := cc.run(t, "push", "gadgets:"+v.tag, repo+":"+v.tag, "--ca-file", reg.CAFile)
		if code != 0 {
			t.Fatalf("push v%s: exit %d: %s", v.tag, code, stderr)
		}
		_, digests[v.tag], _ = strings.Cut(strings.TrimSpace(out), "@")
	}
	// The tags are read from the registry, not from the local store.
	must(t, os.RemoveAll(filepath.Join(cc.tmp, "store")))
	defer cc.run(t, "uninstall", "gadgets", "--prune-non-empty")

	status := func(want, wantDigest string) {
		t.Helper()
		out, stderr, code := cc.run(t, "status", "gadgets", "--json")
		var st []apply.Installed
		if err := json.Unmarshal([]byte(out), &st); err != nil || code != 0 || len(st) != 1 {
			t.Fatalf("status: exit %d, %v, stderr %q:\n%s", code, err, stderr, out)
		}
		if st[0].Phase != apply.PhaseApplied || st[0].Digest != wantDigest || st[0].Source != repo+"@"+wantDigest || st[0].Ready != st[0].Objects {
			t.Errorf("status after %s = %+v, want applied, every object ready, pinned to %s", want, st[0], wantDigest)
		}
	}
	kubectlGet := func(kind, name string) int {
		_, _, code := runKube(t, nil, cc.vars, "kubectl", "get", kind, name, "-n", ns)
		return code
	}

	for _, tc := range []struct {
		tag  string
		want map[apply.Action]int
	}{
		{"1", map[apply.Action]int{apply.Created: 4}},
		{"1", map[apply.Action]int{apply.Unchanged: 4}},
		{"2", map[apply.Action]int{apply.Configured: 1, apply.Unchanged: 2, apply.Created: 1, apply.Deleted: 1}},
	} {
		out, stderr, code := cc.run(t, "apply", repo+":"+tc.tag, "--ca-file", reg.CAFile, "--json")
		var cs apply.ChangeSet
		if err := json.Unmarshal([]byte(out), &cs); err != nil || code != 0 {
			t.Fatalf("apply %s: exit %d, %v, stderr %q:\n%s", tc.tag, code, err, stderr, out)
		}
		for act, n := range tc.want {
			if cs.Count(act) != n {
				t.Errorf("apply %s: %d %s, want %d:\n%s", tc.tag, cs.Count(act), act, n, &cs)
			}
		}
		status("v"+tc.tag, digests[tc.tag])
	}
	if kubectlGet("configmap", "settings") == 0 || kubectlGet("secret", "token") != 0 {
		t.Errorf("after the upgrade kubectl sees the ConfigMap v2 dropped, or not the Secret v2 added")
	}
	out, stderr, code := runKube(t, nil, cc.vars, "kubectl", "get", "gadgets."+ns+".example.com", "g1", "-n", ns, "-o", "jsonpath={.spec.size}")
	if code != 0 || out != "4" {
		t.Errorf("kubectl get gadget: exit %d, %q (stderr %q), want size 4", code, out, stderr)
	}

	if _, stderr, code := cc.run(t, "uninstall", "gadgets", "--prune-non-empty"); code != 0 {
		t.Fatalf("uninstall: exit %d: %s", code, stderr)
	}
	if out, _, code := cc.run(t, "status", "gadgets"); code != 1 || strings.Contains(out, "gadgets ") {
		t.Errorf("status after uninstall: exit %d:\n%s", code, out)
	}
	if kubectlGet("secret", "token") == 0 {
		t.Errorf("uninstall left the Secret")
	}
}

// An apply whose wait times out (no kubelet runs the Deployment here)
// exits 1, and still prints what it changed before: those objects stay,
// and a script needs to know them (--json too); the error names
// --wait-timeout.
func TestCLIApplyWaitTimeoutPrintsChanges(t *testing.T) {
	t.Parallel()
	cc := newClusterCLI(t)
	ns := "cli-wait-timeout"
	dir := filepath.Join(cc.tmp, "waits")
	must(t, os.MkdirAll(dir, 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "objects.yaml"), []byte(`apiVersion: v1
kind: Namespace
metadata: {name: `+ns+`}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: `+ns+`}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: registry.k8s.io/pause:3.10}]}
`), 0o644))
	for _, args := range [][]string{{}, {"--json"}} {
		out, stderr, code := cc.run(t, append([]string{"apply", dir, "--name", "waits", "--wait-timeout", "2s"}, args...)...)
		if code != 1 || !strings.Contains(stderr, "Deployment") || !strings.Contains(stderr, "(raise it with --wait-timeout)") || !strings.Contains(out, "Deployment/"+ns+"/web") {
			t.Errorf("apply %v with a wait that times out: exit %d, stderr %q, stdout:\n%s\nwant 1, the --wait-timeout hint, and the changes on stdout", args, code, stderr, out)
		}
	}
	// stderr is a pipe here, as in CI: the wait says it still waits, a
	// line each tenth of its timeout (a second at the least), then the
	// error; no carriage return, nothing after the error. It was silent.
	_, stderr, code := cc.run(t, "apply", dir, "--name", "waits", "--wait-timeout", "4s")
	lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
	still := regexp.MustCompile(`^addonpkg: waits: still waiting for 2 objects to be ready \(\ds of 4s\)$`)
	if code != 1 || len(lines) < 3 || !still.MatchString(lines[0]) || !still.MatchString(lines[1]) || strings.Contains(stderr, "\r") ||
		!strings.Contains(lines[len(lines)-1], "(raise it with --wait-timeout)") || strings.Contains(lines[len(lines)-1], "still waiting") {
		t.Errorf("apply whose wait times out, stderr a pipe: exit %d, stderr:\n%s\nwant lines while it waits, then the error", code, stderr)
	}
	cc.run(t, "uninstall", "waits", "--prune-non-empty", "--wait-timeout", "2s")
}

// An object another add-on owns is refused in one line that names the
// flag that adopts it and, when every object in the way is one add-on's
// (that add-on applied under another name), the --name that upgrades it.
func TestCLIOwnershipConflictNamesForce(t *testing.T) {
	cc := newClusterCLI(t)
	dir := filepath.Join(cc.tmp, "owned")
	must(t, os.MkdirAll(dir, 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "cm.yaml"), []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cli-owned, namespace: default}\ndata: {k: v}\n"), 0o644))
	if _, stderr, code := cc.run(t, "apply", dir, "--name", "owner-a"); code != 0 {
		t.Fatalf("apply: exit %d: %s", code, stderr)
	}
	_, stderr, code := cc.run(t, "apply", dir, "--name", "owner-b")
	if code != 1 || !strings.Contains(stderr, `belongs to add-on "owner-a", not "owner-b" (if this is add-on "owner-a", add --name owner-a; else --force adopts it)`) || strings.Count(stderr, "\n") != 1 {
		t.Errorf("apply of another add-on's object: exit %d, stderr %q", code, stderr)
	}
	// The objects of two add-ons in the way: --force alone.
	must(t, os.WriteFile(filepath.Join(cc.tmp, "other.yaml"), []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cli-owned-2, namespace: default}\n"), 0o644))
	if _, stderr, code := cc.run(t, "apply", filepath.Join(cc.tmp, "other.yaml"), "--name", "owner-c"); code != 0 {
		t.Fatalf("apply: exit %d: %s", code, stderr)
	}
	must(t, os.WriteFile(filepath.Join(dir, "other.yaml"), []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cli-owned-2, namespace: default}\n"), 0o644))
	_, stderr, code = cc.run(t, "apply", dir, "--name", "owner-b")
	if code != 1 || !strings.Contains(stderr, "and 1 more object belongs to another (--force adopts them)") || strings.Count(stderr, "\n") != 1 {
		t.Errorf("apply of two add-ons' objects: exit %d, stderr %q", code, stderr)
	}
	cc.run(t, "uninstall", "owner-c")
	cc.run(t, "uninstall", "owner-a")
}

// A change to a field the server does not let change names the flag
// that recreates the object (diff --cluster: apply's); a second run with
// it succeeds.
func TestCLIImmutableNamesRecreate(t *testing.T) {
	cc := newClusterCLI(t)
	dir := filepath.Join(cc.tmp, "frozen")
	must(t, os.MkdirAll(dir, 0o755))
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cli-frozen, namespace: default}\nimmutable: true\ndata: {k: \"%s\"}\n"
	must(t, os.WriteFile(filepath.Join(dir, "cm.yaml"), []byte(fmt.Sprintf(cm, "1")), 0o644))
	if _, stderr, code := cc.run(t, "apply", dir, "--name", "frozen"); code != 0 {
		t.Fatalf("apply: exit %d: %s", code, stderr)
	}
	must(t, os.WriteFile(filepath.Join(dir, "cm.yaml"), []byte(fmt.Sprintf(cm, "2")), 0o644))
	_, stderr, code := cc.run(t, "apply", dir, "--name", "frozen")
	if code != 1 || !strings.Contains(stderr, "(--recreate deletes and creates it again)") || strings.Count(stderr, "\n") != 1 {
		t.Errorf("apply of a change to an immutable ConfigMap: exit %d, stderr %q", code, stderr)
	}
	// diff --cluster, which has no --recreate, names apply's.
	_, stderr, code = cc.run(t, "diff", "--cluster", dir, "--name", "frozen")
	if code != 2 || !strings.HasSuffix(stderr, "(apply refuses it too; apply --recreate deletes and creates it again)\n") || strings.Count(stderr, "\n") != 1 {
		t.Errorf("diff --cluster of a change to an immutable ConfigMap: exit %d, stderr %q", code, stderr)
	}
	if out, stderr, code := cc.run(t, "apply", dir, "--name", "frozen", "--recreate"); code != 0 || !strings.Contains(out, "recreated  ConfigMap/default/cli-frozen") {
		t.Errorf("apply --recreate: exit %d: %s\n%s", code, stderr, out)
	}
	// --json says so too.
	must(t, os.WriteFile(filepath.Join(dir, "cm.yaml"), []byte(fmt.Sprintf(cm, "3")), 0o644))
	out, stderr, code := cc.run(t, "apply", dir, "--name", "frozen", "--recreate", "--json")
	var cs struct {
		Changes []struct{ Action, Object, Reason string }
	}
	if err := json.Unmarshal([]byte(out), &cs); code != 0 || err != nil || len(cs.Changes) != 1 || cs.Changes[0].Action != "recreated" || cs.Changes[0].Reason == "" {
		t.Errorf("apply --recreate --json: exit %d, %v: %s\n%s", code, err, stderr, out)
	}
	cc.run(t, "uninstall", "frozen")
}

// Several add-ons' changes (uninstall of several, apply -f) are one table
// whose first column names the add-on, not tables run together.
func TestCLISeveralChangeSetsOneTable(t *testing.T) {
	cc := newClusterCLI(t)
	for _, n := range []string{"many-a", "many-b"} {
		dir := filepath.Join(cc.tmp, n)
		must(t, os.MkdirAll(dir, 0o755))
		must(t, os.WriteFile(filepath.Join(dir, "cm.yaml"), []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cli-"+n+", namespace: default}\n"), 0o644))
		if _, stderr, code := cc.run(t, "apply", dir, "--name", n); code != 0 {
			t.Fatalf("apply %s: exit %d: %s", n, code, stderr)
		}
	}
	out, stderr, code := cc.run(t, "uninstall", "many-a", "many-b")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 3 || !strings.HasPrefix(lines[0], "ADDON") ||
		!strings.HasPrefix(lines[1], "many-a") || !strings.HasPrefix(lines[2], "many-b") {
		t.Errorf("uninstall of two: exit %d, stderr %q, stdout:\n%s", code, stderr, out)
	}
}

// A local SOURCE is recorded absolute and clean (a layout's pinned form)
// means the same from any directory, and an apply of the same folder
// spelt another way (from elsewhere) records the same thing, so writes
// no new inventory.
func TestCLIFolderSourceRecordedAbsolute(t *testing.T) {
	cc := newClusterCLI(t)
	dir := filepath.Join(cc.tmp, "addon")
	must(t, os.MkdirAll(dir, 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "cm.yaml"), []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cli-recorded, namespace: default}\n"), 0o644))
	wd, err := os.Getwd()
	must(t, err)
	rel, err := filepath.Rel(wd, dir)
	must(t, err)
	status := func() apply.Installed {
		t.Helper()
		out, stderr, code := cc.run(t, "status", "recorded", "--json")
		var st []apply.Installed
		if code != 0 || json.Unmarshal([]byte(out), &st) != nil || len(st) != 1 {
			t.Fatalf("status: exit %d: %s\n%s", code, stderr, out)
		}
		return st[0]
	}
	typed := kubernetes.NewForConfigOrDie(cc.env.Admin)
	secretVersion := func() string {
		t.Helper()
		s, err := typed.CoreV1().Secrets("kube-system").Get(context.Background(), apply.InventoryName("recorded"), metav1.GetOptions{})
		must(t, err)
		return s.ResourceVersion
	}
	prev := ""
	for _, s := range []string{"./" + rel + "/", rel + "/../addon/.", dir} {
		if _, stderr, code := cc.run(t, "apply", s, "--name", "recorded"); code != 0 {
			t.Fatalf("apply %s: exit %d: %s", s, code, stderr)
		}
		if got := status().Source; got != dir {
			t.Errorf("apply %s: status says the source is %q, want %q", s, got, dir)
		}
		if v := secretVersion(); prev != "" && v != prev {
			t.Errorf("apply %s: the inventory was written again (resourceVersion %s, was %s)", s, v, prev)
		} else {
			prev = v
		}
	}
	out, _, _ := cc.run(t, "status", "recorded")
	if !strings.Contains(out, " "+dir+"\n") {
		t.Errorf("status table does not show %s:\n%s", dir, out)
	}
	// An OCI layout named by a relative path: its pinned form, with the
	// path absolute.
	layout := filepath.Join(cc.tmp, "layout")
	relLayout, err := filepath.Rel(wd, layout)
	must(t, err)
	if _, stderr, code := cc.run(t, "build", dir, "-t", "recorded:1", "--output", "oci:"+relLayout+":1"); code != 0 {
		t.Fatalf("build: exit %d: %s", code, stderr)
	}
	if _, stderr, code := cc.run(t, "apply", "oci:"+relLayout+":1", "--name", "recorded"); code != 0 {
		t.Fatalf("apply oci:%s:1: exit %d: %s", relLayout, code, stderr)
	}
	if got := status().Source; !strings.HasPrefix(got, "oci:"+layout+"@sha256:") {
		t.Errorf("apply oci:%s:1: status says the source is %q, want oci:%s@sha256:...", relLayout, got, layout)
	}
	cc.run(t, "uninstall", "recorded")
}

// With no add-on installed, status --json is an empty list, not null, so
// that `jq '.[]'` and a typed reader take it as they take a long one.
func TestCLIStatusJSONNoneInstalled(t *testing.T) {
	cc := newClusterCLI(t)
	out, stderr, code := cc.run(t, "status", "--json", "--inventory-namespace", "cli-status-none")
	if code != 0 || strings.TrimSpace(out) != "[]" {
		t.Errorf("status --json with none installed: exit %d, stdout %q, stderr %q; want [] and exit 0", code, out, stderr)
	}
	// The table: nothing on stdout, as kubectl get, and a line on stderr
	// that says where inventories were looked for.
	out, stderr, code = cc.run(t, "status", "--inventory-namespace", "cli-status-none")
	if code != 0 || out != "" || stderr != "no add-on installed (no inventory in namespace cli-status-none)\n" {
		t.Errorf("status with none installed: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
}

// status NAME --json is a list whatever the cluster holds: [] when no
// NAME is installed (it printed nothing, while status --json with none
// installed, and status A B --json with only A, print a list), exit 1
// naming the NAME on stderr, one line. The table prints no header for no
// row. A forbidden read prints no list: that is no answer.
func TestCLIStatusJSONNameNotInstalled(t *testing.T) {
	cc := newClusterCLI(t)
	out, stderr, code := cc.run(t, "status", "cli-status-absent", "--json")
	if code != 1 || strings.TrimSpace(out) != "[]" || stderr != "addonpkg: status cli-status-absent: add-on not installed\n" {
		t.Errorf("status NAME --json, NAME not installed: exit %d, stdout %q, stderr %q; want [], exit 1 and one line naming it", code, out, stderr)
	}
	out, stderr, code = cc.run(t, "status", "cli-status-absent")
	if code != 1 || out != "" || !strings.Contains(stderr, "cli-status-absent: add-on not installed") {
		t.Errorf("status NAME, NAME not installed: exit %d, stdout %q, stderr %q; want nothing on stdout, exit 1", code, out, stderr)
	}
	out, stderr, code = runKube(t, nil, []string{"KUBECONFIG=" + cc.env.RestrictedKubeconfig}, cc.bin, "status", "cli-status-absent", "--json")
	if code != 1 || out != "" || !strings.Contains(stderr, "forbidden") {
		t.Errorf("status NAME --json, forbidden: exit %d, stdout %q, stderr %q; want nothing on stdout, exit 1", code, out, stderr)
	}
}

// An invalid add-on is refused in the same words whether the library
// finds it before asking the cluster (an addonpkg.io/apply value it does
// not take) or with the cluster's help (a kind nobody serves): one line,
// "apply NAME: invalid add-on: ...", "dry-run of NAME: ..." for a dry
// run and diff --cluster, nothing on stdout. The first said "add-on
// NAME: invalid add-on: ..." for all three.
func TestCLIInvalidAddonWording(t *testing.T) {
	cc := newClusterCLI(t)
	dir := filepath.Join(cc.tmp, "cli-invalid")
	must(t, os.MkdirAll(dir, 0o755))
	for _, obj := range []string{
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cli-invalid\n  namespace: default\n  annotations: {addonpkg.io/apply: Always}\n",
		"apiVersion: cli-invalid.example.com/v1\nkind: Widget\nmetadata: {name: w}\n",
	} {
		must(t, os.WriteFile(filepath.Join(dir, "objects.yaml"), []byte(obj), 0o644))
		for _, c := range []struct {
			args   []string
			code   int
			prefix string
		}{
			{[]string{"apply", dir}, 1, "addonpkg: apply cli-invalid: invalid add-on: "},
			{[]string{"apply", dir, "--dry-run"}, 1, "addonpkg: dry-run of cli-invalid: invalid add-on: "},
			{[]string{"diff", "--cluster", dir}, 2, "addonpkg: dry-run of cli-invalid: invalid add-on: "},
		} {
			out, stderr, code := cc.run(t, c.args...)
			if code != c.code || out != "" || strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, c.prefix) {
				t.Errorf("%q of %q: exit %d, stdout %q, stderr %q; want exit %d and one line %q...", c.args, obj, code, out, stderr, c.code, c.prefix)
			}
		}
	}
	// An add-on of no object is named once ("add-on NAME: invalid
	// add-on: add-on NAME holds no object" named it twice).
	must(t, os.WriteFile(filepath.Join(dir, "objects.yaml"), []byte("# nothing yet\n"), 0o644))
	out, stderr, code := cc.run(t, "apply", dir)
	if code != 1 || out != "" || stderr != "addonpkg: apply cli-invalid: invalid add-on: it holds no object (to remove the add-on, uninstall it)\n" {
		t.Errorf("apply of no object: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
	// A name taken from a folder that is no DNS label names the flag
	// that gives another; with it, the apply goes on.
	odd := filepath.Join(cc.tmp, "Cli_Invalid")
	must(t, os.MkdirAll(odd, 0o755))
	must(t, os.WriteFile(filepath.Join(odd, "objects.yaml"), []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cli-invalid-name, namespace: default}\n"), 0o644))
	out, stderr, code = cc.run(t, "apply", odd, "--dry-run")
	if code != 1 || out != "" || strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, `addonpkg: dry-run of Cli_Invalid: invalid add-on: add-on name "Cli_Invalid": `) || !strings.HasSuffix(stderr, " (name it with --name)\n") {
		t.Errorf("apply of a folder whose name is no DNS label: exit %d, stdout %q, stderr %q; want one line naming --name", code, out, stderr)
	}
	if _, stderr, code := cc.run(t, "apply", odd, "--dry-run", "--name", "cli-invalid-name"); code != 0 {
		t.Errorf("apply --name of that folder: exit %d, stderr %q", code, stderr)
	}
}

// uninstall --ignore-not-found passes over a NAME that is not installed
// with exit 0 and nothing on stdout or stderr, as kubectl delete
// --ignore-not-found (a teardown script run twice); --json of one such
// NAME is an empty change set. The others are still uninstalled, and any
// other failure (forbidden) still exits 1.
func TestCLIUninstallIgnoreNotFound(t *testing.T) {
	cc := newClusterCLI(t)
	dir := filepath.Join(cc.tmp, "cli-ignore")
	must(t, os.MkdirAll(dir, 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "cm.yaml"), []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cli-ignore, namespace: default}\ndata: {k: v}\n"), 0o644))
	if _, stderr, code := cc.run(t, "apply", dir); code != 0 {
		t.Fatalf("apply: exit %d: %s", code, stderr)
	}
	if out, stderr, code := cc.run(t, "uninstall", "cli-ignore-absent"); code != 1 || out != "" || !strings.Contains(stderr, "not installed") {
		t.Errorf("uninstall of a NAME not installed: exit %d, stdout %q, stderr %q; want exit 1 naming it", code, out, stderr)
	}
	out, stderr, code := cc.run(t, "uninstall", "cli-ignore-absent", "--ignore-not-found")
	if code != 0 || out != "" || stderr != "" {
		t.Errorf("uninstall --ignore-not-found of a NAME not installed: exit %d, stdout %q, stderr %q; want exit 0, silent", code, out, stderr)
	}
	out, stderr, code = cc.run(t, "uninstall", "cli-ignore-absent", "--ignore-not-found", "--json")
	var cs apply.ChangeSet
	if err := json.Unmarshal([]byte(out), &cs); code != 0 || err != nil || cs.Addon != "cli-ignore-absent" || strings.TrimSpace(out) == "null" || !strings.Contains(out, `"changes": []`) {
		t.Errorf("uninstall --ignore-not-found --json: exit %d, %v, stdout %q, stderr %q; want an empty change set", code, err, out, stderr)
	}
	_, stderr, code = runKube(t, nil, []string{"KUBECONFIG=" + cc.env.RestrictedKubeconfig}, cc.bin, "uninstall", "cli-ignore", "--ignore-not-found")
	if code != 1 || !strings.Contains(stderr, "forbidden") {
		t.Errorf("uninstall --ignore-not-found, forbidden: exit %d, stderr %q; want exit 1", code, stderr)
	}
	out, stderr, code = cc.run(t, "uninstall", "cli-ignore-absent", "cli-ignore", "--ignore-not-found")
	if code != 0 || stderr != "" || !strings.Contains(out, "cli-ignore  deleted  ConfigMap/default/cli-ignore") {
		t.Errorf("uninstall --ignore-not-found of one absent and one installed: exit %d, stderr %q:\n%s", code, stderr, out)
	}
}

// A dry run's table says so on every row, as kubectl's "(server dry
// run)": what apply --dry-run and uninstall --dry-run print is not taken
// for changes made. A real apply's rows do not. No row ends in spaces.
func TestCLIDryRunTableSaysSo(t *testing.T) {
	cc := newClusterCLI(t)
	dir := filepath.Join(cc.tmp, "dry")
	must(t, os.MkdirAll(dir, 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "cm.yaml"), []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cli-dry, namespace: default}\ndata: {k: v}\n"), 0o644))
	// No line ends in spaces (a row with no reason ended in the padding
	// of its object's cell).
	rows := func(out string) []string {
		if regexp.MustCompile(`(?m) $`).MatchString(out) {
			return nil
		}
		return strings.Split(strings.TrimSpace(out), "\n")[1:]
	}
	out, stderr, code := cc.run(t, "apply", dir, "--dry-run=server")
	if r := rows(out); code != 0 || len(r) != 1 || !strings.HasPrefix(r[0], "created (dry run)  ConfigMap/default/cli-dry") {
		t.Errorf("apply --dry-run=server: exit %d, stderr %q:\n%s", code, stderr, out)
	}
	out, stderr, code = cc.run(t, "apply", dir)
	if r := rows(out); code != 0 || len(r) != 1 || !strings.HasPrefix(r[0], "created  ConfigMap/default/cli-dry") {
		t.Errorf("apply: exit %d, stderr %q:\n%s", code, stderr, out)
	}
	out, stderr, code = cc.run(t, "uninstall", "dry", "--dry-run")
	if r := rows(out); code != 0 || len(r) != 1 || !strings.HasPrefix(r[0], "deleted (dry run)  ConfigMap/default/cli-dry") {
		t.Errorf("uninstall --dry-run: exit %d, stderr %q:\n%s", code, stderr, out)
	}
	cc.run(t, "uninstall", "dry")
}

// On a terminal, a command that changes a cluster first names the context
// and server it connected to; piped or with --quiet, it says nothing.
func TestConnectNamesTheCluster(t *testing.T) {
	env := kubeenv.Shared(t)
	cf := &clusterFlags{connect: apply.ConnectOptions{Kubeconfig: env.AdminKubeconfig}}
	ctx := context.Background()
	piped := &bytes.Buffer{}
	if _, err := (&app{stderr: piped}).connect(ctx, cf); err != nil || piped.Len() > 0 {
		t.Errorf("piped: %q, %v; want nothing", piped, err)
	}
	master, slave := openPTY(t)
	if _, err := (&app{stderr: slave, quiet: true}).connect(ctx, cf); err != nil {
		t.Fatal(err)
	}
	c, err := (&app{stderr: slave}).connect(ctx, cf)
	if err != nil {
		t.Fatal(err)
	}
	slave.Close()
	got, _ := io.ReadAll(master)
	want := fmt.Sprintf("addonpkg: context \"admin\", server %s\r\n", env.URL)
	if string(got) != want || c.Context() != "admin" || c.Host() != env.URL {
		t.Errorf("terminal shows %q (context %q, server %q), want %q", got, c.Context(), c.Host(), want)
	}
}

// The API server's warnings are printed once each, as kubectl prints
// them; the client's other records are klog's (nowhere without -v).
func TestServerWarningsPrintedOnce(t *testing.T) {
	var stderr bytes.Buffer
	log := slog.New(&serverWarnings{a: &app{stderr: &stderr}, seen: map[string]bool{}})
	for range 2 {
		log.Warn("API server warning: policy/v1beta1 PodDisruptionBudget is deprecated", "warning", "policy/v1beta1 PodDisruptionBudget is deprecated\x1b[2J")
	}
	log.Info("controller-runtime says something")
	if want := "addonpkg: warning: API server: policy/v1beta1 PodDisruptionBudget is deprecated?[2J\n"; stderr.String() != want {
		t.Errorf("stderr %q, want %q", stderr.String(), want)
	}
}

// answeringMetricsServer is a copy of examples/metrics-server in dir whose
// APIService the API server finds available: its Service is an
// ExternalName for localhost on the port of a server playing
// metrics-server (kubeenv.ServeAggregatedAPI), the only way to one here
// (the API server dials a ClusterIP Service's address, which nothing
// serves on this machine, and refuses a loopback endpoint).
func answeringMetricsServer(t *testing.T, dir string) string {
	t.Helper()
	ms := filepath.Join(dir, "metrics-server")
	lcCopyDir(t, filepath.Join("..", "..", "examples", "metrics-server"), ms)
	port := strconv.Itoa(kubeenv.ServeAggregatedAPI(t))
	lcEdit(t, filepath.Join(ms, "base", "service.yaml"), "spec:\n  ports:\n", "spec:\n  type: ExternalName\n  externalName: localhost\n  ports:\n")
	lcEdit(t, filepath.Join(ms, "base", "service.yaml"), "port: 443", "port: "+port)
	lcEdit(t, filepath.Join(ms, "base", "apiservice.yaml"), "    namespace: kube-system\n", "    namespace: kube-system\n    port: "+port+"\n")
	return ms
}

// An uninstall that finds none of the add-on's objects left (deleted by
// hand, or by an uninstall that was interrupted) prints no table: a
// header alone on stdout said nothing, and a script counting its lines
// counted one. It says so on stderr, unless -q (as apply -q); its JSON
// lists no change, as [].
func TestCLIUninstallNothingLeft(t *testing.T) {
	cc := newClusterCLI(t)
	dir := filepath.Join(cc.tmp, "left")
	must(t, os.MkdirAll(dir, 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "cm.yaml"), []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cli-left, namespace: default}\n"), 0o644))
	typed := kubernetes.NewForConfigOrDie(cc.env.Admin)
	for _, args := range [][]string{{"uninstall", "left"}, {"uninstall", "left", "--json"}, {"uninstall", "left", "-q"}} {
		if _, stderr, code := cc.run(t, "apply", dir); code != 0 {
			t.Fatalf("apply: exit %d: %s", code, stderr)
		}
		must(t, typed.CoreV1().ConfigMaps("default").Delete(context.Background(), "cli-left", metav1.DeleteOptions{}))
		out, stderr, code := cc.run(t, args...)
		want, wantErr := "", "addonpkg: left: no objects left to delete\n"
		switch {
		case slices.Contains(args, "--json"):
			want, wantErr = "{\n  \"addon\": \"left\",\n  \"changes\": []\n}\n", ""
		case slices.Contains(args, "-q"):
			wantErr = ""
		}
		if code != 0 || out != want || stderr != wantErr {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 0, stdout %q, stderr %q", args, code, out, stderr, want, wantErr)
		}
	}
}

// -n (and --inventory-namespace) completes with the cluster's
// namespaces, as kubectl's, helm's and flux's -n do (it offered the
// directory's files); a user who may not list
// them gets no files either, but cobra's error directive.
func TestCLICompletionOffersNamespaces(t *testing.T) {
	cc := newClusterCLI(t)
	for _, args := range [][]string{{"apply", "x", "-n", ""}, {"diff", "--cluster", "x", "--namespace", ""}, {"status", "--inventory-namespace", ""}} {
		out, stderr, code := cc.run(t, append([]string{"__complete"}, args...)...)
		got := strings.Fields(out)
		if code != 0 || !slices.Contains(got, "default") || !slices.Contains(got, "kube-system") || got[len(got)-1] != ":4" {
			t.Errorf("__complete %q: exit %d, stderr %q, offers %q; want the namespaces and :4", args, code, stderr, got)
		}
	}
	out, _, _ := runKube(t, nil, []string{"KUBECONFIG=" + cc.env.RestrictedKubeconfig}, cc.bin, "__complete", "apply", "x", "-n", "")
	if got := strings.Fields(out); !slices.Equal(got, []string{":1"}) {
		t.Errorf("__complete -n as a user who may not list namespaces offers %q, want [:1]", got)
	}
}

// The table of a command about several add-ons has its ADDON column
// however many of them had changes: uninstall of two NAMEs, one not
// installed, printed the other's rows without it, so a script reading
// the columns read ACTION as ADDON.
func TestCLISeveralNamesKeepTheAddonColumn(t *testing.T) {
	cc := newClusterCLI(t)
	dir := filepath.Join(cc.tmp, "one-of-two")
	must(t, os.MkdirAll(dir, 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "cm.yaml"), []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cli-one-of-two, namespace: default}\n"), 0o644))
	if _, stderr, code := cc.run(t, "apply", dir); code != 0 {
		t.Fatalf("apply: exit %d: %s", code, stderr)
	}
	out, stderr, code := cc.run(t, "uninstall", "one-of-two", "not-installed")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 1 || len(lines) != 2 || !strings.HasPrefix(lines[0], "ADDON ") || !strings.HasPrefix(lines[1], "one-of-two ") ||
		!strings.Contains(stderr, "uninstall not-installed: add-on not installed") {
		t.Errorf("uninstall of two, one not installed: exit %d, stderr %q, stdout:\n%s", code, stderr, out)
	}
}

// An object annotated addonpkg.io/apply: IfNotPresent is created once
// (diff --cluster shows the create), then left to the admin who edits
// it: apply, its --json, --dry-run=server and diff --cluster say it is
// skipped and why, and change nothing. A typo in the value is refused in
// one line naming the object, before any change.
func TestCLIApplyIfNotPresent(t *testing.T) {
	cc := newClusterCLI(t)
	dir := filepath.Join(cc.tmp, "once")
	must(t, os.MkdirAll(dir, 0o755))
	const cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cli-once\n  namespace: default\n  annotations: {addonpkg.io/apply: %s}\ndata: {Corefile: \"%s\"}\n"
	write := func(policy, v string) {
		must(t, os.WriteFile(filepath.Join(dir, "cm.yaml"), []byte(fmt.Sprintf(cm, policy, v)), 0o644))
	}
	write("IfNotPresent", "1")
	t.Cleanup(func() { cc.run(t, "uninstall", "once") })
	out, stderr, code := cc.run(t, "diff", "--cluster", dir)
	if code != 1 || !strings.Contains(out, "created (dry run)  ConfigMap/default/cli-once") || !strings.Contains(out, `+  Corefile: "1"`) {
		t.Fatalf("diff --cluster before install: exit %d, stderr %q:\n%s", code, stderr, out)
	}
	if _, stderr, code := cc.run(t, "apply", dir); code != 0 {
		t.Fatalf("apply: exit %d: %s", code, stderr)
	}
	typed := kubernetes.NewForConfigOrDie(cc.env.Admin)
	ctx := t.Context()
	live, err := typed.CoreV1().ConfigMaps("default").Get(ctx, "cli-once", metav1.GetOptions{})
	must(t, err)
	live.Data["Corefile"] = "edited by the admin"
	live, err = typed.CoreV1().ConfigMaps("default").Update(ctx, live, metav1.UpdateOptions{})
	must(t, err)

	write("IfNotPresent", "2")
	out, stderr, code = cc.run(t, "apply", dir, "--json")
	var cs apply.ChangeSet
	if err := json.Unmarshal([]byte(out), &cs); code != 0 || err != nil || len(cs.Changes) != 1 ||
		cs.Changes[0].Action != apply.Skipped || !strings.Contains(cs.Changes[0].Reason, "addonpkg.io/apply: IfNotPresent") {
		t.Errorf("apply --json of a changed IfNotPresent ConfigMap: exit %d, %v, stderr %q:\n%s", code, err, stderr, out)
	}
	out, stderr, code = cc.run(t, "apply", dir)
	if code != 0 || !strings.Contains(out, "skipped  ConfigMap/default/cli-once  left as it is: it exists") {
		t.Errorf("apply: exit %d, stderr %q:\n%s", code, stderr, out)
	}
	out, stderr, code = cc.run(t, "apply", dir, "--dry-run=server", "--diff")
	if code != 0 || !strings.Contains(out, "skipped (dry run)  ConfigMap/default/cli-once  left as it is") || strings.Contains(out, "Corefile") {
		t.Errorf("apply --dry-run=server --diff: exit %d, stderr %q:\n%s", code, stderr, out)
	}
	if out, stderr, code = cc.run(t, "diff", "--cluster", dir); code != 0 || strings.Contains(out, "Corefile") {
		t.Errorf("diff --cluster of a present IfNotPresent ConfigMap: exit %d, stderr %q:\n%s", code, stderr, out)
	}
	now, err := typed.CoreV1().ConfigMaps("default").Get(ctx, "cli-once", metav1.GetOptions{})
	must(t, err)
	if now.ResourceVersion != live.ResourceVersion || now.Data["Corefile"] != "edited by the admin" {
		t.Errorf("the admin's edit was changed: %v", now.Data)
	}

	write("ifnotpresent", "2")
	out, stderr, code = cc.run(t, "apply", dir)
	if code != 1 || out != "" || strings.Count(stderr, "\n") != 1 ||
		!strings.Contains(stderr, "ConfigMap/default/cli-once") || !strings.Contains(stderr, `addonpkg.io/apply: "ifnotpresent"`) {
		t.Errorf("apply with a typo in the policy: exit %d, stdout %q, stderr %q; want exit 1 and one line naming the object", code, out, stderr)
	}
}

// TestCLIUninstallNoWait: uninstall --wait=false returns once the
// deletions are asked for, as kubectl delete --wait=false: a ConfigMap a
// finalizer holds is left terminating, exit 0, the inventory gone, no
// "waiting" line; uninstall waited for it until --wait-timeout, and
// failed.
func TestCLIUninstallNoWait(t *testing.T) {
	cc := newClusterCLI(t)
	name := "cli-nowait"
	dir := filepath.Join(cc.tmp, name)
	must(t, os.MkdirAll(dir, 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "objects.yaml"), []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: "+name+"-held, namespace: default, finalizers: [example.com/never]}\n"), 0o644))
	typed := kubernetes.NewForConfigOrDie(cc.env.Admin)
	t.Cleanup(func() {
		_, _ = typed.CoreV1().ConfigMaps("default").Patch(context.Background(), name+"-held", "application/merge-patch+json",
			[]byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
	})
	if _, stderr, code := cc.run(t, "apply", dir, "--name", name); code != 0 {
		t.Fatalf("apply: exit %d: %s", code, stderr)
	}
	out, stderr, code := cc.run(t, "uninstall", name, "--wait=false", "--wait-timeout", "1m")
	if code != 0 || !strings.Contains(out, "ConfigMap/default/"+name+"-held") || !strings.Contains(out, "deleted") || strings.Contains(stderr, "waiting") {
		t.Fatalf("uninstall --wait=false: exit %d, stderr %q:\n%s", code, stderr, out)
	}
	cm, err := typed.CoreV1().ConfigMaps("default").Get(context.Background(), name+"-held", metav1.GetOptions{})
	if err != nil || cm.DeletionTimestamp == nil {
		t.Errorf("the held ConfigMap: %v, want it terminating", err)
	}
	if _, err := typed.CoreV1().Secrets("kube-system").Get(context.Background(), apply.InventoryName(name), metav1.GetOptions{}); err == nil {
		t.Error("uninstall --wait=false left the inventory")
	}
	if _, stderr, code := cc.run(t, "uninstall", name, "--wait=maybe"); code != 1 || !strings.Contains(stderr, "--wait") {
		t.Errorf("uninstall --wait=maybe: exit %d, stderr %q, want a flag error (exit 1)", code, stderr)
	}
}

// TestCLIApplyNoWaitPrunes: apply --wait=false asks for the deletion of
// what it prunes and returns, as kubectl apply --prune without --wait: a
// ConfigMap a finalizer holds is left terminating, exit 0, no "waiting"
// line. The prune waited for it until --wait-timeout, and failed.
func TestCLIApplyNoWaitPrunes(t *testing.T) {
	cc := newClusterCLI(t)
	name := "cli-nowait-prune"
	dir := filepath.Join(cc.tmp, name)
	must(t, os.MkdirAll(dir, 0o755))
	held := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: " + name + "-held, namespace: default, finalizers: [example.com/never]}\n"
	kept := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: " + name + "-kept, namespace: default}\n"
	typed := kubernetes.NewForConfigOrDie(cc.env.Admin)
	t.Cleanup(func() {
		_, _ = typed.CoreV1().ConfigMaps("default").Patch(context.Background(), name+"-held", "application/merge-patch+json",
			[]byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
	})
	must(t, os.WriteFile(filepath.Join(dir, "objects.yaml"), []byte(held+"---\n"+kept), 0o644))
	if _, stderr, code := cc.run(t, "apply", dir, "--name", name); code != 0 {
		t.Fatalf("apply: exit %d: %s", code, stderr)
	}
	must(t, os.WriteFile(filepath.Join(dir, "objects.yaml"), []byte(kept), 0o644))
	out, stderr, code := cc.run(t, "apply", dir, "--name", name, "--wait=false", "--wait-timeout", "1m")
	if code != 0 || !strings.Contains(out, "ConfigMap/default/"+name+"-held") || !strings.Contains(out, "deleted") || strings.Contains(stderr, "waiting") {
		t.Fatalf("apply --wait=false that prunes: exit %d, stderr %q:\n%s", code, stderr, out)
	}
	cm, err := typed.CoreV1().ConfigMaps("default").Get(context.Background(), name+"-held", metav1.GetOptions{})
	if err != nil || cm.DeletionTimestamp == nil {
		t.Errorf("the held ConfigMap: %v, want it terminating", err)
	}
}
