package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/addonpkg/addonpkg/pkg/apply"
)

// The peer of the inventory's ApplySet (KEP-3659) is kubectl's: `kubectl
// apply --prune --applyset=KIND/NAME`, behind KUBECTL_APPLYSET=true (the
// value must be "true": kubectl 1.32 ignores "1" and knows no --applyset
// flag then).

// kubectlPeer finds kubectl: missing, it fails the test under CI
// (hack/install-deps.sh installs it) and skips it elsewhere.
func kubectlPeer(t *testing.T) string {
	t.Helper()
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("kubectl is missing: hack/install-deps.sh installs it")
		}
		t.Skip("kubectl is missing")
	}
	return kubectl
}

// kubectlCleanup deletes, once the test ends, what kubectl made: objs as
// KIND/NAME, cluster-scoped (namespaces are not waited for).
func kubectlCleanup(t *testing.T, vars []string, kubectl string, objs ...string) {
	t.Cleanup(func() {
		for _, o := range objs {
			runKube(t, nil, vars, kubectl, "delete", "--ignore-not-found", "--wait=false", o)
		}
	})
}

// applySetFiles is an add-on of kinds of the core group, of a named group,
// namespaced and cluster-scoped: NS is its namespace.
var applySetFiles = map[string]string{
	"ns.yaml":       "apiVersion: v1\nkind: Namespace\nmetadata: {name: NS-extra}\n",
	"settings.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: NS}\ndata: {key: one}\n",
	"extra.yaml":    "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: extra, namespace: NS}\ndata: {key: two}\n",
	"svc.yaml":      "apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: NS}\nspec:\n  ports: [{port: 80}]\n",
	"role.yaml":     "apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata: {name: reader, namespace: NS}\nrules: []\n",
	"crole.yaml":    "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: NS-reader}\nrules: []\n",
}

// writeApplySetAddon writes the files named (all when none) with NS as ns
// into a new directory.
func writeApplySetAddon(t *testing.T, dir, ns string, names ...string) string {
	t.Helper()
	must(t, os.MkdirAll(dir, 0o755))
	for name, text := range applySetFiles {
		if len(names) == 0 || slices.Contains(names, name) {
			must(t, os.WriteFile(filepath.Join(dir, name), []byte(strings.ReplaceAll(text, "NS", ns)), 0o644))
		}
	}
	return dir
}

// objectMeta is what kubectl -o json prints of an object's metadata.
type objectMeta struct {
	Metadata struct {
		Labels      map[string]string `json:"labels"`
		Annotations map[string]string `json:"annotations"`
	} `json:"metadata"`
}

func kubectlMeta(t *testing.T, vars []string, kubectl string, args ...string) objectMeta {
	t.Helper()
	out, stderr, code := runKube(t, nil, vars, kubectl, append([]string{"get", "-o", "json"}, args...)...)
	if code != 0 {
		t.Fatalf("kubectl get %v: exit %d: %s", args, code, stderr)
	}
	var m objectMeta
	must(t, json.Unmarshal([]byte(out), &m))
	return m
}

// lines is out's non-empty lines, sorted.
func lines(out string) []string {
	var l []string
	for _, s := range strings.Split(out, "\n") {
		if s = strings.TrimSpace(s); s != "" {
			l = append(l, s)
		}
	}
	slices.Sort(l)
	return l
}

// TestKubectlReadsTheInventoryApplySet: the inventory Secret is an
// ApplySet parent kubectl reads as its own would be. kubectl refuses to
// apply to it for the tooling annotation, addonpkg's (its first check, so
// that refusal alone says nothing of the rest); told the set is its own,
// it accepts the id label, reads contains-group-kinds and finds the
// members by part-of: a server dry-run without three of them would prune
// exactly those three. The annotations are those kubectl writes for its
// own set of the same objects (additional-namespaces too, with a
// cluster-scoped parent, the only kind kubectl lets span namespaces), and
// `kubectl get -l part-of=ID` lists what addonpkg installed.
func TestKubectlReadsTheInventoryApplySet(t *testing.T) {
	t.Parallel()
	kubectl := kubectlPeer(t)
	cc := newClusterCLI(t)
	vars := append(slices.Clone(cc.vars), "KUBECTL_APPLYSET=true")
	const ns, kns, name = "aset-read", "aset-read-kubectl", "aset-read"
	kubectlCleanup(t, vars, kubectl, "namespace/"+ns, "namespace/"+kns, "namespace/"+kns+"-extra", "clusterrole/"+kns+"-reader")
	for _, n := range []string{ns, kns} {
		if _, stderr, code := runKube(t, nil, vars, kubectl, "create", "namespace", n); code != 0 {
			t.Fatalf("kubectl create namespace %s: %s", n, stderr)
		}
	}
	dir := writeApplySetAddon(t, filepath.Join(cc.tmp, "addon"), ns)
	// The inventory in the objects' namespace: kubectl's ApplySet with a
	// namespaced parent holds objects of the parent's namespace only.
	if _, stderr, code := cc.run(t, "apply", dir, "--name", name, "--inventory-namespace", ns); code != 0 {
		t.Fatalf("apply: exit %d: %s", code, stderr)
	}
	parent := "secret/" + apply.InventoryName(name)
	inv := kubectlMeta(t, vars, kubectl, "-n", ns, parent)
	id := inv.Metadata.Labels[apply.LabelApplySetID]

	// kubectl's own set of the same objects, in another namespace.
	kdir := writeApplySetAddon(t, filepath.Join(cc.tmp, "kubectl"), kns)
	if out, stderr, code := runKube(t, nil, vars, kubectl, "apply", "--server-side", "--prune", "--applyset=secret/kset", "-n", kns, "-f", kdir); code != 0 {
		t.Fatalf("kubectl apply --applyset of its own set: exit %d:\n%s%s", code, out, stderr)
	}
	own := kubectlMeta(t, vars, kubectl, "-n", kns, "secret/kset")
	const kinds = "ClusterRole.rbac.authorization.k8s.io,ConfigMap,Namespace,Role.rbac.authorization.k8s.io,Service"
	for _, key := range []string{apply.AnnotationApplySetGroupKinds, apply.AnnotationApplySetNamespaces} {
		got, ok := inv.Metadata.Annotations[key]
		want, wok := own.Metadata.Annotations[key]
		if got != want || ok != wok {
			t.Errorf("%s: addonpkg wrote %q (set %v), kubectl writes %q (set %v) for the same objects", key, got, ok, want, wok)
		}
	}
	if got := inv.Metadata.Annotations[apply.AnnotationApplySetGroupKinds]; got != kinds {
		t.Errorf("contains-group-kinds = %q, want %q", got, kinds)
	}

	// kubectl refuses the set for its tooling, and for nothing else.
	out, stderr, code := runKube(t, nil, vars, kubectl, "apply", "--server-side", "--dry-run=server", "--prune", "--applyset="+parent, "-n", ns, "-f", dir)
	if code == 0 || !strings.Contains(stderr, `is managed by tooling "addonpkg" instead of "kubectl"`) {
		t.Errorf("kubectl apply --applyset=%s: exit %d, want a refusal naming the tooling addonpkg:\n%s%s", parent, code, out, stderr)
	}

	// Told the set is its own, kubectl accepts the id, and a dry-run of
	// the add-on without three of its objects prunes those three.
	claim := func(tooling string) {
		t.Helper()
		if _, stderr, code := runKube(t, nil, vars, kubectl, "annotate", "--overwrite", "-n", ns, parent, apply.AnnotationApplySetTooling+"="+tooling); code != 0 {
			t.Fatalf("kubectl annotate: %s", stderr)
		}
	}
	claim("kubectl/v1")
	part := writeApplySetAddon(t, filepath.Join(cc.tmp, "part"), ns, "settings.yaml", "svc.yaml", "role.yaml")
	// --force-conflicts: kubectl applies as the manager "kubectl", the
	// fields are addonpkg's; nothing is changed (a dry-run).
	out, stderr, code = runKube(t, nil, vars, kubectl, "apply", "--server-side", "--force-conflicts", "--dry-run=server", "--prune", "--applyset="+parent, "-n", ns, "-f", part)
	claim(apply.Tooling)
	if code != 0 {
		t.Fatalf("kubectl apply --applyset=%s claimed as kubectl's: exit %d:\n%s%s", parent, code, out, stderr)
	}
	var pruned []string
	for _, l := range lines(out) {
		if s, ok := strings.CutSuffix(l, " pruned (server dry run)"); ok {
			pruned = append(pruned, s)
		}
	}
	if want := []string{"clusterrole.rbac.authorization.k8s.io/" + ns + "-reader", "configmap/extra", "namespace/" + ns + "-extra"}; !slices.Equal(pruned, want) {
		t.Errorf("kubectl's dry-run would prune %q, want %q:\n%s", pruned, want, out)
	}
	if after := kubectlMeta(t, vars, kubectl, "-n", ns, parent); after.Metadata.Labels[apply.LabelApplySetID] != id ||
		after.Metadata.Annotations[apply.AnnotationApplySetGroupKinds] != kinds {
		t.Errorf("kubectl's dry-run changed the inventory: %v", after.Metadata)
	}

	// kubectl lists the members by the set's id.
	out, stderr, code = runKube(t, nil, vars, kubectl, "get", "all,cm,secret", "-A", "-l", apply.LabelApplySetPartOf+"="+id, "-o", "name")
	if want := []string{"configmap/extra", "configmap/settings", "service/web"}; code != 0 || !slices.Equal(lines(out), want) {
		t.Errorf("kubectl get all,cm,secret -l part-of: exit %d, %q (%s), want %q", code, lines(out), stderr, want)
	}
	out, stderr, code = runKube(t, nil, vars, kubectl, "get", kinds, "-A", "-l", apply.LabelApplySetPartOf+"="+id, "-o", "name")
	want := []string{"clusterrole.rbac.authorization.k8s.io/" + ns + "-reader", "configmap/extra", "configmap/settings",
		"namespace/" + ns + "-extra", "role.rbac.authorization.k8s.io/reader", "service/web"}
	if code != 0 || !slices.Equal(lines(out), want) {
		t.Errorf("kubectl get %s -l part-of: exit %d, %q (%s), want %q", kinds, code, lines(out), stderr, want)
	}

	// addonpkg still owns its set: a second apply changes nothing.
	out, stderr, code = cc.run(t, "apply", dir, "--name", name, "--inventory-namespace", ns, "--json")
	var cs apply.ChangeSet
	if code != 0 || json.Unmarshal([]byte(out), &cs) != nil || cs.Changed() {
		t.Errorf("apply after kubectl's dry-run: exit %d, %s\n%s", code, stderr, out)
	}
	if _, stderr, code := cc.run(t, "uninstall", name, "--inventory-namespace", ns); code != 0 {
		t.Errorf("uninstall: exit %d: %s", code, stderr)
	}

	// additional-namespaces: an add-on in two namespaces (its inventory
	// in kube-system) and kubectl's set of the same objects under a
	// cluster-scoped parent, its only parent that may span namespaces.
	const mns = "aset-multi"
	kubectlCleanup(t, vars, kubectl, "namespace/"+mns+"-a", "namespace/"+mns+"-b", "namespace/k"+mns+"-a", "namespace/k"+mns+"-b", "clusterrole/k"+mns+"-reader")
	for _, n := range []string{mns + "-b", mns + "-a", "k" + mns + "-b", "k" + mns + "-a"} {
		if _, stderr, code := runKube(t, nil, vars, kubectl, "create", "namespace", n); code != 0 {
			t.Fatalf("kubectl create namespace %s: %s", n, stderr)
		}
	}
	multi := func(dir, prefix string) string {
		must(t, os.MkdirAll(dir, 0o755))
		// The stream names -b before -a: the annotation is sorted.
		must(t, os.WriteFile(filepath.Join(dir, "cms.yaml"), []byte(strings.ReplaceAll(`apiVersion: v1
kind: ConfigMap
metadata: {name: one, namespace: P-b}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: two, namespace: P-a}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: P-reader}
rules: []
`, "P", prefix)), 0o644))
		return dir
	}
	if _, stderr, code := cc.run(t, "apply", multi(filepath.Join(cc.tmp, "multi"), mns), "--name", mns); code != 0 {
		t.Fatalf("apply %s: exit %d: %s", mns, code, stderr)
	}
	defer cc.run(t, "uninstall", mns)
	crd := `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: parents.aset.example.com
  labels: {applyset.kubernetes.io/is-parent-type: "true"}
spec:
  group: aset.example.com
  names: {kind: Parent, listKind: ParentList, plural: parents, singular: parent}
  scope: Cluster
  versions:
  - {name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}
`
	if _, stderr, code := runKube(t, []byte(crd), vars, kubectl, "apply", "-f", "-"); code != 0 {
		t.Fatalf("kubectl apply the parent CRD: %s", stderr)
	}
	defer runKube(t, nil, vars, kubectl, "delete", "crd", "parents.aset.example.com")
	if _, stderr, code := runKube(t, nil, vars, kubectl, "wait", "--for=condition=Established", "crd/parents.aset.example.com"); code != 0 {
		t.Fatalf("kubectl wait: %s", stderr)
	}
	// kubectl makes no custom resource parent: it is made with the
	// tooling, and the id kubectl asks for.
	cr := "apiVersion: aset.example.com/v1\nkind: Parent\nmetadata:\n  name: kp\n  labels: {applyset.kubernetes.io/id: wrong}\n  annotations: {applyset.kubernetes.io/tooling: kubectl/v1, applyset.kubernetes.io/contains-group-kinds: \"\"}\n"
	if _, stderr, code := runKube(t, []byte(cr), vars, kubectl, "create", "-f", "-"); code != 0 {
		t.Fatalf("kubectl create the parent: %s", stderr)
	}
	kmulti := multi(filepath.Join(cc.tmp, "kmulti"), "k"+mns)
	_, stderr, _ = runKube(t, nil, vars, kubectl, "apply", "--server-side", "--prune", "--applyset=parents.aset.example.com/kp", "-f", kmulti)
	m := regexp.MustCompile(`incorrect value for label "applyset.kubernetes.io/id" \(got: wrong, want: (applyset-[A-Za-z0-9_-]+-v1)\)`).FindStringSubmatch(stderr)
	if m == nil {
		t.Fatalf("kubectl on a parent with a wrong id: %s", stderr)
	}
	runKube(t, nil, vars, kubectl, "label", "--overwrite", "parent/kp", apply.LabelApplySetID+"="+m[1])
	if out, stderr, code := runKube(t, nil, vars, kubectl, "apply", "--server-side", "--prune", "--applyset=parents.aset.example.com/kp", "-f", kmulti); code != 0 {
		t.Fatalf("kubectl apply --applyset with a cluster-scoped parent: exit %d:\n%s%s", code, out, stderr)
	}
	kp := kubectlMeta(t, vars, kubectl, "parent/kp")
	got := kubectlMeta(t, vars, kubectl, "-n", "kube-system", "secret/"+apply.InventoryName(mns))
	for _, key := range []string{apply.AnnotationApplySetGroupKinds, apply.AnnotationApplySetNamespaces} {
		if g, w := got.Metadata.Annotations[key], strings.ReplaceAll(kp.Metadata.Annotations[key], "k"+mns, mns); g != w {
			t.Errorf("%s of an add-on in two namespaces: addonpkg wrote %q, kubectl writes %q", key, g, w)
		}
	}
	if g, w := got.Metadata.Annotations[apply.AnnotationApplySetNamespaces], mns+"-a,"+mns+"-b"; g != w {
		t.Errorf("additional-namespaces = %q, want %q", g, w)
	}
}

// TestCLIRefusesKubectlApplySetMembers: objects of a set kubectl's
// ApplySet apply made (applyset.kubernetes.io/part-of its id, no add-on
// label) are refused without --force, naming the set and its parent, and
// stay kubectl's: its next prune still sees them. addonpkg took them
// over, relabelled into its own set, and kubectl's set lost them.
func TestCLIRefusesKubectlApplySetMembers(t *testing.T) {
	t.Parallel()
	kubectl := kubectlPeer(t)
	cc := newClusterCLI(t)
	vars := append(slices.Clone(cc.vars), "KUBECTL_APPLYSET=true")
	const ns, name = "aset-kubectls", "aset-kubectls"
	kubectlCleanup(t, vars, kubectl, "namespace/"+ns, "clusterrole/"+ns+"-reader")
	if _, stderr, code := runKube(t, nil, vars, kubectl, "create", "namespace", ns); code != 0 {
		t.Fatalf("kubectl create namespace: %s", stderr)
	}
	dir := writeApplySetAddon(t, filepath.Join(cc.tmp, "addon"), ns, "settings.yaml", "extra.yaml", "crole.yaml")
	if out, stderr, code := runKube(t, nil, vars, kubectl, "apply", "--server-side", "--prune", "--applyset=secret/kset", "-n", ns, "-f", dir); code != 0 {
		t.Fatalf("kubectl apply --applyset: exit %d:\n%s%s", code, out, stderr)
	}
	kid := kubectlMeta(t, vars, kubectl, "-n", ns, "secret/kset").Metadata.Labels[apply.LabelApplySetID]
	if kid == "" {
		t.Fatal("kubectl's parent has no id")
	}

	for _, args := range [][]string{{"--dry-run=server"}, {}} {
		_, stderr, code := cc.run(t, append([]string{"apply", dir, "--name", name}, args...)...)
		want := "and 2 more objects belong to ApplySet " + kid + ` of Secret/` + ns + `/kset (tooling "kubectl/`
		if code != 1 || !strings.Contains(stderr, want) || !strings.Contains(stderr, `not to add-on "`+name+`" (--force adopts them)`) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("apply %v of kubectl's set: exit %d, stderr %q, want 1 and %q", args, code, stderr, want)
		}
	}
	for _, obj := range []string{"configmap/settings", "configmap/extra", "clusterrole/" + ns + "-reader"} {
		l := kubectlMeta(t, vars, kubectl, "-n", ns, obj).Metadata.Labels
		if l[apply.LabelApplySetPartOf] != kid || l[apply.LabelAddon] != "" {
			t.Errorf("the refused apply relabelled %s: %v", obj, l)
		}
	}
	if _, _, code := runKube(t, nil, vars, kubectl, "get", "-n", "kube-system", "secret/"+apply.InventoryName(name)); code == 0 {
		t.Error("the refused apply wrote an inventory")
	}

	// kubectl's set still holds them: its prune sees the one dropped.
	part := writeApplySetAddon(t, filepath.Join(cc.tmp, "part"), ns, "settings.yaml", "crole.yaml")
	out, stderr, code := runKube(t, nil, vars, kubectl, "apply", "--server-side", "--dry-run=server", "--prune", "--applyset=secret/kset", "-n", ns, "-f", part)
	if code != 0 || !strings.Contains(out, "configmap/extra pruned (server dry run)") {
		t.Errorf("kubectl's prune after the refused apply: exit %d:\n%s%s", code, out, stderr)
	}

	// --force adopts them into the add-on's set.
	if _, stderr, code := cc.run(t, "apply", dir, "--name", name, "--force"); code != 0 {
		t.Fatalf("apply --force: exit %d: %s", code, stderr)
	}
	if l := kubectlMeta(t, vars, kubectl, "-n", ns, "configmap/extra").Metadata.Labels; l[apply.LabelApplySetPartOf] != apply.ApplySetID(apply.InventoryName(name), "kube-system") {
		t.Errorf("apply --force left configmap/extra in kubectl's set: %v", l)
	}
	if _, stderr, code := cc.run(t, "uninstall", name); code != 0 {
		t.Errorf("uninstall: exit %d: %s", code, stderr)
	}
}
