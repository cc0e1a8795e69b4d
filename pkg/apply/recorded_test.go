package apply_test

import (
	"os"
	"path/filepath"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/addonpkg/addonpkg/pkg/apply"
	"github.com/addonpkg/addonpkg/pkg/build"
	"github.com/addonpkg/addonpkg/pkg/folder"
	"github.com/addonpkg/addonpkg/pkg/render"
	"github.com/addonpkg/addonpkg/pkg/source"
	"github.com/addonpkg/addonpkg/pkg/transfer"
	"github.com/addonpkg/addonpkg/pkg/unpack"
)

// An installer that resolves a SOURCE, renders it and applies it with
// FromRendered records in the inventory what names the add-on read back
// from anywhere: a relative oci:DIR with its path absolute, a folder by
// its absolute path (it has no pinned form), as the command and
// FromSet record them. The library recorded oci:DIR@sha256:... as
// written, relative to a working directory nobody reading the inventory
// knows, and a folder as no source at all.
func TestFromRenderedRecordsLocalSourcesAbsolute(t *testing.T) {
	k := newCluster(t)
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	tree := filepath.Join(dir, "tree")
	must(t, os.MkdirAll(tree, 0o755))
	must(t, os.WriteFile(filepath.Join(tree, "cm.yaml"), []byte(k.stream("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: NS-recorded, namespace: default}\n")), 0o644))
	fsys, err := folder.LoadDir(tree)
	must(t, err)
	res, err := build.Build(k.ctx, fsys, build.Options{Name: k.prefix})
	must(t, err)
	ref, err := source.Parse("oci:" + filepath.Join(dir, "layout") + ":1")
	must(t, err)
	_, err = transfer.Write(k.ctx, &source.Artifact{Image: res.Image, Digest: res.Digest}, ref, transfer.Options{})
	must(t, err)
	t.Chdir(dir)

	secretVersion := func() string {
		t.Helper()
		s, err := k.typed.CoreV1().Secrets(apply.DefaultInventoryNamespace).Get(k.ctx, apply.InventoryName(k.prefix), metav1.GetOptions{})
		must(t, err)
		return s.ResourceVersion
	}
	for _, c := range []struct{ src, want string }{
		{"oci:layout:1", "oci:" + filepath.Join(dir, "layout") + "@" + res.Digest.String()},
		{"./tree", tree},
		{"tree/../tree/", tree},
	} {
		ad, err := source.Resolve(k.ctx, c.src, source.Options{}, unpack.Options{})
		must(t, err)
		rendered, err := render.Addon(k.ctx, ad, render.Options{Values: map[string]string{}})
		must(t, err)
		a, err := apply.FromRendered(k.prefix, ad, rendered)
		must(t, err)
		if a.Source != c.want {
			t.Errorf("%s: FromRendered gives source %q, want %q", c.src, a.Source, c.want)
		}
		k.mustApply(t, a, apply.Options{})
		before := secretVersion()
		k.mustApply(t, a, apply.Options{})
		if after := secretVersion(); after != before {
			t.Errorf("%s: applied again, the inventory was written again (resourceVersion %s, was %s)", c.src, after, before)
		}
		st, err := k.admin.Status(k.ctx, k.prefix)
		must(t, err)
		if len(st) != 1 || st[0].Source != c.want {
			t.Errorf("%s: status says %+v, want source %q", c.src, st, c.want)
		}
	}
	if _, err := k.admin.Uninstall(k.ctx, k.prefix, apply.UninstallOptions{}); err != nil {
		t.Fatal(err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
