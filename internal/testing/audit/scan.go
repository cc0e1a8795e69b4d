package audit

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
)

// scanFiles parses every non-test Go file below dirs, skipping the
// directories in skip, and collects what visit finds in each: the one
// walk every check of this package shares.
func scanFiles(skip, dirs []string, visit func(*token.FileSet, *ast.File) []Finding) ([]Finding, error) {
	var out []Finding
	fset := token.NewFileSet()
	for _, dir := range dirs {
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if slices.Contains(skip, p) {
					return filepath.SkipDir
				}
				return nil
			}
			if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
				return nil
			}
			f, err := parser.ParseFile(fset, p, nil, 0)
			if err != nil {
				return err
			}
			out = append(out, visit(fset, f)...)
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// scanSource is scanFiles for one file's source text, for tests that
// plant a case.
func scanSource(name, src string, visit func(*token.FileSet, *ast.File) []Finding) ([]Finding, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, 0)
	if err != nil {
		return nil, err
	}
	return visit(fset, f), nil
}

// inFuncs calls visit, as ast.Inspect does, on the nodes of the body of
// every function of f, with the function's name (Type.Method for a
// method) for the finding to name.
func inFuncs(f *ast.File, visit func(name string, n ast.Node) bool) {
	for _, decl := range f.Decls {
		fn, ok := decl.(*ast.FuncDecl)
		if !ok || fn.Body == nil {
			continue
		}
		name := fn.Name.Name
		if fn.Recv != nil && len(fn.Recv.List) == 1 {
			name = typeName(fn.Recv.List[0].Type) + "." + name
		}
		ast.Inspect(fn.Body, func(n ast.Node) bool { return visit(name, n) })
	}
}
