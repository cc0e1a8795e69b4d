package folder_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/addonpkg/addonpkg/pkg/folder"
	"github.com/addonpkg/addonpkg/pkg/safetree"
)

// benchFolder writes a folder of 2,000 ConfigMaps of 10 KiB in 20
// directories.
func benchFolder(b *testing.B) (string, int64) {
	dir := b.TempDir()
	body := cm + "data:\n  x: " + strings.Repeat("y", 10<<10) + "\n"
	for i := range 2000 {
		p := filepath.Join(dir, fmt.Sprintf("d%02d", i%20), fmt.Sprintf("cm-%04d.yaml", i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return dir, int64(2000 * len(body))
}

// BenchmarkLoadDir measures reading a folder into memory.
func BenchmarkLoadDir(b *testing.B) {
	dir, size := benchFolder(b)
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := folder.LoadDir(dir); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkOpen measures listing a folder (folder.Open) without reading
// its files: the allocated bytes are those of its shape.
func BenchmarkOpen(b *testing.B) {
	dir, size := benchFolder(b)
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		t, err := folder.Open(dir, safetree.Limits{})
		if err != nil {
			b.Fatal(err)
		}
		t.Close()
	}
}
