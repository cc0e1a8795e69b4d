package main

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// flagDataAllowed are string literals in pkg/ that hold a flag name as
// data, not as advice: the history entry a patch records in the image
// (created_by, as docker records "COPY ..."), part of the golden digests.
var flagDataAllowed = map[string]bool{
	"addonpkg build --base": true,
}

// The library knows no command line: no string in pkg/ names a flag of
// any addonpkg command. Errors carry typed causes (a limit's LimitID, a
// sentinel) and flagHint/registryHint add the flag here, in cmd.
func TestNoFlagNamesInLibrary(t *testing.T) {
	t.Parallel()
	root, _ := newRoot(nil, &bytes.Buffer{}, &bytes.Buffer{})
	flags := map[string]bool{}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, set := range []*pflag.FlagSet{c.Flags(), c.PersistentFlags()} {
			set.VisitAll(func(f *pflag.Flag) { flags[f.Name] = true })
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	if len(flags) < 20 {
		t.Fatalf("found only %d flags: the walk is broken", len(flags))
	}
	found := findFlagNames(t, filepath.Join("..", "..", "pkg"), flags)
	for _, f := range found {
		t.Errorf("%s", f)
	}
	// The check itself: a literal naming a real flag is found.
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "p.go"), []byte("package p\n\nvar msg = \"raise it with --max-file-bytes\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := findFlagNames(t, dir, flags); len(got) != 1 {
		t.Errorf("the check missed a flag name in a planted file: %v", got)
	}
}

var flagWord = regexp.MustCompile(`--([a-z][a-z0-9-]*)`)

// findFlagNames lists the string literals of the non-test Go files
// under dir that contain --NAME for a flag NAME in flags.
func findFlagNames(t *testing.T, dir string, flags map[string]bool) []string {
	t.Helper()
	var found []string
	fset := token.NewFileSet()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err != nil || flagDataAllowed[s] {
				return true
			}
			for _, m := range flagWord.FindAllStringSubmatch(s, -1) {
				if flags[m[1]] {
					found = append(found, fset.Position(lit.Pos()).String()+": "+strconv.Quote(s)+" names the flag --"+m[1])
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}
