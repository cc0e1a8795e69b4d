package audit_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/addonpkg/addonpkg/internal/testing/audit"
)

// MaxDepth is the longest chain of imports from the command to a leaf, in
// packages, command included (docs/architecture.md): one per layer of
// audit.Layers (cmd/addonpkg -> airgap -> transfer -> source -> ...). A
// deeper graph is a new layer, decided here, not an accident.
const MaxDepth = 8

func loadGraph(t *testing.T) (string, audit.Graph) {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	g, err := audit.LoadGraph(root)
	if err != nil {
		t.Fatal(err)
	}
	return root, g
}

// Imports go down the layers of docs/architecture.md, and the graph from
// the command is at most MaxDepth packages deep.
func TestImportDirections(t *testing.T) {
	_, g := loadGraph(t)
	for _, v := range audit.Violations(g, audit.Layers) {
		t.Error(v)
	}
	if c := audit.LongestChain(g, "cmd/addonpkg"); len(c) > MaxDepth {
		t.Errorf("the import graph is %d packages deep, over %d: %s", len(c), MaxDepth, strings.Join(c, " -> "))
	}
}

// The check itself fails on a wrong import: unpack importing render (the
// one that pulled kustomize into every reader), a core package importing
// a command's library, two packages of one layer, and a new package
// nobody placed.
func TestImportDirectionsCatchWrongImports(t *testing.T) {
	_, g := loadGraph(t)
	for _, tc := range []struct{ from, to, want string }{
		{"pkg/unpack", "pkg/render", "pkg/unpack (layer 2) imports pkg/render (layer 3)"},
		{"pkg/filetree", "pkg/transfer", "pkg/filetree (layer 1) imports pkg/transfer (layer 5)"},
		{"pkg/registry", "pkg/layout", "pkg/registry (layer 2) imports pkg/layout (layer 2)"},
		{"pkg/source", "pkg/build", "pkg/source (layer 4) imports pkg/build (layer 4)"},
		{"pkg/newthing", "pkg/filetree", "pkg/newthing is in no layer"},
	} {
		bad := audit.Graph{}
		for p, imps := range g {
			bad[p] = imps
		}
		bad[tc.from] = append(append([]string(nil), bad[tc.from]...), tc.to)
		vs := audit.Violations(bad, audit.Layers)
		found := false
		for _, v := range vs {
			found = found || strings.Contains(v, tc.want)
		}
		if !found {
			t.Errorf("%s -> %s: no violation %q among %v", tc.from, tc.to, tc.want, vs)
		}
	}
	deep := audit.Graph{"cmd/addonpkg": {"pkg/a"}, "pkg/a": {"pkg/b"}, "pkg/b": {"pkg/c"}, "pkg/c": {"fmt"}}
	if c := audit.LongestChain(deep, "cmd/addonpkg"); len(c) != 4 {
		t.Errorf("LongestChain = %v, want 4 packages", c)
	}
}

// No production package imports a test helper, and the check sees one
// that does.
func TestNoTestHelpersInProduction(t *testing.T) {
	_, g := loadGraph(t)
	for _, v := range audit.TestHelperImports(g) {
		t.Error(v)
	}
	bad := audit.Graph{}
	for p, imps := range g {
		bad[p] = imps
	}
	bad["pkg/registry"] = append(append([]string(nil), bad["pkg/registry"]...), "internal/testing/faultproxy")
	if vs := audit.TestHelperImports(bad); len(vs) != 1 || !strings.Contains(vs[0], "pkg/registry imports the test helper internal/testing/faultproxy") {
		t.Errorf("a planted import of the fault proxy gave %v", vs)
	}
}

// An installer that imports the unpacker, the store or a source gets no
// kustomize: only render (and what renders) compiles it in.
func TestUnpackPullsNoKustomize(t *testing.T) {
	root, _ := loadGraph(t)
	for _, pkg := range []string{"./pkg/unpack", "./pkg/layout", "./pkg/output", "./pkg/folder", "./pkg/registry"} {
		deps, err := audit.Deps(root, pkg)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range deps {
			if strings.HasPrefix(d, "sigs.k8s.io/kustomize") || d == audit.Module+"/pkg/render" {
				t.Errorf("importing %s compiles in %s", pkg, d)
				break
			}
		}
	}
	// The check finds kustomize where it is.
	deps, err := audit.Deps(root, "./pkg/render")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(deps, " "), "sigs.k8s.io/kustomize/api") {
		t.Error("pkg/render's deps hold no kustomize: the check looks at the wrong list")
	}
}

// kubernetesClients are the import paths that mean "compiles a Kubernetes
// client": only pkg/apply (and what imports it) may.
var kubernetesClients = []string{"k8s.io/client-go", "sigs.k8s.io/controller-runtime", "github.com/fluxcd/pkg/ssa"}

// clientIn returns the first dependency of deps that is a Kubernetes
// client, or "".
func clientIn(deps []string) string {
	for _, d := range deps {
		for _, p := range kubernetesClients {
			if d == p || strings.HasPrefix(d, p+"/") {
				return d
			}
		}
	}
	return ""
}

// An installer that unpacks, reads a source, renders or builds compiles
// no Kubernetes client: client-go stays behind pkg/apply.
func TestCorePullsNoClientGo(t *testing.T) {
	root, _ := loadGraph(t)
	for _, pkg := range []string{"./pkg/unpack", "./pkg/source", "./pkg/render", "./pkg/build"} {
		deps, err := audit.Deps(root, pkg)
		if err != nil {
			t.Fatal(err)
		}
		if d := clientIn(deps); d != "" {
			t.Errorf("importing %s compiles in %s", pkg, d)
		}
	}
	// The check fails where a client is imported: pkg/apply's deps.
	deps, err := audit.Deps(root, "./pkg/apply")
	if err != nil {
		t.Fatal(err)
	}
	if d := clientIn(deps); !strings.HasPrefix(d, "k8s.io/client-go") && !strings.HasPrefix(d, "sigs.k8s.io/controller-runtime") && !strings.HasPrefix(d, "github.com/fluxcd/pkg/ssa") {
		t.Errorf("pkg/apply's deps hold no Kubernetes client (found %q): the check looks at the wrong list", d)
	}
}
