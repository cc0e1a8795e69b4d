package archive_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/addonpkg/addonpkg/pkg/archive"
	"github.com/addonpkg/addonpkg/pkg/filetree"
)

// spec/addon-v1.md section 7.3 states the worked example's final digest;
// it must be the one the code computes.
func TestSpecWorkedExampleDigest(t *testing.T) {
	b := filetree.NewBuilder()
	if err := b.Mkdir("base", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := b.WriteFile("base/a.yaml", []byte("x: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	id, err := archive.Identity(b.FS())
	if err != nil {
		t.Fatal(err)
	}
	spec, err := os.ReadFile(filepath.Join("..", "..", "spec", "addon-v1.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, sec, _ := strings.Cut(string(spec), "### 7.3 Worked example")
	sec, _, _ = strings.Cut(sec, "\n## ")
	if want := "identity = " + id.String(); !strings.Contains(sec, want) {
		t.Errorf("section 7.3 of spec/addon-v1.md does not state %q", want)
	}
	if want := "H        = " + hexSum([]byte("x: 1\n")); !strings.Contains(sec, want) {
		t.Errorf("section 7.3 of spec/addon-v1.md does not state %q", want)
	}
}
