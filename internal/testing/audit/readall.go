package audit

import (
	"fmt"
	"go/ast"
	"go/token"
	"path/filepath"
)

// A Finding is a read that takes all its input without a cap.
type Finding struct {
	Pos  token.Position
	Func string // the enclosing function
	Call string // io.ReadAll, json.NewDecoder, ...
}

func (f Finding) String() string { return fmt.Sprintf("%s: %s in %s", f.Pos, f.Call, f.Func) }

// Key is how an allowlist names a finding: "path/file.go:Func".
func (f Finding) Key(root string) string {
	rel, err := filepath.Rel(root, f.Pos.Filename)
	if err != nil {
		rel = f.Pos.Filename
	}
	return filepath.ToSlash(rel) + ":" + f.Func
}

// readAlls are the calls that read a reader to its end, or decode from
// it, and so must be handed a capped reader.
var readAlls = map[string]bool{
	"io.ReadAll": true, "ioutil.ReadAll": true,
	"json.NewDecoder": true, "yaml.NewDecoder": true,
}

// capped are the readers such a call may take: a cap, or bytes already
// in memory (which were capped when they were read).
var capped = map[string]bool{
	"io.LimitReader": true, "bytes.NewReader": true, "strings.NewReader": true, "bytes.NewBuffer": true,
}

// UncappedReads lists the calls of readAlls in the Go files below dirs
// (test files excepted) whose reader is not one of capped.
func UncappedReads(dirs ...string) ([]Finding, error) {
	return scanFiles(nil, dirs, func(fset *token.FileSet, f *ast.File) []Finding { return inFile(fset, f) })
}

// CheckSource is UncappedReads for one file's source text.
func CheckSource(name, src string) ([]Finding, error) {
	return scanSource(name, src, func(fset *token.FileSet, f *ast.File) []Finding { return inFile(fset, f) })
}

func inFile(fset *token.FileSet, f *ast.File) []Finding {
	var out []Finding
	inFuncs(f, func(name string, n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		// go-containerregistry's RawConfigFile reads a remote config
		// whole: internal/verify.Config is the capped way.
		if s, ok := call.Fun.(*ast.SelectorExpr); ok && s.Sel.Name == "RawConfigFile" && len(call.Args) == 0 {
			out = append(out, Finding{Pos: fset.Position(call.Pos()), Func: name, Call: ".RawConfigFile"})
			return true
		}
		if !readAlls[selector(call.Fun)] || len(call.Args) == 0 {
			return true
		}
		if arg, ok := call.Args[0].(*ast.CallExpr); ok && capped[selector(arg.Fun)] {
			return true
		}
		out = append(out, Finding{Pos: fset.Position(call.Pos()), Func: name, Call: selector(call.Fun)})
		return true
	})
	return out
}

func selector(e ast.Expr) string {
	s, ok := e.(*ast.SelectorExpr)
	if !ok {
		return ""
	}
	x, ok := s.X.(*ast.Ident)
	if !ok {
		return ""
	}
	return x.Name + "." + s.Sel.Name
}

func typeName(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.StarExpr:
		return typeName(t.X)
	case *ast.Ident:
		return t.Name
	case *ast.IndexExpr:
		return typeName(t.X)
	}
	return "?"
}
