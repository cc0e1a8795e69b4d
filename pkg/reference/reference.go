// Package reference is the one place addonpkg takes a reference apart:
// REGISTRY/REPO[:TAG|@DIGEST] for a registry, NAME[:TAG|@DIGEST] for the
// local store, PATH[:TAG|@DIGEST] inside an OCI layout (SplitPath). What
// needs the registry's view (its host, its canonical repository, the
// path under a mirror) is go-containerregistry's name package; what must
// keep a store name as it was written (no index.docker.io, no library/)
// splits it by the same grammar without normalizing it. Origin takes a
// recorded SOURCE of any kind apart to where it comes from, its version
// dropped: pkg/apply compares origins, and must not compile pkg/source,
// whose syntax Origin reads (a test there keeps the two together).
package reference

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
)

// DefaultTag is the tag a name without one gets.
const DefaultTag = "latest"

// HasRegistry reports whether the first component of s is a registry
// host (it has a dot or a port, or is localhost), as docker decides: a
// name without one is a local name, not Docker Hub's.
func HasRegistry(s string) bool {
	host, _, ok := strings.Cut(s, "/")
	return ok && (strings.ContainsAny(host, ".:") || host == "localhost")
}

// IsHost reports whether s is a registry host alone (127.0.0.1:5000,
// registry.example.com, localhost:5000), naming no repository: what a
// user writes for a registry where a repository is wanted. A name with a
// tag (coredns:1) is not one, though a host may have a port.
func IsHost(s string) bool {
	host, port, hasPort := strings.Cut(s, ":")
	if strings.ContainsAny(s, "/@") || (hasPort && (port == "" || strings.Trim(port, "0123456789") != "")) {
		return false // a repository, a digest, or a tag (my.app:1.0)
	}
	return strings.Contains(host, ".") || host == "localhost"
}

// attachmentTag is a tag named after a manifest digest: the referrers
// tag schema's sha256-HEX, and cosign's sha256-HEX.sig, .att and .sbom.
var attachmentTag = regexp.MustCompile(`^sha256-([0-9a-f]{64})(\..+)?$`)

// Attachment reports whether tag (a bare tag, or the tag of NAME:TAG)
// names what hangs on another manifest rather than an add-on of its
// own, and gives that manifest's digest hex.
func Attachment(tag string) (hex string, ok bool) {
	if _, v := Split(tag); v != "" {
		tag = strings.TrimPrefix(v, ":")
	}
	m := attachmentTag.FindStringSubmatch(tag)
	if m == nil {
		return "", false
	}
	return m[1], true
}

// Split splits s into its repository and its version: ":TAG" or
// "@DIGEST", with the separator, or "" when s names neither. Only what
// follows the last "/" is looked at, so a registry's :PORT is not a tag.
func Split(s string) (repo, version string) {
	slash := strings.LastIndexByte(s, '/')
	last := s[slash+1:]
	if i := strings.IndexByte(last, '@'); i >= 0 {
		return s[:slash+1+i], last[i:]
	}
	if i := strings.LastIndexByte(last, ':'); i >= 0 {
		return s[:slash+1+i], last[i:]
	}
	return s, ""
}

// Repository drops the :TAG or @DIGEST of s, and keeps the rest as it is
// written (a store name stays a store name).
func Repository(s string) string {
	repo, _ := Split(s)
	return repo
}

// WithDefaultTag gives a name without a tag or digest the DefaultTag.
func WithDefaultTag(s string) string {
	if _, v := Split(s); v == "" {
		return s + ":" + DefaultTag
	}
	return s
}

// Tag is the tag of a registry reference: DefaultTag when none is
// written, "" for a digest or what does not parse.
func Tag(s string) string {
	if _, v := Split(s); strings.HasPrefix(v, "@") {
		return ""
	}
	if t, err := name.NewTag(s); err == nil {
		return t.TagStr()
	}
	return ""
}

// DockerHub is the explicit Docker Hub reference of a short name:
// docker.io/library/NAME for a single path component, docker.io/NAME
// otherwise.
func DockerHub(short string) string {
	if !strings.Contains(Repository(short), "/") {
		return "docker.io/library/" + short
	}
	return "docker.io/" + short
}

// Registry is the registry host of a reference, a repository or a host,
// as go-containerregistry names it (Docker Hub is index.docker.io); the
// first component of what it cannot parse. A host alone (IsHost) is
// itself: 127.0.0.1:5000 is not the tag 5000 of Docker Hub's 127.0.0.1.
func Registry(s string) string {
	if IsHost(s) {
		return s
	}
	if r, err := name.ParseReference(s); err == nil {
		return r.Context().RegistryStr()
	}
	if r, err := name.NewRepository(s); err == nil {
		return r.RegistryStr()
	}
	if i := strings.IndexByte(s, '/'); i > 0 {
		return s[:i]
	}
	return s
}

// Name is the canonical repository of a registry reference, as
// go-containerregistry names it (nginx:1.27 is
// index.docker.io/library/nginx); Repository(s) for what it cannot parse.
func Name(s string) string {
	if r, err := name.ParseReference(s); err == nil {
		return r.Context().Name()
	}
	return Repository(s)
}

// Path is the repository path of an image without its registry host, the
// path it takes under a mirror (registry.k8s.io/coredns/coredns:v1.11.1
// is coredns/coredns, nginx:1.27 is library/nginx).
func Path(image string) (string, error) {
	r, err := name.ParseReference(image)
	if err != nil {
		return "", fmt.Errorf("image %q: %w", image, err)
	}
	return r.Context().RepositoryStr(), nil
}

// tagPattern is the OCI distribution spec's tag grammar.
var tagPattern = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$`)

// IsTag reports whether s is a tag by the OCI distribution spec's
// grammar (a letter, digit or "_", then up to 127 of those, "." and
// "-").
func IsTag(s string) bool { return tagPattern.MatchString(s) }

// SplitPath splits PATH[:TAG|@DIGEST], the path and name of an OCI
// layout or archive (oci:DIR:1.0, oci-archive:FILE@sha256:...), into the
// path and the tag or digest ("" when it names neither). A colon inside
// the path is kept when what follows it is not a tag, so "C:/x" or "a::"
// stay paths.
func SplitPath(s string) (p, name string) {
	if i := strings.LastIndex(s, "@"); i >= 0 && strings.HasPrefix(s[i+1:], "sha256:") {
		return s[:i], s[i+1:]
	}
	if i := strings.LastIndex(s, ":"); i >= 0 && IsTag(s[i+1:]) {
		return s[:i], s[i+1:]
	}
	return s, ""
}
