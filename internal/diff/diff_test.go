package diff

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/addonpkg/addonpkg/pkg/addon"
	"github.com/addonpkg/addonpkg/pkg/filetree"
	"github.com/addonpkg/addonpkg/pkg/render"
	"github.com/addonpkg/addonpkg/pkg/safetree"
)

func renderFiles(t *testing.T, files map[string]string) *render.Result {
	t.Helper()
	b := filetree.NewBuilder()
	for name, body := range files {
		if err := b.WriteFile(name, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	res, err := render.Render(context.Background(), b.FS(), render.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestDiff(t *testing.T) {
	a := renderFiles(t, map[string]string{
		"a.yaml": `# a comment
apiVersion: v1
kind: ConfigMap
metadata:
  name: same
  namespace: ns
data:
  k: "1"
  list: [x, y]
---
apiVersion: v1
kind: ConfigMap
metadata: {name: changed, namespace: ns}
data:
  k: old
  a: "1"
  b: "2"
  c: "3"
---
apiVersion: v1
kind: Secret
metadata:
  name: removed
`,
		"b.json": `{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns"}}`,
	})
	b := renderFiles(t, map[string]string{
		"a.yaml": `apiVersion: v1
data:
  list:
  - x   # the first
  - 'y'
  k: '1'
kind: ConfigMap
metadata:
  namespace: ns
  name: same
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: changed
  namespace: ns
data:
  k: new
  a: "1"
  b: "2"
  c: "3"
---
apiVersion: v1
kind: Service
metadata:
  name: added
  namespace: ns
`,
		"b.yaml": "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ns\n",
	})
	r := Diff(context.Background(), a, b)
	if r.Equal() {
		t.Fatal("equal")
	}
	want := &Report{
		Added:   []addon.Object{{APIVersion: "v1", Kind: "Service", Namespace: "ns", Name: "added"}},
		Removed: []addon.Object{{APIVersion: "v1", Kind: "Secret", Name: "removed"}},
	}
	if fmt.Sprint(r.Added) != fmt.Sprint(want.Added) || fmt.Sprint(r.Removed) != fmt.Sprint(want.Removed) {
		t.Errorf("added %v removed %v", r.Added, r.Removed)
	}
	if len(r.Changed) != 1 || r.Changed[0].Object.Name != "changed" {
		t.Fatalf("changed %+v", r.Changed)
	}
	wantDiff := `--- a/v1/ConfigMap ns/changed
+++ b/v1/ConfigMap ns/changed
@@ -7,4 +7,4 @@
   a: "1"
   b: "2"
   c: "3"
-  k: old
+  k: new
`
	if got := r.Changed[0].UnifiedDiff; got != wantDiff {
		t.Errorf("diff\n%s\nwant\n%s", got, wantDiff)
	}
	var sb strings.Builder
	if err := r.WriteText(&sb); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"Added (1):\n  v1/Service ns/added\n", "Removed (1):\n  v1/Secret removed\n", "Changed (1):\n  v1/ConfigMap ns/changed\n", "-  k: old\n+  k: new\n"} {
		if !strings.Contains(sb.String(), s) {
			t.Errorf("text output lacks %q:\n%s", s, sb.String())
		}
	}
	js, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(js), `"changed":[{"object":{"apiVersion":"v1","kind":"ConfigMap","namespace":"ns","name":"changed"},"diff":"--- a/`) {
		t.Errorf("json %s", js)
	}

	same := Diff(context.Background(), a, a)
	if !same.Equal() {
		t.Errorf("a differs from itself: %+v", same)
	}
	js, _ = json.Marshal(same)
	if string(js) != `{"added":[],"removed":[],"changed":[]}` {
		t.Errorf("empty report %s", js)
	}
}

// Documents with one key pair up in order. A render refuses them
// (spec/addon-v1.md 6.2, render.ErrDuplicate), so an add-on never gets
// here with them; a Result made otherwise still diffs.
func TestDiffDuplicateKeys(t *testing.T) {
	doc := func(v string) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  v: " + v + "\n"
	}
	split := func(body string) *render.Result {
		docs, err := render.SplitDocuments("a.yaml", []byte(body))
		if err != nil {
			t.Fatal(err)
		}
		return &render.Result{Kind: addon.KindManifests, Documents: docs}
	}
	if _, err := render.Render(context.Background(), fstest.MapFS{"a.yaml": {Data: []byte(doc("1") + "---\n" + doc("2"))}}, render.Options{}); !errors.Is(err, render.ErrDuplicate) {
		t.Errorf("render of two copies: %v, want ErrDuplicate", err)
	}
	a := split(doc("1") + "---\n" + doc("2"))
	b := split(doc("1") + "---\n" + doc("3") + "---\n" + doc("4"))
	r := Diff(context.Background(), a, b)
	if len(r.Added) != 1 || len(r.Removed) != 0 || len(r.Changed) != 1 || !strings.Contains(r.Changed[0].UnifiedDiff, "-  v: 2\n+  v: 3\n") {
		t.Errorf("%+v", r)
	}
	r = Diff(context.Background(), b, a)
	if len(r.Added) != 0 || len(r.Removed) != 1 || len(r.Changed) != 1 {
		t.Errorf("%+v", r)
	}
}

func TestNormalize(t *testing.T) {
	for _, tc := range [][2]string{
		{"a: 1\nb: 2\n", "b: 2\na: 1\n"},
		{"a: \"x\"\n", "a: x\n"},
		{"a: [1, 2]\n", "a:\n- 1\n- 2\n"},
		{"{\"a\": {\"b\": true}}", "a:\n  b: true # yes\n"},
		{"x: &v {k: 1}\ny: *v\n", "x: {k: 1}\ny:\n  k: 1\n"},
		{"a: |\n  one\n  two\n", "a: \"one\\ntwo\\n\"\n"},
	} {
		if na, nb := Normalize([]byte(tc[0])), Normalize([]byte(tc[1])); na != nb {
			t.Errorf("%q and %q normalize differently: %q, %q", tc[0], tc[1], na, nb)
		}
	}
	for _, tc := range [][2]string{
		{"a: \"1\"\n", "a: 1\n"},
		{"a: [1, 2]\n", "a: [2, 1]\n"},
		{"a: null\n", "a: \"null\"\n"},
	} {
		if na, nb := Normalize([]byte(tc[0])), Normalize([]byte(tc[1])); na == nb {
			t.Errorf("%q and %q normalize the same: %q", tc[0], tc[1], na)
		}
	}
	if got := Normalize([]byte("apiVersion: v1\nmetadata: {}\ndata: {}\nkind: X\n")); got != "apiVersion: v1\nkind: X\nmetadata: {}\ndata: {}\n" {
		t.Errorf("top-level order %q", got)
	}
}

// Nested aliases that would expand to billions of nodes stop early.
func TestNormalizeAliasBomb(t *testing.T) {
	var b strings.Builder
	b.WriteString("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i < 12; i++ {
		fmt.Fprintf(&b, "a%d: &a%d [", i, i)
		for j := range 10 {
			if j > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "*a%d", i-1)
		}
		b.WriteString("]\n")
	}
	// Returned as it is: the node budget stopped the expansion.
	got := Normalize([]byte(b.String()))
	if got != b.String() {
		t.Errorf("the bomb was normalized")
	}
	// A self-referencing alias ends too.
	self := "a: &a [1, *a]\n"
	_ = Normalize([]byte(self))
}

// An object whose version changed is the object the API server and
// render.ErrDuplicate know by group, kind, namespace and name: it is
// changed, with the diff of what else changed in it, not removed and
// added (which hid the replicas change below). Another group is another
// object.
func TestDiffVersionChange(t *testing.T) {
	a := renderFiles(t, map[string]string{"d.yaml": `apiVersion: apps/v1beta2
kind: Deployment
metadata: {name: web, namespace: ns}
spec:
  replicas: 1
---
apiVersion: extensions/v1beta1
kind: Ingress
metadata: {name: web, namespace: ns}
`})
	b := renderFiles(t, map[string]string{"d.yaml": `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: ns}
spec:
  replicas: 3
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: web, namespace: ns}
`})
	r := Diff(context.Background(), a, b)
	oldDep := addon.Object{APIVersion: "apps/v1beta2", Kind: "Deployment", Namespace: "ns", Name: "web"}
	newDep := addon.Object{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "ns", Name: "web"}
	if len(r.Changed) != 1 || r.Changed[0].Object != newDep || r.Changed[0].From == nil || *r.Changed[0].From != oldDep {
		t.Fatalf("changed %+v, want the Deployment from apps/v1beta2 to apps/v1", r.Changed)
	}
	wantDiff := `--- a/apps/v1beta2/Deployment ns/web
+++ b/apps/v1/Deployment ns/web
@@ -1,7 +1,7 @@
-apiVersion: apps/v1beta2
+apiVersion: apps/v1
 kind: Deployment
 metadata:
   name: web
   namespace: ns
 spec:
-  replicas: 1
+  replicas: 3
`
	if got := r.Changed[0].UnifiedDiff; got != wantDiff {
		t.Errorf("diff\n%s\nwant\n%s", got, wantDiff)
	}
	wantAdded := []addon.Object{{APIVersion: "networking.k8s.io/v1", Kind: "Ingress", Namespace: "ns", Name: "web"}}
	wantRemoved := []addon.Object{{APIVersion: "extensions/v1beta1", Kind: "Ingress", Namespace: "ns", Name: "web"}}
	if fmt.Sprint(r.Added) != fmt.Sprint(wantAdded) || fmt.Sprint(r.Removed) != fmt.Sprint(wantRemoved) {
		t.Errorf("added %v removed %v, want the Ingress of another group added and removed", r.Added, r.Removed)
	}
}

// A Secret's values are masked as kubectl diff masks them: a diff goes
// to CI logs and reviews, and --set puts an installer's values in it.
// What changed is still told: the keys, and which values changed.
func TestDiffMasksSecrets(t *testing.T) {
	secret := func(data, stringData, label string) map[string]string {
		return map[string]string{"s.yaml": "apiVersion: v1\nkind: Secret\nmetadata:\n  name: creds\n  labels: {tier: " + label + "}\n" + data + stringData}
	}
	a := renderFiles(t, secret("data:\n  same: c2FtZQ==\n  rotated: b2xk\n  dropped: Z29uZQ==\n", "stringData:\n  password: hunter2\n", "a"))
	b := renderFiles(t, secret("data:\n  same: c2FtZQ==\n  rotated: bmV3\n  added: bmV3a2V5\n", "stringData:\n  password: hunter3\n", "b"))
	r := Diff(context.Background(), a, b)
	if len(r.Changed) != 1 {
		t.Fatalf("changed %+v, want the Secret", r.Changed)
	}
	d := r.Changed[0].UnifiedDiff
	for _, secret := range []string{"c2FtZQ==", "b2xk", "Z29uZQ==", "bmV3", "bmV3a2V5", "hunter2", "hunter3"} {
		if strings.Contains(d, secret) {
			t.Errorf("the diff shows the value %q:\n%s", secret, d)
		}
	}
	for _, line := range []string{
		"   same: '***'\n",
		"-  rotated: '*** (before)'\n", "+  rotated: '*** (after)'\n",
		"-  dropped: '*** (before)'\n", "+  added: '*** (after)'\n",
		"-  password: '*** (before)'\n", "+  password: '*** (after)'\n",
		"-    tier: a\n", "+    tier: b\n",
	} {
		if !strings.Contains(d, line) {
			t.Errorf("the diff lacks %q:\n%s", line, d)
		}
	}

	// A change of the values alone is still a change.
	onlyValue := Diff(context.Background(), renderFiles(t, secret("data:\n  k: YQ==\n", "", "x")), renderFiles(t, secret("data:\n  k: Yg==\n", "", "x")))
	if len(onlyValue.Changed) != 1 || !strings.Contains(onlyValue.Changed[0].UnifiedDiff, "+  k: '*** (after)'\n") {
		t.Errorf("a changed value: %+v", onlyValue.Changed)
	}
	// A manifest exported with kubectl get -o yaml carries the values in
	// kubectl's last-applied-configuration annotation too.
	withLast := func(v, label string) map[string]string {
		return map[string]string{"s.yaml": "apiVersion: v1\nkind: Secret\nmetadata:\n  name: creds\n  labels: {tier: " + label + "}\n" +
			"  annotations:\n    kubectl.kubernetes.io/last-applied-configuration: '{\"apiVersion\":\"v1\",\"data\":{\"k\":\"" + v + "\"},\"kind\":\"Secret\"}'\n" +
			"data:\n  k: " + v + "\n"}
	}
	last := Diff(context.Background(), renderFiles(t, withLast("c2VjcmV0YQ==", "a")), renderFiles(t, withLast("c2VjcmV0Yg==", "b")))
	if len(last.Changed) != 1 {
		t.Fatalf("changed %+v, want the Secret", last.Changed)
	}
	if d := last.Changed[0].UnifiedDiff; strings.Contains(d, "c2VjcmV0YQ==") || strings.Contains(d, "c2VjcmV0Yg==") || !strings.Contains(d, "last-applied-configuration: '*** (after)'") {
		t.Errorf("the diff shows a value kept in the last-applied-configuration annotation, or not that it changed:\n%s", d)
	}
	sameLast := Diff(context.Background(), renderFiles(t, withLast("c2VjcmV0YQ==", "a")), renderFiles(t, withLast("c2VjcmV0YQ==", "b")))
	if len(sameLast.Changed) != 1 || strings.Contains(sameLast.Changed[0].UnifiedDiff, "c2VjcmV0YQ==") {
		t.Errorf("an unchanged last-applied-configuration is shown: %+v", sameLast.Changed)
	}

	// data that is no mapping cannot be masked key by key: not shown.
	odd := Diff(context.Background(), renderFiles(t, secret("data: [c2VjcmV0]\n", "", "x")), renderFiles(t, secret("data: [b3RoZXI=]\n", "", "x")))
	if len(odd.Changed) != 1 || odd.Changed[0].UnifiedDiff != "" || odd.Changed[0].Summary == "" {
		t.Errorf("data as a list: %+v", odd.Changed)
	}
}

// An add-on is another party's text: an object named with terminal
// escapes (a window title, a cleared screen, a C1 CSI) is printed with
// them replaced, in the lists and in the diff's headers, as status
// prints names. --json keeps the names exact (JSON escapes them).
func TestDiffNamesWithoutEscapes(t *testing.T) {
	const evil = `"x\e]0;pwned\a\u009b2J"`
	cm := func(name, v string) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name + "\ndata:\n  k: " + v + "\n"
	}
	a := renderFiles(t, map[string]string{"a.yaml": cm(evil, "old") + "---\n" + cm(`"gone\e[2J"`, "1")})
	b := renderFiles(t, map[string]string{"a.yaml": cm(evil, "new") + "---\n" + cm(`"new\e[2J"`, "1")})
	r := DiffWith(context.Background(), a, b, Options{})
	if len(r.Changed) != 1 || len(r.Added) != 1 || len(r.Removed) != 1 {
		t.Fatalf("report %+v, want one object of each", r)
	}
	if r.Changed[0].Object.Name != "x\x1b]0;pwned\x07\u009b2J" {
		t.Errorf("the report's name %q is not the object's", r.Changed[0].Object.Name)
	}
	var sb strings.Builder
	if err := r.WriteText(&sb); err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(sb.String(), "\x1b\x07\u009b") {
		t.Errorf("the text carries terminal escapes: %q", sb.String())
	}
	if !strings.Contains(sb.String(), "+++ b/v1/ConfigMap x?]0;pwned??2J\n") {
		t.Errorf("the header does not name the object:\n%s", sb.String())
	}
	// Summarized objects are named the same way.
	r = DiffWith(context.Background(), a, b, Options{Limits: safetree.Limits{MaxDiffObjectBytes: 1}})
	sb.Reset()
	if err := r.WriteText(&sb); err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(sb.String(), "\x1b\x07\u009b") {
		t.Errorf("the summarized text carries terminal escapes: %q", sb.String())
	}
}

// A report lists objects sorted by group, kind, namespace and name,
// whatever order the add-ons render them in, as kubectl diff lists them;
// two documents with one key keep their order. The limit on the diffs
// held is spent in that order too: the objects summarized are the last
// listed.
func TestDiffSorted(t *testing.T) {
	obj := func(apiVersion, kind, ns, name, v string) string {
		return fmt.Sprintf("apiVersion: %s\nkind: %s\nmetadata:\n  name: %s\n  namespace: %q\ndata:\n  v: %q\n", apiVersion, kind, name, ns, v)
	}
	split := func(docs ...string) *render.Result {
		d, err := render.SplitDocuments("a.yaml", []byte(strings.Join(docs, "---\n")))
		if err != nil {
			t.Fatal(err)
		}
		return &render.Result{Kind: addon.KindManifests, Documents: d}
	}
	a := split(
		obj("v1", "Secret", "b", "gone", "1"),
		obj("apps/v1", "Deployment", "a", "z", "1"),
		obj("v1", "ConfigMap", "b", "x", "1"),
		obj("v1", "ConfigMap", "a", "y", "1"),
		obj("v1", "ConfigMap", "", "gone", "1"),
	)
	b := split(
		obj("v1", "Secret", "a", "new", "1"),
		obj("v1", "ConfigMap", "b", "x", "2"),
		obj("apps/v1", "Deployment", "a", "z", "2"),
		obj("v1", "ConfigMap", "a", "y", "2"),
		obj("v1", "ConfigMap", "a", "dup", "first"),
		obj("v1", "ConfigMap", "a", "dup", "second"),
	)
	keys := func(objs []addon.Object) (out []string) {
		for _, o := range objs {
			out = append(out, shown(o))
		}
		return out
	}
	// A budget for about one diff: the second and third are summarized.
	r := DiffWith(context.Background(), a, b, Options{Limits: safetree.Limits{MaxDiffBytes: 150}})
	var changed []string
	for _, c := range r.Changed {
		changed = append(changed, shown(c.Object))
	}
	want := [][]string{
		{"v1/ConfigMap a/dup", "v1/ConfigMap a/dup", "v1/Secret a/new"},
		{"v1/ConfigMap gone", "v1/Secret b/gone"},
		{"v1/ConfigMap a/y", "v1/ConfigMap b/x", "apps/v1/Deployment a/z"},
	}
	got := [][]string{keys(r.Added), keys(r.Removed), changed}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
	if len(r.Changed) == 3 && (r.Changed[0].UnifiedDiff == "" || r.Changed[1].Summary == "" || r.Changed[2].Summary == "") {
		t.Errorf("the budget is not spent in the report's order: %+v", r.Changed)
	}
}
