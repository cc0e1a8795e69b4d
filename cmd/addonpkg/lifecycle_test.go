package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/spf13/cobra"

	"github.com/addonpkg/addonpkg/internal/doctor"
	"github.com/addonpkg/addonpkg/internal/testing/testregistry"
	"github.com/addonpkg/addonpkg/pkg/addon"
	"github.com/addonpkg/addonpkg/pkg/apply"
	"github.com/addonpkg/addonpkg/pkg/mediatypes"
	"github.com/addonpkg/addonpkg/pkg/source"
	"github.com/addonpkg/addonpkg/pkg/unpack"
)

// The add-on lifecycle commands (diff, doctor, push --format auto) run
// in-process (cliExec), each test with its own store. The tests of
// doctor and push --format auto also need a capability cache and docker
// config of their own (lcHome), which only the environment sets: t.Setenv
// keeps those serial; the others run in parallel.

type lcOutcome struct {
	code           int
	stdout, stderr string
}

func lcRun(t *testing.T, args ...string) lcOutcome {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := cliExec(t, args, strings.NewReader(""), &stdout, &stderr)
	return lcOutcome{code, stdout.String(), stderr.String()}
}

func lcMust(t *testing.T, args ...string) string {
	t.Helper()
	r := lcRun(t, args...)
	if r.code != 0 {
		t.Fatalf("addonpkg %s: exit %d\nstderr: %s", strings.Join(args, " "), r.code, r.stderr)
	}
	return r.stdout
}

// lcHome isolates the store (cliNewHome), the capability cache and
// credentials.
func lcHome(t *testing.T) string {
	t.Helper()
	cliNewHome(t)
	home := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", filepath.Join(home, "cache"))
	t.Setenv("DOCKER_CONFIG", filepath.Join(home, "docker"))
	return home
}

func lcCopyDir(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func lcEdit(t *testing.T, file, old, new string) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte(old)) {
		t.Fatalf("%s has no %q", file, old)
	}
	if err := os.WriteFile(file, bytes.Replace(b, []byte(old), []byte(new), 1), 0o644); err != nil {
		t.Fatal(err)
	}
}

// lcMetricsServerVersions makes two versions of examples/metrics-server:
// v2 changes an argument of the Deployment, adds a ConfigMap and drops
// the APIService.
func lcMetricsServerVersions(t *testing.T) (v1, v2 string) {
	t.Helper()
	tmp := t.TempDir()
	v1, v2 = filepath.Join(tmp, "v1", "metrics-server"), filepath.Join(tmp, "v2", "metrics-server")
	src := filepath.Join("..", "..", "examples", "metrics-server")
	lcCopyDir(t, src, v1)
	lcCopyDir(t, src, v2)
	lcEdit(t, filepath.Join(v2, "base", "deployment.yaml"), "--metric-resolution=15s", "--metric-resolution=30s")
	lcEdit(t, filepath.Join(v2, "base", "kustomization.yaml"), "  - apiservice.yaml\n", "  - extra-config.yaml\n")
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: metrics-server-extra\n  namespace: kube-system\ndata:\n  resolution: 30s\n"
	if err := os.WriteFile(filepath.Join(v2, "base", "extra-config.yaml"), []byte(cm), 0o644); err != nil {
		t.Fatal(err)
	}
	return v1, v2
}

// lcDiffJSON is diff --json's document, with and without --cluster (the
// diff command's help describes it).
type lcDiffJSON struct {
	A, B, Addon string
	DryRun      bool
	Equal       *bool
	Changes     []apply.Change
}

// checkMetricsServerDiff checks diff A B reports exactly the three edits,
// as the changes applying B over A makes.
func checkMetricsServerDiff(t *testing.T, a, b string, extra ...string) {
	t.Helper()
	r := lcRun(t, append([]string{"diff", a, b, "--json"}, extra...)...)
	if r.code != 1 {
		t.Fatalf("diff %s %s: exit %d, want 1\nstderr: %s", a, b, r.code, r.stderr)
	}
	var got lcDiffJSON
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	if got.Equal == nil || *got.Equal || got.A != a || got.B != b || got.Addon != "" || got.DryRun {
		t.Errorf("equal %v, a %s, b %s, addon %q, dryRun %v", got.Equal, got.A, got.B, got.Addon, got.DryRun)
	}
	want := []apply.Change{
		{Object: "ConfigMap/kube-system/metrics-server-extra", ID: "kube-system_metrics-server-extra__ConfigMap", Version: "v1", Action: apply.Created},
		{Object: "Deployment/kube-system/metrics-server", ID: "kube-system_metrics-server_apps_Deployment", Version: "apps/v1", Action: apply.Configured},
		{Object: "APIService/v1beta1.metrics.k8s.io", ID: "_v1beta1.metrics.k8s.io_apiregistration.k8s.io_APIService", Version: "apiregistration.k8s.io/v1", Action: apply.Deleted},
	}
	if len(got.Changes) != len(want) {
		t.Fatalf("changes %+v, want %+v", got.Changes, want)
	}
	d := got.Changes[1].Diff
	got.Changes[1].Diff = ""
	for i := range want {
		if got.Changes[i] != want[i] {
			t.Errorf("change %d: %+v, want %+v", i, got.Changes[i], want[i])
		}
	}
	for _, s := range []string{
		"--- a/apps/v1/Deployment kube-system/metrics-server\n+++ b/apps/v1/Deployment kube-system/metrics-server\n@@ ",
		"\n-        - --metric-resolution=15s\n+        - --metric-resolution=30s\n",
	} {
		if !strings.Contains(d, s) {
			t.Errorf("the diff lacks %q:\n%s", s, d)
		}
	}
	if strings.Count(d, "\n-") != 1 || strings.Count(d, "\n+") != 2 { // +++ header and one line
		t.Errorf("the diff changes more than the argument:\n%s", d)
	}

	// The text output lists the same.
	r = lcRun(t, append([]string{"diff", a, b}, extra...)...)
	if r.code != 1 || !strings.Contains(r.stdout, "Added (1):\n  v1/ConfigMap kube-system/metrics-server-extra\n") ||
		!strings.Contains(r.stdout, "Removed (1):\n  apiregistration.k8s.io/v1/APIService v1beta1.metrics.k8s.io\n") ||
		!strings.Contains(r.stdout, "Changed (1):\n  apps/v1/Deployment kube-system/metrics-server\n") {
		t.Errorf("text: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

func TestDiffLifecycle(t *testing.T) {
	t.Parallel()
	cliNewHome(t)
	v1, v2 := lcMetricsServerVersions(t)

	t.Run("folders", func(t *testing.T) {
		checkMetricsServerDiff(t, v1, v2)
		r := lcRun(t, "diff", v1, v1)
		if r.code != 0 || r.stdout != "no differences\n" {
			t.Errorf("same folder: exit %d %q %s", r.code, r.stdout, r.stderr)
		}
	})

	t.Run("store", func(t *testing.T) {
		lcMust(t, "build", v1, "-t", "metrics-server:1")
		lcMust(t, "build", v2, "-t", "metrics-server:2", "--format", "artifact")
		checkMetricsServerDiff(t, "metrics-server:1", "metrics-server:2")
		// A folder against its own build: no difference.
		if r := lcRun(t, "diff", v1, "metrics-server:1", "--json"); r.code != 0 || !strings.Contains(r.stdout, `"equal": true`) {
			t.Errorf("folder vs its build: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
	})

	t.Run("registry", func(t *testing.T) {
		reg := testregistry.Start(t, testregistry.Options{})
		a, b := reg.Host+"/addons/metrics-server:1", reg.Host+"/addons/metrics-server:2"
		lcMust(t, "push", "metrics-server:1", a)
		lcMust(t, "push", "metrics-server:2", b)
		// --pull always: these names are read from the registry, not the store.
		checkMetricsServerDiff(t, a, b, "--pull", "always")
	})

	t.Run("errors", func(t *testing.T) {
		for _, args := range [][]string{
			{"diff", v1, filepath.Join(v1, "missing")},
			{"diff", v1},
			{"diff", v1, v2, "--no-such-flag"},
			{"diff", v1, "no-such-addon:1", "--pull", "never"},
		} {
			r := lcRun(t, args...)
			// One line; a usage mistake adds the usage line.
			if r.code != 2 || !strings.HasPrefix(r.stderr, "addonpkg: ") || strings.Count(strings.TrimSuffix(r.stderr, "Usage: addonpkg diff A [B] [flags]\n"), "\n") != 1 || r.stdout != "" {
				t.Errorf("%v: exit %d, stdout %q, stderr %q", args, r.code, r.stdout, r.stderr)
			}
		}
	})
}

func TestDoctorCommand(t *testing.T) {
	home := lcHome(t)
	reg := testregistry.Start(t, testregistry.Options{DeleteEnabled: true})
	out := lcMust(t, "doctor", reg.Host+"/addons/probe")
	for _, s := range []string{"CHECK", "image-form", "artifact-form", "referrers-tag-fallback", "chunked-upload", "delete"} {
		if !strings.Contains(out, s) {
			t.Errorf("table lacks %s:\n%s", s, out)
		}
	}
	var rep doctor.Report
	if err := json.Unmarshal([]byte(lcMust(t, "doctor", "docker://"+reg.Host+"/addons/probe:ignored", "--json")), &rep); err != nil {
		t.Fatal(err)
	}
	if c, ok := rep.Get(doctor.CheckArtifact); !ok || !c.OK || rep.Repository != reg.Host+"/addons/probe" {
		t.Errorf("artifact form: %+v in %s", c, rep.Repository)
	}
	cached := filepath.Join(home, "cache", "addonpkg", "doctor", strings.ReplaceAll(reg.Host, ":", "_")+".json")
	if _, err := os.Stat(cached); err != nil {
		t.Errorf("no cached report: %v", err)
	}
	r := lcRun(t, "doctor", "127.0.0.1:1/nothing")
	if r.code != 1 || !strings.HasPrefix(r.stderr, "addonpkg: ") {
		t.Errorf("unreachable registry: exit %d %q", r.code, r.stderr)
	}
}

// push --format auto (app.pushAuto): the image form goes to a registry
// whose cached report says it refuses the artifact form.
func TestPushAuto(t *testing.T) {
	lcHome(t)
	reg := testregistry.Start(t, testregistry.Options{DeleteEnabled: true})
	lcMust(t, "build", filepath.Join("..", "..", "examples", "coredns"), "--format", "artifact", "-t", "coredns:1")

	a := &app{stdin: strings.NewReader(""), stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}, storeDir: cliHomeOf(t)}
	cmd := &cobra.Command{}
	cmd.SetContext(context.Background())
	src := source.Ref{Kind: source.KindStore, Name: "coredns:1"}

	// The registry takes artifacts: pushed as it is.
	dst := source.Ref{Kind: source.KindRegistry, Name: reg.Host + "/addons/coredns:1"}
	if err := a.pushAuto(cmd, src, dst, true); err != nil {
		t.Fatal(err)
	}
	var res struct{ Digest string }
	if err := json.Unmarshal(a.stdout.(*bytes.Buffer).Bytes(), &res); err != nil {
		t.Fatal(err)
	}
	st, err := a.store()
	if err != nil {
		t.Fatal(err)
	}
	d, err := st.Resolve("coredns:1")
	if err != nil {
		t.Fatal(err)
	}
	if res.Digest != d.Digest.String() {
		t.Errorf("pushed %s, the store holds %s", res.Digest, d.Digest)
	}

	// A cached report that says no: converted.
	cache, err := doctor.DefaultCache()
	if err != nil {
		t.Fatal(err)
	}
	if err := cache.Store(&doctor.Report{Registry: reg.Host, Time: time.Now(), Checks: []doctor.Check{{Name: doctor.CheckArtifact, Detail: "HTTP 400 MANIFEST_INVALID"}}}); err != nil {
		t.Fatal(err)
	}
	a.stdout, a.stderr = &bytes.Buffer{}, &bytes.Buffer{}
	dst = source.Ref{Kind: source.KindRegistry, Name: reg.Host + "/addons/coredns:2"}
	if err := a.pushAuto(cmd, src, dst, false); err != nil {
		t.Fatal(err)
	}
	if msg := a.stderr.(*bytes.Buffer).String(); !strings.Contains(msg, "does not accept the artifact form") {
		t.Errorf("no note on stderr: %q", msg)
	}
	ref, err := name.ParseReference(dst.Name)
	if err != nil {
		t.Fatal(err)
	}
	img, err := remote.Image(ref)
	if err != nil {
		t.Fatal(err)
	}
	ad, err := unpack.Image(context.Background(), img, unpack.Options{})
	if err != nil {
		t.Fatal(err)
	}
	orig, err := source.Resolve(context.Background(), "coredns:1", source.Options{Store: st, Pull: source.PullNever}, unpack.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if ad.Form != mediatypes.FormImage || ad.Identity != orig.Identity || ad.Config.Name != orig.Config.Name {
		t.Errorf("pushed form %s identity %s name %s; store identity %s", ad.Form, ad.Identity, ad.Config.Name, orig.Identity)
	}
	if got := strings.TrimSpace(a.stdout.(*bytes.Buffer).String()); !strings.HasPrefix(got, reg.Host+"/addons/coredns@sha256:") {
		t.Errorf("stdout %q", got)
	}
}

// lcNeedFlag skips a test of wiring that is not there yet.
func lcNeedFlag(t *testing.T, cmd *cobra.Command, flag string) {
	t.Helper()
	if cmd.Flags().Lookup(flag) == nil {
		t.Skipf("%s has no --%s flag", cmd.Name(), flag)
	}
}

type lcInspect struct {
	Form   string
	Digest string
	Config *addon.Config
	Layers []struct{ Digest string }
}

func lcInspectJSON(t *testing.T, src string) lcInspect {
	t.Helper()
	var in lcInspect
	if err := json.Unmarshal([]byte(lcMust(t, "inspect", src, "--json")), &in); err != nil {
		t.Fatal(err)
	}
	return in
}

// build --base puts a patch layer on a built add-on: its layers stay, the
// result renders like the patched folder.
func TestBuildBase(t *testing.T) {
	t.Parallel()
	lcNeedFlag(t, newBuildCmd(&app{}), "base")
	cliNewHome(t)
	v1, v2 := lcMetricsServerVersions(t)
	patch := filepath.Join(t.TempDir(), "patch")
	for _, f := range []string{"deployment.yaml", "kustomization.yaml", "extra-config.yaml"} {
		b, err := os.ReadFile(filepath.Join(v2, "base", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(patch, "base"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(patch, "base", f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	reg := testregistry.Start(t, testregistry.Options{})
	lcMust(t, "build", v1, "-t", "ms:1", "--version", "1")
	lcMust(t, "build", v1, "-t", "ms-art:1", "--format", "artifact")
	lcMust(t, "push", "ms:1", reg.Host+"/addons/ms:1")

	for _, tc := range []struct{ base, tag, form string }{
		{"ms:1", "ms:2", "image"},
		{"ms-art:1", "ms-art:2", "artifact"},
		{reg.Host + "/addons/ms:1", "ms-reg:2", "image"},
	} {
		t.Run(tc.tag, func(t *testing.T) {
			lcMust(t, "build", patch, "--base", tc.base, "--delete", "base/apiservice.yaml", "--version", "2", "-t", tc.tag)
			base, got := lcInspectJSON(t, tc.base), lcInspectJSON(t, tc.tag)
			wantLayers, keepsBase := len(base.Layers)+1, true
			if tc.form == "artifact" {
				wantLayers, keepsBase = 1, false // squashed: one layer of the patched tree
			}
			if got.Form != tc.form || len(got.Layers) != wantLayers || (got.Layers[0].Digest == base.Layers[0].Digest) != keepsBase {
				t.Errorf("form %s, layers %v; base layers %v", got.Form, got.Layers, base.Layers)
			}
			if got.Config == nil || got.Config.Version != "2" || got.Config.Name != "metrics-server" {
				t.Errorf("config %+v", got.Config)
			}
			checkMetricsServerDiff(t, tc.base, tc.tag)
			if r := lcRun(t, "diff", v2, tc.tag); r.code != 0 {
				t.Errorf("the patched add-on renders unlike the patched folder: exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
		})
	}

	// Deleting only: an empty folder is the patch.
	empty := t.TempDir()
	lcMust(t, "build", empty, "--base", "ms:2", "--delete", "base/extra-config.yaml", "--no-validate", "-t", "ms:3")
	if in := lcInspectJSON(t, "ms:3"); len(in.Layers) != 3 {
		t.Errorf("ms:3 layers %v", in.Layers)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"build", patch, "--base", "ms:1", "--delete", "base/nope.yaml"}, "base/nope.yaml"},
		{[]string{"build", patch, "--delete", "base/apiservice.yaml"}, "--delete needs --base"},
		{[]string{"build", patch, "--base", "ms:1", "--format", "artifact"}, "--format"},
		{[]string{"build", patch, "--base", "./" + patch}, "--base"},
		{[]string{"build", patch, "--base", "oci:" + filepath.Join(empty, "none")}, "none"},
	} {
		r := lcRun(t, tc.args...)
		if r.code != 1 || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q", tc.args, r.code, r.stderr)
		}
	}
}

// push --format auto through the CLI.
func TestPushFormatAuto(t *testing.T) {
	lcNeedFlag(t, newPushCmd(&app{}), "format")
	lcHome(t)
	reg := testregistry.Start(t, testregistry.Options{DeleteEnabled: true})
	lcMust(t, "build", filepath.Join("..", "..", "examples", "coredns"), "--format", "artifact", "-t", "coredns:1")
	stored := lcInspectJSON(t, "coredns:1")

	// Accepted: kept, and the probe's answer cached.
	out := lcMust(t, "push", "coredns:1", reg.Host+"/addons/coredns:1", "--format", "auto")
	if strings.TrimSpace(out) != reg.Host+"/addons/coredns@"+stored.Digest {
		t.Errorf("kept: %q", out)
	}
	cache, err := doctor.DefaultCache()
	if err != nil {
		t.Fatal(err)
	}
	if rep, ok := cache.Load(reg.Host); !ok {
		t.Error("no cached answer")
	} else if c, _ := rep.Get(doctor.CheckArtifact); !c.OK {
		t.Errorf("cached %+v", c)
	}

	// Refused (as the cache says): converted.
	if err := cache.Store(&doctor.Report{Registry: reg.Host, Time: time.Now(), Checks: []doctor.Check{{Name: doctor.CheckArtifact}}}); err != nil {
		t.Fatal(err)
	}
	r := lcRun(t, "push", "coredns:1", reg.Host+"/addons/coredns:2", "--format", "auto")
	if r.code != 0 || !strings.Contains(r.stderr, "does not accept the artifact form") || strings.Contains(r.stdout, stored.Digest) {
		t.Fatalf("converted: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if in := lcInspectJSON(t, reg.Host+"/addons/coredns:2"); in.Form != "image" || in.Config.Identity != stored.Config.Identity {
		t.Errorf("pushed %s %s, stored identity %s", in.Form, in.Config.Identity, stored.Config.Identity)
	}
	if r := lcRun(t, "push", "coredns:1", reg.Host+"/addons/coredns:3", "--format", "bogus"); r.code != 1 || !strings.Contains(r.stderr, "bogus") {
		t.Errorf("--format bogus: exit %d %q", r.code, r.stderr)
	}
}

// oci://REGISTRY/REPO and docker://REGISTRY/REPO are registry
// references, as Flux, oras and skopeo write them: push, copy and unpack
// reach the registry with either prefix (oci:// was read as the layout
// directory "//REGISTRY/REPO").
func TestRegistryTransportPrefixes(t *testing.T) {
	t.Parallel()
	cliNewHome(t)
	reg := testregistry.Start(t, testregistry.Options{})
	lcMust(t, "build", filepath.Join("..", "..", "examples", "coredns"), "-t", "coredns:1")
	lcMust(t, "push", "coredns:1", "oci://"+reg.Host+"/addons/coredns:1")
	lcMust(t, "copy", "docker://"+reg.Host+"/addons/coredns:1", "oci://"+reg.Host+"/addons/copied:1")
	for _, src := range []string{"oci://" + reg.Host + "/addons/copied:1", "docker://" + reg.Host + "/addons/coredns:1"} {
		out := lcMust(t, "unpack", src, "--pull", "always", "--set", "DNS_SERVER_IP=10.96.0.10")
		if !strings.Contains(out, "kind: Deployment") {
			t.Errorf("unpack %s: %q, want the add-on's objects", src, out)
		}
	}
}

// diff --json names an object as apply does: "object" with control
// characters replaced, "id" with the names exact (JSON escapes them), so
// that a name with terminal escapes neither reaches a terminal through
// jq -r .object nor is lost.
func TestDiffJSONKeepsNamesExact(t *testing.T) {
	t.Parallel()
	cliNewHome(t)
	cm := func(name, v string) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name + "\n  namespace: ns\ndata:\n  k: " + v + "\n"
	}
	a, b := t.TempDir(), t.TempDir()
	must(t, os.WriteFile(filepath.Join(a, "cm.yaml"), []byte(cm(`"x\e[2J"`, "old")), 0o644))
	must(t, os.WriteFile(filepath.Join(b, "cm.yaml"), []byte(cm(`"x\e[2J"`, "new")), 0o644))
	r := lcRun(t, "diff", a+"/", b+"/", "--json")
	var got lcDiffJSON
	if err := json.Unmarshal([]byte(r.stdout), &got); r.code != 1 || err != nil || len(got.Changes) != 1 {
		t.Fatalf("exit %d, %v:\n%s%s", r.code, err, r.stdout, r.stderr)
	}
	if c := got.Changes[0]; c.Object != "ConfigMap/ns/x?[2J" || c.ID != "ns_x\x1b[2J__ConfigMap" || c.Action != apply.Configured {
		t.Errorf("change %+v, want the subject sanitized and the id exact", c)
	}
	if strings.Contains(r.stdout, "\x1b") {
		t.Errorf("the JSON carries a raw escape: %q", r.stdout)
	}
}

// diff A B --json lists created, then configured, then deleted, each
// sorted by group, kind, namespace and name (the diff command's help), not
// in the order the add-ons' files hold the objects.
func TestDiffJSONSorted(t *testing.T) {
	t.Parallel()
	cliNewHome(t)
	obj := func(apiVersion, kind, ns, name, v string) string {
		return "apiVersion: " + apiVersion + "\nkind: " + kind + "\nmetadata:\n  name: " + name + "\n  namespace: " + ns + "\ndata:\n  k: " + v + "\n---\n"
	}
	a, b := t.TempDir(), t.TempDir()
	must(t, os.WriteFile(filepath.Join(a, "all.yaml"), []byte(
		obj("v1", "Secret", "b", "gone", "1")+obj("v1", "ConfigMap", "b", "x", "1")+
			obj("v1", "ConfigMap", "a", "y", "1")+obj("v1", "ConfigMap", "a", "gone", "1")), 0o644))
	must(t, os.WriteFile(filepath.Join(b, "all.yaml"), []byte(
		obj("v1", "Secret", "a", "new", "1")+obj("v1", "ConfigMap", "b", "x", "2")+
			obj("v1", "ConfigMap", "a", "y", "2")+obj("v1", "ConfigMap", "b", "new", "1")), 0o644))
	r := lcRun(t, "diff", a+"/", b+"/", "--json")
	var got lcDiffJSON
	if err := json.Unmarshal([]byte(r.stdout), &got); r.code != 1 || err != nil {
		t.Fatalf("exit %d, %v:\n%s%s", r.code, err, r.stdout, r.stderr)
	}
	var listed []string
	for _, c := range got.Changes {
		listed = append(listed, string(c.Action)+" "+c.Object)
	}
	want := []string{
		"created ConfigMap/b/new", "created Secret/a/new",
		"configured ConfigMap/a/y", "configured ConfigMap/b/x",
		"deleted ConfigMap/a/gone", "deleted Secret/b/gone",
	}
	if !slices.Equal(listed, want) {
		t.Errorf("changes\n%q\nwant\n%q", listed, want)
	}
}
