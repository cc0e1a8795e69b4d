package ignore_test

import (
	"os"
	"strings"
	"testing"

	"github.com/addonpkg/addonpkg/internal/ignore"
)

func TestMatch(t *testing.T) {
	m, err := ignore.Parse([]byte("# comment\n\n*.txt\n!keep.txt\nbuild/\n/rootonly.yaml\ntrailing.yaml   \nescaped\\ \r\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path  string
		dir   bool
		match bool
	}{
		{"a.yaml", false, false},
		{"notes.txt", false, true},
		{"sub/notes.txt", false, true},
		{"keep.txt", false, false},
		{"sub/keep.txt", false, false},
		{"build", true, true},
		{"sub/build", true, true},
		{"build", false, false},
		{"rootonly.yaml", false, true},
		{"sub/rootonly.yaml", false, false},
		{"trailing.yaml", false, true},
		{".git", true, true},
		{"sub/.git", true, true},
		{"x.yaml~", false, true},
		{".x.yaml.swp", false, true},
		{".DS_Store", false, true},
		{"", true, false},
		{".", true, false},
	} {
		if got := m.Match(tc.path, tc.dir); got != tc.match {
			t.Errorf("Match(%q, dir=%v) = %v, want %v", tc.path, tc.dir, got, tc.match)
		}
	}
}

// A default can be re-included with "!".
func TestReinclude(t *testing.T) {
	m, err := ignore.Parse([]byte("!.DS_Store\n"))
	if err != nil {
		t.Fatal(err)
	}
	if m.Match(".DS_Store", false) {
		t.Error("!.DS_Store did not re-include it")
	}
}

func TestParseTooLarge(t *testing.T) {
	if _, err := ignore.Parse([]byte(strings.Repeat("#\n", ignore.MaxFileSize))); err == nil {
		t.Error("an ignore file over MaxFileSize was accepted")
	}
}

// spec/addon-v1.md section 8 lists the default rules; keep them in step.
func TestDefaultsMatchSpec(t *testing.T) {
	b, err := os.ReadFile("../../spec/addon-v1.md")
	if err != nil {
		t.Fatal(err)
	}
	spec := strings.Join(strings.Fields(string(b)), " ")
	i := strings.Index(spec, "The rules are the defaults")
	if i < 0 {
		t.Fatal(`spec/addon-v1.md no longer says "The rules are the defaults"`)
	}
	list := spec[i:]
	list = list[:strings.Index(list, "followed by")]
	for _, d := range ignore.Defaults {
		if !strings.Contains(list, "`"+d+"`") {
			t.Errorf("default %q is not in the spec's list: %s", d, list)
		}
	}
	if n := strings.Count(list, "`") / 2; n != len(ignore.Defaults) {
		t.Errorf("the spec lists %d defaults, the code has %d: %s", n, len(ignore.Defaults), list)
	}
}
