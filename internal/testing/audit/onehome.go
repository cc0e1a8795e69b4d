package audit

import (
	"go/ast"
	"go/token"
	"path"
	"slices"
	"strconv"
	"strings"
)

// ByteSizes lists the constants and variables declared below dirs (test
// files excepted, and the directories skip names) whose value is a byte
// size: a shift (4 << 20) or a product with 1024. A cap on untrusted
// input has one home, safetree.Limits; what else declares a size is a
// memory budget or a format's parameter, which an allowlist names with
// its reason. Func is the declared name.
func ByteSizes(skip []string, dirs ...string) ([]Finding, error) {
	return scanFiles(skip, dirs, func(fset *token.FileSet, f *ast.File) []Finding { return sizesInFile(fset, f) })
}

// CheckSizesSource is ByteSizes for one file's source text.
func CheckSizesSource(name, src string) ([]Finding, error) {
	return scanSource(name, src, func(fset *token.FileSet, f *ast.File) []Finding { return sizesInFile(fset, f) })
}

func sizesInFile(fset *token.FileSet, f *ast.File) []Finding {
	var out []Finding
	ast.Inspect(f, func(n ast.Node) bool {
		gd, ok := n.(*ast.GenDecl)
		if !ok || (gd.Tok != token.CONST && gd.Tok != token.VAR) {
			return true
		}
		for _, spec := range gd.Specs {
			vs := spec.(*ast.ValueSpec)
			for i, v := range vs.Values {
				if i < len(vs.Names) && isByteSize(v) {
					out = append(out, Finding{Pos: fset.Position(vs.Names[i].Pos()), Func: vs.Names[i].Name, Call: gd.Tok.String()})
				}
			}
		}
		return true
	})
	return out
}

// isByteSize reports whether e, under parentheses and conversions such
// as int64(...), is x << y or a product with the literal 1024.
func isByteSize(e ast.Expr) bool {
	for {
		switch x := e.(type) {
		case *ast.ParenExpr:
			e = x.X
			continue
		case *ast.CallExpr:
			if len(x.Args) != 1 {
				return false
			}
			if _, ok := x.Fun.(*ast.Ident); !ok {
				return false
			}
			e = x.Args[0]
			continue
		case *ast.BinaryExpr:
			switch x.Op {
			case token.SHL:
				return true
			case token.MUL:
				return isKiB(x.X) || isKiB(x.Y) || isByteSize(x.X) || isByteSize(x.Y)
			}
		}
		return false
	}
}

func isKiB(e ast.Expr) bool {
	l, ok := e.(*ast.BasicLit)
	return ok && l.Kind == token.INT && (l.Value == "1024" || l.Value == "1_024")
}

// Literals lists, in the Go files below dirs (test files and the
// directories skip excepted), the string literals whose value is one of
// values, each with its enclosing function (or the declaration's name).
// A literal ".." outside safetree is a path check written a second time.
func Literals(skip []string, values []string, dirs ...string) ([]Finding, error) {
	return scanFiles(skip, dirs, func(fset *token.FileSet, f *ast.File) []Finding { return literalsInFile(fset, f, values) })
}

func literalsInFile(fset *token.FileSet, f *ast.File, values []string) []Finding {
	var out []Finding
	for _, decl := range f.Decls {
		name := "?"
		switch d := decl.(type) {
		case *ast.FuncDecl:
			name = d.Name.Name
			if d.Recv != nil && len(d.Recv.List) == 1 {
				name = typeName(d.Recv.List[0].Type) + "." + name
			}
		case *ast.GenDecl:
			if len(d.Specs) > 0 {
				if vs, ok := d.Specs[0].(*ast.ValueSpec); ok && len(vs.Names) > 0 {
					name = vs.Names[0].Name
				}
			}
		}
		ast.Inspect(decl, func(n ast.Node) bool {
			l, ok := n.(*ast.BasicLit)
			if !ok || l.Kind != token.STRING {
				return true
			}
			if v, err := strconv.Unquote(l.Value); err == nil && slices.Contains(values, v) {
				out = append(out, Finding{Pos: fset.Position(l.Pos()), Func: name, Call: l.Value})
			}
			return true
		})
	}
	return out
}

// slicers are the string functions that take a reference apart when
// handed ':' or '@'.
var slicers = map[string]bool{
	"strings.LastIndexByte": true, "strings.LastIndex": true, "strings.IndexByte": true, "strings.Index": true,
	"strings.IndexAny": true, "strings.Cut": true, "strings.Contains": true, "strings.ContainsAny": true,
	"strings.ContainsRune": true, "strings.Split": true, "strings.SplitN": true,
}

// ReferenceSlicing lists, in the Go files below dirs (test files and the
// directories skip excepted), the calls that cut a string at ':' or '@',
// which is how a reference helper written a second time looks.
func ReferenceSlicing(skip []string, dirs ...string) ([]Finding, error) {
	return scanFiles(skip, dirs, func(fset *token.FileSet, f *ast.File) []Finding { return slicingInFile(fset, f) })
}

func slicingInFile(fset *token.FileSet, f *ast.File) []Finding {
	var out []Finding
	inFuncs(f, func(name string, n ast.Node) bool {
		c, ok := n.(*ast.CallExpr)
		if !ok || !slicers[selector(c.Fun)] || len(c.Args) < 2 {
			return true
		}
		if l, ok := c.Args[1].(*ast.BasicLit); ok {
			v := l.Value
			if v == `'@'` || v == `':'` || v == `"@"` || v == `":"` || v == `":@"` || v == `"@:"` {
				out = append(out, Finding{Pos: fset.Position(c.Pos()), Func: name, Call: selector(c.Fun) + " " + v})
			}
		}
		return true
	})
	return out
}

// Comparisons lists, in the Go files below dirs (test files and the
// directories skip excepted), the == and != comparisons with pkg.NAME
// for a NAME of names (through a conversion such as string(...)).
func Comparisons(skip []string, pkg string, names []string, dirs ...string) ([]Finding, error) {
	return scanFiles(skip, dirs, func(fset *token.FileSet, f *ast.File) []Finding { return comparisonsInFile(fset, f, pkg, names) })
}

func comparisonsInFile(fset *token.FileSet, f *ast.File, pkg string, names []string) []Finding {
	var out []Finding
	is := func(e ast.Expr) string {
		for {
			c, ok := e.(*ast.CallExpr)
			if !ok || len(c.Args) != 1 {
				break
			}
			e = c.Args[0]
		}
		if s := selector(e); strings.HasPrefix(s, pkg+".") && slices.Contains(names, strings.TrimPrefix(s, pkg+".")) {
			return s
		}
		return ""
	}
	inFuncs(f, func(name string, n ast.Node) bool {
		b, ok := n.(*ast.BinaryExpr)
		if !ok || (b.Op != token.EQL && b.Op != token.NEQ) {
			return true
		}
		if s := is(b.X) + is(b.Y); s != "" {
			out = append(out, Finding{Pos: fset.Position(b.Pos()), Func: name, Call: s})
		}
		return true
	})
	return out
}

// Reexports lists, in the Go files below dirs (test files and the
// directories skip excepted), the exported package-level declarations
// that give a declaration a second name: var X = other.Y, const X = other.Y or type
// X = other.Y where other is a package of this module, and any alias of
// another package's error (var ErrX = x.ErrY, type XError = x.XError).
// A name lives once, in its owner (a sentinel several packages return in
// pkg/errdef), so that one thing has one name to learn and to test for.
func Reexports(skip []string, dirs ...string) ([]Finding, error) {
	return scanFiles(skip, dirs, func(fset *token.FileSet, f *ast.File) []Finding { return reexportsInFile(fset, f) })
}

// CheckReexportsSource is Reexports for one file's source text.
func CheckReexportsSource(name, src string) ([]Finding, error) {
	return scanSource(name, src, func(fset *token.FileSet, f *ast.File) []Finding { return reexportsInFile(fset, f) })
}

func reexportsInFile(fset *token.FileSet, f *ast.File) []Finding {
	ours := map[string]bool{} // the names this file imports the module's packages by
	for _, im := range f.Imports {
		p, err := strconv.Unquote(im.Path.Value)
		if err != nil || !strings.HasPrefix(p, Module+"/") {
			continue
		}
		name := path.Base(p)
		if im.Name != nil {
			name = im.Name.Name
		}
		ours[name] = true
	}
	second := func(sel string, isError bool) bool {
		pkg, _, _ := strings.Cut(sel, ".")
		return sel != "" && (ours[pkg] || isError)
	}
	var out []Finding
	for _, decl := range f.Decls {
		gd, ok := decl.(*ast.GenDecl)
		if !ok {
			continue
		}
		for _, spec := range gd.Specs {
			switch s := spec.(type) {
			case *ast.TypeSpec:
				if sel := selector(s.Type); s.Assign.IsValid() && s.Name.IsExported() && second(sel, strings.HasSuffix(s.Name.Name, "Error")) {
					out = append(out, Finding{Pos: fset.Position(s.Name.Pos()), Func: s.Name.Name, Call: "type = " + sel})
				}
			case *ast.ValueSpec:
				for i, v := range s.Values {
					if sel := selector(v); i < len(s.Names) && s.Names[i].IsExported() && second(sel, strings.Contains(sel, ".Err")) {
						out = append(out, Finding{Pos: fset.Position(s.Names[i].Pos()), Func: s.Names[i].Name, Call: gd.Tok.String() + " = " + sel})
					}
				}
			}
		}
	}
	return out
}
