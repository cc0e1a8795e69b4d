package source_test

import (
	"testing"

	"github.com/addonpkg/addonpkg/pkg/source"
)

// Ref.String is what inspect and unpack --json report as "source": it must
// name the same thing when given back to the CLI.
func TestRefStringRoundTrip(t *testing.T) {
	for _, s := range []string{
		"coredns:1.11",
		"registry.example.com/addons/coredns:1.11",
		"localhost:5000/coredns:1",
		"oci:./layout:1",
		"oci:./layout@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
		"oci-archive:/tmp/a.tar",
		"docker-archive:/tmp/d.tar",
		// A registry reference without a registry host: Docker Hub.
		"docker://coredns:1.11",
		"oci://library/coredns:1.11",
		// Store names that look like a transport once tagged: "build -t oci"
		// stores oci:latest, which "unpack oci:latest" reads as a layout.
		"oci",
		"docker-archive",
	} {
		ref, err := source.Parse(s)
		if err != nil {
			t.Errorf("Parse(%q): %v", s, err)
			continue
		}
		again, err := source.Parse(ref.String())
		if err != nil {
			t.Errorf("Parse(%q).String() = %q does not parse: %v", s, ref.String(), err)
			continue
		}
		if again.Kind != ref.Kind || again.Name != ref.Name || again.Path != ref.Path {
			t.Errorf("Parse(%q) = %s name %q; its String() %q parses to %s path %q name %q", s, ref.Kind, ref.Name, ref.String(), again.Kind, again.Path, again.Name)
		}
	}
}
