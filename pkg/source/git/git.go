// Package git is the git location of pkg/source: SOURCEs written
// git+https://HOST/REPO.git[//SUBDIR][?ref=BRANCH|TAG|COMMIT] (also
// git+http://, git+ssh:// and git+file://), read in memory in pure Go
// with the unpacker's limits, and the git work tree a local folder sits
// in (the revision a build records). With internal/gitinfo, which it
// imports, it is the only code that compiles go-git: a program opts in
// by listing Location in source.Options.Locations.
//
//	opts := source.Options{Locations: []source.Location{git.Location{}}}
package git

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path"
	"strings"
	"sync"

	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/transport"
	gitclient "github.com/go-git/go-git/v5/plumbing/transport/client"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	"github.com/go-git/go-git/v5/storage/memory"

	"github.com/addonpkg/addonpkg/internal/gitinfo"
	"github.com/addonpkg/addonpkg/internal/netguard"
	"github.com/addonpkg/addonpkg/pkg/safetree"
	"github.com/addonpkg/addonpkg/pkg/source"
)

// defaultTokenUser is the user name sent with a token (GitHub's
// convention; most forges ignore the name).
const defaultTokenUser = "x-access-token"

// wantRef is the local name the fetched commit is stored under.
const wantRef = "refs/addonpkg/want"

// Location is the git location: git+https://HOST/REPO.git[//SUBDIR]
// [?ref=REF], also git+http://, git+ssh:// and git+file://. Its syntax
// is source.Parse's; it adds the fetch (LoadTree) and, for builds of a
// local folder, the work tree's remote and commit (ReadWorkTree).
type Location struct{}

var (
	_ source.TreeLoader     = Location{}
	_ source.WorkTreeReader = Location{}
)

// Kind is source.KindGit.
func (Location) Kind() source.Kind { return source.KindGit }

// Claims reports whether s starts with git+.
func (Location) Claims(s string) bool { return strings.HasPrefix(s, "git+") }

// Parse parses a git SOURCE (source.Parse).
func (Location) Parse(s string) (source.Ref, error) { return source.Parse(s) }

// Format writes r back, credentials removed.
func (Location) Format(r source.Ref) string { return r.String() }

// ReadWorkTree returns the remote of the git work tree holding path, and
// the last commit that changed path and its time, or nil when path is in
// no work tree or tree is not what that commit holds (gitinfo.Read).
func (Location) ReadWorkTree(path string, tree fs.FS) (*source.WorkTree, error) {
	info, err := gitinfo.Read(path, tree)
	if err != nil || info == nil {
		return nil, err
	}
	return &source.WorkTree{URL: info.URL, Commit: info.Commit, Time: info.Time}, nil
}

// LoadTree reads the tree of a git source at its ref: from a local
// repository directly, from a remote one by a shallow fetch into memory.
func (Location) LoadTree(ctx context.Context, ref source.Ref, opts source.Options, limits safetree.Limits) (*source.Tree, error) {
	t, err := loadGit(ctx, ref, opts, limits)
	if err != nil {
		return nil, source.WrapError(ref, err)
	}
	return t, nil
}

// loadGit reads the tree of a git source at its ref: from a local
// repository directly, from a remote one by a shallow fetch into memory.
func loadGit(ctx context.Context, ref source.Ref, opts source.Options, limits safetree.Limits) (*source.Tree, error) {
	timeout := opts.IdleTimeout()
	if !strings.HasPrefix(ref.URL, "https://") && !strings.HasPrefix(ref.URL, "http://") {
		// git+ssh:// has no idle timeout (its transport is not ours):
		// the whole fetch is bounded instead.
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	var (
		repo *gogit.Repository
		hash plumbing.Hash
		err  error
	)
	if strings.HasPrefix(ref.URL, "file://") {
		repo, hash, err = openLocal(ref)
	} else {
		repo, hash, err = fetchRemote(ctx, ref, opts, limits)
	}
	if err != nil {
		var ie *netguard.IdleTimeoutError
		switch {
		case errors.As(err, &ie):
			return nil, &netguard.IdleTimeoutError{Idle: ie.Idle} // the caller names the source
		case errors.Is(ctx.Err(), context.DeadlineExceeded):
			return nil, fmt.Errorf("timed out after %v: %w", timeout, ctx.Err())
		}
		return nil, err
	}
	commit, err := repo.CommitObject(hash)
	if err != nil {
		return nil, fmt.Errorf("read commit %s: %w", hash, err)
	}
	root, err := commit.Tree()
	if err != nil {
		return nil, fmt.Errorf("read the tree of commit %s: %w", hash, err)
	}
	what := "commit " + hash.String()[:12]
	tree := root
	if ref.Subdir != "" {
		e, err := root.FindEntry(ref.Subdir)
		if err != nil {
			return nil, fmt.Errorf("no directory %s in %s", ref.Subdir, what)
		}
		if e.Mode != filemode.Dir {
			return nil, fmt.Errorf("%s in %s is not a directory", ref.Subdir, what)
		}
		if tree, err = repo.TreeObject(e.Hash); err != nil {
			return nil, fmt.Errorf("read %s in %s: %w", ref.Subdir, what, err)
		}
	}
	tb := source.NewTreeBuilder(what, "", limits)
	if err := readGitTree(ctx, repo, tree, ref.Subdir, ".", tb); err != nil {
		return nil, err
	}
	fsys, err := tb.Done()
	if err != nil {
		return nil, err
	}
	pinned := ref
	pinned.GitRef = hash.String()
	return &source.Tree{
		Ref:        ref,
		FS:         fsys,
		Name:       source.RemoteName(ref),
		Pinned:     pinned.String(),
		Source:     source.RedactURL(ref.URL),
		Revision:   hash.String(),
		Time:       commit.Committer.When.UTC(),
		ContentDir: "/" + ref.Subdir,
	}, nil
}

// readGitTree copies a git tree into tb: files with their modes, safe
// symlinks; submodules are refused. top is the tree's path in the
// repository, for messages.
func readGitTree(ctx context.Context, repo *gogit.Repository, tree *object.Tree, top, dir string, tb *source.TreeBuilder) error {
	for _, e := range tree.Entries {
		if err := ctx.Err(); err != nil {
			return err
		}
		if safetree.CleanComponent(e.Name) != nil {
			return refuse(path.Join(dir, e.Name), safetree.ErrPathEscape, "invalid name in a git tree")
		}
		p := path.Join(dir, e.Name)
		switch e.Mode {
		case filemode.Dir:
			if err := tb.Mkdir(p, p); err != nil {
				return err
			}
			sub, err := repo.TreeObject(e.Hash)
			if err != nil {
				return fmt.Errorf("read directory %s: %w", p, err)
			}
			if err := readGitTree(ctx, repo, sub, top, p, tb); err != nil {
				return err
			}
		case filemode.Regular, filemode.Executable, filemode.Deprecated:
			if err := tb.Check(p); err != nil {
				return err
			}
			blob, err := repo.BlobObject(e.Hash)
			if err != nil {
				return fmt.Errorf("read %s: %w", p, err)
			}
			if err := tb.CheckSize(p, blob.Size); err != nil {
				return err
			}
			data, err := readBlob(blob, tb.Limits().MaxFileBytes)
			if err != nil {
				return fmt.Errorf("read %s: %w", p, err)
			}
			mode, _ := e.Mode.ToOSFileMode()
			if err := tb.File(p, p, data, mode.Perm()); err != nil {
				return err
			}
		case filemode.Symlink:
			blob, err := repo.BlobObject(e.Hash)
			if err != nil {
				return fmt.Errorf("read %s: %w", p, err)
			}
			target, err := readBlob(blob, int64(tb.Limits().MaxPathLength))
			if err != nil {
				return fmt.Errorf("read %s: %w", p, err)
			}
			if err := tb.Symlink(p, p, string(target)); err != nil {
				return err
			}
		case filemode.Submodule:
			return fmt.Errorf("%s is a submodule: an add-on must live in one repository", path.Join(top, p))
		default:
			return refuse(p, safetree.ErrUnsupportedType, fmt.Sprintf("unsupported git file mode %s", e.Mode))
		}
	}
	return nil
}

func readBlob(b *object.Blob, max int64) ([]byte, error) {
	if b.Size > max {
		return nil, fmt.Errorf("%d bytes, over %d", b.Size, max)
	}
	r, err := b.Reader()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(io.LimitReader(r, max))
}

// openLocal opens a git+file:// repository in place.
func openLocal(ref source.Ref) (*gogit.Repository, plumbing.Hash, error) {
	dir := strings.TrimPrefix(ref.URL, "file://")
	if _, err := os.Stat(dir); err != nil {
		return nil, plumbing.ZeroHash, fmt.Errorf("no repository at %s: %w", dir, errors.Unwrap(err))
	}
	repo, err := gogit.PlainOpenWithOptions(dir, &gogit.PlainOpenOptions{EnableDotGitCommonDir: true})
	if err != nil {
		if errors.Is(err, gogit.ErrRepositoryNotExists) {
			return nil, plumbing.ZeroHash, fmt.Errorf("%s is not a git repository", dir)
		}
		return nil, plumbing.ZeroHash, err
	}
	if ref.GitRef == "" {
		head, err := repo.Head()
		if err != nil {
			return nil, plumbing.ZeroHash, fmt.Errorf("the repository has no HEAD commit: %w", err)
		}
		h, err := peel(repo, head.Hash())
		return repo, h, err
	}
	h, err := resolveLocal(repo, ref.GitRef)
	return repo, h, err
}

// refCandidates are the full names a short ref may mean, in git's order.
func refCandidates(r string) []string {
	if strings.HasPrefix(r, "refs/") {
		return []string{r}
	}
	return []string{"refs/" + r, "refs/tags/" + r, "refs/heads/" + r}
}

func isHex(s string) bool {
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return s != ""
}

// minAbbrev is the shortest abbreviated commit accepted.
const minAbbrev = 7

func unknownRef(r string) error {
	return fmt.Errorf("unknown ref %q: no branch, tag or commit of that name", r)
}

// resolveLocal resolves a branch, tag, full or abbreviated commit in repo.
func resolveLocal(repo *gogit.Repository, r string) (plumbing.Hash, error) {
	for _, name := range refCandidates(r) {
		if ref, err := repo.Reference(plumbing.ReferenceName(name), true); err == nil {
			return peel(repo, ref.Hash())
		}
	}
	lr := strings.ToLower(r)
	if !isHex(lr) || len(lr) < minAbbrev || len(lr) > 40 {
		return plumbing.ZeroHash, unknownRef(r)
	}
	if len(lr) == 40 {
		if _, err := repo.CommitObject(plumbing.NewHash(lr)); err != nil {
			return plumbing.ZeroHash, unknownRef(r)
		}
		return plumbing.NewHash(lr), nil
	}
	iter, err := repo.CommitObjects()
	if err != nil {
		return plumbing.ZeroHash, err
	}
	defer iter.Close()
	var found []plumbing.Hash
	err = iter.ForEach(func(c *object.Commit) error {
		if strings.HasPrefix(c.Hash.String(), lr) {
			found = append(found, c.Hash)
		}
		return nil
	})
	if err != nil {
		return plumbing.ZeroHash, err
	}
	switch len(found) {
	case 0:
		return plumbing.ZeroHash, unknownRef(r)
	case 1:
		return found[0], nil
	}
	return plumbing.ZeroHash, fmt.Errorf("ref %q is ambiguous: %d commits start with it", r, len(found))
}

// peel follows annotated tags to the commit.
func peel(repo *gogit.Repository, h plumbing.Hash) (plumbing.Hash, error) {
	for range 10 {
		obj, err := repo.Object(plumbing.AnyObject, h)
		if err != nil {
			return plumbing.ZeroHash, fmt.Errorf("read object %s: %w", h, err)
		}
		switch o := obj.(type) {
		case *object.Commit:
			return h, nil
		case *object.Tag:
			h = o.Target
		default:
			return plumbing.ZeroHash, fmt.Errorf("%s is a %s, not a commit", h, obj.Type())
		}
	}
	return plumbing.ZeroHash, fmt.Errorf("tags nest too deep at %s", h)
}

// limitedStorage is memory storage that refuses objects past a total
// size, so a hostile or huge repository cannot exhaust memory.
type limitedStorage struct {
	*memory.Storage
	n, max   int64
	exceeded bool
}

func (s *limitedStorage) SetEncodedObject(o plumbing.EncodedObject) (plumbing.Hash, error) {
	s.n += o.Size()
	if s.n > s.max {
		s.exceeded = true
		return plumbing.ZeroHash, s.limitErr()
	}
	return s.Storage.SetEncodedObject(o)
}

func (s *limitedStorage) limitErr() error {
	return &safetree.LimitError{Name: "fetched git objects size", Limit: s.max, Which: safetree.LimitImageBytes}
}

// gitRemote is a remote repository being fetched into memory.
type gitRemote struct {
	st     *limitedStorage
	repo   *gogit.Repository
	remote *gogit.Remote
	auth   transport.AuthMethod
	ref    source.Ref
	opts   source.Options
}

// fetchRemote fetches the commit a remote git source names (shallow for
// a branch or tag) into memory and returns it.
func fetchRemote(ctx context.Context, ref source.Ref, opts source.Options, limits safetree.Limits) (*gogit.Repository, plumbing.Hash, error) {
	u, err := url.Parse(ref.URL)
	if err != nil {
		return nil, plumbing.ZeroHash, source.UnwrapURLError(err)
	}
	if !opts.PlainHTTPAllowed(u) {
		return nil, plumbing.ZeroHash, source.PlainHTTPRefused(u)
	}
	g := &gitRemote{st: &limitedStorage{Storage: memory.NewStorage(), max: limits.MaxImageBytes}, ref: ref, opts: opts}
	if g.auth, err = gitAuth(u, opts); err != nil {
		return nil, plumbing.ZeroHash, err
	}
	if u.Scheme == "https" || u.Scheme == "http" {
		if ctx, err = withGitTransport(ctx, u, opts); err != nil {
			return nil, plumbing.ZeroHash, err
		}
	}
	if g.repo, err = gogit.Init(g.st, nil); err != nil {
		return nil, plumbing.ZeroHash, err
	}
	clean := ref.URL
	if u.Scheme == "https" || u.Scheme == "http" {
		clean = source.RedactURL(ref.URL) // the credentials travel in auth
	}
	if g.remote, err = g.repo.CreateRemote(&config.RemoteConfig{Name: "origin", URLs: []string{clean}}); err != nil {
		return nil, plumbing.ZeroHash, err
	}
	refs, err := g.remote.ListContext(ctx, &gogit.ListOptions{Auth: g.auth, PeelingOption: gogit.AppendPeeled})
	if err != nil {
		return nil, plumbing.ZeroHash, g.explain(err)
	}
	h, err := g.resolve(ctx, refs)
	if err != nil {
		return nil, plumbing.ZeroHash, err
	}
	return g.repo, h, nil
}

// resolve picks what to fetch for the source's ref, fetches it and
// returns the commit.
func (g *gitRemote) resolve(ctx context.Context, refs []*plumbing.Reference) (plumbing.Hash, error) {
	byName := map[string]*plumbing.Reference{}
	for _, r := range refs {
		byName[r.Name().String()] = r
	}
	r := g.ref.GitRef
	if r == "" {
		head := byName["HEAD"]
		if head == nil {
			return plumbing.ZeroHash, errors.New("the repository has no HEAD: name a branch or tag with ?ref=")
		}
		name := "HEAD"
		if head.Type() == plumbing.SymbolicReference {
			name = head.Target().String()
		}
		return g.fetchNamed(ctx, name)
	}
	for _, name := range refCandidates(r) {
		if byName[name] != nil {
			return g.fetchNamed(ctx, name)
		}
	}
	lr := strings.ToLower(r)
	if !isHex(lr) || len(lr) < minAbbrev || len(lr) > 40 {
		return plumbing.ZeroHash, unknownRef(r)
	}
	if len(lr) == 40 {
		// A commit a ref points at is fetched by that ref's name, which
		// every server allows.
		for _, ref := range refs {
			if ref.Type() == plumbing.HashReference && ref.Hash().String() == lr {
				return g.fetchNamed(ctx, strings.TrimSuffix(ref.Name().String(), "^{}"))
			}
		}
		err := g.fetch(ctx, 1, config.RefSpec("+"+lr+":"+wantRef))
		if err == nil {
			return g.want()
		}
		if !errors.Is(err, gogit.ErrExactSHA1NotSupported) {
			return plumbing.ZeroHash, g.explain(err)
		}
	}
	// The server does not serve commits by hash, or the hash is
	// abbreviated: fetch every branch and tag, and look.
	if err := g.fetch(ctx, 0, "+refs/heads/*:refs/addonpkg/heads/*", "+refs/tags/*:refs/addonpkg/tags/*"); err != nil {
		return plumbing.ZeroHash, g.explain(err)
	}
	return resolveLocal(g.repo, lr)
}

// fetchNamed fetches one remote ref, one commit deep.
func (g *gitRemote) fetchNamed(ctx context.Context, name string) (plumbing.Hash, error) {
	if err := g.fetch(ctx, 1, config.RefSpec("+"+name+":"+wantRef)); err != nil {
		return plumbing.ZeroHash, g.explain(err)
	}
	return g.want()
}

func (g *gitRemote) fetch(ctx context.Context, depth int, specs ...config.RefSpec) error {
	err := g.remote.FetchContext(ctx, &gogit.FetchOptions{
		RefSpecs: specs,
		Depth:    depth,
		Auth:     g.auth,
		Tags:     gogit.NoTags,
	})
	if g.st.exceeded {
		return g.st.limitErr()
	}
	if errors.Is(err, gogit.NoErrAlreadyUpToDate) {
		return nil
	}
	return err
}

// want returns the commit fetched into wantRef.
func (g *gitRemote) want() (plumbing.Hash, error) {
	r, err := g.repo.Reference(wantRef, true)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("the fetch brought no commit: %w", err)
	}
	return peel(g.repo, r.Hash())
}

// explain turns go-git's transport errors into a line a person can act on.
func (g *gitRemote) explain(err error) error {
	var le *safetree.LimitError
	switch {
	case errors.As(err, &le):
		return err
	case errors.Is(err, transport.ErrAuthenticationRequired):
		if strings.HasPrefix(g.ref.URL, "https://") {
			return fmt.Errorf("authentication required: set %s, or give the host's login and password in ~/.netrc", source.EnvGitToken)
		}
		return errors.New("authentication required (credentials are sent over https only)")
	case errors.Is(err, transport.ErrAuthorizationFailed):
		return errors.New("authorization failed: the server refused the credentials")
	case errors.Is(err, transport.ErrRepositoryNotFound):
		return errors.New("repository not found")
	case errors.Is(err, transport.ErrEmptyRemoteRepository):
		return errors.New("the repository is empty")
	}
	return source.UnwrapURLError(err)
}

// gitAuth picks credentials for a remote: those in the URL (refused over
// plain http to a host that is not loopback), else (https only) the
// token in $ADDONPKG_GIT_TOKEN, else the netrc entry of the host. Nil
// leaves ssh to go-git's defaults (the ssh agent).
func gitAuth(u *url.URL, opts source.Options) (transport.AuthMethod, error) {
	if (u.Scheme == "https" || u.Scheme == "http") && u.User != nil {
		if err := netguard.CheckCredentials(u); err != nil {
			return nil, errors.New("user and password in a plain http:// URL are refused (only loopback hosts get them): use https://")
		}
		p, _ := u.User.Password()
		return &githttp.BasicAuth{Username: u.User.Username(), Password: p}, nil
	}
	if u.Scheme != "https" {
		return nil, nil
	}
	if tok := os.Getenv(source.EnvGitToken); tok != "" {
		user := os.Getenv(source.EnvGitUser)
		if user == "" {
			user = defaultTokenUser
		}
		return &githttp.BasicAuth{Username: user, Password: tok}, nil
	}
	if user, pass, ok := opts.NetrcLogin(u.Hostname()); ok {
		return &githttp.BasicAuth{Username: user, Password: pass}, nil
	}
	return nil, nil
}

// go-git picks its http client from a process-wide table. addonpkg
// installs one client for http and https, once, whose transport is the
// one the fetch put in the request's context (withGitTransport): the
// same netguard rules, TLS choices and idle timeout as every other
// request. A request without one (another user of go-git in the same
// process) still goes through a netguard.Transport.
var installGitHTTP sync.Once

type gitTransportKey struct{}

type gitDispatch struct{ fallback http.RoundTripper }

func (d gitDispatch) RoundTrip(req *http.Request) (*http.Response, error) {
	if rt, ok := req.Context().Value(gitTransportKey{}).(http.RoundTripper); ok {
		return rt.RoundTrip(req)
	}
	return d.fallback.RoundTrip(req)
}

// withGitTransport returns ctx carrying the transport of a fetch from u:
// credentials only to u's origin (go-git moves its endpoint after a
// redirect and sends its next requests there), none in clear except to
// loopback, the idle timeout, and the registry options' TLS choices.
func withGitTransport(ctx context.Context, u *url.URL, opts source.Options) (context.Context, error) {
	installGitHTTP.Do(func() {
		c := githttp.NewClientWithOptions(&http.Client{Transport: gitDispatch{fallback: &netguard.Transport{}}}, &githttp.ClientOptions{})
		gitclient.InstallProtocol("https", c)
		gitclient.InstallProtocol("http", c)
	})
	base, err := opts.BaseTransport()
	if err != nil {
		return nil, err
	}
	rt := opts.GuardedTransport(base, u)
	return context.WithValue(ctx, gitTransportKey{}, http.RoundTripper(rt)), nil
}

// refuse is the error of an entry of a git tree that breaks a rule of
// class (a safetree class).
func refuse(name string, class error, reason string) error {
	return &safetree.Error{Entry: name, Reason: reason, Err: class}
}
