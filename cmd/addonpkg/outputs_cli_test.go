package main

import (
	"os"
	"path/filepath"
	"testing"
)

// Outputs never overwrite inputs (issue 25): each refused before anything
// is written, the declaration and its lock left byte for byte.
func TestCLISetOutputsNeverOverwriteInputs(t *testing.T) {
	t.Parallel()
	cliNewHome(t)
	dir := t.TempDir()
	cliWriteFile(t, filepath.Join(dir, "one", "cm.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: one\n")
	decl := "apiVersion: addon.cncf.io/v1alpha1\nkind: AddonSet\naddons:\n- name: one\n  source: ./one\n"
	cliWriteFile(t, filepath.Join(dir, "addons.yaml"), decl)
	cliWriteFile(t, filepath.Join(dir, "set.lock"), decl) // a declaration named like a lock
	cliMust(t, "lock", "-f", filepath.Join(dir, "addons.yaml"))
	before := map[string][]byte{}
	for _, f := range []string{"addons.yaml", "addons.lock", "set.lock"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		before[f] = b
	}
	in := func(f string) string { return filepath.Join(dir, f) }
	archive := "oci-archive:" + in("m.tar")
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"mirror -o the declaration", []string{"mirror", "-f", in("addons.yaml"), "-o", in("addons.yaml"), "--to", archive}},
		{"mirror -o the lock", []string{"mirror", "-f", in("addons.yaml"), "-o", in("addons.lock"), "--to", archive}},
		{"mirror -o a .lock name", []string{"mirror", "-f", in("addons.yaml"), "-o", in("out.lock"), "--to", archive}},
		{"mirror -o the declaration, another spelling", []string{"mirror", "-f", in("addons.yaml"), "-o", dir + "/./addons.yaml", "--to", archive}},
		{"mirror to an archive over the declaration", []string{"mirror", "-f", in("addons.yaml"), "-o", in("m.yaml"), "--to", "oci-archive:" + in("addons.yaml")}},
		{"mirror to an archive over its own output", []string{"mirror", "-f", in("addons.yaml"), "-o", in("m.yaml"), "--to", "oci-archive:" + in("m.lock")}},
		{"lock -f a .lock file", []string{"lock", "-f", in("set.lock")}},
		{"lock -o the declaration", []string{"lock", "-f", in("addons.yaml"), "-o", in("addons.yaml")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cliCheckError(t, cliRun(t, tc.args...), "output would overwrite")
			for f, b := range before {
				got, err := os.ReadFile(filepath.Join(dir, f))
				if err != nil || string(got) != string(b) {
					t.Errorf("%s changed (%v)", f, err)
				}
			}
			for _, f := range []string{"m.tar", "m.yaml", "m.lock", "out.lock"} {
				if _, err := os.Stat(in(f)); err == nil {
					t.Errorf("%s was written", f)
				}
			}
		})
	}
	if err := os.Symlink(in("addons.yaml"), in("link.yaml")); err == nil {
		cliCheckError(t, cliRun(t, "mirror", "-f", in("addons.yaml"), "-o", in("link.yaml"), "--to", archive), "output would overwrite")
	}
}

// --relocate takes a registry prefix only, refused before anything is
// read (issue 25: it took a URL, an impossible port and a ".." path).
func TestCLIRelocateRefusesBadMirrors(t *testing.T) {
	t.Parallel()
	cliNewHome(t)
	full := airgapLayout(t, airgapImageA, airgapImageB)
	for _, m := range []string{"http://m.example", "m.example:99999999", "m.example/a/../b"} {
		cliCheckError(t, cliRun(t, "unpack", "--relocate", m, "oci:"+full+":1"), "invalid mirror", m)
		cliCheckError(t, cliRun(t, "copy", "--with-images", "--image-mirror", m, "oci:"+full+":1", "oci-archive:"+filepath.Join(t.TempDir(), "x.tar")+":1"), "invalid mirror")
	}
}
