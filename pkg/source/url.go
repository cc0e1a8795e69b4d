package source

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"path"
	"regexp"
	"strings"

	"github.com/addonpkg/addonpkg/pkg/safetree"
)

// URL parameters the remote forms understand.
const (
	paramChecksum = "checksum"
	paramRef      = "ref"
)

var checksumRE = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)

// parseHTTP parses https://HOST/PATH[//SUBDIR][?checksum=sha256:HEX].
// Other query parameters stay in the URL that is fetched.
func parseHTTP(s string) (Ref, error) {
	base, sub, query, err := splitRemote(s)
	if err != nil {
		return Ref{}, err
	}
	ref := Ref{Kind: KindHTTP, Subdir: sub}
	var keep []string
	for _, p := range splitQuery(query) {
		k, v, err := queryParam(s, p)
		if err != nil {
			return Ref{}, err
		}
		if k != paramChecksum {
			keep = append(keep, p)
			continue
		}
		if ref.Checksum != "" {
			return Ref{}, fmt.Errorf("%w: %q: more than one checksum", ErrBadSource, redactURL(s))
		}
		if ref.Checksum, err = parseChecksum(s, v); err != nil {
			return Ref{}, err
		}
	}
	ref.URL = base
	if len(keep) > 0 {
		ref.URL += "?" + strings.Join(keep, "&")
	}
	if err := checkURL(s, ref.URL); err != nil {
		return Ref{}, err
	}
	return ref, nil
}

// parseGit parses git+https://, git+http://, git+ssh:// and git+file://
// URLs with an optional //SUBDIR and ?ref=BRANCH|TAG|COMMIT.
func parseGit(s string) (Ref, error) {
	rest := strings.TrimPrefix(s, "git+")
	switch {
	case strings.HasPrefix(rest, "https://"), strings.HasPrefix(rest, "http://"),
		strings.HasPrefix(rest, "ssh://"), strings.HasPrefix(rest, "file://"):
	default:
		return Ref{}, fmt.Errorf("%w: %q: want git+https://, git+http://, git+ssh:// or git+file://", ErrBadSource, redactURL(s))
	}
	base, sub, query, err := splitRemote(rest)
	if err != nil {
		return Ref{}, err
	}
	ref := Ref{Kind: KindGit, URL: base, Subdir: sub}
	for _, p := range splitQuery(query) {
		k, v, err := queryParam(s, p)
		if err != nil {
			return Ref{}, err
		}
		if k != paramRef {
			return Ref{}, fmt.Errorf("%w: %q: unknown parameter %q (a git source takes only ?ref=)", ErrBadSource, redactURL(s), k)
		}
		if ref.GitRef != "" {
			return Ref{}, fmt.Errorf("%w: %q: more than one ref", ErrBadSource, redactURL(s))
		}
		if v == "" || strings.HasPrefix(v, "-") || strings.ContainsAny(v, " \t~^:?*[\\") || strings.Contains(v, "..") {
			return Ref{}, fmt.Errorf("%w: %q: invalid ref %q", ErrBadSource, redactURL(s), v)
		}
		ref.GitRef = v
	}
	if strings.HasPrefix(base, "file://") {
		if strings.TrimPrefix(base, "file://") == "" {
			return Ref{}, fmt.Errorf("%w: %q names no repository", ErrBadSource, s)
		}
		return ref, nil
	}
	if err := checkURL(s, base); err != nil {
		return Ref{}, err
	}
	return ref, nil
}

// splitRemote splits SCHEME://HOST/PATH[//SUBDIR][?QUERY].
func splitRemote(s string) (base, sub, query string, err error) {
	base = s
	if i := strings.IndexByte(base, '?'); i >= 0 {
		base, query = base[:i], base[i+1:]
	}
	start := strings.Index(base, "://") + 3
	if i := strings.Index(base[start:], "//"); i >= 0 {
		base, sub = base[:start+i], base[start+i+2:]
		if sub, err = cleanSubdir(s, sub); err != nil {
			return "", "", "", err
		}
	}
	return base, sub, query, nil
}

// cleanSubdir checks the //SUBDIR of a remote source: relative, no "..".
func cleanSubdir(s, sub string) (string, error) {
	sub = strings.Trim(sub, "/")
	if sub == "" {
		return "", nil
	}
	sub, err := safetree.CleanName(sub)
	if err != nil {
		return "", fmt.Errorf("%w: %q: the subdirectory: %w", ErrBadSource, redactURL(s), err)
	}
	if sub == "." {
		return "", nil
	}
	return sub, nil
}

func splitQuery(q string) []string {
	var out []string
	for _, p := range strings.Split(q, "&") {
		if p != "" {
			out = append(out, p)
		}
	}
	return out
}

func queryParam(s, p string) (string, string, error) {
	k, v, _ := strings.Cut(p, "=")
	k, err1 := url.QueryUnescape(k)
	v, err2 := url.QueryUnescape(v)
	if err1 != nil || err2 != nil {
		return "", "", fmt.Errorf("%w: %q: bad query parameter %q", ErrBadSource, redactURL(s), p)
	}
	return k, v, nil
}

func parseChecksum(s, v string) (string, error) {
	c := strings.ToLower(v)
	if !checksumRE.MatchString(c) {
		return "", fmt.Errorf("%w: %q: checksum %q: want sha256: and 64 hex digits", ErrBadSource, redactURL(s), v)
	}
	return c, nil
}

// checkURL checks that u parses and names a host, and has no #fragment
// (which would never reach the server).
func checkURL(s, u string) error {
	pu, err := url.Parse(u)
	if err != nil {
		return fmt.Errorf("%w: %q: %w", ErrBadSource, redactURL(s), unwrapURLError(err))
	}
	if pu.Host == "" {
		return fmt.Errorf("%w: %q names no host", ErrBadSource, redactURL(s))
	}
	if pu.Fragment != "" {
		return fmt.Errorf("%w: %q: a #fragment means nothing here", ErrBadSource, redactURL(s))
	}
	return nil
}

// unwrapURLError drops net/url's and net/http's quoting of the URL (the
// caller names the source itself, credentials removed).
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// redactURL removes credentials from a URL for messages and records:
// http(s) user info goes entirely (a token is often the user name), an ssh
// user name stays (it is not a secret, and the URL needs it).
func redactURL(s string) string {
	i := strings.Index(s, "://")
	if i < 0 {
		return s
	}
	rest := s[i+3:]
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	at := strings.LastIndexByte(rest[:end], '@')
	if at < 0 {
		return s
	}
	scheme := strings.TrimPrefix(s[:i], "git+")
	user := ""
	if scheme == "ssh" {
		user, _, _ = strings.Cut(rest[:at], ":")
		user += "@"
	}
	return s[:i+3] + user + rest[at+1:]
}

// isLoopback reports whether host (no port) is this machine.
func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// plainHTTPAllowed says whether http:// may be used for u.
func plainHTTPAllowed(u *url.URL, opts Options) bool {
	return u.Scheme != "http" || opts.Registry.PlainHTTP || isLoopback(u.Hostname())
}

// remoteName is the default add-on name of a remote source: the last
// element of the subdirectory, else of the URL path, without extensions
// (.git, .yaml, .tar.gz, ...).
func remoteName(ref Ref) string {
	var p string
	if ref.Subdir != "" {
		p = ref.Subdir
	} else {
		u := ref.URL
		if i := strings.IndexAny(u, "?#"); i >= 0 {
			u = u[:i]
		}
		if pu, err := url.Parse(u); err == nil {
			p = pu.Path
		} else {
			p = u
		}
	}
	name := path.Base(strings.TrimRight(p, "/"))
	for _, ext := range []string{".git", ".tar.gz", ".tgz", ".tar.xz", ".txz", ".tar.bz2", ".tbz2", ".tbz", ".tar.zst", ".tzst", ".tar", ".zip", ".yaml", ".yml", ".json"} {
		if strings.HasSuffix(strings.ToLower(name), ext) && len(name) > len(ext) {
			name = name[:len(name)-len(ext)]
			break
		}
	}
	if name == "" || name == "." || name == "/" {
		return "addon"
	}
	return name
}
