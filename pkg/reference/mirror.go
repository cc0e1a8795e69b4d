package reference

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
)

// ErrBadMirror marks a mirror that is no registry prefix HOST[:PORT][/PATH]:
// a scheme (http://m.example), a port outside 1-65535, a path with "."
// or ".." components, a tag or digest.
var ErrBadMirror = errors.New("invalid mirror")

// CheckMirror checks a registry prefix HOST[:PORT][/PATH] (a trailing
// "/" allowed), the one rule for every mirror addonpkg takes (relocation,
// copy --with-images): a scheme, a port outside 1-65535, a "." or ".."
// path component, a tag or digest are refused (ErrBadMirror).
func CheckMirror(mirror string) error {
	m := strings.TrimSuffix(mirror, "/")
	if m == "" {
		return fmt.Errorf("%w: empty", ErrBadMirror)
	}
	bad := func(why string) error {
		return fmt.Errorf("%w: %q: %s (want HOST[:PORT][/PATH])", ErrBadMirror, mirror, why)
	}
	if strings.Contains(m, "://") {
		return bad("no scheme: a mirror is a registry prefix, not a URL")
	}
	if strings.ContainsAny(m, "@") {
		return bad("no digest")
	}
	hostport, path, _ := strings.Cut(m, "/")
	if host, port, ok := strings.Cut(hostport, ":"); ok && !strings.HasPrefix(hostport, "[") {
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 || strconv.Itoa(n) != port {
			return bad(fmt.Sprintf("port %q is not 1-65535", port))
		}
		if host == "" {
			return bad("no host")
		}
	}
	if path != "" {
		for _, c := range strings.Split(path, "/") {
			if c == "" || c == "." || c == ".." {
				return bad(fmt.Sprintf("path component %q", c))
			}
		}
	}
	if _, err := name.NewRepository(m+"/x", name.StrictValidation); err != nil {
		return bad(err.Error())
	}
	return nil
}
