package main

import (
	"archive/tar"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Issue 11, finding 4: a chain of links that each stay inside the tree
// but together reach /etc/passwd is refused by -o, by the stdout render
// and by a folder source alike, with the same rule.
func TestHostileSymlinkChain(t *testing.T) {
	t.Parallel()
	binary(t)
	work := t.TempDir()
	cm := hostileCLIFile("addon/a.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n")
	layoutDir := hostileCLIWrite(t, filepath.Join(work, "layout"), hostileCLIImage(t, hostileCLIOne(t,
		cm,
		hostileCLIEntry{name: "addon/a/b/c/d/", typ: tar.TypeDir},
		hostileCLILink("addon/a/b/c/d/up", "../..", tar.TypeSymlink),
		hostileCLILink("addon/passwd.yaml", "a/b/c/d/up/../../../../etc/passwd", tar.TypeSymlink),
	)))
	// The folder ignores a/, whose link to its own ancestor would
	// otherwise stop the walk as a cycle before passwd.yaml is judged.
	folder := filepath.Join(work, "folder")
	must(t, os.MkdirAll(filepath.Join(folder, "a/b/c/d"), 0o755))
	must(t, os.WriteFile(filepath.Join(folder, ".addonignore"), []byte("a/\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(folder, "a.yaml"), []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n"), 0o644))
	must(t, os.Symlink("../..", filepath.Join(folder, "a/b/c/d/up")))
	must(t, os.Symlink("a/b/c/d/up/../../../../etc/passwd", filepath.Join(folder, "passwd.yaml")))

	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"image -o", []string{"unpack", "oci:" + layoutDir + ":t", "-o", "out"}, []string{"passwd.yaml", "outside the tree"}},
		{"image to stdout", []string{"unpack", "oci:" + layoutDir + ":t"}, []string{"passwd.yaml", "outside the tree"}},
		{"image --list", []string{"unpack", "oci:" + layoutDir + ":t", "--list"}, []string{"passwd.yaml", "outside the tree"}},
		{"folder -o", []string{"unpack", folder, "-o", "out"}, []string{"passwd.yaml", "outside the tree"}},
		{"folder build", []string{"build", folder, "-t", "x:1"}, []string{"passwd.yaml", "outside the tree"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			r := hostileCLIRun(t, dir, []string{"ADDONPKG_HOME=" + filepath.Join(dir, "home")}, tc.args...)
			checkRefused(t, peakResult{hostileCLIResult: r}, 1<<40, tc.want...)
			if _, err := os.Lstat(filepath.Join(dir, "out")); err == nil {
				t.Error("out was written")
			}
		})
	}
}

// Issue 11, finding 6: names that a case-insensitive file system would
// merge are refused by -o on every file system (so that what is on disk
// is always the add-on that was verified); the stdout render, which
// writes no files, reads them as they are.
func TestHostileCaseCollision(t *testing.T) {
	t.Parallel()
	binary(t)
	work := t.TempDir()
	doc := func(name string) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name + "\n"
	}
	layoutDir := hostileCLIWrite(t, filepath.Join(work, "layout"), hostileCLIImage(t, hostileCLIOne(t,
		hostileCLIFile("addon/coredns.yaml", doc("lower")),
		hostileCLIFile("addon/CoreDNS.yaml", doc("upper")),
	)))
	dir := t.TempDir()
	env := []string{"ADDONPKG_HOME=" + filepath.Join(dir, "home")}
	r := hostileCLIRun(t, dir, env, "unpack", "oci:"+layoutDir+":t", "-o", "out")
	checkRefused(t, peakResult{hostileCLIResult: r}, 1<<40, "CoreDNS.yaml", "coredns.yaml", "case")
	if entries, err := os.ReadDir(dir); err != nil || len(entries) != 0 {
		t.Errorf("left behind: %v %v", entries, err)
	}
	r = hostileCLIRun(t, dir, env, "unpack", "oci:"+layoutDir+":t")
	if r.code != 0 || !strings.Contains(r.stdout, "name: lower") || !strings.Contains(r.stdout, "name: upper") {
		t.Errorf("stdout render: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}

// Issue 11, finding 10: folders and single files get the size limits of
// images, checked before anything is read or parsed: a 1 GiB one-line
// YAML (sparse on disk) is refused in bounded memory.
func TestHostileFolderBomb(t *testing.T) {
	t.Parallel()
	binary(t)
	work := t.TempDir()
	folder := filepath.Join(work, "folder")
	must(t, os.MkdirAll(folder, 0o755))
	must(t, os.WriteFile(filepath.Join(folder, "a.yaml"), []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n"), 0o644))
	big := filepath.Join(folder, "big.yaml")
	f, err := os.Create(big)
	must(t, err)
	must(t, f.Truncate(1<<30))
	must(t, f.Close())
	// unpack names the flag that raises the limit; build has none (the
	// hint names only flags the command has).
	for _, tc := range []struct {
		name string
		args []string
		hint string
	}{
		{"build DIR", []string{"build", folder, "-t", "x:1"}, ""},
		{"unpack DIR", []string{"unpack", folder}, "(raise it with --max-file-bytes)"},
		{"unpack DIR -o", []string{"unpack", folder, "-o", "out"}, "(raise it with --max-file-bytes)"},
		{"unpack FILE", []string{"unpack", big}, "(raise it with --max-file-bytes)"},
		{"build FILE", []string{"build", big, "-t", "x:1"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			r := runPeak(t, dir, []string{"ADDONPKG_HOME=" + filepath.Join(dir, "home")}, tc.args...)
			checkRefused(t, r, 256<<20, "big.yaml", "file size limit of 134217728 exceeded", tc.hint)
			if tc.hint == "" && strings.Contains(r.stderr, "raise it with") {
				t.Errorf("build has no limit flags, but the error names one: %s", r.stderr)
			}
		})
	}
	t.Run("build - (stdin)", func(t *testing.T) {
		dir := t.TempDir()
		in, err := os.Open(big)
		must(t, err)
		defer in.Close()
		cmd := exec.Command(binary(t), "build", "-", "-t", "x:1")
		cmd.Dir, cmd.Stdin = dir, in
		cmd.Env = append(os.Environ(), "ADDONPKG_HOME="+filepath.Join(dir, "home"))
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), "file size limit of 134217728 exceeded") {
			t.Errorf("build -: %v %s", err, out)
		}
	})
}
