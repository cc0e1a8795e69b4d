package addonset_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/addonpkg/addonpkg/pkg/addonset"
)

// TestMirror mirrors a set of a registry member and a folder to a
// registry and to an oci-archive, then renders each mirrored set from its
// own declaration and lock, read back from disk: the stream is the
// original's, byte for byte, and the identities are the same.
func TestMirror(t *testing.T) {
	ctx := context.Background()
	reg := memRegistry(t)
	push(t, reg+"/up/cm:1.2.0", "one-two")
	dir := declDir(t)
	s := writeDecl(t, dir, "- name: cm\n  source: "+reg+"/up/cm\n  version: ^1\n- name: one\n  source: ./one\n  dependsOn: [cm]\n")
	l, err := addonset.Lock(ctx, s, addonset.LockOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := stream(t, must(addonset.Render(ctx, s, addonset.RenderOptions{Lock: l})))

	mirrorReg := memRegistry(t)
	for _, to := range []string{mirrorReg + "/mirror", "oci-archive:" + filepath.Join(t.TempDir(), "set.tar")} {
		t.Run(strings.SplitN(to, ":", 2)[0], func(t *testing.T) {
			out := t.TempDir()
			res, err := addonset.Mirror(ctx, s, addonset.MirrorOptions{To: to, Lock: l, DeclDir: out})
			if err != nil {
				t.Fatal(err)
			}
			file := filepath.Join(out, "addons.yaml")
			if err := addonset.WriteDeclaration(res.Set, file); err != nil {
				t.Fatal(err)
			}
			if err := addonset.WriteLock(res.Lock, addonset.LockPath(file)); err != nil {
				t.Fatal(err)
			}
			ms, err := addonset.Load(ctx, file)
			if err != nil {
				t.Fatal(err)
			}
			ml, err := addonset.LoadLock(addonset.LockPath(file))
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range ml.Addons {
				orig, _ := l.Member(m.Name)
				if m.Identity != orig.Identity {
					t.Errorf("%s: mirrored identity %s, original %s", m.Name, m.Identity, orig.Identity)
				}
				if m.Name == "cm" && m.Digest != orig.Digest {
					t.Errorf("cm: mirrored digest %s, original %s: a registry member must be copied byte for byte", m.Digest, orig.Digest)
				}
				a, _ := ms.Member(m.Name)
				if strings.Contains(a.Source, reg) {
					t.Errorf("%s: the mirrored source %s still points upstream", m.Name, a.Source)
				}
			}
			if err := addonset.Check(ctx, ms, ml, addonset.Options{}); err != nil {
				t.Fatalf("check of the mirrored set: %v", err)
			}
			got := stream(t, must(addonset.Render(ctx, ms, addonset.RenderOptions{Lock: ml})))
			if got != want {
				t.Errorf("the mirrored set renders\n%s\nwant\n%s", got, want)
			}
		})
	}
	if _, err := addonset.Mirror(ctx, s, addonset.MirrorOptions{To: "mirror", Lock: l}); err == nil || !strings.Contains(err.Error(), "REGISTRY/PREFIX") {
		t.Errorf("a prefix without a registry host: %v", err)
	}
}
