package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// An error names the path it is about once: render -o into a folder that
// is not empty said "DIR: DIR: output directory is not empty", and a lock
// or declaration that is a folder "read F: read F: is a directory".
func TestPathErrorsNameThePathOnce(t *testing.T) {
	cliNewHome(t)
	tmp := t.TempDir()
	full := filepath.Join(tmp, "full")
	must(t, os.MkdirAll(filepath.Join(full, "x"), 0o755))
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"render", "-f", cliSet, "-o", full}, "addonpkg: " + full + ": output directory is not empty\n"},
		{[]string{"lock", "-f", cliSet, "-o", full}, "addonpkg: read " + full + ": is a directory\n"},
		{[]string{"render", "-f", tmp}, "addonpkg: read " + tmp + ": is a directory\n"},
	} {
		r := cliRun(t, c.args...)
		if r.code != 1 || r.stderr != c.want || strings.Count(r.stderr, full) > 1 {
			t.Errorf("addonpkg %q: exit %d, stderr %q; want exit 1, %q", c.args, r.code, r.stderr, c.want)
		}
	}
}
