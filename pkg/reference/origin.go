package reference

import (
	"crypto/sha256"
	"encoding/hex"
	"net/url"
	"path"
	"strings"
)

// Origin is where the add-on that a SOURCE names comes from, without its
// version: what two versions of one add-on share and two add-ons that
// happen to have one name do not. It reads the SOURCE an inventory
// records (apply.Addon.Source: a pinned form, or a local path made
// absolute) and the forms that parse to them:
//
//   - a registry, REGISTRY/REPO[:TAG|@DIGEST] with or without oci:// or
//     docker://: the canonical repository (nginx is
//     index.docker.io/library/nginx), no tag, no digest;
//   - a name in the local store, NAME[:TAG|@DIGEST]: NAME, as written;
//   - oci:DIR, oci-archive:FILE[:TAG|@DIGEST]: the kind and the path,
//     cleaned; docker-archive:FILE[:NAME]: the path and NAME's
//     repository, which picks one image of several;
//   - a folder or file, /PATH or file://PATH: the path, cleaned (one
//     given relative, ./PATH, keeps its "./": it is no store name);
//   - a download, https://HOST/PATH[//SUBDIR][?QUERY]: scheme, host and
//     path, and the subdirectory. The path is kept whole, though it
//     usually holds the version (.../releases/download/v1.2.0/x.yaml):
//     nothing tells a version from a name in a URL's path, and taking
//     less (the host alone) would make every add-on on one forge one
//     origin. The query, which may pick the add-on, is kept as a digest
//     of its parameters but the checksum (a signed URL's token is not
//     printed); the fragment is dropped;
//   - a git repository, git+SCHEME://HOST/PATH[//SUBDIR][?ref=REF]: the
//     repository without its ref, a trailing ".git" dropped (forges serve
//     a repository under both names), and the subdirectory, which picks
//     one add-on of several in one repository.
//
// User information in a URL (a token, user:password@) is never part of
// an origin, so an origin may be printed. Hosts and schemes are lower
// case and a URL's default port is dropped; paths are cleaned (a
// trailing "/", "." and ".." components), so spellings of one place
// compare equal. An empty SOURCE has no origin: "".
func Origin(s string) string {
	switch {
	case s == "":
		return ""
	case strings.HasPrefix(s, "git+"):
		return "git+" + urlOrigin(strings.TrimPrefix(s, "git+"), true)
	case strings.HasPrefix(s, "oci:///"): // a layout at an absolute path, as a file URL writes it
		return layoutOrigin("oci", strings.TrimPrefix(s, "oci:"))
	case strings.HasPrefix(s, "oci://"), strings.HasPrefix(s, "docker://"):
		_, ref, _ := strings.Cut(s, "://")
		return referenceOrigin(ref, true)
	case strings.HasPrefix(s, "file://"):
		return pathOrigin(strings.TrimPrefix(s, "file://"))
	case strings.Contains(s, "://"):
		return urlOrigin(s, false)
	case strings.HasPrefix(s, "oci:"), strings.HasPrefix(s, "oci-archive:"):
		kind, rest, _ := strings.Cut(s, ":")
		return layoutOrigin(kind, rest)
	case strings.HasPrefix(s, "docker-archive:"):
		// The path ends at the first colon, as docker-archive: is parsed.
		p, n, _ := strings.Cut(strings.TrimPrefix(s, "docker-archive:"), ":")
		o := "docker-archive:" + path.Clean(p)
		if n != "" {
			o += ":" + Repository(n)
		}
		return o
	case strings.HasPrefix(s, "/"), strings.HasPrefix(s, "."):
		return pathOrigin(s)
	}
	return referenceOrigin(s, false)
}

// pathOrigin is a folder's or file's path, cleaned. A relative one keeps
// a leading "./" ("./coredns", not "coredns"), so that it never reads as
// the local store's name of the same spelling (a store name never starts
// with a dot).
func pathOrigin(p string) string {
	c := path.Clean(p)
	if path.IsAbs(c) || strings.HasPrefix(c, ".") {
		return c
	}
	return "./" + c
}

// IsRelativeOrigin reports whether origin (an Origin) is a local path
// relative to a working directory: ./DIR, or an OCI layout or archive
// at a relative path. Such an origin names another place read from
// another directory; addonpkg records local sources absolute, so only
// an inventory written by an older addonpkg holds one.
func IsRelativeOrigin(origin string) bool {
	for _, kind := range []string{"oci:", "oci-archive:", "docker-archive:"} {
		if rest, ok := strings.CutPrefix(origin, kind); ok {
			return !path.IsAbs(rest)
		}
	}
	return strings.HasPrefix(origin, "./") || origin == "."
}

// referenceOrigin is the canonical repository of a registry reference
// (always, when explicit: oci:// or docker://), else a store name's as
// written. A first component with an "@" before the first "/" is user
// information (user:token@registry/repo), not a digest, and is dropped.
func referenceOrigin(s string, explicit bool) string {
	if i := strings.IndexByte(s, '/'); i > 0 {
		if at := strings.LastIndexByte(s[:i], '@'); at >= 0 {
			s = s[at+1:]
		}
	}
	if explicit || HasRegistry(s) {
		return strings.ToLower(Name(s))
	}
	return Repository(s)
}

// layoutOrigin is kind:PATH of oci:PATH[:TAG|@DIGEST] or
// oci-archive:PATH[:TAG|@DIGEST].
func layoutOrigin(kind, rest string) string {
	p, _ := SplitPath(rest)
	return kind + ":" + path.Clean(p)
}

// urlOrigin is SCHEME://HOST/PATH[//SUBDIR] of a URL: no user
// information or fragment; scheme and host lower case, a default port
// dropped, the path and subdirectory cleaned; for a git repository
// (repo) a trailing ".git" dropped and the query (its ref) too, for a
// download the query's digest (queryOrigin).
func urlOrigin(u string, repo bool) string {
	u, _, _ = strings.Cut(u, "#")
	u, query, _ := strings.Cut(u, "?")
	scheme, rest, _ := strings.Cut(u, "://")
	scheme = strings.ToLower(scheme)
	authority, p := rest, ""
	if i := strings.IndexByte(rest, '/'); i >= 0 {
		authority, p = rest[:i], rest[i:]
	}
	if at := strings.LastIndexByte(authority, '@'); at >= 0 {
		authority = authority[at+1:]
	}
	host := strings.ToLower(authority)
	if port := defaultPorts[scheme]; port != "" {
		host = strings.TrimSuffix(host, ":"+port)
	}
	p, sub, _ := strings.Cut(p, "//")
	if p = path.Clean("/" + p); p == "/" {
		p = ""
	}
	if repo {
		p = strings.TrimSuffix(p, ".git")
	}
	o := scheme + "://" + host + p
	if sub = path.Clean("/" + sub); sub != "/" {
		o += "/" + sub
	}
	if !repo {
		o += queryOrigin(query)
	}
	return o
}

// queryOrigin is what a download's query adds to its origin: a server
// may pick the add-on by it (/get?addon=coredns, /get?addon=metrics), so
// two queries are two origins. It is a digest of the query, its
// parameters sorted and the checksum (a version's pin) left out, not the
// query: a signed URL's token must not be printed. "" for none. A
// token that changes with each URL makes each one another origin: the
// name is then the installer's to give.
func queryOrigin(query string) string {
	if query == "" {
		return ""
	}
	if v, err := url.ParseQuery(query); err == nil {
		v.Del("checksum")
		query = v.Encode()
	}
	if query == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(query))
	return "?query-sha256:" + hex.EncodeToString(sum[:8])
}

// defaultPorts are the ports a URL of a scheme names by naming none.
var defaultPorts = map[string]string{"https": "443", "http": "80", "ssh": "22"}
