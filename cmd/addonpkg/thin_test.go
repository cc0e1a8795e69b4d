package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// maxRunELines is how long a command's RunE may be (the lines between
// its braces): flags to options, one library call, print. Policy that
// needs more belongs to the library package that owns it.
const maxRunELines = 25

// thinPending are the files whose commands are still being thinned:
// their RunE lengths are listed, not enforced, until they are.
var thinPending = map[string]bool{}

// runELength is one RunE of the command tree and its length in lines.
type runELength struct {
	pos   string // file:line of the RunE
	file  string
	lines int
}

// runELengths measures every RunE in the package's non-test files: a
// function literal is measured where it is written, a function or
// method value (RunE: a.runBuild) by the declaration it names.
func runELengths(t *testing.T) []runELength {
	t.Helper()
	fset := token.NewFileSet()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	decls := map[string]*ast.FuncDecl{}
	parsed := map[string]*ast.File{}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		parsed[name] = f
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok {
				decls[fd.Name.Name] = fd
			}
		}
	}
	body := func(b *ast.BlockStmt) int {
		if n := fset.Position(b.Rbrace).Line - fset.Position(b.Lbrace).Line - 1; n > 0 {
			return n
		}
		return 1 // func() error { return x }
	}
	var out []runELength
	for name, f := range parsed {
		ast.Inspect(f, func(n ast.Node) bool {
			kv, ok := n.(*ast.KeyValueExpr)
			if !ok {
				return true
			}
			if k, ok := kv.Key.(*ast.Ident); !ok || k.Name != "RunE" {
				return true
			}
			r := runELength{pos: fset.Position(kv.Pos()).String(), file: name, lines: -1}
			switch v := kv.Value.(type) {
			case *ast.FuncLit:
				r.lines = body(v.Body)
			case *ast.Ident:
				if d := decls[v.Name]; d != nil {
					r.lines = body(d.Body)
				}
			case *ast.SelectorExpr:
				if d := decls[v.Sel.Name]; d != nil {
					r.lines = body(d.Body)
				}
			}
			out = append(out, r)
			return true
		})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].pos < out[j].pos })
	return out
}

// Every command is thin: no RunE is longer than maxRunELines, except in
// the files being rewritten (thinPending). ADDONPKG_RUNE_LENGTHS=1
// prints every length.
func TestThinCommands(t *testing.T) {
	t.Parallel()
	rs := runELengths(t)
	if len(rs) < 20 {
		t.Fatalf("found only %d RunE: the walk is broken", len(rs))
	}
	for _, r := range rs {
		if os.Getenv("ADDONPKG_RUNE_LENGTHS") != "" {
			t.Logf("%-28s %3d", r.pos, r.lines)
		}
		switch {
		case r.lines < 0:
			t.Errorf("%s: RunE is neither a function literal nor a function of this package: cannot measure it", r.pos)
		case r.lines > maxRunELines && !thinPending[r.file]:
			t.Errorf("%s: RunE is %d lines, more than %d: move the policy into the library and leave flags to options, one call, print", r.pos, r.lines, maxRunELines)
		}
	}
}
