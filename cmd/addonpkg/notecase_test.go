package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// Every note on stderr (app.infof) starts lowercase, as most did and as
// errors do: "Tagged", "Removed" and "Login succeeded" were the odd ones
// out. login's note is not docker's "Login Succeeded" either, so nothing
// compares it with docker's.
func TestNotesStartLowercase(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) == 0 {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || sel.Sel.Name != "infof" {
				return true
			}
			lit, ok := call.Args[0].(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err == nil && s != "" && unicode.IsUpper([]rune(s)[0]) {
				t.Errorf("%s: note %q starts uppercase", fset.Position(lit.Pos()), s)
			}
			return true
		})
	}
}
