package audit

import (
	"fmt"
	"sort"
	"strings"
)

// A Budget pins which packages may compile a heavy dependency, as
// go-containerregistry's depcheck tests do: a package of the module that
// compiles any package under Dep (a path prefix) must be one of Allowed.
// A program that imports one function then pays only for what that
// function needs. Allowed may name packages that do not exist yet
// (pkg/apply, being written): the rule holds once they land.
type Budget struct {
	Dep     string
	Why     string
	Allowed []string
}

// renderers are the packages that render add-ons, and so compile
// kustomize: render itself, build (it validates and takes the inventory
// by rendering) and publish (it builds), relocate (it rewrites rendered streams with kyaml),
// addonset, airgap and inspect (they render members, or read the images
// of a rendering), diff, doctor (it builds probes), capi (it takes
// render's results), the command and the example installers.
var renderers = []string{
	"pkg/render", "pkg/build", "pkg/publish", "pkg/relocate", "pkg/addonset", "pkg/airgap",
	"internal/diff", "internal/inspect", "internal/doctor", "pkg/capi",
	"cmd/addonpkg", "pkg/apply", "examples/unpack-render", "examples/installer",
}

// clusterClients may compile the Kubernetes clients: the apply package,
// the command and the example installer that applies through it. capi
// is not one: it writes objects for a cluster and talks to none.
var clusterClients = []string{"pkg/apply", "cmd/addonpkg", "examples/installer"}

// Budgets are the dependency budgets of the module.
var Budgets = []Budget{
	{Dep: "github.com/go-git/", Why: "git is an opt-in location", Allowed: []string{"pkg/source/git", "internal/gitinfo", "cmd/addonpkg"}},
	{Dep: "sigs.k8s.io/kustomize/", Why: "kustomize only where rendering happens", Allowed: renderers},
	{Dep: "github.com/sigstore/", Why: "sigstore only in signature", Allowed: []string{"pkg/signature", "cmd/addonpkg"}},
	{Dep: "k8s.io/client-go/", Why: "the cluster only in apply", Allowed: clusterClients},
	{Dep: "sigs.k8s.io/controller-runtime/", Why: "the cluster only in apply", Allowed: clusterClients},
	{Dep: "github.com/fluxcd/pkg/ssa", Why: "the cluster only in apply", Allowed: clusterClients},
	{Dep: "github.com/fluxcd/cli-utils/", Why: "the cluster only in apply", Allowed: clusterClients},
	// Flux's substitution (stdlib and golang.org/x/text only) fills in
	// installer values wherever an add-on renders.
	{Dep: "github.com/fluxcd/pkg/envsubst", Why: "values are filled in where rendering happens", Allowed: append([]string{"pkg/values"}, renderers...)},
	{Dep: "sigs.k8s.io/cluster-api/", Why: "Cluster API's types only in capi", Allowed: []string{"pkg/capi", "cmd/addonpkg"}},
}

// NoDependency maps packages to module packages they must not compile,
// whatever they cost (go-containerregistry's AssertNoDependency): a
// signing library does not resolve sources, copy and push do not build
// or render, the unpacker does not render, the cluster installer opens
// no registry and resolves no source.
var NoDependency = map[string][]string{
	"pkg/signature": {"pkg/source", "pkg/source/git", "pkg/render"},
	"pkg/transfer":  {"pkg/build", "pkg/render"},
	"pkg/unpack":    {"pkg/render"},
	"pkg/source":    {"pkg/source/git", "pkg/source/https", "pkg/render", "pkg/build"},
	"pkg/apply":     {"pkg/source", "pkg/registry", "pkg/build", "pkg/addonset"},
}

// Forbidden lists the packages of NoDependency that compile what they
// must not, with the chain that brings it in.
func Forbidden(g DepGraph, rules map[string][]string) []string {
	var out []string
	for p, bad := range rules {
		deps := g.Closure(p)
		for _, b := range bad {
			if contains(deps, b) {
				out = append(out, fmt.Sprintf("%s compiles %s, through %s", p, b, strings.Join(g.path(p, b), " -> ")))
			}
		}
	}
	sort.Strings(out)
	return out
}

// DepGraph maps every package a build of the module compiles (the
// module's, the standard library's and third parties') to its imports,
// with the module's packages relative ("pkg/unpack").
type DepGraph map[string][]string

// LoadDepGraph lists the imports of the packages of patterns (relative
// to root, "./...") and of everything they import.
func LoadDepGraph(root string, patterns ...string) (DepGraph, error) {
	out, err := goList(root, append([]string{"-deps", "-f", "{{.ImportPath}} {{join .Imports \" \"}}"}, patterns...)...)
	if err != nil {
		return nil, err
	}
	g := DepGraph{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		p := rel(f[0])
		g[p] = []string{}
		for _, imp := range f[1:] {
			g[p] = append(g[p], rel(imp))
		}
	}
	return g, nil
}

// With returns a copy of g in which from also imports to.
func (g DepGraph) With(from, to string) DepGraph {
	c := DepGraph{}
	for p, imps := range g {
		c[p] = imps
	}
	c[from] = append(append([]string(nil), c[from]...), to)
	return c
}

// Closure is every package that compiling p compiles, p excluded.
func (g DepGraph) Closure(p string) []string {
	seen := map[string]bool{}
	var walk func(string)
	walk = func(q string) {
		for _, d := range g[q] {
			if !seen[d] {
				seen[d] = true
				walk(d)
			}
		}
	}
	walk(p)
	out := make([]string, 0, len(seen))
	for d := range seen {
		out = append(out, d)
	}
	sort.Strings(out)
	return out
}

// ThirdParty are the packages of deps from other modules: their path's
// first element has a dot (the standard library's have none; the
// module's are relative).
func ThirdParty(deps []string) []string {
	var out []string
	for _, d := range deps {
		first, _, _ := strings.Cut(d, "/")
		if strings.Contains(first, ".") {
			out = append(out, d)
		}
	}
	return out
}

// OverBudget lists every package of the module in g that compiles a
// dependency its budget does not allow it, with the chain that brings it
// in.
func OverBudget(g DepGraph, budgets []Budget) []string {
	var out []string
	for p := range g {
		if !checked(p) && !strings.HasPrefix(p, "examples/") {
			continue
		}
		deps := g.Closure(p)
		for _, b := range budgets {
			if contains(b.Allowed, p) {
				continue
			}
			for _, d := range deps {
				if strings.HasPrefix(d, b.Dep) {
					out = append(out, fmt.Sprintf("%s compiles %s (%s), through %s", p, d, b.Why, strings.Join(g.path(p, d), " -> ")))
					break
				}
			}
		}
	}
	sort.Strings(out)
	return out
}

// path is one import chain from p to d (breadth first: the shortest).
func (g DepGraph) path(p, d string) []string {
	prev := map[string]string{p: ""}
	queue := []string{p}
	for len(queue) > 0 {
		q := queue[0]
		queue = queue[1:]
		if q == d {
			var chain []string
			for c := d; c != ""; c = prev[c] {
				chain = append([]string{c}, chain...)
			}
			return chain
		}
		for _, n := range g[q] {
			if _, ok := prev[n]; !ok {
				prev[n] = q
				queue = append(queue, n)
			}
		}
	}
	return []string{p, "?", d}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
