package audit_test

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/addonpkg/addonpkg/internal/testing/audit"
)

// allowed are the reads of a whole reader that are capped some other
// way, each with the reason.
var allowed = map[string]string{
	// readZip reads through limitedReader, which wraps io.LimitReader and
	// also counts the archive's total.
	"pkg/source/http.go:readZip": "capped by limitedReader over io.LimitReader",
	// verify.Config is the capped read of a config: it falls back to
	// RawConfigFile only for images that hold their config already.
	"internal/verify/verify.go:Config": "images that hold their config in memory, or read it with their own cap",
	// freeze encodes the config of an image build just made in memory
	// (mutate over its own typed config), nothing read from outside.
	"pkg/build/image.go:freeze": "the config of an image build made in memory",
}

// Every read of a whole reader or decoder over a reader in pkg/ and
// internal/ takes a capped reader (io.LimitReader, or bytes in memory),
// or is on the allowlist with its reason. A new uncapped io.ReadAll fails
// here.
func TestNoUncappedReads(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	found, err := audit.UncappedReads(filepath.Join(root, "pkg"), filepath.Join(root, "internal"))
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, f := range found {
		k := f.Key(root)
		keys = append(keys, k)
		if _, ok := allowed[k]; !ok {
			t.Errorf("%s: read without a cap: pass io.LimitReader (or add %q to the allowlist with the reason)", f, k)
		}
	}
	for k := range allowed {
		if !slices.Contains(keys, k) {
			t.Errorf("allowlist entry %q matches nothing: remove it", k)
		}
	}
}

// The check itself: it flags what it must and passes what is capped.
func TestCheckSource(t *testing.T) {
	src := `package x
import ("bytes"; "encoding/json"; "io")
func bad(r io.Reader) { io.ReadAll(r) }
func badDecoder(r io.Reader) { json.NewDecoder(r) }
func (t *T) method(r io.Reader) { io.ReadAll(r) }
func config(img interface{ RawConfigFile() ([]byte, error) }) { img.RawConfigFile() }
func good(r io.Reader) { io.ReadAll(io.LimitReader(r, 10)) }
func inMemory(b []byte) { json.NewDecoder(bytes.NewReader(b)) }
type T struct{}
`
	found, err := audit.CheckSource("x.go", src)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range found {
		got = append(got, f.Func+" "+f.Call)
	}
	want := []string{"bad io.ReadAll", "badDecoder json.NewDecoder", "T.method io.ReadAll", "config .RawConfigFile"}
	if !slices.Equal(got, want) {
		t.Fatalf("found %q, want %q", got, want)
	}
}
