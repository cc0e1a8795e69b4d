package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// bigData marks a test that makes or renders hundreds of MiB in the test
// process to measure the CLI's own process (its peak RSS, its stream).
// The race detector makes those generators ten times slower and checks
// nothing they do, since the binary measured is not built with it; so
// such a test skips under -race, and make test runs the tests that match
// BIGDATA in its Makefile in a pass of their own without it
// (TestBigDataTestsRunWithoutRace keeps the two in step).
func bigData(t *testing.T, what string) {
	t.Helper()
	if testing.Short() {
		t.Skip(what)
	}
	if raceDetector {
		t.Skip(what + ": make test runs it without -race (BIGDATA)")
	}
}

// Every test that calls bigData matches the Makefile's BIGDATA pattern,
// and every test the pattern matches calls it: a big-data test that the
// pattern missed would run in neither pass.
func TestBigDataTestsRunWithoutRace(t *testing.T) {
	mk, err := os.ReadFile(filepath.Join("..", "..", "Makefile"))
	must(t, err)
	m := regexp.MustCompile(`(?m)^BIGDATA := (.+)$`).FindSubmatch(mk)
	if m == nil {
		t.Fatal("the Makefile sets no BIGDATA := pattern")
	}
	pattern := regexp.MustCompile(strings.Trim(string(m[1]), "'"))
	files, err := filepath.Glob("*_test.go")
	must(t, err)
	fset := token.NewFileSet()
	found := 0
	for _, file := range files {
		f, err := parser.ParseFile(fset, file, nil, 0)
		must(t, err)
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv != nil || !strings.HasPrefix(fn.Name.Name, "Test") {
				continue
			}
			calls := false
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				if c, ok := n.(*ast.CallExpr); ok {
					if id, ok := c.Fun.(*ast.Ident); ok && id.Name == "bigData" {
						calls = true
					}
				}
				return !calls
			})
			if calls {
				found++
			}
			if matches := pattern.MatchString(fn.Name.Name); matches != calls {
				t.Errorf("%s: %s calls bigData: %v, matches BIGDATA %q: %v", file, fn.Name.Name, calls, pattern, matches)
			}
		}
	}
	if found == 0 {
		t.Error("no test calls bigData: the walk found nothing")
	}
}
