package reference_test

import (
	"strings"
	"testing"

	"github.com/addonpkg/addonpkg/pkg/reference"
)

// Origin of every form an inventory records, and of the spellings that
// parse to them: versions (tags, digests, refs, checksums) dropped, one
// place spelt several ways one origin.
func TestOrigin(t *testing.T) {
	digest := "@sha256:" + strings.Repeat("a", 64)
	for _, c := range []struct{ in, want string }{
		{"", ""},
		// Registries: the canonical repository, however written.
		{"registry.example.com/addons/coredns" + digest, "registry.example.com/addons/coredns"},
		{"registry.example.com/addons/coredns:1.12", "registry.example.com/addons/coredns"},
		{"oci://registry.example.com/addons/coredns:1.12", "registry.example.com/addons/coredns"},
		{"docker://registry.example.com/addons/coredns" + digest, "registry.example.com/addons/coredns"},
		{"localhost:5000/coredns:1" + digest, "localhost:5000/coredns"},
		{"index.docker.io/library/nginx" + digest, "index.docker.io/library/nginx"},
		{"docker.io/nginx:1.27", "index.docker.io/library/nginx"},
		{"docker://nginx" + digest, "index.docker.io/library/nginx"},
		{"Registry.Example.com/addons/coredns:1", "registry.example.com/addons/coredns"},
		// A mirror is another origin.
		{"mirror.internal:5000/registry.example.com/addons/coredns" + digest, "mirror.internal:5000/registry.example.com/addons/coredns"},
		// The local store: the name as written, not Docker Hub's.
		{"coredns" + digest, "coredns"},
		{"coredns:1.12", "coredns"},
		{"team/coredns:1.12", "team/coredns"},
		// Layouts and archives: the kind and the path.
		{"oci:/srv/layout" + digest, "oci:/srv/layout"},
		{"oci:/srv/layout:1.12", "oci:/srv/layout"},
		{"oci:///srv/layout" + digest, "oci:/srv/layout"},
		{"oci:/srv/layout/" + digest, "oci:/srv/layout"},
		{"oci-archive:/srv/coredns.tar" + digest, "oci-archive:/srv/coredns.tar"},
		{"oci-archive:/srv/coredns.tar:1.12", "oci-archive:/srv/coredns.tar"},
		{"docker-archive:/srv/images.tar", "docker-archive:/srv/images.tar"},
		{"docker-archive:/srv/images.tar:registry.example.com/coredns:1.12", "docker-archive:/srv/images.tar:registry.example.com/coredns"},
		// Folders and files: the path, cleaned.
		{"/work/addons/coredns", "/work/addons/coredns"},
		{"/work/addons/coredns/", "/work/addons/coredns"},
		{"/work/addons/./x/../coredns", "/work/addons/coredns"},
		{"/work/addons/coredns.yaml", "/work/addons/coredns.yaml"},
		{"./coredns/", "./coredns"},
		{"../addons/./coredns", "../addons/coredns"},
		{"file:///work/addons/coredns/", "/work/addons/coredns"},
		// Downloads: scheme, host and path (which holds the version);
		// no query, no fragment.
		{"https://github.com/org/proj/releases/download/v1.2.0/install.yaml?checksum=sha256:" + strings.Repeat("b", 64), "https://github.com/org/proj/releases/download/v1.2.0/install.yaml"},
		{"https://example.com/addons/coredns.tar.gz//deploy?checksum=sha256:" + strings.Repeat("b", 64), "https://example.com/addons/coredns.tar.gz//deploy"},
		{"https://example.com/addons/coredns.tar.gz//deploy/", "https://example.com/addons/coredns.tar.gz//deploy"},
		{"HTTPS://Example.COM:443/a/x.yaml", "https://example.com/a/x.yaml"},
		{"http://127.0.0.1:8080/a/x.yaml#frag", "http://127.0.0.1:8080/a/x.yaml"},
		{"https://example.com/a/../b/x.yaml", "https://example.com/b/x.yaml"},
		{"https://example.com", "https://example.com"},
		// The query, as a digest (a token is not printed): its order and
		// a checksum do not change it.
		{"https://example.com/get?addon=coredns&ref=main", "https://example.com/get?query-sha256:e70b4dd705e3533a"},
		{"https://example.com/get?ref=main&addon=coredns&checksum=sha256:" + strings.Repeat("b", 64), "https://example.com/get?query-sha256:e70b4dd705e3533a"},
		// Git: the repository without its ref, with its subdirectory.
		{"git+https://github.com/org/addons?ref=" + strings.Repeat("c", 40), "git+https://github.com/org/addons"},
		{"git+https://github.com/org/addons.git//coredns?ref=v1.2.0", "git+https://github.com/org/addons//coredns"},
		{"git+https://github.com/org/addons/", "git+https://github.com/org/addons"},
		{"git+ssh://git@github.com/org/addons.git//coredns?ref=main", "git+ssh://github.com/org/addons//coredns"},
		{"git+ssh://git@github.com:22/org/addons", "git+ssh://github.com/org/addons"},
		{"git+file:///srv/repos/addons//coredns?ref=main", "git+file:///srv/repos/addons//coredns"},
	} {
		if got := reference.Origin(c.in); got != c.want {
			t.Errorf("Origin(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// What tells two add-ons apart stays in their origins: another
// subdirectory of one repository or archive, another path of one host,
// another kind of source at the same place.
func TestOriginsThatDiffer(t *testing.T) {
	for _, c := range [][2]string{
		{"git+https://github.com/org/addons//coredns", "git+https://github.com/org/addons//metrics-server"},
		{"git+https://github.com/org/addons", "https://github.com/org/addons"},
		{"https://example.com/a/x.yaml", "http://example.com/a/x.yaml"},
		{"https://example.com/a/x.yaml", "https://example.com/b/x.yaml"},
		{"registry.example.com/addons/coredns", "mirror.internal/addons/coredns"},
		{"coredns:1", "docker.io/coredns:1"},
		{"oci:/srv/coredns", "/srv/coredns"},
		{"/work/one/x", "/work/two/x"},
		{"docker-archive:/srv/i.tar:a:1", "docker-archive:/srv/i.tar:b:1"},
		// A relative path is no store name of the same spelling.
		{"./coredns", "coredns:1"},
		{"./team/coredns/", "team/coredns:1"},
		{"file://team/coredns", "team/coredns"},
		// A server may pick the add-on by the query.
		{"https://example.com/get?addon=coredns", "https://example.com/get?addon=metrics-server"},
		{"https://example.com/get?addon=coredns", "https://example.com/get"},
	} {
		if a, b := reference.Origin(c[0]), reference.Origin(c[1]); a == b {
			t.Errorf("Origin(%q) and Origin(%q) are both %q", c[0], c[1], a)
		}
	}
}

// Hostile and careless SOURCEs: credentials never reach an origin (it
// is printed), and ".." cannot make one place look like another's
// prefix or escape the root.
func TestOriginHostile(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"https://user:s3cret@example.com/a/x.yaml", "https://example.com/a/x.yaml"},
		{"https://ghp_token@example.com/a/x.yaml?token=s3cret", "https://example.com/a/x.yaml?query-sha256:a67312e03b928e85"},
		{"https://user:p@ss@example.com/a/x.yaml", "https://example.com/a/x.yaml"},
		{"git+https://x-access-token:s3cret@github.com/org/addons?ref=main", "git+https://github.com/org/addons"},
		{"git+ssh://user:s3cret@github.com/org/addons", "git+ssh://github.com/org/addons"},
		{"user:s3cret@registry.example.com/addons/coredns" + "@sha256:" + strings.Repeat("a", 64), "registry.example.com/addons/coredns"},
		{"oci://user:s3cret@registry.example.com/addons/coredns:1", "registry.example.com/addons/coredns"},
		{"/../../etc/passwd", "/etc/passwd"},
		{"/work/one/../../work/two/x", "/work/two/x"},
		{"oci:/srv/../../layout" + "@sha256:" + strings.Repeat("a", 64), "oci:/layout"},
		{"https://example.com/../../x.yaml", "https://example.com/x.yaml"},
		{"https://example.com/a.tar.gz//../../b", "https://example.com/a.tar.gz//b"},
		{"git+https://github.com/org/addons//../../other", "git+https://github.com/org/addons//other"},
		{"https://example.com///", "https://example.com"},
	} {
		got := reference.Origin(c.in)
		if got != c.want {
			t.Errorf("Origin(%q) = %q, want %q", c.in, got, c.want)
		}
		if strings.Contains(got, "s3cret") || strings.Contains(got, "token") {
			t.Errorf("Origin(%q) = %q: a credential", c.in, got)
		}
	}
}

// SplitPath cuts a layout's tag or digest, and keeps colons that are not
// one.
func TestSplitPath(t *testing.T) {
	digest := "sha256:" + strings.Repeat("a", 64)
	for _, c := range []struct{ in, path, name string }{
		{"/srv/layout", "/srv/layout", ""},
		{"/srv/layout:1.12", "/srv/layout", "1.12"},
		{"/srv/layout@" + digest, "/srv/layout", digest},
		{"C:/x", "C:/x", ""},
		{"a::", "a::", ""},
	} {
		if p, n := reference.SplitPath(c.in); p != c.path || n != c.name {
			t.Errorf("SplitPath(%q) = %q, %q; want %q, %q", c.in, p, n, c.path, c.name)
		}
	}
}

// The origins that name a place relative to a working directory.
func TestIsRelativeOrigin(t *testing.T) {
	for s, want := range map[string]bool{
		"./coredns":                           true,
		"oci:layout@sha256:" + hex64:          true,
		"oci-archive:set/addons.tar:1":        true,
		"docker-archive:images.tar:coredns:1": true,
		"/srv/coredns":                        false,
		"oci:/srv/layout@sha256:" + hex64:     false,
		"coredns:1":                           false,
		"registry.example.com/addons/coredns": false,
		"https://example.com/x.yaml":          false,
		"git+https://github.com/org/addons":   false,
	} {
		if got := reference.IsRelativeOrigin(reference.Origin(s)); got != want {
			t.Errorf("IsRelativeOrigin(Origin(%q) = %q) = %v, want %v", s, reference.Origin(s), got, want)
		}
	}
}

var hex64 = strings.Repeat("a", 64)
