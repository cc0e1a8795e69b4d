package addonset_test

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/addonpkg/addonpkg/pkg/addonset"
	"github.com/addonpkg/addonpkg/pkg/source"
)

const header = "apiVersion: addon.cncf.io/v1alpha1\nkind: AddonSet\naddons:\n"

// declDir is a directory with two folders a declaration can name.
func declDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, n := range []string{"one", "two"} {
		if err := os.MkdirAll(filepath.Join(dir, n), 0o755); err != nil {
			t.Fatal(err)
		}
		cm := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + n + "\n"
		if err := os.WriteFile(filepath.Join(dir, n, n+".yaml"), []byte(cm), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestParseErrors(t *testing.T) {
	dir := declDir(t)
	for _, c := range []struct {
		name, yaml string
		is         error
		want       string // in the message
	}{
		{"duplicate name", "- name: a\n  source: ./one\n- name: a\n  source: ./two\n", addonset.ErrDuplicateName, `addons.yaml:6: member "a": duplicate name: also declared at line 4`},
		{"unknown dependency", "- name: a\n  source: ./one\n  dependsOn: [b]\n", addonset.ErrUnknownDependency, `addons.yaml:4: member "a": unknown dependency "b"`},
		{"self cycle", "- name: a\n  source: ./one\n  dependsOn: [a]\n", addonset.ErrCycle, "dependency cycle: a -> a"},
		{"cycle", "- name: a\n  source: ./one\n  dependsOn: [c]\n- name: b\n  source: ./two\n  dependsOn: [a]\n- name: c\n  source: ./two\n  dependsOn: [b]\n", addonset.ErrCycle, "dependency cycle: a -> c -> b -> a"},
		{"unknown field", "- name: a\n  source: ./one\n  verison: ~1.2\n", addonset.ErrUnknownField, `addons.yaml:6: unknown field "verison"`},
		{"unknown top field", "- name: a\n  source: ./one\nextra: 1\n", addonset.ErrUnknownField, `unknown field "extra"`},
		{"no name", "- source: ./one\n", addonset.ErrInvalid, "an add-on has no name"},
		{"bad name", "- name: A_B\n  source: ./one\n", addonset.ErrInvalid, `name "A_B"`},
		{"no source", "- name: a\n", addonset.ErrInvalid, "no source"},
		{"store name", "- name: a\n  source: coredns:1.11\n", addonset.ErrInvalid, "names the local store"},
		{"docker-archive", "- name: a\n  source: docker-archive:x.tar\n", addonset.ErrInvalid, "cannot be pinned"},
		{"version on folder", "- name: a\n  source: ./one\n  version: ~1.2\n", addonset.ErrInvalid, "only a registry source takes a version range"},
		{"version with tag", "- name: a\n  source: registry.example.com/a:1.2\n  version: ~1.2\n", addonset.ErrInvalid, "already names a tag or digest"},
		{"bad range", "- name: a\n  source: registry.example.com/a\n  version: banana\n", addonset.ErrInvalid, `version "banana"`},
		{"bad platform", "- name: a\n  source: registry.example.com/a\n  platform: linux/amd64/v3/x\n", addonset.ErrInvalid, "platform"},
		{"relative contentDir", "- name: a\n  source: registry.example.com/a\n  contentDir: addon\n", addonset.ErrInvalid, "contentDir"},
		{"dependency twice", "- name: a\n  source: ./one\n- name: b\n  source: ./two\n  dependsOn: [a, a]\n", addonset.ErrInvalid, `lists "a" twice`},
		{"credentials", "- name: a\n  source: https://bob:s3cret@example.com/a.yaml\n", addonset.ErrInvalid, "credentials do not belong"},
		{"git token", "- name: a\n  source: git+https://tok3n@example.com/r.git\n", addonset.ErrInvalid, "credentials do not belong"},
		{"bad source", "- name: a\n  source: git+ftp://x/y\n", source.ErrBadSource, "git+"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := addonset.Parse([]byte(header+c.yaml), "addons.yaml", dir)
			if err == nil {
				t.Fatal("no error")
			}
			if !errors.Is(err, c.is) {
				t.Errorf("error %v is not %v", err, c.is)
			}
			if !errors.Is(err, addonset.ErrInvalid) {
				t.Errorf("error %v is not ErrInvalid", err)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q does not contain %q", err, c.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q spans lines", err)
			}
			if strings.Contains(err.Error(), "s3cret") || strings.Contains(err.Error(), "tok3n") {
				t.Errorf("error %q shows a credential", err)
			}
		})
	}
	for _, c := range []struct{ name, text, want string }{
		{"empty", "", "empty"},
		{"api version", "apiVersion: v1\nkind: AddonSet\naddons: []\n", `apiVersion "v1"`},
		{"kind", "apiVersion: addon.cncf.io/v1alpha1\nkind: Set\naddons: []\n", `kind "Set"`},
		{"two documents", header + "- name: a\n  source: ./one\n---\n" + header, "more than one YAML document"},
		{"not yaml", "addons: [\n", "invalid add-on set"},
		{"list", "- a\n", "invalid add-on set"},
		{"no addons", "apiVersion: addon.cncf.io/v1alpha1\nkind: AddonSet\n", "no addons list"},
		{"null addons", "apiVersion: addon.cncf.io/v1alpha1\nkind: AddonSet\naddons:\n", "no addons list"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := addonset.Parse([]byte(c.text), "addons.yaml", dir)
			if !errors.Is(err, addonset.ErrInvalid) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v: want ErrInvalid containing %q", err, c.want)
			}
		})
	}
}

// A manifest given where a declaration belongs (kubectl's -f habit) is
// ErrNotASet, and ErrInvalid, whatever else it holds: a stream of several
// objects said "more than one YAML document", one object "unknown field".
func TestParseNotASet(t *testing.T) {
	for _, text := range []string{
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n",
		"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: a}\nspec: {}\n",
		"apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [a.yaml]\n",
	} {
		_, err := addonset.Parse([]byte(text), "x.yaml", declDir(t))
		if !errors.Is(err, addonset.ErrNotASet) || !errors.Is(err, addonset.ErrInvalid) || !strings.Contains(err.Error(), `want "AddonSet"`) {
			t.Errorf("%q: error %v, want ErrNotASet and ErrInvalid", text, err)
		}
	}
	if _, err := addonset.Parse([]byte("apiVersion: v1\nkind: AddonSet\naddons: []\n"), "x.yaml", declDir(t)); errors.Is(err, addonset.ErrNotASet) {
		t.Errorf("a set of another apiVersion: %v, want no ErrNotASet", err)
	}
}

func TestParseTrailingSeparator(t *testing.T) {
	s, err := addonset.Parse([]byte(header+"- name: a\n  source: ./one\n---\n"), "addons.yaml", declDir(t))
	if err != nil || len(s.Addons) != 1 {
		t.Errorf("a trailing ---: %v", err)
	}
}

func TestOrder(t *testing.T) {
	dir := declDir(t)
	for _, c := range []struct {
		name, yaml string
		want       []string
	}{
		{"declaration order", "- name: a\n  source: ./one\n- name: b\n  source: ./two\n", []string{"a", "b"}},
		{"dependency first", "- name: a\n  source: ./one\n  dependsOn: [b]\n- name: b\n  source: ./two\n", []string{"b", "a"}},
		{"diamond", "- name: app\n  source: ./one\n  dependsOn: [crds, cni]\n- name: cni\n  source: ./two\n  dependsOn: [crds]\n- name: crds\n  source: ./two\n- name: dns\n  source: ./one\n",
			[]string{"crds", "cni", "app", "dns"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := addonset.Parse([]byte(header+c.yaml), "addons.yaml", dir)
			if err != nil {
				t.Fatal(err)
			}
			order, err := s.Order()
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, a := range order {
				got = append(got, a.Name)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("order %v, want %v", got, c.want)
			}
		})
	}
}

func TestRefResolvesAgainstDeclaration(t *testing.T) {
	dir := declDir(t)
	s, err := addonset.Parse([]byte(header+"- name: a\n  source: one\n- name: b\n  source: ./two\n- name: c\n  source: oci:layout@sha256:"+strings.Repeat("a", 64)+"\n"), "addons.yaml", dir)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []source.Ref{
		{Kind: source.KindDir, Path: filepath.Join(dir, "one")},
		{Kind: source.KindDir, Path: filepath.Join(dir, "two")},
		{Kind: source.KindLayout, Path: filepath.Join(dir, "layout"), Name: "sha256:" + strings.Repeat("a", 64)},
	} {
		got, err := s.Ref(s.Addons[i])
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("%s: %+v, want %+v", s.Addons[i].Name, got, want)
		}
	}
}

func TestEntryDigest(t *testing.T) {
	a := addonset.Addon{Name: "a", Source: "./one"}
	b := a
	b.DependsOn = []string{"x"}
	if a.EntryDigest() == b.EntryDigest() {
		t.Error("a changed entry keeps its digest")
	}
	if a.EntryDigest() != (addonset.Addon{Name: "a", Source: "./one", DependsOn: []string{}}).EntryDigest() {
		t.Error("an empty dependsOn changes the digest")
	}
}
