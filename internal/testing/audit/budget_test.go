package audit_test

import (
	"strings"
	"testing"

	"github.com/addonpkg/addonpkg/internal/testing/audit"
)

// Installer is the smallest installer (unpack a registry add-on and render
// it, through pkg/source's retry policy and verified blob path), and
// InstallerBudget the third-party packages it may compile.
const (
	Installer       = "examples/unpack-render"
	InstallerBudget = 240
)

func loadDepGraph(t *testing.T) audit.DepGraph {
	t.Helper()
	root, _ := loadGraph(t)
	g, err := audit.LoadDepGraph(root, "./pkg/...", "./internal/...", "./cmd/...", "./"+Installer)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// Every package compiles only the heavy dependencies its budget allows
// (audit.Budgets: go-git only in the git location, kustomize only where
// rendering happens, sigstore only in signature, the cluster clients only
// in apply, Cluster API's types only in capi), and the installer stays
// within InstallerBudget third-party packages, none of them go-git.
func TestDependencyBudgets(t *testing.T) {
	g := loadDepGraph(t)
	for _, v := range audit.OverBudget(g, audit.Budgets) {
		t.Error(v)
	}
	for _, v := range audit.Forbidden(g, audit.NoDependency) {
		t.Error(v)
	}
	checkInstaller(t, g)
}

func checkInstaller(t *testing.T, g audit.DepGraph) {
	t.Helper()
	if _, ok := g[Installer]; !ok {
		t.Fatalf("%s is not in the graph", Installer)
	}
	deps := audit.ThirdParty(g.Closure(Installer))
	t.Logf("%s compiles %d third-party packages (budget %d)", Installer, len(deps), InstallerBudget)
	if len(deps) > InstallerBudget {
		t.Errorf("%s compiles %d third-party packages, over its budget of %d", Installer, len(deps), InstallerBudget)
	}
	for _, d := range deps {
		if strings.HasPrefix(d, "github.com/go-git/") {
			t.Errorf("%s compiles %s: an installer that reads no git source compiles no git", Installer, d)
			break
		}
	}
}

// The budgets fail on a forbidden import: the core source resolver
// importing the git location (the installer then compiles go-git),
// transfer importing build (copy and push compile kustomize), signature
// importing the source resolver with git, unpack importing the cluster
// client, render importing Cluster API's types, and capi a cluster
// client.
func TestDependencyBudgetsCatchForbiddenImports(t *testing.T) {
	g := loadDepGraph(t)
	for _, tc := range []struct{ from, to, want string }{
		{"pkg/source", "pkg/source/git", "pkg/source compiles github.com/go-git/"},
		{"pkg/source", "pkg/source/git", Installer + " compiles github.com/go-git/"},
		{"pkg/transfer", "pkg/build", "pkg/transfer compiles sigs.k8s.io/kustomize/"},
		{"pkg/signature", "pkg/source/git", "pkg/signature compiles github.com/go-git/"},
		{"pkg/unpack", "k8s.io/client-go/kubernetes", "pkg/unpack compiles k8s.io/client-go/"},
		{"pkg/layout", "github.com/sigstore/sigstore/pkg/signature", "pkg/layout compiles github.com/sigstore/"},
		{"pkg/render", "sigs.k8s.io/cluster-api/api/addons/v1beta2", "pkg/render compiles sigs.k8s.io/cluster-api/"},
		{"pkg/capi", "k8s.io/client-go/kubernetes", "pkg/capi compiles k8s.io/client-go/"},
	} {
		bad := g.With(tc.from, tc.to)
		vs := audit.OverBudget(bad, audit.Budgets)
		found := false
		for _, v := range vs {
			found = found || strings.HasPrefix(v, tc.want)
		}
		if !found {
			t.Errorf("planted %s -> %s: no violation %q among %d: %v", tc.from, tc.to, tc.want, len(vs), vs)
		}
	}
	// The module's own edges (audit.NoDependency): signature resolving
	// sources, transfer building, apply taking addonset's Result again.
	for _, tc := range []struct{ from, to, want string }{
		{"pkg/signature", "pkg/source", "pkg/signature compiles pkg/source"},
		{"pkg/transfer", "pkg/build", "pkg/transfer compiles pkg/build"},
		{"pkg/transfer", "pkg/build", "pkg/transfer compiles pkg/render"},
		{"pkg/apply", "pkg/addonset", "pkg/apply compiles pkg/registry"},
	} {
		vs := audit.Forbidden(g.With(tc.from, tc.to), audit.NoDependency)
		found := false
		for _, v := range vs {
			found = found || strings.HasPrefix(v, tc.want)
		}
		if !found {
			t.Errorf("planted %s -> %s: no violation %q among %v", tc.from, tc.to, tc.want, vs)
		}
	}
	// The installer's own budget: a planted import of everything the
	// command compiles puts it over.
	bad := g.With(Installer, "cmd/addonpkg")
	deps := audit.ThirdParty(bad.Closure(Installer))
	if len(deps) <= InstallerBudget {
		t.Errorf("with the command's imports the installer compiles %d third-party packages: the count looks at the wrong list", len(deps))
	}
}
