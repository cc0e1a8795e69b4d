package source_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/addonpkg/addonpkg/pkg/safetree"
	"github.com/addonpkg/addonpkg/pkg/source"
	"github.com/addonpkg/addonpkg/pkg/unpack"
)

// UnpackTo writes the whole tree, or nothing at all.
func TestUnpackTo(t *testing.T) {
	ctx := context.Background()
	ref, err := source.Parse("../../examples/coredns")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "out")
	ad, err := source.UnpackTo(ctx, ref, dir, source.Options{}, unpack.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("../../examples/coredns/coredns.yaml")
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(dir, "coredns.yaml"))
	if err != nil || string(got) != string(want) || ad.Config.Name != "coredns" {
		t.Fatalf("unpacked coredns.yaml differs (%v), name %q", err, ad.Config.Name)
	}

	// A limit crossed half-way leaves no directory behind.
	bad := filepath.Join(t.TempDir(), "bad")
	_, err = source.UnpackTo(ctx, ref, bad, source.Options{}, unpack.Options{Limits: safetree.Limits{MaxFileBytes: 10}})
	if !errors.Is(err, safetree.ErrLimit) {
		t.Fatalf("err = %v, want a limit error", err)
	}
	if _, err := os.Stat(bad); !os.IsNotExist(err) {
		t.Errorf("a failed unpack left %s: %v", bad, err)
	}

	// UnpackSpilled's tree reads until release.
	ad, release, err := source.UnpackSpilled(ctx, ref, source.Options{}, unpack.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if b, err := ad.FS.ReadFile("coredns.yaml"); err != nil || string(b) != string(want) {
		t.Errorf("UnpackSpilled: coredns.yaml %v", err)
	}
}
