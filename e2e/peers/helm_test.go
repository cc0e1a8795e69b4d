package peers

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/registry"

	"github.com/addonpkg/addonpkg/internal/testing/testregistry"
)

// run runs addonpkg with a private store and returns its exit code,
// stdout and stderr.
func run(t *testing.T, home string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(addonpkgBin, args...)
	cmd.Env = append(os.Environ(), "ADDONPKG_HOME="+home, "DOCKER_CONFIG="+home, "NO_PROXY=127.0.0.1", "no_proxy=127.0.0.1")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, stdout.String(), stderr.String()
}

// TestHelmChart: a chart pushed by Helm's own registry client (the code
// of `helm push`) is recognised as a Helm chart by inspect, pull and
// images; unpack -o writes the chart's files; the stdout render refuses,
// naming helm template.
func TestHelmChart(t *testing.T) {
	reg := testregistry.Start(t, testregistry.Options{Mode: testregistry.Plain})
	home := t.TempDir()

	// A chart as `helm create` lays it out, packaged by Helm.
	src := filepath.Join(t.TempDir(), "webapp")
	files := map[string]string{
		"Chart.yaml":                "apiVersion: v2\nname: webapp\ndescription: A small web app\ntype: application\nversion: 0.3.1\nappVersion: \"1.4.0\"\n",
		"values.yaml":               "replicas: 2\nimage: registry.example/webapp:1.4.0\n",
		"templates/deployment.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ .Release.Name }}\nspec:\n  replicas: {{ .Values.replicas }}\n",
		"templates/NOTES.txt":       "Installed {{ .Chart.Name }}.\n",
	}
	for name, body := range files {
		p := filepath.Join(src, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ch, err := loader.LoadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	tgz, err := chartutil.Save(ch, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(tgz)
	if err != nil {
		t.Fatal(err)
	}
	client, err := registry.NewClient(registry.ClientOptPlainHTTP(), registry.ClientOptCredentialsFile(filepath.Join(home, "helm-config.json")))
	if err != nil {
		t.Fatal(err)
	}
	ref := reg.Host + "/charts/webapp:0.3.1"
	if _, err := client.Push(data, ref); err != nil {
		t.Fatalf("helm registry client Push: %v", err)
	}

	// inspect: a Helm chart, with its name and version.
	code, stdout, stderr := run(t, home, "inspect", ref, "--json")
	if code != 0 {
		t.Fatalf("inspect: exit %d: %s", code, stderr)
	}
	var in struct {
		Form  string `json:"form"`
		Chart struct {
			Name, Version string
		} `json:"chart"`
	}
	if err := json.Unmarshal([]byte(stdout), &in); err != nil {
		t.Fatal(err)
	}
	if in.Form != "helm-chart" || in.Chart.Name != "webapp" || in.Chart.Version != "0.3.1" {
		t.Errorf("inspect --json: form %q chart %+v; want helm-chart webapp 0.3.1", in.Form, in.Chart)
	}
	if code, stdout, _ := run(t, home, "inspect", ref); code != 0 || !strings.Contains(stdout, "Helm chart:") || !strings.Contains(stdout, "webapp 0.3.1") {
		t.Errorf("inspect: exit %d\n%s", code, stdout)
	}

	// unpack -o: the chart's files, Chart.yaml at the root.
	out := filepath.Join(t.TempDir(), "webapp")
	if code, _, stderr := run(t, home, "unpack", ref, "-o", out); code != 0 {
		t.Fatalf("unpack -o: exit %d: %s", code, stderr)
	}
	for name, body := range files {
		got, err := os.ReadFile(filepath.Join(out, filepath.FromSlash(name)))
		if name == "Chart.yaml" {
			// helm package writes Chart.yaml anew, fields sorted.
			if err != nil || !strings.Contains(string(got), "name: webapp\n") || !strings.Contains(string(got), "version: 0.3.1\n") {
				t.Errorf("unpack -o: Chart.yaml = %q (%v)", got, err)
			}
			continue
		}
		if err != nil || string(got) != body {
			t.Errorf("unpack -o: %s = %q (%v), want the chart's file", name, got, err)
		}
	}
	if entries, err := os.ReadDir(out); err != nil || len(entries) != 3 {
		t.Errorf("unpack -o wrote %d entries at the root (%v), want Chart.yaml, values.yaml, templates", len(entries), err)
	}

	// The stdout render and --raw refuse, naming helm template.
	for _, args := range [][]string{{"unpack", ref}, {"unpack", ref, "--raw"}} {
		code, stdout, stderr := run(t, home, args...)
		if code != 1 || stdout != "" || !strings.Contains(stderr, "helm template") || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want one line naming helm template", args, code, stdout, stderr)
		}
	}

	// pull stores it; images lists it as a Helm chart.
	if code, _, stderr := run(t, home, "pull", ref); code != 0 {
		t.Fatalf("pull: exit %d: %s", code, stderr)
	}
	code, stdout, stderr = run(t, home, "images", "--json")
	if code != 0 {
		t.Fatalf("images: exit %d: %s", code, stderr)
	}
	var rows []struct{ Name, Form string }
	if err := json.Unmarshal([]byte(stdout), &rows); err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0].Form != "helm-chart" {
		t.Errorf("images --json: %+v, want one helm-chart", rows)
	}
}
