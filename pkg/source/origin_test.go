package source

import (
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/addonpkg/addonpkg/pkg/reference"
)

// recordedFor is the SOURCE an inventory records for s, as Unpack
// records it (recorded): the pinned form of what was read (the tree's
// pin with its checksum or commit, an image's digest), with a local
// path made absolute, else the absolute path.
func recordedFor(t *testing.T, s string) string {
	t.Helper()
	ref, err := Parse(s)
	if err != nil {
		t.Fatalf("Parse(%q): %v", s, err)
	}
	var pinned string
	switch ref.Kind {
	case KindHTTP:
		ref.Checksum = "sha256:" + strings.Repeat("c", 64)
		pinned = ref.String()
	case KindGit:
		ref.GitRef = strings.Repeat("d", 40)
		pinned = ref.String()
	default:
		a := &Artifact{Ref: ref, Digest: v1.Hash{Algorithm: "sha256", Hex: strings.Repeat("e", 64)}}
		pinned = a.Pinned()
	}
	return recorded(ref, pinned, Options{})
}

// reference.Origin reads what this package writes: the SOURCE a user
// gives, the same SOURCE at another version, and the form an inventory
// records of either have one origin; two add-ons beside each other
// (another subdirectory, another repository) have two. (Origin lives in
// pkg/reference because pkg/apply, which compares origins, must not
// compile this package: this test keeps the two readings of the syntax
// together.)
func TestOriginReadsRecordedSources(t *testing.T) {
	for _, c := range []struct{ source, other, beside string }{
		{"registry.example.com/addons/coredns:1.11", "registry.example.com/addons/coredns:1.12", "registry.example.com/addons/metrics-server:1.12"},
		{"oci://registry.example.com/addons/coredns:1.11", "registry.example.com/addons/coredns@sha256:" + strings.Repeat("f", 64), "mirror.example.com/addons/coredns:1.11"},
		{"docker://nginx:1.27", "docker.io/library/nginx:1.28", "docker://httpd:2"},
		{"coredns:1.11", "coredns:1.12", "metrics-server:1.12"},
		{"oci:/srv/layout:1.11", "oci:/srv/layout:1.12", "oci:/srv/other:1.11"},
		{"oci-archive:/srv/coredns.tar:1.11", "oci-archive:/srv/coredns.tar", "oci-archive:/srv/dns.tar"},
		{"docker-archive:/srv/images.tar:coredns:1.11", "docker-archive:/srv/images.tar:coredns:1.12", "docker-archive:/srv/images.tar:metrics:1.11"},
		{"/srv/addons/coredns", "/srv/addons/coredns/", "/srv/addons/dns"},
		{"file:///srv/addons/coredns", "/srv/addons/x/../coredns", "/srv/other/coredns"},
		{"https://example.com/addons.tar.gz//coredns", "https://example.com/addons.tar.gz//coredns?checksum=sha256:" + strings.Repeat("a", 64), "https://example.com/addons.tar.gz//dns"},
		{"https://user:s3cret@example.com/coredns.yaml", "https://example.com/coredns.yaml", "https://example.com/dns.yaml"},
		{"git+https://github.com/org/addons//coredns?ref=v1.11", "git+https://github.com/org/addons.git//coredns?ref=v1.12", "git+https://github.com/org/addons//dns?ref=v1.11"},
		{"git+ssh://git@github.com/org/addons?ref=main", "git+ssh://git@github.com/org/addons", "git+ssh://git@github.com/org/other"},
		{"git+file:///srv/repos/addons//coredns", "git+file:///srv/repos/addons//coredns?ref=main", "git+file:///srv/repos/addons"},
	} {
		want := reference.Origin(recordedFor(t, c.source))
		for _, s := range []string{c.source, c.other, recordedFor(t, c.other)} {
			if got := reference.Origin(s); got != want {
				t.Errorf("Origin(%q) = %q; of %q, recorded as %q: %q", s, got, c.source, recordedFor(t, c.source), want)
			}
		}
		if got := reference.Origin(recordedFor(t, c.beside)); got == want {
			t.Errorf("Origin(%q) = Origin(%q) = %q", recordedFor(t, c.beside), recordedFor(t, c.source), got)
		}
		if strings.Contains(want, "s3cret") {
			t.Errorf("Origin of %q: %q holds a credential", c.source, want)
		}
	}
}
