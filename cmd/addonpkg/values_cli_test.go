package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/addonpkg/addonpkg/internal/testing/kubeenv"
	"github.com/addonpkg/addonpkg/pkg/apply"
)

// TestCLIApplyCoreDNSValues: examples/coredns, as it is, is refused
// without its required value (named, with the flag to give it) and
// nothing is created; with --set it installs into kube-system and is
// waited for (the test plays the Deployment controller), the Service
// gets the ClusterIP given and the Corefile the defaulted domain, and the
// inventory records the values.
func TestCLIApplyCoreDNSValues(t *testing.T) {
	cc := newClusterCLI(t)
	coredns := "./" + filepath.Join("..", "..", "examples", "coredns")
	typed := kubernetes.NewForConfigOrDie(cc.env.Admin)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	out, stderr, code := cc.run(t, "apply", coredns)
	if code != 1 || out != "" || strings.Count(strings.TrimSpace(stderr), "\n") != 0 ||
		!strings.Contains(stderr, "missing value: DNS_SERVER_IP") || !strings.Contains(stderr, "--set NAME=VALUE") {
		t.Fatalf("apply without values: exit %d, stdout %q, stderr %q; want exit 1 and one line naming DNS_SERVER_IP and --set", code, out, stderr)
	}
	if _, err := typed.CoreV1().Secrets("kube-system").Get(ctx, apply.InventoryName("coredns"), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the refused apply wrote an inventory: %v", err)
	}
	if _, err := typed.CoreV1().ServiceAccounts("kube-system").Get(ctx, "coredns", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the refused apply created the ServiceAccount: %v", err)
	}

	_, stderr, code = cc.run(t, "apply", coredns, "--set", "DNS_SERVR_IP=10.0.0.10")
	if code != 1 || !strings.Contains(stderr, "DNS_SERVR_IP") || !strings.Contains(stderr, "it declares DNS_SERVER_IP") {
		t.Errorf("apply with a misspelt value: exit %d, %q", code, stderr)
	}

	go kubeenv.PlayDeployment(ctx, typed, "kube-system", "coredns")
	defer cc.run(t, "uninstall", "coredns")
	out, stderr, code = cc.run(t, "apply", coredns, "--set", "DNS_SERVER_IP=10.0.0.10", "--wait-timeout", "2m", "--json")
	if code != 0 {
		t.Fatalf("apply with values: exit %d: %s", code, stderr)
	}
	var cs apply.ChangeSet
	must(t, json.Unmarshal([]byte(out), &cs))
	if n := cs.Count(apply.Created); n != 6 {
		t.Errorf("created %d objects, want 6:\n%s", n, out)
	}
	svc, err := typed.CoreV1().Services("kube-system").Get(ctx, "kube-dns", metav1.GetOptions{})
	if err != nil || svc.Spec.ClusterIP != "10.0.0.10" {
		t.Errorf("kube-dns Service: %v, ClusterIP %q; want 10.0.0.10", err, svc.Spec.ClusterIP)
	}
	cm, err := typed.CoreV1().ConfigMaps("kube-system").Get(ctx, "coredns", metav1.GetOptions{})
	if err != nil || !strings.Contains(cm.Data["Corefile"], "kubernetes cluster.local in-addr.arpa") {
		t.Errorf("coredns ConfigMap: %v: want the defaulted domain in:\n%s", err, cm.Data["Corefile"])
	}
	out, _, _ = cc.run(t, "status", "coredns", "--json")
	var st []apply.Installed
	must(t, json.Unmarshal([]byte(out), &st))
	if len(st) != 1 || st[0].Values["DNS_SERVER_IP"] != "10.0.0.10" || st[0].Values["DNS_DOMAIN"] != "cluster.local" || st[0].Ready != 6 {
		t.Errorf("status = %s, want the values recorded and 6 objects ready", out)
	}
}

// TestCLIApplySet: apply -f installs a set's members from its lock, in
// dependsOn order (the CRDs before coredns, which is declared first),
// each with its own inventory and the values its entry gives; a second
// apply changes nothing; a set without a lock is refused, nothing
// created.
func TestCLIApplySet(t *testing.T) {
	cc := newClusterCLI(t)
	for _, dir := range []string{"coredns", "gateway-api-crds"} {
		must(t, os.CopyFS(filepath.Join(cc.tmp, dir), os.DirFS(filepath.Join("..", "..", "examples", dir))))
	}
	decl := filepath.Join(cc.tmp, "addons.yaml")
	must(t, os.WriteFile(decl, []byte(`apiVersion: addon.cncf.io/v1alpha1
kind: AddonSet
addons:
  - name: set-coredns
    source: ./coredns
    dependsOn: [set-gateway-api]
    values: {DNS_SERVER_IP: "10.0.0.11", DNS_DOMAIN: set.local}
  - name: set-gateway-api
    source: ./gateway-api-crds
`), 0o644))
	typed := kubernetes.NewForConfigOrDie(cc.env.Admin)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	_, stderr, code := cc.run(t, "apply", "-f", decl)
	if code != 1 || !strings.Contains(stderr, "no lock file") || !strings.Contains(stderr, "addonpkg lock -f") {
		t.Fatalf("apply -f without a lock: exit %d, %q", code, stderr)
	}
	if _, err := typed.CoreV1().Secrets("kube-system").Get(ctx, apply.InventoryName("set-gateway-api"), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the refused apply wrote an inventory: %v", err)
	}
	if _, stderr, code := cc.run(t, "lock", "-f", decl); code != 0 {
		t.Fatalf("lock: %s", stderr)
	}

	go kubeenv.PlayDeployment(ctx, typed, "kube-system", "coredns")
	defer cc.run(t, "uninstall", "set-coredns")
	defer cc.run(t, "uninstall", "set-gateway-api", "--prune-non-empty")
	out, stderr, code := cc.run(t, "apply", "-f", decl, "--json", "--wait-timeout", "2m")
	if code != 0 {
		t.Fatalf("apply -f: exit %d: %s", code, stderr)
	}
	var sets []apply.ChangeSet
	must(t, json.Unmarshal([]byte(out), &sets))
	if len(sets) != 2 || sets[0].Addon != "set-gateway-api" || sets[1].Addon != "set-coredns" {
		t.Fatalf("apply -f applied %s; want set-gateway-api, then set-coredns", out)
	}
	if sets[0].Count(apply.Created) != 3 || sets[1].Count(apply.Created) != 6 {
		t.Errorf("created %d and %d objects, want 3 and 6:\n%s", sets[0].Count(apply.Created), sets[1].Count(apply.Created), out)
	}
	svc, err := typed.CoreV1().Services("kube-system").Get(ctx, "kube-dns", metav1.GetOptions{})
	if err != nil || svc.Spec.ClusterIP != "10.0.0.11" {
		t.Errorf("kube-dns Service: %v; want the set's ClusterIP 10.0.0.11", err)
	}
	out, _, _ = cc.run(t, "status", "set-coredns", "set-gateway-api", "--json")
	var st []apply.Installed
	must(t, json.Unmarshal([]byte(out), &st))
	if len(st) != 2 || st[0].Values["DNS_DOMAIN"] != "set.local" && st[1].Values["DNS_DOMAIN"] != "set.local" {
		t.Errorf("status = %s, want both members, set-coredns with its values", out)
	}

	out, stderr, code = cc.run(t, "apply", "-f", decl, "--json")
	if code != 0 {
		t.Fatalf("second apply -f: exit %d: %s", code, stderr)
	}
	sets = nil
	must(t, json.Unmarshal([]byte(out), &sets))
	for _, cs := range sets {
		if cs.Changed() {
			t.Errorf("the second apply -f changed %s:\n%s", cs.Addon, out)
		}
	}

	// uninstall -f goes the other way: coredns before the CRDs it
	// depends on. Again, each member is reported not installed.
	out, stderr, code = cc.run(t, "uninstall", "-f", decl, "--prune-non-empty", "--json")
	sets = nil
	if err := json.Unmarshal([]byte(out), &sets); err != nil || code != 0 || len(sets) != 2 || sets[0].Addon != "set-coredns" || sets[1].Addon != "set-gateway-api" {
		t.Fatalf("uninstall -f: exit %d, %v, stderr %q: %s; want set-coredns, then set-gateway-api", code, err, stderr, out)
	}
	if sets[0].Count(apply.Deleted) != 6 || sets[1].Count(apply.Deleted) != 3 {
		t.Errorf("uninstall -f deleted %d and %d objects, want 6 and 3", sets[0].Count(apply.Deleted), sets[1].Count(apply.Deleted))
	}
	_, stderr, code = cc.run(t, "uninstall", "-f", decl)
	if code != 1 || !strings.Contains(stderr, "uninstall set-coredns: add-on not installed") || !strings.Contains(stderr, "uninstall set-gateway-api: add-on not installed") {
		t.Errorf("second uninstall -f: exit %d, stderr %q; want 1 naming both members", code, stderr)
	}
}

// unpack --json lists the values an add-on declares, each with its
// description, its default and whether an installer must give it, from
// a folder and from the built add-on alike; an add-on that declares none
// has no "values".
func TestCLIUnpackJSONListsValues(t *testing.T) {
	t.Parallel()
	cliNewHome(t)
	cliMust(t, "build", cliExampleDir("coredns"), "-t", "coredns:values")
	type value struct {
		Name, Description string
		Default           *string
		Required          bool
	}
	for _, args := range [][]string{
		{cliExampleDir("coredns")},
		{"coredns:values"},
		// With -o the files are on disk, not in memory.
		{"coredns:values", "-o", filepath.Join(t.TempDir(), "out")},
	} {
		src := strings.Join(args, " ")
		var got struct{ Values []value }
		must(t, json.Unmarshal([]byte(cliMust(t, append([]string{"unpack", "--json"}, args...)...)), &got))
		byName := map[string]value{}
		for _, v := range got.Values {
			byName[v.Name] = v
		}
		ip, domain := byName["DNS_SERVER_IP"], byName["DNS_DOMAIN"]
		if len(got.Values) != 3 || !ip.Required || ip.Default != nil || ip.Description == "" ||
			domain.Required || domain.Default == nil || *domain.Default != "cluster.local" {
			t.Errorf("%s: values %+v; want DNS_SERVER_IP required, DNS_DOMAIN defaulting to cluster.local, three in all", src, got.Values)
		}
	}
	var none map[string]any
	must(t, json.Unmarshal([]byte(cliMust(t, "unpack", cliExampleDir("gateway-api-crds"), "--json")), &none))
	if _, ok := none["values"]; ok {
		t.Errorf("an add-on without .addonvalues lists values: %v", none["values"])
	}
}
