package source_test

import (
	"testing"

	"github.com/addonpkg/addonpkg/pkg/reference"
	"github.com/addonpkg/addonpkg/pkg/source"
)

var kinds = map[source.Kind]bool{
	source.KindStore: true, source.KindRegistry: true, source.KindLayout: true,
	source.KindArchive: true, source.KindDockerArchive: true, source.KindDir: true,
	source.KindHTTP: true, source.KindGit: true,
}

// FuzzParse: Parse never panics, and what it accepts has a known kind and
// prints back as a SOURCE that parses to the same thing.
// Run: go test ./pkg/source -fuzz FuzzParse
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"coredns:1.11", "registry.example.com/addons/coredns@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
		"oci:./layout:1", "oci-archive:/tmp/a.tar", "docker-archive:a.tar:x:1", "docker://localhost:5000/a:b",
		"./dir", "file:///x", "https://example.com/a.tar.gz//sub?checksum=sha256:00", "git+https://example.com/r.git//d?ref=v1",
		"", "\x00", "oci:", "a@b",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ref, err := source.Parse(s)
		if err != nil {
			return
		}
		if !kinds[ref.Kind] {
			t.Fatalf("Parse(%q) gave kind %q", s, ref.Kind)
		}
		str := ref.String()
		switch ref.Kind {
		case source.KindStore, source.KindRegistry, source.KindLayout, source.KindArchive, source.KindDockerArchive:
			again, err := source.Parse(str)
			if err != nil {
				t.Fatalf("Parse(%q) = %s %q %q, whose String %q does not parse: %v", s, ref.Kind, ref.Path, ref.Name, str, err)
			}
			if again.Kind != ref.Kind || again.Path != ref.Path || again.Name != ref.Name {
				t.Fatalf("Parse(%q) = %s %q %q; String %q parses to %s %q %q", s, ref.Kind, ref.Path, ref.Name, str, again.Kind, again.Path, again.Name)
			}
		}
		if ref.Kind == source.KindStore {
			if n := reference.WithDefaultTag(ref.Name); n != ref.Name {
				t.Fatalf("store name %q is not normalized (%q)", ref.Name, n)
			}
		}
	})
}
