package source_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/addonpkg/addonpkg/pkg/filetree"
	"github.com/addonpkg/addonpkg/pkg/safetree"
	"github.com/addonpkg/addonpkg/pkg/source"
	"github.com/addonpkg/addonpkg/pkg/unpack"
)

// fakeLocation is a kind of location a test adds: "fake:NAME" is a tree
// of one ConfigMap named NAME.
type fakeLocation struct{}

func (fakeLocation) Kind() source.Kind          { return "fake" }
func (fakeLocation) Claims(s string) bool       { return strings.HasPrefix(s, "fake:") }
func (fakeLocation) Format(r source.Ref) string { return "fake:" + r.Name }
func (fakeLocation) Parse(s string) (source.Ref, error) {
	return source.Ref{Kind: "fake", Name: strings.TrimPrefix(s, "fake:")}, nil
}

func (fakeLocation) LoadTree(_ context.Context, ref source.Ref, _ source.Options, _ safetree.Limits) (*source.Tree, error) {
	b := filetree.NewBuilder()
	doc := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + ref.Name + "\n"
	if err := b.WriteFile("cm.yaml", []byte(doc), 0o644); err != nil {
		return nil, err
	}
	return &source.Tree{Ref: ref, FS: b.FS(), Name: ref.Name}, nil
}

// A new kind of location is one type, listed in Options.Locations: Parse,
// IsTree and Resolve find it through the options, and nothing global
// changes (another Options does not know the kind).
func TestOptionsLocations(t *testing.T) {
	opts := source.Options{Locations: []source.Location{fakeLocation{}}}
	ref, err := opts.Parse("fake:demo")
	if err != nil || ref.Kind != "fake" || ref.String() != "fake:demo" {
		t.Fatalf("Parse = %+v (%s), %v", ref, ref, err)
	}
	ad, err := source.Resolve(context.Background(), "fake:demo", opts, unpack.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if ad.Config.Name != "demo" {
		t.Errorf("name %q, want demo", ad.Config.Name)
	}
	// The built-in kinds are untouched.
	if ref, err := opts.Parse("oci:./x:1"); err != nil || ref.Kind != source.KindLayout {
		t.Errorf("oci: parses as %+v, %v", ref, err)
	}
	// Options without the kind know nothing of it: fake:demo is a store
	// name there, and a Ref of the kind is not enabled.
	if ref, err := source.Parse("fake:demo"); err != nil || ref.Kind != source.KindStore {
		t.Errorf("without the location, fake:demo parses as %+v, %v", ref, err)
	}
	if _, err := source.LoadTree(context.Background(), source.Ref{Kind: "fake", Name: "demo"}, source.Options{}, safetree.Limits{}); !errors.Is(err, source.ErrKindNotEnabled) {
		t.Errorf("LoadTree of an unlisted kind: %v, want ErrKindNotEnabled", err)
	}
}

// A git or https source without its location is refused as not enabled,
// by kind, before anything is fetched; the core compiles no go-git
// (TestDependencyBudgets).
func TestRemoteNotEnabledInCore(t *testing.T) {
	for _, c := range []struct {
		s    string
		kind source.Kind
	}{
		{"git+https://127.0.0.1:1/repo.git?ref=main", source.KindGit},
		{"https://127.0.0.1:1/addon.tar.gz", source.KindHTTP},
	} {
		ref, err := source.Parse(c.s)
		if err != nil || ref.Kind != c.kind {
			t.Fatalf("Parse(%q) = %+v, %v", c.s, ref, err)
		}
		_, err = source.Unpack(context.Background(), ref, source.Options{}, unpack.Options{})
		if !errors.Is(err, source.ErrKindNotEnabled) {
			t.Errorf("Unpack of %s without its location: %v, want ErrKindNotEnabled", c.s, err)
		}
	}
}

// Abs makes a local source's path absolute and clean, whatever the
// spelling; a registry reference, a store name and a remote stay as
// they are.
func TestRefAbs(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ in, want string }{
		{"./addon", filepath.Join(wd, "addon")},
		{"addon/", filepath.Join(wd, "addon")},
		{"./a/../addon/.", filepath.Join(wd, "addon")},
		{"file://./addon", filepath.Join(wd, "addon")},
		{"/x//y/./z/", "/x/y/z"},
		{"coredns.yaml", filepath.Join(wd, "coredns.yaml")},
		{"oci:./layout:v1", "oci:" + filepath.Join(wd, "layout") + ":v1"},
		{"oci-archive:a.tar@sha256:" + strings.Repeat("a", 64), "oci-archive:" + filepath.Join(wd, "a.tar") + "@sha256:" + strings.Repeat("a", 64)},
		{"docker-archive:./img.tar", "docker-archive:" + filepath.Join(wd, "img.tar")},
		{"registry.example.com/addons/x:1", "registry.example.com/addons/x:1"},
		{"metrics-server:0.7", "metrics-server:0.7"},
		{"https://example.com/a.tgz?checksum=sha256:" + strings.Repeat("b", 64), "https://example.com/a.tgz?checksum=sha256:" + strings.Repeat("b", 64)},
	} {
		ref, err := source.Parse(tc.in)
		if err != nil {
			t.Fatalf("Parse(%q): %v", tc.in, err)
		}
		abs, err := ref.Abs()
		if err != nil {
			t.Fatalf("%q: Abs: %v", tc.in, err)
		}
		if got := abs.String(); got != tc.want {
			t.Errorf("%q: Abs().String() = %q, want %q", tc.in, got, tc.want)
		}
		if again, err := source.Parse(abs.String()); err != nil || again.Kind != ref.Kind {
			t.Errorf("%q: %q parses back as %v, %v; want kind %s", tc.in, abs.String(), again.Kind, err, ref.Kind)
		}
	}
}
