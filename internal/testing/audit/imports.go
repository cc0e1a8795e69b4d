package audit

import (
	"fmt"
	"os/exec"
	"sort"
	"strings"
)

// Module is addonpkg's module path.
const Module = "github.com/addonpkg/addonpkg"

// Layers are the import directions of docs/architecture.md, lowest
// first: a package imports only packages of lower layers, never one of
// its own, which is what keeps the graph as shallow as there are layers.
// Every package of the module must be in one (tests and commands under
// hack/, bench/, e2e/ and examples/ sit on top and are not checked).
var Layers = [][]string{
	// Leaves: rules and plumbing that know nothing of add-ons' trees.
	{"pkg/mediatypes", "pkg/safetree", "pkg/reference", "pkg/errdef", "internal/textdiff", "internal/netguard", "internal/ignore", "internal/gitinfo",
		"internal/atomicfile", "internal/rawfile"},
	// The core data (configs, trees in memory, tar layers, installer
	// values), the retry policy and the verified read (both return
	// errdef's sentinels).
	{"pkg/addon", "pkg/filetree", "pkg/archive", "pkg/values", "internal/retry", "internal/verify"},
	// What reads and writes trees and images, and registry access.
	{"pkg/unpack", "pkg/layout", "pkg/output", "pkg/folder", "pkg/registry", "pkg/pack"},
	// What refers to a manifest where it lives (the source resolver finds
	// signatures through it, so a verifier needs no resolver), and the
	// renderer, which takes an unpacked add-on whole.
	{"pkg/referrers", "pkg/render"},
	// Where add-ons live, and how they are built.
	{"pkg/source", "pkg/build", "pkg/imagelock"},
	// What the commands do.
	// The cluster installs what render gives, a set's members too
	// (apply.FromSet takes any apply.SetMember, addonset.Member among
	// them), without compiling addonset's registry and builder.
	{"pkg/transfer", "pkg/publish", "pkg/addonset", "pkg/capi", "internal/doctor", "internal/conformance", "internal/diff", "internal/inspect",
		"pkg/relocate", "pkg/signature", "pkg/source/git", "pkg/source/https", "pkg/apply"},
	// Verbs built on another verb's library. A copy with images is a copy
	// (transfer) plus the images and their lock, so it imports transfer
	// rather than declare a second copy's options.
	{"pkg/airgap"},
	// The commands.
	{"cmd/addonpkg"},
}

// TestingDir holds the helpers of tests (a registry, a fault proxy, data
// generators, this audit): production code never imports them.
const TestingDir = "internal/testing/"

// Graph maps each package of the module (relative: "pkg/unpack") to the
// packages it imports: the module's, relative, and others' as they are.
type Graph map[string][]string

// LoadGraph lists the non-test imports of every package of the module at
// root, with the go command.
func LoadGraph(root string) (Graph, error) {
	out, err := goList(root, "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "./...")
	if err != nil {
		return nil, err
	}
	g := Graph{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		p := rel(f[0])
		g[p] = nil
		for _, imp := range f[1:] {
			g[p] = append(g[p], rel(imp))
		}
	}
	return g, nil
}

// Deps lists every package, of the module or not, that importing pkg
// (relative to root, "./pkg/unpack") compiles in.
func Deps(root, pkg string) ([]string, error) {
	out, err := goList(root, "-deps", "-f", "{{.ImportPath}}", pkg)
	if err != nil {
		return nil, err
	}
	return strings.Fields(out), nil
}

func goList(root string, args ...string) (string, error) {
	cmd := exec.Command("go", append([]string{"list"}, args...)...)
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			return "", fmt.Errorf("go list: %w: %s", err, ee.Stderr)
		}
		return "", fmt.Errorf("go list: %w", err)
	}
	return string(out), nil
}

func rel(p string) string {
	if p == Module {
		return "."
	}
	return strings.TrimPrefix(p, Module+"/")
}

// checked reports whether p is the module's library or commands, where the
// layer rules apply (not the test helpers and tooling programs around
// them, and not other modules' packages).
func checked(p string) bool {
	if strings.HasPrefix(p, TestingDir) {
		return false
	}
	for _, dir := range []string{"pkg/", "internal/", "cmd/"} {
		if strings.HasPrefix(p, dir) {
			return true
		}
	}
	return false
}

// Violations lists every import of g that goes sideways or up the
// layers, and every checked package that is in no layer.
func Violations(g Graph, layers [][]string) []string {
	layer := map[string]int{}
	for i, ps := range layers {
		for _, p := range ps {
			layer[p] = i
		}
	}
	var out []string
	for p, imps := range g {
		if !checked(p) {
			continue
		}
		lp, ok := layer[p]
		if !ok {
			out = append(out, fmt.Sprintf("%s is in no layer of audit.Layers (docs/architecture.md): add it where it belongs", p))
			continue
		}
		for _, q := range imps {
			if !checked(q) {
				continue
			}
			if lq, ok := layer[q]; ok && lq >= lp {
				out = append(out, fmt.Sprintf("%s (layer %d) imports %s (layer %d): imports go down the layers only", p, lp, q, lq))
			}
		}
	}
	sort.Strings(out)
	return out
}

// TestHelperImports lists every import of a test helper (TestingDir) by
// production code: the library, internal helpers or the command. Tests
// are not in g (LoadGraph lists non-test imports), nor are hack/, e2e/,
// bench/ and resilience/, which may use them.
func TestHelperImports(g Graph) []string {
	var out []string
	for p, imps := range g {
		if !checked(p) {
			continue
		}
		for _, q := range imps {
			if strings.HasPrefix(q, TestingDir) {
				out = append(out, fmt.Sprintf("%s imports the test helper %s: production code never does", p, q))
			}
		}
	}
	sort.Strings(out)
	return out
}

// LongestChain is the longest chain of the module's imports from pkg, as
// packages (pkg itself included).
func LongestChain(g Graph, from string) []string {
	memo := map[string][]string{}
	var walk func(p string, seen map[string]bool) []string
	walk = func(p string, seen map[string]bool) []string {
		if c, ok := memo[p]; ok {
			return c
		}
		if seen[p] {
			return nil // a cycle: go build refuses it anyway
		}
		seen[p] = true
		best := []string{p}
		for _, q := range g[p] {
			if !checked(q) {
				continue
			}
			if c := walk(q, seen); len(c)+1 > len(best) {
				best = append([]string{p}, c...)
			}
		}
		delete(seen, p)
		memo[p] = best
		return best
	}
	return walk(from, map[string]bool{})
}
