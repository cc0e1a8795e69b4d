package reference_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/addonpkg/addonpkg/pkg/reference"
)

func TestSplit(t *testing.T) {
	for _, c := range []struct{ in, repo, version string }{
		{"coredns", "coredns", ""},
		{"coredns:1.11", "coredns", ":1.11"},
		{"localhost:5000/a/b", "localhost:5000/a/b", ""},
		{"localhost:5000/a/b:1", "localhost:5000/a/b", ":1"},
		{"r.example/a@sha256:abc", "r.example/a", "@sha256:abc"},
		{"r.example/a:1@sha256:abc", "r.example/a:1", "@sha256:abc"},
		{"sha256:abc", "sha256", ":abc"},
	} {
		repo, v := reference.Split(c.in)
		if repo != c.repo || v != c.version {
			t.Errorf("Split(%q) = %q, %q; want %q, %q", c.in, repo, v, c.repo, c.version)
		}
		if got := reference.Repository(c.in); got != c.repo {
			t.Errorf("Repository(%q) = %q", c.in, got)
		}
	}
}

// IsHost tells a registry named alone from a name with a tag.
func TestIsHost(t *testing.T) {
	for in, want := range map[string]bool{
		"127.0.0.1:5000": true, "registry.example.com": true, "localhost": true, "localhost:5000": true,
		"coredns": false, "coredns:1": false, "r.example/x": false, "localhost:5000/x": false,
		"my.app:1.0": false, "r.example@sha256:aa": false, "localhost:latest": false,
	} {
		if got := reference.IsHost(in); got != want {
			t.Errorf("IsHost(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestNames(t *testing.T) {
	for in, want := range map[string]bool{
		"coredns": false, "team/coredns": false, "localhost/x": true, "localhost:5000/x": true,
		"r.example/x": true, "r.example": false, "10.0.0.1:5000/x:1": true,
	} {
		if got := reference.HasRegistry(in); got != want {
			t.Errorf("HasRegistry(%q) = %v", in, got)
		}
	}
	for in, want := range map[string]string{
		"coredns": "coredns:latest", "coredns:1": "coredns:1", "x@sha256:a": "x@sha256:a",
		"localhost:5000/x": "localhost:5000/x:latest",
	} {
		if got := reference.WithDefaultTag(in); got != want {
			t.Errorf("WithDefaultTag(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{
		"coredns:1": "docker.io/library/coredns:1", "team/coredns": "docker.io/team/coredns",
	} {
		if got := reference.DockerHub(in); got != want {
			t.Errorf("DockerHub(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{
		"nginx:1.27": "index.docker.io", "localhost:5000/x": "localhost:5000", "r.example/x:1": "r.example", "Bad Host/x": "Bad Host",
		"127.0.0.1:5999": "127.0.0.1:5999", "registry.example.com": "registry.example.com",
	} {
		if got := reference.Registry(in); got != want {
			t.Errorf("Registry(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{
		"r.example/a": "latest", "r.example/a:1": "1", "r.example/a@sha256:" + strings.Repeat("0", 64): "", "Bad Ref": "",
	} {
		if got := reference.Tag(in); got != want {
			t.Errorf("Tag(%q) = %q, want %q", in, got, want)
		}
	}
	if got := reference.Name("nginx:1.27"); got != "index.docker.io/library/nginx" {
		t.Errorf("Name = %q", got)
	}
	if got := reference.Name("Not A Ref:1"); got != "Not A Ref" {
		t.Errorf("Name of a bad reference = %q", got)
	}
	if _, err := reference.Path("Not A Ref"); err == nil {
		t.Error("Path of a bad reference: no error")
	}
}

func ExamplePath() {
	p, _ := reference.Path("registry.k8s.io/coredns/coredns:v1.11.1")
	fmt.Println(p)
	p, _ = reference.Path("nginx:1.27")
	fmt.Println(p)
	// Output:
	// coredns/coredns
	// library/nginx
}

func TestAttachment(t *testing.T) {
	hex := strings.Repeat("ab", 32)
	for in, want := range map[string]bool{
		"sha256-" + hex: true, "sha256-" + hex + ".sig": true, "x:sha256-" + hex + ".att": true,
		"r.example:5000/x:sha256-" + hex + ".sbom": true, "sha256-abc.sig": false, "x:1": false, "sha256-" + hex + "x": false,
	} {
		got, ok := reference.Attachment(in)
		if ok != want || (ok && got != hex) {
			t.Errorf("Attachment(%q) = %q, %v; want %v", in, got, ok, want)
		}
	}
}

func ExampleClosest() {
	store := []string{"coredns:1.11", "metrics-server:0.7", "registry.example.com/addons/coredns:1.12"}
	for _, n := range []string{"coredns:1.1", "metric-server:0.7", "cilium:1"} {
		fmt.Println(n, "->", reference.Closest(n, store))
	}
	// Output:
	// coredns:1.1 -> [coredns:1.11 registry.example.com/addons/coredns:1.12]
	// metric-server:0.7 -> [metrics-server:0.7]
	// cilium:1 -> []
}
