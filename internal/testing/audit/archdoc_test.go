package audit_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/addonpkg/addonpkg/internal/testing/audit"
)

// archDoc is the map of the module, relative to its root.
const archDoc = "docs/architecture.md"

// packagesSection is the heading of the section of archDoc whose table
// lists every package.
const packagesSection = "## Packages"

// docRow is one row of the package table: the line it is on, its first
// cell (a layer of audit.Layers, or what sort of package sits outside
// them) and its package, relative to the module ("pkg/unpack").
type docRow struct {
	line         int
	layer, pkgID string
}

// packageCell is a package cell: one module-relative path in backticks.
var packageCell = regexp.MustCompile("^`([a-z0-9][a-z0-9_./-]*)`$")

// packageRows reads the table of the packagesSection of doc, and says
// what it cannot read.
func packageRows(doc string) ([]docRow, []string) {
	var rows []docRow
	var bad []string
	in, found := false, false
	for i, l := range strings.Split(doc, "\n") {
		line := i + 1
		switch {
		case strings.HasPrefix(l, "## "):
			in = strings.TrimSpace(l) == packagesSection
			found = found || in
			continue
		case !in || !strings.HasPrefix(strings.TrimSpace(l), "|"):
			continue
		}
		cells := strings.Split(strings.Trim(strings.TrimSpace(l), "|"), "|")
		for j := range cells {
			cells[j] = strings.TrimSpace(cells[j])
		}
		if len(cells) < 3 || cells[0] == "layer" || strings.HasPrefix(cells[0], "---") {
			continue // the header, its rule, or not a row of the table
		}
		m := packageCell.FindStringSubmatch(cells[1])
		if m == nil {
			bad = append(bad, fmt.Sprintf("%s:%d: the package cell %q is not one `path` relative to the module: one row per package", archDoc, line, cells[1]))
			continue
		}
		rows = append(rows, docRow{line: line, layer: cells[0], pkgID: m[1]})
	}
	if !found {
		bad = append(bad, fmt.Sprintf("%s has no %q section: the package table lives under that heading", archDoc, packagesSection))
	}
	return rows, bad
}

// layerCell is what the first cell of p's row says: its layer in layers,
// or what it is when it is in none (a test, a tool, an example). "?" is a
// library package in no layer yet: TestImportDirections names it.
func layerCell(p string, layers [][]string) string {
	for i, ps := range layers {
		for _, q := range ps {
			if q == p {
				return strconv.Itoa(i)
			}
		}
	}
	switch {
	case strings.HasPrefix(p, "hack/"):
		return "tool"
	case strings.HasPrefix(p, "examples/"):
		return "example"
	case strings.HasPrefix(p, audit.TestingDir), p == "e2e", p == "resilience", strings.HasPrefix(p, "bench"):
		return "test"
	}
	return "?"
}

// archDocDrift compares the rows of the package table with the packages
// go list gives, and says in each line what to change in archDoc.
func archDocDrift(rows []docRow, pkgs []string, layers [][]string) []string {
	exists := map[string]bool{}
	for _, p := range pkgs {
		exists[p] = true
	}
	var out []string
	seen := map[string]int{}
	for _, r := range rows {
		if first, ok := seen[r.pkgID]; ok {
			out = append(out, fmt.Sprintf("%s:%d: a second row for %s (the first is line %d): keep one", archDoc, r.line, r.pkgID, first))
			continue
		}
		seen[r.pkgID] = r.line
		if !exists[r.pkgID] {
			out = append(out, fmt.Sprintf("%s:%d: the row for %s names no package (go list ./... does not list it): delete the row, or fix its path", archDoc, r.line, r.pkgID))
			continue
		}
		if want := layerCell(r.pkgID, layers); want != "?" && r.layer != want {
			out = append(out, fmt.Sprintf("%s:%d: %s is %s, the row says %q: make its first cell | %s |", archDoc, r.line, r.pkgID, describeLayer(want), r.layer, want))
		}
	}
	for _, p := range pkgs {
		if _, ok := seen[p]; ok {
			continue
		}
		layer, note := layerCell(p, layers), ""
		if layer == "?" {
			layer, note = "LAYER", " (LAYER: its index in audit.Layers, where TestImportDirections asks you to place it)"
		}
		out = append(out, fmt.Sprintf("%s has no row for %s (go list ./... lists it): add this row to the table under %q: | %s | `%s` | what it does, in one sentence |%s", archDoc, p, packagesSection, layer, p, note))
	}
	sort.Strings(out)
	return out
}

func describeLayer(cell string) string {
	if _, err := strconv.Atoi(cell); err == nil {
		return "in layer " + cell + " of audit.Layers"
	}
	return "a " + cell + " (in no layer)"
}

// modulePackages lists the packages of g, go list ./...'s, sorted.
func modulePackages(g audit.Graph) []string {
	var out []string
	for p := range g {
		if p != "." {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

// The package table of docs/architecture.md is the territory: every
// package go list ./... lists has one row, every row names a package
// that exists, and a row's layer is the one audit.Layers gives it (what
// TestImportDirections enforces). A package added, removed or moved fails
// here, with the row to add or delete.
func TestArchitectureDocPackages(t *testing.T) {
	root, g := loadGraph(t)
	b, err := os.ReadFile(filepath.Join(root, archDoc))
	if err != nil {
		t.Fatal(err)
	}
	rows, bad := packageRows(string(b))
	for _, v := range bad {
		t.Error(v)
	}
	for _, v := range archDocDrift(rows, modulePackages(g), audit.Layers) {
		t.Error(v)
	}
}

// The check itself fails on drift: a row removed, a package added that
// no row names, a row left for a package that went, a row in the wrong
// layer, a row twice, and a cell that holds two packages.
func TestArchitectureDocPackagesCatchDrift(t *testing.T) {
	root, g := loadGraph(t)
	b, err := os.ReadFile(filepath.Join(root, archDoc))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	pkgs := modulePackages(g)
	rows, _ := packageRows(doc)
	if len(rows) < len(pkgs)/2 {
		t.Fatalf("read %d rows for %d packages: the table's shape changed, update this test", len(rows), len(pkgs))
	}
	without := func(p string) []string {
		var out []string
		for _, q := range pkgs {
			if q != p {
				out = append(out, q)
			}
		}
		return out
	}
	var unpackRow docRow
	var rest []docRow
	for _, r := range rows {
		if r.pkgID == "pkg/unpack" {
			unpackRow = r
		} else {
			rest = append(rest, r)
		}
	}
	moved := append([]docRow(nil), rows...)
	for i := range moved {
		if moved[i].pkgID == "pkg/unpack" {
			moved[i].layer = "3"
		}
	}
	for _, tc := range []struct {
		name string
		rows []docRow
		pkgs []string
		want string
	}{
		{"row removed", rest, pkgs, archDoc + " has no row for pkg/unpack (go list ./... lists it): add this row to the table under \"## Packages\": | 2 | `pkg/unpack` |"},
		{"package added", rows, append(append([]string(nil), pkgs...), "pkg/newthing"), "has no row for pkg/newthing (go list ./... lists it): add this row to the table under \"## Packages\": | LAYER | `pkg/newthing` |"},
		{"tool added", rows, append(append([]string(nil), pkgs...), "hack/newtool"), "| tool | `hack/newtool` |"},
		{"package removed", rows, without("pkg/filetree"), "the row for pkg/filetree names no package (go list ./... does not list it): delete the row"},
		{"wrong layer", moved, pkgs, fmt.Sprintf("%s:%d: pkg/unpack is in layer 2 of audit.Layers, the row says \"3\": make its first cell | 2 |", archDoc, unpackRow.line)},
		{"row twice", append(append([]docRow(nil), rows...), docRow{line: 999, layer: "2", pkgID: "pkg/unpack"}), pkgs, archDoc + ":999: a second row for pkg/unpack"},
	} {
		vs := archDocDrift(tc.rows, tc.pkgs, audit.Layers)
		found := false
		for _, v := range vs {
			found = found || strings.Contains(v, tc.want)
		}
		if !found {
			t.Errorf("%s: no complaint %q among %q", tc.name, tc.want, vs)
		}
	}
	// Two packages in one cell, and no section at all.
	if _, bad := packageRows(packagesSection + "\n| layer | package | its one job |\n|---|---|---|\n| 0 | `pkg/a`, `pkg/b` | two |\n"); len(bad) != 1 || !strings.Contains(bad[0], "one row per package") {
		t.Errorf("a cell of two packages gave %q", bad)
	}
	if _, bad := packageRows("# nothing\n"); len(bad) != 1 || !strings.Contains(bad[0], "has no \"## Packages\" section") {
		t.Errorf("a document without the section gave %q", bad)
	}
}
