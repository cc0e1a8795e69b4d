// Package source resolves the SOURCE strings of the command line (a name
// in the local store, a registry reference, oci:DIR, oci-archive:FILE,
// docker-archive:FILE, a local folder or file, an https:// download of a
// YAML file or an archive, or a git repository) to an image or index, or a
// tree, and unpacks any of them the same way.
//
// This package holds the core kinds: the store, registries, the three
// file forms and local paths. Every other kind is a Location a program
// lists in Options.Locations: pkg/source/https and pkg/source/git, which
// the command line lists, are kept out of this package so that a program
// that reads no git source compiles no git. A SOURCE of a kind no
// location is listed for fails with ErrKindNotEnabled.
//
// Every resolution also yields a pinned SOURCE (unpack.Addon.Pinned) that
// resolves to exactly the same content later: REPO@sha256:..., a git URL
// with ?ref=COMMIT, an https URL with ?checksum=sha256:....
package source

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/addonpkg/addonpkg/pkg/layout"
	"github.com/addonpkg/addonpkg/pkg/mediatypes"
	"github.com/addonpkg/addonpkg/pkg/reference"
	"github.com/addonpkg/addonpkg/pkg/registry"
	"github.com/addonpkg/addonpkg/pkg/safetree"
)

// Kind is where a SOURCE lives.
type Kind string

// The kinds of SOURCE.
const (
	KindStore         Kind = "store"
	KindRegistry      Kind = "registry"
	KindLayout        Kind = "oci"
	KindArchive       Kind = "oci-archive"
	KindDockerArchive Kind = "docker-archive"
	KindDir           Kind = "dir"
	// KindHTTP is an https:// (or loopback http://) download: a YAML file
	// or a .tar.gz, .tgz, .tar.xz, .tar.bz2, .tar.zst, .tar or .zip
	// archive.
	KindHTTP Kind = "http"
	// KindGit is a git repository: git+https://, git+http://, git+ssh://
	// or git+file://.
	KindGit Kind = "git"
)

// Environment variables that give git over https a token (read by
// pkg/source/git).
const (
	EnvGitToken = "ADDONPKG_GIT_TOKEN"
	EnvGitUser  = "ADDONPKG_GIT_USER"
)

// Pull policies for names that could be in the store or a registry.
const (
	PullMissing = "missing"
	PullAlways  = "always"
	PullNever   = "never"
)

// Ref is a parsed SOURCE.
type Ref struct {
	Kind Kind
	// Path is the directory or file of oci:, oci-archive:, docker-archive:
	// and folder sources.
	Path string
	// Name is the tag or digest inside a layout or archive, the store name,
	// or the registry reference.
	Name string
	// Explicit marks a registry reference written with docker:// or
	// oci://: it never resolves to the local store.
	Explicit bool
	// URL is what an http or git source fetches: the download URL with
	// its other query parameters, or the repository URL without "git+".
	// It may hold credentials: print Ref.String(), which removes them.
	URL string
	// Subdir is the //SUBDIR of an http or git source: the directory of
	// the archive or repository that holds the add-on ("" = the root).
	Subdir string
	// Checksum is an http source's ?checksum=sha256:HEX.
	Checksum string
	// GitRef is a git source's ?ref= (a branch, tag or commit; "" = the
	// remote HEAD).
	GitRef string
	// Bare marks a local path written without ./, / or file:// (a.yaml,
	// Some_Dir): one that is not there is reported as neither a
	// reference nor a path.
	Bare bool
}

// remoteString rebuilds an http or git SOURCE, credentials removed.
func remoteString(prefix, u, sub, key, val string) string {
	base, query, _ := strings.Cut(redactURL(u), "?")
	s := prefix + base
	if sub != "" {
		s += "//" + sub
	}
	if val != "" {
		if query != "" {
			query += "&"
		}
		query += key + "=" + val
	}
	if query != "" {
		s += "?" + query
	}
	return s
}

// ErrBadSource marks a SOURCE that does not parse.
var ErrBadSource = errors.New("invalid source")

// ErrBadOptions marks Options a caller set to what no rule reads (a Pull
// policy other than the three): refused, rather than read as the
// default, which would pull where the caller meant never to.
var ErrBadOptions = errors.New("invalid source options")

// check refuses Options that ErrBadOptions describes.
func (o Options) check() error {
	switch o.Pull {
	case "", PullMissing, PullAlways, PullNever:
		return nil
	}
	return fmt.Errorf("%w: Pull %q: want %q, %q or %q", ErrBadOptions, o.Pull, PullMissing, PullAlways, PullNever)
}

// parseByLook tells apart what no prefix claims, by its text alone (see
// Parse): a manifest file, a registry reference (its first component is
// a host), a name in the local store, or else a path.
func parseByLook(s string) (Ref, error) {
	// A URL whose scheme no location takes (ftp://, s3://) is refused by
	// its scheme: go-containerregistry's lax parse read s3://bucket/x as
	// a registry reference whose host, "s3", was then looked up in DNS.
	if scheme, _, ok := strings.Cut(s, "://"); ok && schemeRE.MatchString(scheme) {
		return Ref{}, fmt.Errorf("%w: %q: no SOURCE has the scheme %s:// (these do: https://, http://, git+https://, git+ssh://, git+http://, git+file://, docker://, oci:// and file://)", ErrBadSource, s, scheme)
	}
	// A manifest file (coredns.yaml) is a file, not a store name, though
	// it would parse as one; a tag or digest makes it a name again.
	if isManifestName(s) {
		return Ref{Kind: KindDir, Path: s, Bare: true}, nil
	}
	// A folder as a shell completes it (examples/coredns/): no reference
	// ends in "/", though go-containerregistry's lax parse takes one.
	if strings.HasSuffix(s, "/") {
		return Ref{Kind: KindDir, Path: s, Bare: true}, nil
	}
	if _, err := name.ParseReference(s); err != nil {
		// Not a reference: a path, checked when it is read.
		return Ref{Kind: KindDir, Path: s, Bare: true}, nil
	}
	if reference.HasRegistry(s) {
		return Ref{Kind: KindRegistry, Name: s}, nil
	}
	return Ref{Kind: KindStore, Name: reference.WithDefaultTag(s)}, nil
}

// schemeRE is a URL scheme (RFC 3986 section 3.1).
var schemeRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*$`)

// isManifestName reports whether s ends like a manifest file and names
// no tag or digest (coredns:v1.yaml is a tag).
func isManifestName(s string) bool {
	if _, v := reference.Split(s); v != "" {
		return false
	}
	switch strings.ToLower(filepath.Ext(s)) {
	case ".yaml", ".yml", ".json":
		return true
	}
	return false
}

func nonEmpty(s, p string) error {
	if p == "" {
		return fmt.Errorf("%w: %q names no path", ErrBadSource, s)
	}
	return nil
}

// Options open sources.
type Options struct {
	// Store is the local store; nil opens the default one when needed.
	Store *layout.Store
	// Registry carries auth and transport choices.
	Registry registry.Options
	// Pull is PullMissing (default, also ""), PullAlways or PullNever,
	// for names that may be in the store or a registry; another value is
	// ErrBadOptions.
	Pull string
	// BlobProgress, when set, is told how far each blob's copy is when
	// Write writes to a registry, the store or a layout.
	BlobProgress layout.Progress
	// StoreFirst makes a registry reference without docker:// or oci://
	// resolve to the local store when it is there (see Pull). Readers
	// (unpack, inspect, diff) set it; copy and pull do not.
	StoreFirst bool

	// HTTPClient fetches http sources; nil means a client over
	// Registry.Transport if set, else one built from Registry's TLS
	// choices (CAFile, InsecureSkipTLSVerify) that honours the proxy
	// environment. Either way its transport is wrapped in a
	// netguard.Transport (credentials only to the URL's origin, never in
	// clear except to loopback; the idle timeout), and redirects to plain
	// http are refused. Git over http(s) takes Registry.Transport or
	// Registry's TLS choices, not this client.
	HTTPClient *http.Client
	// Timeout is the idle timeout of HTTP downloads and git fetches over
	// http(s): waiting for response headers, and any pause of a body,
	// fail with a *netguard.IdleTimeoutError after it (a slow transfer
	// that keeps sending is not cut). A git+ssh:// fetch is bounded by it
	// as a whole. 0 means DefaultTimeout.
	Timeout time.Duration
	// ConnectTimeout bounds connecting to an HTTP server when HTTPClient
	// is nil; 0 means DefaultTimeout.
	ConnectTimeout time.Duration
	// MaxDownloadBytes caps the body of an HTTP download; 0 means
	// safetree.DefaultMaxDownloadBytes (a refusal is a LimitError of
	// safetree.LimitDownloadBytes). The unpack limits (unpack.Options.Limits)
	// apply to the tree inside it, and to git trees.
	MaxDownloadBytes int64
	// MaxLayers caps the layers of an image that Open returns, checked
	// before any layer is fetched; 0 means safetree.DefaultMaxLayers.
	MaxLayers int
	// Verify, when set, checks every artifact Open returns (its manifest
	// digest, before any layer is read): what fails is not returned. Tree
	// sources (folders, http, git) are refused, having no digest to sign.
	// Signatures are looked for beside what was read; for a registry
	// reference read from the store's copy, at the registry too (unless
	// Pull is PullNever) when none beside the copy verifies.
	Verify Verifier
	// Netrc is the netrc file read for https credentials (machine, login,
	// password); "" means $NETRC, else ~/.netrc. Git over https also takes
	// a token from $ADDONPKG_GIT_TOKEN (user $ADDONPKG_GIT_USER, default
	// x-access-token), before the netrc file.
	Netrc string
	// maxImageBytes bounds the decompressed copy of a compressed
	// oci-archive or docker-archive: Unpack's unpack.Options.Limits
	// MaxImageBytes; 0 means safetree.DefaultMaxImageBytes.
	maxImageBytes int64
	// Locations are the kinds of SOURCE beyond the core ones (the store,
	// registries, oci:, oci-archive:, docker-archive: and local paths):
	// git.Location and https.Location of pkg/source/git and
	// pkg/source/https, or a program's own. A kind listed here replaces
	// the core kind of the same Kind; a Ref of a kind that is neither
	// fails with ErrKindNotEnabled.
	Locations []Location
}

// DefaultTimeout is the default of Options.Timeout and ConnectTimeout.
const DefaultTimeout = 60 * time.Second

func (o Options) imageBytes() int64 {
	if o.maxImageBytes > 0 {
		return o.maxImageBytes
	}
	return safetree.DefaultMaxImageBytes
}

func (o Options) timeout() time.Duration {
	if o.Timeout > 0 {
		return o.Timeout
	}
	return DefaultTimeout
}

func (o Options) maxDownload() int64 {
	if o.MaxDownloadBytes > 0 {
		return o.MaxDownloadBytes
	}
	return safetree.DefaultMaxDownloadBytes
}

// Artifact is an opened OCI source: an image or an index.
type Artifact struct {
	Ref    Ref
	Image  v1.Image
	Index  v1.ImageIndex
	Digest v1.Hash
	// closer releases archive files.
	closer func() error
	// remote is set for registry sources, whose blobs can be fetched again.
	remote bool
	// blobs reads a registry source's blobs unverified, for the unpacker,
	// which verifies them itself (registry.Blobs.UnverifiedImage); every
	// other reader gets Image and Index reading through it, verified.
	blobs *registry.Blobs
	// store is the layout the artifact was read from (store, oci:,
	// oci-archive:); nil for a registry or a docker-archive.
	store *layout.Store
	// loc is the location that opened it (Pinned, Repository).
	loc Location
}

// Close releases what Open holds open.
func (a *Artifact) Close() error {
	if a.closer != nil {
		return a.closer()
	}
	return nil
}

// MediaType is the manifest's media type.
func (a *Artifact) MediaType() (mediatypes.MediaType, error) {
	if a.Index != nil {
		mt, err := a.Index.MediaType()
		return mediatypes.MediaType(mt), err
	}
	mt, err := a.Image.MediaType()
	return mediatypes.MediaType(mt), err
}

// DefaultStore opens the store at layout.DefaultDir; its first write
// creates it (layout.InitOnWrite).
func DefaultStore() (*layout.Store, error) {
	dir, err := layout.DefaultDir()
	if err != nil {
		return nil, err
	}
	return layout.InitOnWrite(dir)
}

// Open resolves an OCI source to its image or index. Folder, http and git
// sources are not OCI: use Unpack or LoadTree, or build them. An image
// with more layers than opts.MaxLayers is refused before any layer is
// read.
func Open(ctx context.Context, ref Ref, opts Options) (*Artifact, error) {
	a, err := open(ctx, ref, opts)
	if err != nil {
		return a, err
	}
	if err := verifyArtifact(ctx, a, opts); err != nil {
		a.Close()
		return nil, err
	}
	if a.Image == nil {
		return a, nil
	}
	m, err := a.Image.Manifest()
	if err == nil {
		err = safetree.Limits{MaxLayers: opts.MaxLayers}.WithDefaults().CheckLayers(len(m.Layers))
	}
	if err != nil {
		a.Close()
		return nil, fmt.Errorf("%s: %w", ref, err)
	}
	return a, nil
}

func open(ctx context.Context, ref Ref, opts Options) (*Artifact, error) {
	if err := opts.check(); err != nil {
		return nil, err
	}
	l := opts.location(ref.Kind)
	if l == nil {
		return nil, notEnabled(ref)
	}
	o, ok := l.(Opener)
	if !ok {
		return nil, fmt.Errorf("%s: a %s is not an OCI source", ref, ref.Kind)
	}
	a, err := o.Open(ctx, ref, opts)
	if a != nil && a.loc == nil {
		a.loc = l
	}
	return a, err
}

// absPath is for messages: relative paths stay as the user wrote them.
func absPath(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}
