package audit

import (
	"go/ast"
	"go/token"
)

// textMatchers are the calls that look into a string: given an error's
// text, they recognise an error by its message.
var textMatchers = map[string]bool{
	"strings.Contains": true, "strings.HasPrefix": true, "strings.HasSuffix": true,
	"strings.Index": true, "strings.EqualFold": true, "strings.ContainsAny": true,
	"strings.Cut": true, "strings.Split": true, "strings.Fields": true,
	"bytes.Contains": true, "regexp.MatchString": true,
}

// ErrorTextMatches lists, in the Go files below dirs (test files
// excepted), where an error is recognised by its text: an .Error() call
// handed to one of textMatchers, a regexp's MatchString, or compared with
// == or !=. Errors are recognised by their value (errors.Is, errors.As).
func ErrorTextMatches(dirs ...string) ([]Finding, error) {
	return scanFiles(nil, dirs, func(fset *token.FileSet, f *ast.File) []Finding { return errTextInFile(fset, f) })
}

// CheckErrorTextSource is ErrorTextMatches for one file's source text.
func CheckErrorTextSource(name, src string) ([]Finding, error) {
	return scanSource(name, src, func(fset *token.FileSet, f *ast.File) []Finding { return errTextInFile(fset, f) })
}

func errTextInFile(fset *token.FileSet, f *ast.File) []Finding {
	var out []Finding
	inFuncs(f, func(name string, n ast.Node) bool {
		switch x := n.(type) {
		case *ast.CallExpr:
			sel, isSel := x.Fun.(*ast.SelectorExpr)
			if textMatchers[selector(x.Fun)] || (isSel && sel.Sel.Name == "MatchString") {
				for _, a := range x.Args {
					if hasErrorCall(a) {
						out = append(out, Finding{Pos: fset.Position(x.Pos()), Func: name, Call: callName(x.Fun)})
						break
					}
				}
			}
		case *ast.BinaryExpr:
			if (x.Op == token.EQL || x.Op == token.NEQ) && (hasErrorCall(x.X) || hasErrorCall(x.Y)) {
				out = append(out, Finding{Pos: fset.Position(x.Pos()), Func: name, Call: x.Op.String()})
			}
		}
		return true
	})
	return out
}

func callName(e ast.Expr) string {
	if s := selector(e); s != "" {
		return s
	}
	if s, ok := e.(*ast.SelectorExpr); ok {
		return "." + s.Sel.Name
	}
	return "?"
}

// hasErrorCall reports whether e is, or converts or slices, a call
// x.Error() with no arguments.
func hasErrorCall(e ast.Expr) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		if c, ok := n.(*ast.CallExpr); ok && len(c.Args) == 0 {
			if s, ok := c.Fun.(*ast.SelectorExpr); ok && s.Sel.Name == "Error" {
				found = true
			}
		}
		return !found
	})
	return found
}
