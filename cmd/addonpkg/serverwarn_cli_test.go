package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// deprecatedCRD serves the group warn.example.com at v1 (deprecated, with
// a warning of its own) and v2: every request for v1 Widgets gets the
// warning back in a Warning header, as a deprecated built-in API does.
const deprecatedCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.warn.example.com
spec:
  group: warn.example.com
  names: {kind: Widget, listKind: WidgetList, plural: widgets, singular: widget}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: false
    deprecated: true
    deprecationWarning: "warn.example.com/v1 Widget is deprecated; use warn.example.com/v2"
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
  - name: v2
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
`

// The API server's warnings reach the user of the real binary, whose
// os.Stderr main points at the null device (routeProcessOutput), as
// kubectl prints them: once each, as addonpkg's warnings, through apply,
// status, diff --cluster and uninstall; --quiet silences them, as it does
// the others (diff had no --quiet).
func TestCLIServerWarningsReachTheUser(t *testing.T) {
	cc := newClusterCLI(t)
	dir := filepath.Join(cc.tmp, "cli-warned")
	must(t, os.MkdirAll(dir, 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "crd.yaml"), []byte(deprecatedCRD), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "widget.yaml"), []byte("apiVersion: warn.example.com/v1\nkind: Widget\nmetadata: {name: w, namespace: default}\nspec: {size: 1}\n"), 0o644))
	const want = "addonpkg: warning: API server: warn.example.com/v1 Widget is deprecated; use warn.example.com/v2\n"
	t.Cleanup(func() { cc.run(t, "uninstall", "cli-warned") })
	for _, args := range [][]string{
		{"apply", dir},
		{"apply", dir}, // unchanged: the dry run still reads v1
		{"status", "cli-warned"},
		{"diff", "--cluster", dir}, // the dry run reads v1 too
	} {
		_, stderr, code := cc.run(t, args...)
		if code != 0 || strings.Count(stderr, want) != 1 {
			t.Errorf("%s: exit %d, stderr %q; want the API server's warning once", strings.Join(args, " "), code, stderr)
		}
		_, stderr, code = cc.run(t, append(args, "--quiet")...)
		if code != 0 || stderr != "" {
			t.Errorf("%s --quiet: exit %d, stderr %q; want nothing", strings.Join(args, " "), code, stderr)
		}
	}
	_, stderr, code := cc.run(t, "uninstall", "cli-warned")
	if code != 0 || strings.Count(stderr, want) != 1 {
		t.Errorf("uninstall: exit %d, stderr %q; want the API server's warning once", code, stderr)
	}
}

// A kubeconfig's credential plugin (kubelogin, aws eks get-token,
// gke-gcloud-auth-plugin) writes its prompts and its reasons for failing
// to stderr: client-go hands it os.Stderr, which main points at the null
// device, so addonpkg gives it the process's standard error while it
// connects, and the user reads what the plugin says, as with kubectl.
func TestCLICredentialPluginSpeaks(t *testing.T) {
	cc := newClusterCLI(t)
	kubeconfig := filepath.Join(cc.tmp, "exec.kubeconfig")
	must(t, os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "`+cc.env.URL+`", insecure-skip-tls-verify: true}
users:
- name: u
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1
      interactiveMode: Never
      command: sh
      args: ["-c", "echo 'plugin: token expired: run the login first' >&2; exit 1"]
contexts:
- name: x
  context: {cluster: c, user: u}
current-context: x
`), 0o600))
	for _, args := range [][]string{{"status"}, {"uninstall", "none"}} {
		_, stderr, code := cc.run(t, append(args, "--kubeconfig", kubeconfig)...)
		if code == 0 || !strings.Contains(stderr, "plugin: token expired: run the login first\n") {
			t.Errorf("%s: exit %d, stderr %q; want the plugin's words", args[0], code, stderr)
		}
	}
}
