package source_test

import (
	"context"
	"strings"
	"testing"

	"github.com/addonpkg/addonpkg/pkg/memfs"
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

func (fakeLocation) LoadTree(_ context.Context, ref source.Ref, _ source.Options, _ source.Limits) (*source.Tree, error) {
	b := memfs.NewBuilder()
	doc := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + ref.Name + "\n"
	if err := b.WriteFile("cm.yaml", []byte(doc), 0o644); err != nil {
		return nil, err
	}
	return &source.Tree{Ref: ref, FS: b.FS(), Name: ref.Name}, nil
}

// A new kind of location is one type and one Register call: Parse,
// String, IsTree and Resolve all find it through the table.
func TestRegisterLocation(t *testing.T) {
	source.Register(fakeLocation{})
	ref, err := source.Parse("fake:demo")
	if err != nil || ref.Kind != "fake" || ref.String() != "fake:demo" || !source.IsTree(ref.Kind) {
		t.Fatalf("Parse = %+v (%s), %v", ref, ref, err)
	}
	ad, err := source.Resolve(context.Background(), "fake:demo", source.Options{}, unpack.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if ad.Config.Name != "demo" {
		t.Errorf("name %q, want demo", ad.Config.Name)
	}
	// The built-in kinds are untouched.
	if ref, err := source.Parse("oci:./x:1"); err != nil || ref.Kind != source.KindLayout {
		t.Errorf("oci: parses as %+v, %v", ref, err)
	}
}
