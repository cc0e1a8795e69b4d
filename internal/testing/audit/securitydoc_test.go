package audit_test

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// testName matches the name of a Go test, fuzz target or example.
var testName = regexp.MustCompile("`((?:Test|Fuzz|Example)[A-Za-z0-9_]*)`")

// spec/SECURITY.md promises only what a test checks: in its sections of
// guarantees (2) every bullet and every row of a table names at least one
// test, fuzz target or example (`TestX`), and every name it gives is a
// function of a _test.go file of the repository.
func TestSecurityDocNamesItsTests(t *testing.T) {
	root := filepath.Join("..", "..", "..")
	defined := definedTests(t, root)
	f, err := os.Open(filepath.Join(root, "spec", "SECURITY.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	section, line, claims := "", 0, 0
	var item strings.Builder // a bullet with its continuation lines
	itemLine := 0
	check := func() {
		text := item.String()
		item.Reset()
		if text == "" || !strings.HasPrefix(section, "## 2.") && !strings.HasPrefix(section, "### 2.") {
			return
		}
		claims++
		names := testName.FindAllStringSubmatch(text, -1)
		if len(names) == 0 {
			t.Errorf("SECURITY.md:%d (%s): no test named for %q", itemLine, section, firstWords(text))
		}
		for _, n := range names {
			if !defined[n[1]] {
				t.Errorf("SECURITY.md:%d: %s is named but no _test.go file defines it", itemLine, n[1])
			}
		}
	}
	for sc.Scan() {
		line++
		l := sc.Text()
		trimmed := strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(l, "#"):
			check()
			section = l
		case strings.HasPrefix(trimmed, "- "), strings.HasPrefix(trimmed, "|") && !strings.HasPrefix(trimmed, "|---") && !strings.HasPrefix(trimmed, "| Limit") && !strings.HasPrefix(trimmed, "| What"):
			check()
			item.WriteString(trimmed)
			itemLine = line
		case trimmed == "":
			check()
		default:
			if item.Len() > 0 {
				item.WriteString(" " + trimmed)
			}
		}
	}
	check()
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if claims < 20 {
		t.Errorf("found %d claims in section 2: the document's shape changed, update this test", claims)
	}
}

// definedTests lists the Test, Fuzz and Example functions of every
// _test.go file below root.
func definedTests(t *testing.T, root string) map[string]bool {
	t.Helper()
	fn := regexp.MustCompile(`(?m)^func ((?:Test|Fuzz|Example)[A-Za-z0-9_]*)\(`)
	out := map[string]bool{}
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "bin" || d.Name() == ".work" || d.Name() == "vectors") {
			return filepath.SkipDir
		}
		if !strings.HasSuffix(p, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, m := range fn.FindAllStringSubmatch(string(b), -1) {
			out[m[1]] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func firstWords(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}
