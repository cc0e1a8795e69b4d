package source

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"time"

	"github.com/addonpkg/addonpkg/pkg/safetree"
)

// A Location is one kind of place add-ons live. The core kinds are one
// file of this package each (store.go, registry.go, layout.go,
// dockerarchive.go, dir.go) and always there. The fetching kinds are
// opt-in packages (pkg/source/git, pkg/source/https) that a caller lists in
// Options.Locations, as it lists any kind of its own: there is no global
// table, so what a program can open is what its options name, and a
// program that lists no git location compiles no git library.
//
// A Location reads SOURCE strings of its syntax; what it can do with
// them is the further interfaces it has: Opener (an OCI image or index),
// TreeLoader (a plain tree), Writer (a destination).
type Location interface {
	// Kind names the location.
	Kind() Kind
	// Claims reports whether s is written in this kind's own syntax (a
	// prefix such as "oci:" or "git+"). The built-in syntax (Parse) is
	// tried after every claim of Options.Locations.
	Claims(s string) bool
	// Parse parses a SOURCE the kind claimed.
	Parse(s string) (Ref, error)
	// Format writes ref back as a SOURCE that parses to it, credentials
	// removed.
	Format(ref Ref) string
}

// An Opener opens the OCI image or index at a Ref of its kind.
type Opener interface {
	Open(ctx context.Context, ref Ref, opts Options) (*Artifact, error)
}

// A TreeLoader reads the plain tree at a Ref of its kind (a folder, a
// download, a git commit). limits hold their defaults.
type TreeLoader interface {
	LoadTree(ctx context.Context, ref Ref, opts Options, limits safetree.Limits) (*Tree, error)
}

// A Writer writes an opened artifact to a Ref of its kind and returns the
// reference that names what it wrote (with its digest where the kind can
// name one).
type Writer interface {
	Write(ctx context.Context, a *Artifact, dst Ref, opts Options) (string, error)
}

// A Pinner names an artifact of its kind by digest, and the repository
// it was read under (see Artifact.Pinned and Artifact.Repository).
type Pinner interface {
	Pinned(a *Artifact) string
	Repository(a *Artifact) string
}

// A WorkTreeReader tells where a local folder came from: the remote,
// and the last commit that changed it and its time, when tree (what the
// build packages of path) is what that commit holds (ReadTree). The git
// location is one; without it a local build records no revision.
type WorkTreeReader interface {
	ReadWorkTree(path string, tree fs.FS) (*WorkTree, error)
}

// WorkTree is where a local folder came from (WorkTreeReader).
type WorkTree struct {
	URL    string
	Commit string
	Time   time.Time
}

// ErrKindNotEnabled marks a SOURCE of a kind the options list no
// location for: a git or https source when Options.Locations lacks
// pkg/source/git's or pkg/source/https's Location.
var ErrKindNotEnabled = errors.New("source kind not enabled")

// core is the kinds every program has, in the order their claims are
// tried.
var core = [...]Location{
	layoutLocation{}, archiveLocation{}, dockerArchiveLocation{},
	registryLocation{}, dirLocation{}, storeLocation{},
}

// location returns the location of kind k: one of opts.Locations, else
// a core kind, else nil.
func (o Options) location(k Kind) Location {
	for _, l := range o.Locations {
		if l.Kind() == k {
			return l
		}
	}
	for _, l := range core {
		if l.Kind() == k {
			return l
		}
	}
	return nil
}

// notEnabled is the error of a Ref whose kind has no location in opts.
func notEnabled(ref Ref) error {
	switch ref.Kind {
	case KindGit:
		return fmt.Errorf("%s: %w: git sources need pkg/source/git's location in source.Options.Locations", ref, ErrKindNotEnabled)
	case KindHTTP:
		return fmt.Errorf("%s: %w: https sources need pkg/source/https's location in source.Options.Locations", ref, ErrKindNotEnabled)
	}
	return fmt.Errorf("%s: %w: no location of kind %q in source.Options.Locations", ref, ErrKindNotEnabled, ref.Kind)
}

// Abs is r with the path of a local source (a folder or file, oci:,
// oci-archive:, docker-archive:) made absolute and clean, so that its
// String names the same thing from any directory and at any later time:
// the form to record where an add-on came from (an inventory's source).
// Other kinds are returned as they are.
func (r Ref) Abs() (Ref, error) {
	switch r.Kind {
	case KindDir, KindLayout, KindArchive, KindDockerArchive:
	default:
		return r, nil
	}
	p, err := filepath.Abs(r.Path)
	if err != nil {
		return r, fmt.Errorf("%s: %w", r, err)
	}
	r.Path, r.Bare = p, false
	return r, nil
}

// IsTree reports whether sources of kind k are plain trees (LoadTree),
// not OCI images (Open): folders, https downloads and git commits.
func IsTree(k Kind) bool {
	switch k {
	case KindDir, KindHTTP, KindGit:
		return true
	}
	return false
}

// isTree is IsTree for the kinds of opts, their own included.
func (o Options) isTree(k Kind) bool {
	if _, ok := o.location(k).(TreeLoader); ok {
		return true
	}
	return IsTree(k)
}

func (r Ref) String() string {
	switch r.Kind {
	case KindHTTP:
		return remoteString("", r.URL, r.Subdir, paramChecksum, r.Checksum)
	case KindGit:
		return remoteString("git+", r.URL, r.Subdir, paramRef, r.GitRef)
	}
	for _, l := range core {
		if l.Kind() == r.Kind {
			return l.Format(r)
		}
	}
	if r.Name != "" {
		return string(r.Kind) + ":" + r.Name
	}
	return r.Name
}

// Parse classifies a SOURCE string by its text alone: it reads no file
// and no network, so one string means the same in every directory. The
// rule, in order (README's SOURCE table):
//
//   - a prefix names the kind: oci:, oci-archive:, docker-archive:,
//     docker:// and oci:// (a registry), https:// and http:// (a
//     download), git+ (a git repository), file:// (a local path); a URL
//     of any other scheme (ftp://, s3://) is refused (ErrBadSource);
//   - ./x, ../x, /x, . and .. are local paths;
//   - a name ending in .yaml, .yml or .json, with no :TAG or @DIGEST, is
//     a local manifest file (coredns.yaml, dir/coredns.yaml);
//   - REGISTRY/REPO[:TAG|@DIGEST], whose first component is a host (it
//     has a dot or a port, or is localhost), is a registry reference;
//   - any other reference, NAME[:TAG|@DIGEST], is a name in the local
//     store;
//   - what is no reference at all (Upper_Case, a b) is a local path,
//     whose absence is reported when it is read.
//
// Kinds of a program's own are parsed by ParseIn.
func Parse(s string) (Ref, error) {
	return ParseIn(s, nil)
}

// ParseIn is Parse with the claims of locations tried first (a program's
// own kinds, as listed in Options.Locations).
func ParseIn(s string, locations []Location) (Ref, error) {
	if s == "" {
		return Ref{}, fmt.Errorf("%w: empty", ErrBadSource)
	}
	if strings.ContainsAny(s, "\x00\n") {
		return Ref{}, fmt.Errorf("%w: %q has control characters", ErrBadSource, s)
	}
	// kubectl's "-f -" habit: without this, "-" would be a store name.
	// Only build reads a stream from stdin (ReadTree).
	if s == "-" {
		return Ref{}, fmt.Errorf("%w: \"-\": standard input is not a source; give a file's path, or build the stream first (addonpkg build - -t NAME:TAG)", ErrBadSource)
	}
	for _, l := range locations {
		if l.Claims(s) {
			return l.Parse(s)
		}
	}
	switch {
	case strings.HasPrefix(s, "https://"), strings.HasPrefix(s, "http://"):
		return parseHTTP(s)
	case strings.HasPrefix(s, "git+"):
		return parseGit(s)
	}
	for _, l := range core {
		if l.Claims(s) {
			return l.Parse(s)
		}
	}
	return parseByLook(s)
}

// Parse is ParseIn over o.Locations.
func (o Options) Parse(s string) (Ref, error) { return ParseIn(s, o.Locations) }
