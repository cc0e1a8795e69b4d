package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeConfigMapFolder writes dir/cm.yaml, one ConfigMap of about size
// bytes of short keys whose values hold tag: the densest YAML there is.
func writeConfigMapFolder(t *testing.T, dir, tag string, size int) {
	t.Helper()
	must(t, os.MkdirAll(dir, 0o755))
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big\ndata:\n")
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "  k%07d: value-%s-%d\n", i, tag, i)
	}
	must(t, os.WriteFile(filepath.Join(dir, "cm.yaml"), []byte(b.String()), 0o644))
}

// Issue 25: diff of two 6 MB one-ConfigMap folders peaked at 850-1016
// MiB (each unpacks in 37 MiB), two of 90 MB ran out of memory. diff's
// memory now grows with the largest object it compares line by line
// (safetree.DefaultMaxDiffObjectBytes, 2 MiB) and the diffs it holds, not
// with the add-ons: two 6 MB objects are compared by their bytes, and
// two of 1 MiB diffed line by line, each under 96 MiB above start-up.
func TestDiffPeakRSS(t *testing.T) {
	bigData(t, "diffs 12 MB of YAML")
	binary(t)
	for _, tc := range []struct {
		name string
		size int
		want string
	}{
		{"6 MB compared by bytes", 6 << 20, "Objects a/v1/ConfigMap big and b/v1/ConfigMap big differ: "},
		{"1 MiB line by line", 1 << 20, "@@ -"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writeConfigMapFolder(t, filepath.Join(dir, "a"), "a", tc.size)
			writeConfigMapFolder(t, filepath.Join(dir, "b"), "b", tc.size)
			r := runPeak(t, dir, []string{"ADDONPKG_HOME=" + filepath.Join(dir, "home")}, "diff", "./a", "./b")
			t.Logf("exit %d in %v, peak RSS %.1f MiB above start-up, %d bytes out", r.code, r.took, float64(r.peak)/(1<<20), len(r.stdout))
			if r.peak > 96<<20 {
				t.Errorf("peak RSS %.1f MiB above start-up, want under 96 MiB", float64(r.peak)/(1<<20))
			}
			if r.code != 1 || !strings.Contains(r.stdout, tc.want) {
				t.Errorf("diff: exit %d, want 1 and %q in the output: %.300s %s", r.code, tc.want, r.stdout, r.stderr)
			}
		})
	}
}
