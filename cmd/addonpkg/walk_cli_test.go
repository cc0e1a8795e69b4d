package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// build takes -o for --output, as unpack, render, lock and mirror take
// it for theirs (and docker build -o): `build PATH -o oci:DIR` writes the
// layout, where it was refused with a hint about JSON.
func TestBuildShortOutput(t *testing.T) {
	lcHome(t)
	dir := filepath.Join(t.TempDir(), "layout")
	r := lcRun("build", filepath.Join("..", "..", "examples", "metrics-server"), "-o", "oci:"+dir+":1")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "sha256:") {
		t.Fatalf("build -o: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "index.json")); err != nil {
		t.Errorf("build -o oci:DIR wrote no layout: %v", err)
	}
}
