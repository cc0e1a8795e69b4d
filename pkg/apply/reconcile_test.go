package apply_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/addonpkg/addonpkg/pkg/apply"
	"github.com/addonpkg/addonpkg/pkg/build"
	"github.com/addonpkg/addonpkg/pkg/publish"
	"github.com/addonpkg/addonpkg/pkg/render"
	"github.com/addonpkg/addonpkg/pkg/signature"
	"github.com/addonpkg/addonpkg/pkg/source"
	"github.com/addonpkg/addonpkg/pkg/unpack"
	"github.com/addonpkg/addonpkg/pkg/values"
)

// A controller's reconcile, through the public API alone (ExampleNew's
// calls): a SOURCE string and values in, the add-on resolved and its
// signature checked, rendered, applied and waited for, each object's
// action out. Called twice it changes nothing (no resourceVersion
// moves); a new version prunes the object it dropped; an unsigned
// version is refused before anything is read; uninstall removes it all.
func TestLibraryReconcile(t *testing.T) {
	k := newCluster(t)
	dir := t.TempDir()
	lay := filepath.Join(dir, "layout")
	cm := func(name, data string) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: NS-" + name + ", namespace: default}\ndata:\n" + data + "---\n"
	}
	decl := "apiVersion: addon.cncf.io/v1alpha1\nkind: AddonValues\nvalues:\n- name: GREETING\n"
	versions := map[string]string{
		"1": cm("settings", "  greeting: ${GREETING}\n") + cm("legacy", "  old: \"true\"\n"),
		"2": cm("settings", "  greeting: ${GREETING}\n  version: \"2\"\n"),
		"3": cm("settings", "  greeting: ${GREETING}\n"),
	}
	priv, pub, err := signature.GenerateKeyPair([]byte("pw"))
	must(t, err)
	signer, err := signature.LoadPrivateKey("test.key", priv, []byte("pw"))
	must(t, err)
	key, err := signature.LoadPublicKey("test.pub", pub)
	must(t, err)
	for v, yaml := range versions {
		tree := filepath.Join(dir, "v"+v)
		must(t, os.MkdirAll(tree, 0o755))
		must(t, os.WriteFile(filepath.Join(tree, "addon.yaml"), []byte(k.stream(yaml)), 0o644))
		must(t, os.WriteFile(filepath.Join(tree, values.File), []byte(decl), 0o644))
		dst, err := source.Parse("oci:" + lay + ":" + v)
		must(t, err)
		_, err = publish.Build(k.ctx, tree, publish.Options{Build: build.Options{Name: k.prefix, Version: v}, Outputs: []source.Ref{dst}})
		must(t, err)
		if v == "3" {
			continue // left unsigned
		}
		a, loc, err := source.OpenSigned(k.ctx, dst, source.Options{})
		must(t, err)
		_, err = signature.Sign(k.ctx, loc, a.Digest, signer, signature.SignOptions{})
		must(t, a.Close())
		must(t, err)
	}

	sopts := source.Options{Verify: &signature.KeyVerifier{Keys: []signature.Key{key}}}
	reconcile := func(src string) (*apply.ChangeSet, error) {
		ad, err := source.Resolve(k.ctx, src, sopts, unpack.Options{})
		if err != nil {
			return nil, err
		}
		res, err := render.Addon(k.ctx, ad, render.Options{Values: map[string]string{"GREETING": "hello"}})
		if err != nil {
			return nil, err
		}
		a, err := apply.FromRendered("", ad, res)
		if err != nil {
			return nil, err
		}
		return k.admin.Apply(k.ctx, a, apply.Options{Wait: true})
	}
	actions := func(cs *apply.ChangeSet) map[string]apply.Action {
		out := map[string]apply.Action{}
		for _, c := range cs.Changes {
			out[c.Object] = c.Action
		}
		return out
	}
	settings, legacy := "ConfigMap/default/"+k.prefix+"-settings", "ConfigMap/default/"+k.prefix+"-legacy"
	rv := func(name string) string {
		t.Helper()
		o, err := k.typed.CoreV1().ConfigMaps("default").Get(k.ctx, name, metav1.GetOptions{})
		must(t, err)
		return o.ResourceVersion
	}

	cs, err := reconcile("oci:" + lay + ":1")
	must(t, err)
	if got := actions(cs); got[settings] != apply.Created || got[legacy] != apply.Created {
		t.Fatalf("first reconcile: %v, want both created", got)
	}
	before := rv(k.prefix + "-settings")
	cs, err = reconcile("oci:" + lay + ":1")
	must(t, err)
	if cs.Changed() || rv(k.prefix+"-settings") != before {
		t.Errorf("second reconcile changed something:\n%s", cs)
	}
	cs, err = reconcile("oci:" + lay + ":2")
	must(t, err)
	if got := actions(cs); got[settings] != apply.Configured || got[legacy] != apply.Deleted {
		t.Errorf("upgrade: %v, want settings configured, legacy deleted (pruned)", got)
	}
	if _, err := reconcile("oci:" + lay + ":3"); !errors.Is(err, signature.ErrNoSignature) {
		t.Errorf("unsigned version: %v, want signature.ErrNoSignature", err)
	}
	st, err := k.admin.Status(k.ctx, k.prefix)
	must(t, err)
	if len(st) != 1 || st[0].Version != "2" || st[0].Ready != 1 || st[0].Objects != 1 {
		t.Errorf("status after the refused upgrade: %+v, want version 2, 1/1 ready", st)
	}
	cs, err = k.admin.Uninstall(k.ctx, k.prefix, apply.UninstallOptions{})
	if err != nil || cs.Count(apply.Deleted) != 1 {
		t.Errorf("uninstall: %v\n%s", err, cs)
	}
	if _, err := k.admin.Uninstall(k.ctx, k.prefix, apply.UninstallOptions{}); !errors.Is(err, apply.ErrNotInstalled) {
		t.Errorf("second uninstall: %v, want ErrNotInstalled", err)
	}
}
