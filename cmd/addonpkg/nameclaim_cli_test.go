package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// Two folders whose add-ons are both named "cli-claimed" (a folder's
// name is its config's): apply of the second, with the name taken from
// its config, is refused with one line naming both folders and the
// --name that overrides, exit 1, and nothing changes; --dry-run refuses
// alike, and diff --cluster exits 2 with the same line. The first folder
// at a new version upgrades; --name replaces the add-on from the second.
func TestCLINameClaimedFromAnotherFolderRefused(t *testing.T) {
	cc := newClusterCLI(t)
	const name = "cli-claimed"
	folder := func(parent, cm, v string) string {
		dir := filepath.Join(cc.tmp, parent, name)
		must(t, os.MkdirAll(dir, 0o755))
		must(t, os.WriteFile(filepath.Join(dir, "cm.yaml"), []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: "+cm+", namespace: default}\ndata: {v: \""+v+"\"}\n"), 0o644))
		return dir
	}
	one, two := folder("one", name+"-a", "1"), folder("two", name+"-b", "1")
	typed := kubernetes.NewForConfigOrDie(cc.env.Admin)
	exists := func(cm string) bool {
		t.Helper()
		_, err := typed.CoreV1().ConfigMaps("default").Get(context.Background(), cm, metav1.GetOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
		return err == nil
	}
	if _, stderr, code := cc.run(t, "apply", one); code != 0 {
		t.Fatalf("apply %s: exit %d: %s", one, code, stderr)
	}
	t.Cleanup(func() { cc.run(t, "uninstall", name) })

	want := `add-on "` + name + `" is installed from ` + one + `, not from ` + two + `, whose config claims the name (pass --name ` + name + ` to replace it from the new source, or another --name to install beside it)`
	for _, c := range []struct {
		args []string
		code int
	}{
		{[]string{"apply", two}, 1},
		{[]string{"apply", two, "--dry-run"}, 1},
		{[]string{"apply", two, "--force"}, 1},
		{[]string{"diff", "--cluster", two}, 2},
	} {
		out, stderr, code := cc.run(t, c.args...)
		if code != c.code || !strings.Contains(stderr, want) || strings.Count(stderr, "\n") != 1 || out != "" {
			t.Errorf("%v: exit %d (want %d), stdout %q, stderr %q; want one line with %q", c.args, code, c.code, out, stderr, want)
		}
	}
	if !exists(name+"-a") || exists(name+"-b") {
		t.Fatal("a refused apply changed the cluster")
	}

	// The installed add-on's own folder at a new version upgrades it.
	folder("one", name+"-a", "2")
	if _, stderr, code := cc.run(t, "apply", one); code != 0 {
		t.Fatalf("apply of the same folder again: exit %d: %s", code, stderr)
	}
	// An explicit name replaces it from the other folder.
	if _, stderr, code := cc.run(t, "apply", two, "--name", name); code != 0 {
		t.Fatalf("apply --name %s: exit %d: %s", name, code, stderr)
	}
	if exists(name+"-a") || !exists(name+"-b") {
		t.Error("apply --name did not replace the add-on from the second folder")
	}
}
