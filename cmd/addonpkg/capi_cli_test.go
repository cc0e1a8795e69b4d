package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	yamlutil "k8s.io/apimachinery/pkg/util/yaml"
)

// TestRenderClusterResourceSet locks a set of three members (one with a
// Secret, one depending on another declared after it) and renders it with
// --cluster-resource-set: the stream is a resource per member in
// dependsOn order, the Secret's member in a Secret, each carrying what the
// lock pins, then the ClusterResourceSet listing them. Flags that
// exclude or need each other are usage errors (the message, then the
// usage line, as every flag combination is); values capi refuses (a bad
// name or selector) are one line.
func TestRenderClusterResourceSet(t *testing.T) {
	t.Parallel()
	cliNewHome(t)
	dir := t.TempDir()
	for name, yaml := range map[string]string{
		"app/app.yaml": "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: app\n  namespace: app\n",
		"creds/s.yaml": "apiVersion: v1\nkind: Secret\nmetadata:\n  name: token\n  namespace: app\nstringData:\n  token: hunter2\n",
		"ns/ns.yaml":   "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: app\n",
		"addons.yaml":  "apiVersion: addon.cncf.io/v1alpha1\nkind: AddonSet\naddons:\n  - name: app\n    source: ./app\n    dependsOn: [ns]\n  - name: creds\n    source: ./creds\n  - name: ns\n    source: ./ns\n",
	} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(yaml), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	set := filepath.Join(dir, "addons.yaml")
	var l struct {
		Addons []struct{ Name, Pinned, Identity string } `json:"addons"`
	}
	if err := json.Unmarshal([]byte(cliMust(t, "lock", "-f", set, "--json")), &l); err != nil {
		t.Fatal(err)
	}
	identity := map[string]string{}
	for _, a := range l.Addons {
		identity[a.Name] = a.Identity
	}

	out := cliMust(t, "render", "-f", set, "--cluster-resource-set", "fleet", "--cluster-selector", "env=prod,tier=edge",
		"--cluster-selector", "cluster.x-k8s.io/provider=docker", "--namespace", "clusters", "--strategy", "Reconcile")
	objs := decodeStream(t, out)
	var got []string
	for _, o := range objs {
		got = append(got, o.GetKind()+" "+o.GetNamespace()+"/"+o.GetName())
	}
	want := []string{"ConfigMap clusters/fleet-ns", "ConfigMap clusters/fleet-app", "Secret clusters/fleet-creds", "ClusterResourceSet clusters/fleet"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("render --cluster-resource-set printed %q, want %q", got, want)
	}
	for _, o := range objs[:3] {
		ann := o.GetAnnotations()
		m := ann["addonpkg.io/set-member"]
		if ann["addonpkg.io/identity"] != identity[m] || ann["addonpkg.io/pinned"] != "./"+m {
			t.Errorf("%s: annotations %v, want the lock's pin of %s", o.GetName(), ann, m)
		}
	}
	if strings.Contains(out, "hunter2") {
		t.Error("the Secret's value is in the stream as text")
	}
	secretData, _, _ := unstructured.NestedStringMap(objs[2].Object, "data")
	plain, _ := base64.StdEncoding.DecodeString(secretData["0001.yaml"])
	if typ, _, _ := unstructured.NestedString(objs[2].Object, "type"); typ != "addons.cluster.x-k8s.io/resource-set" || !strings.Contains(string(plain), "hunter2") {
		t.Errorf("the Secret member: type %q, data %q", typ, plain)
	}
	spec := objs[3].Object["spec"].(map[string]any)
	if spec["strategy"] != "Reconcile" || !reflect.DeepEqual(spec["clusterSelector"], map[string]any{"matchLabels": map[string]any{"env": "prod", "tier": "edge", "cluster.x-k8s.io/provider": "docker"}}) {
		t.Errorf("spec %v", spec)
	}
	if again := cliMust(t, "render", "-f", set, "--cluster-resource-set", "fleet", "--cluster-selector", "env=prod,tier=edge",
		"--cluster-selector", "cluster.x-k8s.io/provider=docker", "--namespace", "clusters", "--strategy", "Reconcile"); again != out {
		t.Error("two renders of the locked set printed different streams")
	}

	for _, c := range []struct {
		name  string
		args  []string
		want  string
		lines int
	}{
		{"selector alone", []string{"--cluster-selector", "a=b"}, "--cluster-selector needs --cluster-resource-set", 2},
		{"namespace alone", []string{"--namespace", "x"}, "--namespace needs --cluster-resource-set", 2},
		{"no selector", []string{"--cluster-resource-set", "fleet"}, "needs --cluster-selector", 2},
		{"with -o", []string{"--cluster-resource-set", "fleet", "--cluster-selector", "a=b", "-o", filepath.Join(dir, "out")}, "redirect stdout", 2},
		{"with --json", []string{"--cluster-resource-set", "fleet", "--cluster-selector", "a=b", "--json"}, "exclude each other", 2},
		{"bad name", []string{"--cluster-resource-set", "Fleet", "--cluster-selector", "a=b"}, `name "Fleet"`, 1},
		{"bad selector", []string{"--cluster-resource-set", "fleet", "--cluster-selector", "a=b c"}, `a="b c"`, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := cliRun(t, append([]string{"render", "-f", set}, c.args...)...)
			if r.code != 1 || r.stdout != "" || strings.Count(r.stderr, "\n") != c.lines || !strings.Contains(r.stderr, c.want) {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 1 and %d lines with %q", r.code, r.stdout, r.stderr, c.lines, c.want)
			}
			if usage := strings.Contains(r.stderr, "\nUsage: addonpkg render"); usage != (c.lines == 2) {
				t.Errorf("stderr %q: usage line %v, want %v", r.stderr, usage, c.lines == 2)
			}
		})
	}
}

// decodeStream decodes a YAML stream of objects.
func decodeStream(t *testing.T, s string) []*unstructured.Unstructured {
	t.Helper()
	dec := yamlutil.NewYAMLOrJSONDecoder(bytes.NewReader([]byte(s)), 4096)
	var out []*unstructured.Unstructured
	for {
		var u unstructured.Unstructured
		if err := dec.Decode(&u.Object); err != nil {
			if errors.Is(err, io.EOF) {
				return out
			}
			t.Fatal(err)
		}
		out = append(out, &u)
	}
}
