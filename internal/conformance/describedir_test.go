package conformance_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/addonpkg/addonpkg/internal/conformance"
)

// DescribeDir reads a written tree as Describe reads an unpacked one:
// digests, the two modes, links, and the content identity.
func TestDescribeDir(t *testing.T) {
	root := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(root, "sub"), 0o755))
	must(os.WriteFile(filepath.Join(root, "sub", "a.yaml"), []byte("a\n"), 0o644))
	must(os.WriteFile(filepath.Join(root, "run.sh"), []byte("#!/bin/sh\n"), 0o755))
	must(os.Symlink("sub/a.yaml", filepath.Join(root, "link.yaml")))
	r, err := conformance.DescribeDir(root, "image")
	if err != nil {
		t.Fatal(err)
	}
	a := r.Files["sub/a.yaml"]
	if r.Result != conformance.ResultOK || r.Form != "image" || r.Identity == "" ||
		a.Mode != "0644" || a.SHA256 != "87428fc522803d31065e7bce3cf03fe475096631e5e07bbd7a0fde60c4cf25c7" ||
		r.Files["run.sh"].Mode != "0755" || r.Links["link.yaml"] != "sub/a.yaml" || len(r.Files) != 2 {
		t.Errorf("DescribeDir = %+v", r)
	}
	must(os.WriteFile(filepath.Join(root, "sub", "a.yaml"), []byte("b\n"), 0o644))
	r2, err := conformance.DescribeDir(root, "image")
	if err != nil || r2.Identity == r.Identity || len(conformance.Compare(r, r2)) == 0 {
		t.Errorf("a changed file: identity %s -> %s, compare %v, %v", r.Identity, r2.Identity, conformance.Compare(r, r2), err)
	}
}
