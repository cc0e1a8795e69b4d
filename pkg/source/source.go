// Package source resolves the SOURCE strings of the command line (a name
// in the local store, a registry reference, oci:DIR, oci-archive:FILE,
// docker-archive:FILE, a local folder or file, an https:// download of a
// YAML file or an archive, or a git repository) to an image or index, or a
// tree, and unpacks any of them the same way.
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
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/addonpkg/addonpkg/pkg/layout"
	"github.com/addonpkg/addonpkg/pkg/mediatypes"
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
	// or a .tar.gz, .tgz, .tar or .zip archive.
	KindHTTP Kind = "http"
	// KindGit is a git repository: git+https://, git+http://, git+ssh://
	// or git+file://.
	KindGit Kind = "git"
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
}

func (r Ref) String() string {
	switch r.Kind {
	case KindLayout, KindArchive, KindDockerArchive:
		if r.Name == "" {
			return string(r.Kind) + ":" + r.Path
		}
		sep := ":"
		if r.Kind != KindDockerArchive && strings.HasPrefix(r.Name, "sha256:") {
			sep = "@"
		}
		return string(r.Kind) + ":" + r.Path + sep + r.Name
	case KindDir:
		return r.Path
	case KindHTTP:
		return remoteString("", r.URL, r.Subdir, paramChecksum, r.Checksum)
	case KindGit:
		return remoteString("git+", r.URL, r.Subdir, paramRef, r.GitRef)
	case KindStore:
		// "oci:latest" would read back as a layout: the default tag is
		// implied by the bare name.
		for _, p := range []string{"oci:", "oci-archive:", "docker-archive:"} {
			if strings.HasPrefix(r.Name, p) && strings.TrimPrefix(r.Name, p) == "latest" {
				return strings.TrimSuffix(p, ":")
			}
		}
	case KindRegistry:
		if !hasRegistryHost(r.Name) {
			// docker://NAME without a host: without the prefix it would
			// read back as a store name.
			return "docker://" + r.Name
		}
	}
	return r.Name
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

// Parse classifies a SOURCE string without touching the network.
func Parse(s string) (Ref, error) {
	if s == "" {
		return Ref{}, fmt.Errorf("%w: empty", ErrBadSource)
	}
	if strings.ContainsAny(s, "\x00\n") {
		return Ref{}, fmt.Errorf("%w: %q has control characters", ErrBadSource, s)
	}
	switch {
	case strings.HasPrefix(s, "oci:"):
		p, n := splitPathName(strings.TrimPrefix(s, "oci:"))
		return Ref{Kind: KindLayout, Path: p, Name: n}, nonEmpty(s, p)
	case strings.HasPrefix(s, "oci-archive:"):
		p, n := splitPathName(strings.TrimPrefix(s, "oci-archive:"))
		return Ref{Kind: KindArchive, Path: p, Name: n}, nonEmpty(s, p)
	case strings.HasPrefix(s, "docker-archive:"):
		// As skopeo reads it: docker-archive:PATH[:REFERENCE], the path
		// ending at the first colon.
		p, n, _ := strings.Cut(strings.TrimPrefix(s, "docker-archive:"), ":")
		if n != "" {
			if _, err := name.NewTag(n); err != nil {
				return Ref{}, fmt.Errorf("%w: %q: %w", ErrBadSource, s, err)
			}
		}
		return Ref{Kind: KindDockerArchive, Path: p, Name: n}, nonEmpty(s, p)
	case strings.HasPrefix(s, "docker://"), strings.HasPrefix(s, "oci://"):
		r := s[strings.Index(s, "://")+3:]
		if _, err := name.ParseReference(r); err != nil {
			return Ref{}, fmt.Errorf("%w: %q: %w", ErrBadSource, s, err)
		}
		return Ref{Kind: KindRegistry, Name: r, Explicit: true}, nil
	case strings.HasPrefix(s, "https://"), strings.HasPrefix(s, "http://"):
		return parseHTTP(s)
	case strings.HasPrefix(s, "git+"):
		ref, err := parseGit(s)
		if err != nil {
			if _, serr := os.Stat(s); serr == nil {
				return Ref{Kind: KindDir, Path: s}, nil // a folder named git+...
			}
		}
		return ref, err
	case strings.HasPrefix(s, "file://"):
		return Ref{Kind: KindDir, Path: strings.TrimPrefix(s, "file://")}, nonEmpty(s, strings.TrimPrefix(s, "file://"))
	case strings.HasPrefix(s, "./"), strings.HasPrefix(s, "../"), strings.HasPrefix(s, "/"), s == ".", s == "..":
		return Ref{Kind: KindDir, Path: s}, nil
	}
	// An existing manifest file (coredns.yaml) is a file, not a store
	// name, though it would parse as one.
	if isManifestName(s) {
		if st, err := os.Stat(s); err == nil && st.Mode().IsRegular() {
			return Ref{Kind: KindDir, Path: s}, nil
		}
	}
	if _, err := name.ParseReference(s); err != nil {
		// Not a reference: a path after all?
		if _, serr := os.Stat(s); serr == nil {
			return Ref{Kind: KindDir, Path: s}, nil
		}
		return Ref{}, fmt.Errorf("%w: %q is neither a reference nor an existing path: %w", ErrBadSource, s, err)
	}
	if hasRegistryHost(s) {
		return Ref{Kind: KindRegistry, Name: s}, nil
	}
	return Ref{Kind: KindStore, Name: NormalizeName(s)}, nil
}

// isManifestName reports whether s ends like a manifest file.
func isManifestName(s string) bool {
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

// splitPathName splits "DIR[:TAG|@DIGEST]". A colon inside the path is
// kept when what follows it is not a tag, so "C:/x" or "a::" stay paths.
func splitPathName(s string) (string, string) {
	if i := strings.LastIndex(s, "@"); i >= 0 && strings.HasPrefix(s[i+1:], "sha256:") {
		return s[:i], s[i+1:]
	}
	if i := strings.LastIndex(s, ":"); i >= 0 && tagPattern.MatchString(s[i+1:]) {
		return s[:i], s[i+1:]
	}
	return s, ""
}

// tagPattern is the OCI distribution spec's tag grammar.
var tagPattern = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$`)

// hasRegistryHost reports whether the first component of a reference is
// a registry host (has a dot or a port, or is localhost), as docker decides.
func hasRegistryHost(s string) bool {
	i := strings.IndexByte(s, '/')
	if i < 0 {
		return false
	}
	host := s[:i]
	return strings.ContainsAny(host, ".:") || host == "localhost"
}

// NormalizeName gives a store name its default tag.
func NormalizeName(s string) string {
	if strings.Contains(s, "@") {
		return s
	}
	last := s[strings.LastIndex(s, "/")+1:]
	if !strings.Contains(last, ":") {
		return s + ":latest"
	}
	return s
}

// Options open sources.
type Options struct {
	// Store is the local store; nil opens the default one when needed.
	Store *layout.Store
	// Registry carries auth and transport choices.
	Registry registry.Options
	// Pull is PullMissing (default), PullAlways or PullNever, for names
	// that may be in the store or a registry.
	Pull string
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
	// DefaultMaxDownloadBytes. The unpack limits (unpack.Options.Limits)
	// apply to the tree inside it, and to git trees.
	MaxDownloadBytes int64
	// MaxLayers caps the layers of an image that Open returns, checked
	// before any layer is fetched; 0 means safetree.DefaultMaxLayers.
	MaxLayers int
	// Verify, when set, checks every artifact Open returns (its manifest
	// digest, before any layer is read): what fails is not returned. Tree
	// sources (folders, http, git) are refused, having no digest to sign.
	Verify Verifier
	// Netrc is the netrc file read for https credentials (machine, login,
	// password); "" means $NETRC, else ~/.netrc. Git over https also takes
	// a token from $ADDONPKG_GIT_TOKEN (user $ADDONPKG_GIT_USER, default
	// x-access-token), before the netrc file.
	Netrc string
}

// Defaults of Options.
const (
	DefaultTimeout          = 60 * time.Second
	DefaultMaxDownloadBytes = 512 << 20
)

// Flags that change Options on the command line, named in errors.
const (
	FlagMaxDownloadBytes = "--max-download-bytes"
)

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
	return DefaultMaxDownloadBytes
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
	// store is the layout the artifact was read from (store, oci:,
	// oci-archive:); nil for a registry or a docker-archive.
	store *layout.Store
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

// DefaultStore opens (creating if needed) the store at layout.DefaultDir.
func DefaultStore() (*layout.Store, error) {
	dir, err := layout.DefaultDir()
	if err != nil {
		return nil, err
	}
	return layout.Init(dir)
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
	switch ref.Kind {
	case KindStore:
		st, err := storeOf(opts)
		if err != nil {
			return nil, err
		}
		// A short name is a local name: it never falls through to a
		// registry (Docker Hub is reached only by docker.io/NAME), so a
		// mistyped name neither leaks nor waits on the network.
		if opts.Pull == PullAlways {
			return nil, fmt.Errorf("%w: %s is a local name, there is no registry to pull it from (for Docker Hub write %s)", ErrShortName, ref.Name, DockerHubName(ref.Name))
		}
		d, err := st.Resolve(ref.Name)
		if err == nil {
			return fromStore(st, ref, d, nil)
		}
		if !errors.Is(err, layout.ErrNotFound) {
			return nil, err
		}
		return nil, notInStore(st, ref.Name)
	case KindRegistry:
		// As docker run does: a copy in the local store (a pull or a build
		// tagged with the full name) wins, unless --pull always.
		if opts.StoreFirst && !ref.Explicit && opts.Pull != PullAlways {
			st, err := storeOf(opts)
			if err != nil {
				return nil, err
			}
			d, err := st.Resolve(NormalizeName(ref.Name))
			if err == nil {
				return fromStore(st, ref, d, nil)
			}
			if !errors.Is(err, layout.ErrNotFound) {
				return nil, err
			}
			if opts.Pull == PullNever {
				return nil, fmt.Errorf("%s: not in the local store (--pull never)", ref.Name)
			}
		}
		return openRemote(ctx, ref, opts)
	case KindLayout:
		st, err := layout.Open(ref.Path)
		if err != nil {
			return nil, err
		}
		return openInLayout(st, ref, nil)
	case KindArchive:
		st, err := layout.OpenArchive(ref.Path)
		if err != nil {
			return nil, err
		}
		a, err := openInLayout(st, ref, st.Close)
		if err != nil {
			st.Close()
		}
		return a, err
	case KindDockerArchive:
		var tag *name.Tag
		if ref.Name != "" {
			t, err := name.NewTag(ref.Name)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", ref, err)
			}
			tag = &t
		}
		if err := checkDockerArchive(ref.Path, opts.MaxLayers); err != nil {
			return nil, fmt.Errorf("%s: %w", ref, err)
		}
		img, err := tarball.ImageFromPath(ref.Path, tag)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", ref, err)
		}
		d, err := img.Digest()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", ref, err)
		}
		return &Artifact{Ref: ref, Image: img, Digest: d}, nil
	}
	return nil, fmt.Errorf("%s: a %s is not an OCI source", ref, ref.Kind)
}

func storeOf(opts Options) (*layout.Store, error) {
	if opts.Store != nil {
		return opts.Store, nil
	}
	return DefaultStore()
}

// openInLayout resolves the tag or digest inside a layout; without one, the
// layout must hold exactly one manifest.
func openInLayout(st *layout.Store, ref Ref, closer func() error) (*Artifact, error) {
	var d v1.Descriptor
	if ref.Name == "" {
		entries, err := st.Descriptors()
		if err != nil {
			return nil, err
		}
		// What refers to an add-on (its signatures, an SBOM) travels
		// beside it: the add-on is the one manifest left without them.
		entries = withoutReferrers(st, entries)
		if len(entries) != 1 {
			return nil, fmt.Errorf("%s: the layout holds %d manifests: name one with :TAG or @DIGEST", ref, len(entries))
		}
		d = entries[0]
	} else {
		var err error
		if d, err = st.Resolve(ref.Name); err != nil {
			return nil, fmt.Errorf("%s: %w", ref, err)
		}
	}
	return fromStore(st, ref, d, closer)
}

func fromStore(st *layout.Store, ref Ref, d v1.Descriptor, closer func() error) (*Artifact, error) {
	a := &Artifact{Ref: ref, Digest: d.Digest, closer: closer, store: st}
	var err error
	if mediatypes.IsIndex(mediatypes.MediaType(d.MediaType)) {
		a.Index, err = st.Index(d)
	} else {
		a.Image, err = st.Image(d)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ref, err)
	}
	return a, nil
}

func openRemote(ctx context.Context, ref Ref, opts Options) (*Artifact, error) {
	r, err := opts.Registry.ParseReference(ref.Name)
	if err != nil {
		return nil, err
	}
	ropts, err := opts.Registry.Remote(ctx)
	if err != nil {
		return nil, err
	}
	// Resolve a tag to its digest first, then fetch by digest: go-
	// containerregistry verifies a manifest fetched by digest, not one
	// fetched by tag, so a manifest changed in transit would go unnoticed.
	if _, isTag := r.(name.Tag); isTag {
		head, err := remote.Head(r, ropts...)
		if err != nil {
			return nil, registry.Explain(ref.Name, err)
		}
		r = r.Context().Digest(head.Digest.String())
	}
	// A manifest fetched by digest is verified; one that arrives changed
	// or cut short is fetched again, twice at most.
	var desc *remote.Descriptor
	for try := 0; ; try++ {
		desc, err = remote.Get(r, ropts...)
		if err == nil || try >= 2 || !registry.IsTransient(err) {
			break
		}
	}
	if err != nil {
		return nil, registry.Explain(ref.Name, err)
	}
	a := &Artifact{Ref: ref, Digest: desc.Digest, remote: true}
	// Image or index, as the manifest's own bytes say: the media type of
	// desc is the registry's Content-Type header.
	mt := desc.MediaType
	if own, err := layout.MediaTypeOf(desc.Manifest); err == nil {
		mt = own
	}
	if mediatypes.IsIndex(mediatypes.MediaType(mt)) {
		a.Index, err = desc.ImageIndex()
	} else {
		a.Image, err = desc.Image()
	}
	if err != nil {
		return nil, registry.Explain(ref.Name, err)
	}
	return a, nil
}

// absPath is for messages: relative paths stay as the user wrote them.
func absPath(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}
