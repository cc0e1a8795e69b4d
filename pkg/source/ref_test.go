package source_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/addonpkg/addonpkg/pkg/source"
	"github.com/addonpkg/addonpkg/pkg/unpack"
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
		"docker-archive:/tmp/d.tar:example.com/coredns:1.11",
		// Colons that cannot start a tag stay in the path.
		"oci:a::",
		"oci-archive:C:/x.tar",
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

// The paths and names that Parse gives for the local transports, as oras
// and skopeo spell them.
func TestParseLocalTransports(t *testing.T) {
	for _, c := range []struct{ in, kind, path, name string }{
		{"oci:./layout:1", "oci", "./layout", "1"},
		{"oci:a::", "oci", "a::", ""},
		{"oci:/tmp/x:/y", "oci", "/tmp/x:/y", ""},
		{"oci-archive:a.tar@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", "oci-archive", "a.tar", "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"},
		{"docker-archive:a.tar", "docker-archive", "a.tar", ""},
		{"docker-archive:a.tar:x:1", "docker-archive", "a.tar", "x:1"},
		{"docker-archive:a.tar:localhost:5000/x:1", "docker-archive", "a.tar", "localhost:5000/x:1"},
		// oci:// is a registry, as Flux and oras write it, not a layout.
		{"oci://127.0.0.1:5000/addons/coredns:1.11", "registry", "", "127.0.0.1:5000/addons/coredns:1.11"},
		{"docker://127.0.0.1:5000/x:1", "registry", "", "127.0.0.1:5000/x:1"},
		// oci:///DIR is an absolute path, as before oci:// was a registry.
		{"oci:///tmp/layout:v1", "oci", "///tmp/layout", "v1"},
	} {
		ref, err := source.Parse(c.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", c.in, err)
			continue
		}
		if string(ref.Kind) != c.kind || ref.Path != c.path || ref.Name != c.name {
			t.Errorf("Parse(%q) = %s path %q name %q, want %s path %q name %q", c.in, ref.Kind, ref.Path, ref.Name, c.kind, c.path, c.name)
		}
	}
	for _, bad := range []string{"docker-archive:", "docker-archive:::", "docker-archive:a.tar:UPPER", "oci:", "oci-archive::1"} {
		if ref, err := source.Parse(bad); err == nil {
			t.Errorf("Parse(%q) = %s path %q name %q, want an error", bad, ref.Kind, ref.Path, ref.Name)
		}
	}
}

// Parse reads no disk: a string means the same in every directory,
// whether or not a file of that name is there (README's SOURCE table).
func TestParseIsPure(t *testing.T) {
	cases := []struct{ in, kind, path, name string }{
		{"./x", "dir", "./x", ""},
		{"/abs/x", "dir", "/abs/x", ""},
		{"..", "dir", "..", ""},
		{"file:///abs/x", "dir", "/abs/x", ""},
		{"coredns.yaml", "dir", "coredns.yaml", ""},
		{"dir/coredns.YML", "dir", "dir/coredns.YML", ""},
		{"x.json", "dir", "x.json", ""},
		{"Not_A_Reference", "dir", "Not_A_Reference", ""},
		{"some/folder/", "dir", "some/folder/", ""},
		{"coredns:v1.yaml", "store", "", "coredns:v1.yaml"},
		{"coredns", "store", "", "coredns:latest"},
		{"examples/coredns", "store", "", "examples/coredns:latest"},
		{"coredns:1.11", "store", "", "coredns:1.11"},
		{"registry.example.com/addons/coredns:1.11", "registry", "", "registry.example.com/addons/coredns:1.11"},
		{"localhost:5000/x", "registry", "", "localhost:5000/x"},
		{"git+x", "", "", ""}, // a malformed git URL, not a folder named git+x
	}
	parseAll := func() []source.Ref {
		var out []source.Ref
		for _, c := range cases {
			ref, err := source.Parse(c.in)
			if c.kind == "" {
				if err == nil {
					t.Errorf("Parse(%q) = %+v, want an error", c.in, ref)
				}
			} else if err != nil || string(ref.Kind) != c.kind || ref.Path != c.path || ref.Name != c.name {
				t.Errorf("Parse(%q) = %s path %q name %q (%v), want %s path %q name %q", c.in, ref.Kind, ref.Path, ref.Name, err, c.kind, c.path, c.name)
			}
			out = append(out, ref)
		}
		return out
	}
	empty := parseAll()
	// The same strings in a directory where every one of them exists.
	dir := t.TempDir()
	t.Chdir(dir)
	for _, c := range cases {
		if strings.HasPrefix(c.in, "/") || strings.Contains(c.in, "://") || c.in == ".." {
			continue
		}
		p := filepath.FromSlash(c.in)
		if strings.HasSuffix(c.in, "/") {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("kind: ConfigMap\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	full := parseAll()
	for i := range cases {
		if empty[i] != full[i] {
			t.Errorf("Parse(%q) depends on the directory: %+v there, %+v here", cases[i].in, full[i], empty[i])
		}
	}
	// A bare path that is not there says what it is not.
	if _, err := source.Resolve(t.Context(), "No_Such_Dir", source.Options{}, unpack.Options{}); !errors.Is(err, source.ErrBadSource) || !strings.Contains(err.Error(), "neither a reference nor an existing path") {
		t.Errorf("a missing bare path: %v", err)
	}
	// "-" (kubectl's standard input) is no store name.
	if _, err := source.Parse("-"); !errors.Is(err, source.ErrBadSource) || !strings.Contains(err.Error(), "standard input is not a source") {
		t.Errorf(`Parse("-") = %v, want ErrBadSource saying standard input is not a source`, err)
	}
}

// A URL whose scheme no location takes is refused by its text, as
// ErrBadSource naming the scheme: s3://bucket/x and ftp://host/x were
// registry references whose "hosts", s3 and ftp, were looked up in DNS.
func TestParseRefusesUnknownSchemes(t *testing.T) {
	for _, s := range []string{"ftp://example.com/x.yaml", "s3://bucket/addons/coredns", "foo://bar/baz:1", "HTTPS+x://h/p"} {
		if ref, err := source.Parse(s); !errors.Is(err, source.ErrBadSource) || !strings.Contains(err.Error(), "no SOURCE has the scheme") {
			t.Errorf("Parse(%q) = %s %q, %v; want ErrBadSource naming the scheme", s, ref.Kind, ref.Name, err)
		}
	}
	// What the schemes the locations take, and what is no URL, still are.
	for s, kind := range map[string]source.Kind{
		"docker://localhost:5000/x:1": source.KindRegistry,
		"oci://localhost:5000/x:1":    source.KindRegistry,
		"file:///tmp/x":               source.KindDir,
		"git+file:///tmp/repo.git":    source.KindGit,
		"https://example.com/x.yaml":  source.KindHTTP,
		"a b://c":                     source.KindDir,
	} {
		if ref, err := source.Parse(s); err != nil || ref.Kind != kind {
			t.Errorf("Parse(%q) = %s, %v; want %s", s, ref.Kind, err, kind)
		}
	}
}
