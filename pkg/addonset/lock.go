package addonset

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/Masterminds/semver/v3"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"golang.org/x/sync/errgroup"

	"github.com/addonpkg/addonpkg/pkg/layout"
	"github.com/addonpkg/addonpkg/pkg/reference"
	"github.com/addonpkg/addonpkg/pkg/registry"
	"github.com/addonpkg/addonpkg/pkg/safetree"
	"github.com/addonpkg/addonpkg/pkg/source"
	"github.com/addonpkg/addonpkg/pkg/unpack"
)

// DefaultConcurrency is how many members are fetched at once by default.
const DefaultConcurrency = 4

// Options are what every verb shares.
type Options struct {
	// Source opens the members' sources: registry transport and
	// credentials, http and git limits. Its Store is not used: a set
	// never reads the local store.
	Source source.Options
	// Limits bound each member's tree; zero fields take the defaults.
	Limits safetree.Limits
	// Concurrency bounds how many members are fetched at once; 0 means
	// DefaultConcurrency.
	Concurrency int
}

func (o Options) sourceOptions() source.Options {
	so := o.Source
	so.StoreFirst = false
	so.Store = nil
	return so
}

// LockOptions change Lock.
type LockOptions struct {
	Options
	// Previous is the lock to start from: a member whose declaration entry
	// is unchanged keeps its pin unless it is named in Update. nil
	// resolves every member.
	Previous *LockFile
	// Update names members to resolve again even though their entry is
	// unchanged (a newer tag in the range, a moved git branch).
	Update []string
	// UpdateAll resolves every member again.
	UpdateAll bool
}

// Lock resolves every member of the set to a pinned source and its content
// identity. Members are fetched in parallel, at most opts.Concurrency at
// once. The result is sorted by name; write it with WriteLock.
func Lock(ctx context.Context, s *Set, opts LockOptions) (*LockFile, error) {
	update := map[string]bool{}
	for _, n := range opts.Update {
		if _, ok := s.Member(n); !ok {
			return nil, fmt.Errorf("%w %q: the set has no such member", ErrUnknownMember, n)
		}
		update[n] = true
	}
	out := make([]Locked, len(s.Addons))
	err := forEach(ctx, len(s.Addons), opts.Concurrency, func(ctx context.Context, i int) error {
		a := s.Addons[i]
		if opts.Previous != nil && !opts.UpdateAll && !update[a.Name] {
			// A pin kept must still read from the declared place.
			if m, ok := opts.Previous.Member(a.Name); ok && m.Entry == a.EntryDigest() {
				if _, err := s.pinnedRef(a, m); err == nil {
					out[i] = m
					return nil
				}
			}
		}
		m, _, err := s.resolve(ctx, a, opts.Options)
		if err != nil {
			return &MemberError{Member: a.Name, Err: err}
		}
		out[i] = m
		return nil
	})
	if err != nil {
		return nil, err
	}
	l := &LockFile{APIVersion: APIVersion, Kind: KindLock, Addons: out}
	sort.Slice(l.Addons, func(i, j int) bool { return l.Addons[i].Name < l.Addons[j].Name })
	return l, nil
}

// Check verifies that the lock pins the declaration as it is (else a
// *StaleError) and that every pinned source still yields what the lock
// recorded (else a *MismatchError inside a *MemberError).
func Check(ctx context.Context, s *Set, l *LockFile, opts Options) error {
	if err := l.Stale(s); err != nil {
		return err
	}
	return forEach(ctx, len(s.Addons), opts.Concurrency, func(ctx context.Context, i int) error {
		a := s.Addons[i]
		m, _ := l.Member(a.Name)
		if _, err := s.fetchPinned(ctx, a, m, opts); err != nil {
			return &MemberError{Member: a.Name, Err: err}
		}
		return nil
	})
}

// forEach runs f for 0..n-1, at most limit at once; the first failure
// cancels the rest. The error returned is that of the lowest index among
// the members that failed before anything was cancelled, so that a
// failure caused by the cancellation never hides its cause.
func forEach(ctx context.Context, n, limit int, f func(context.Context, int) error) error {
	if limit <= 0 {
		limit = DefaultConcurrency
	}
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		g     errgroup.Group
		mu    sync.Mutex
		first error
		errs  = make([]error, n)
		late  = make([]bool, n)
	)
	g.SetLimit(limit)
	for i := 0; i < n; i++ {
		g.Go(func() error {
			if cctx.Err() != nil {
				return nil
			}
			err := f(cctx, i)
			if err == nil {
				return nil
			}
			mu.Lock()
			errs[i], late[i] = err, cctx.Err() != nil
			if first == nil {
				first = err
			}
			mu.Unlock()
			cancel()
			return nil
		})
	}
	_ = g.Wait() // the workers return nil: errors are in errs
	if first == nil {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	for i, err := range errs {
		if err != nil && !late[i] {
			return err
		}
	}
	return first
}

// unpackOptions are a member's unpack options.
func (a Addon) unpackOptions(opts Options) (unpack.Options, error) {
	uo := unpack.Options{ContentDir: a.ContentDir, Limits: opts.Limits}
	if a.Platform != "" {
		p, err := v1.ParsePlatform(a.Platform)
		if err != nil {
			return uo, fmt.Errorf("platform %q: %w", a.Platform, err)
		}
		uo.Platform = p
	}
	return uo, nil
}

// resolve reads a member from its declared source (the highest tag of
// its range for a registry source) and pins it.
func (s *Set) resolve(ctx context.Context, a Addon, opts Options) (Locked, *unpack.Addon, error) {
	ref, err := s.Ref(a)
	if err != nil {
		return Locked{}, nil, err
	}
	uo, err := a.unpackOptions(opts)
	if err != nil {
		return Locked{}, nil, err
	}
	m := Locked{Name: a.Name, Entry: a.EntryDigest(), Source: a.Source}
	if ref.Kind == source.KindRegistry {
		if a.Version != "" {
			tag, err := HighestTag(ctx, ref.Name, a.Version, opts.Source.Registry)
			if err != nil {
				return Locked{}, nil, err
			}
			ref.Name += ":" + tag
		}
		m.Tag = reference.Tag(ref.Name)
	}
	ad, err := source.Unpack(ctx, ref, opts.sourceOptions(), uo)
	if err != nil {
		return Locked{}, nil, err
	}
	m.Identity = ad.Identity
	if ad.Digest.Hex != "" {
		m.Digest = ad.Digest.String()
	}
	switch ref.Kind {
	case source.KindDir:
		m.Pinned = a.Source
	case source.KindLayout, source.KindArchive:
		// The path as declared (relative to the declaration), by digest.
		decl, err := source.Parse(a.Source)
		if err != nil {
			return Locked{}, nil, err
		}
		m.Pinned = string(ref.Kind) + ":" + decl.Path + "@" + m.Digest
	default:
		m.Pinned = ad.Pinned
	}
	if m.Pinned == "" {
		return Locked{}, nil, fmt.Errorf("%s: no pinned form", ref)
	}
	return m, ad, nil
}

// pinnedRef is the source a lock entry fetches.
func (s *Set) pinnedRef(a Addon, m Locked) (source.Ref, error) {
	declared, err := s.Ref(a)
	if err != nil {
		return source.Ref{}, err
	}
	if declared.Kind == source.KindDir {
		return declared, nil
	}
	ref, err := s.Ref(Addon{Source: m.Pinned})
	if err != nil {
		return source.Ref{}, fmt.Errorf("pinned source %q: %w", m.Pinned, err)
	}
	if ref.Kind != declared.Kind {
		return source.Ref{}, &StaleError{Member: a.Name, Redirected: true, Reason: fmt.Sprintf("the lock pins a %s source, the declaration a %s", ref.Kind, declared.Kind)}
	}
	if !samePlace(declared, ref) {
		return source.Ref{}, &StaleError{Member: a.Name, Redirected: true, Reason: fmt.Sprintf("the lock pins %s, which is not the declared source %s", ref, declared)}
	}
	if why := samePin(a, declared, ref, m); why != "" {
		return source.Ref{}, &StaleError{Member: a.Name, Redirected: true, Reason: why}
	}
	return ref, nil
}

// samePin says why a lock entry pins other content than the declaration
// names ("" when it does not): a digest, commit or tag written in the
// declaration is what reviewers read, so the lock must pin that very one
// (spec/addon-set-v1.md 4.4.2). A lock entry copied from another set's
// lock for the same repository, with the entry digest kept, names the
// same place but other content.
func samePin(a Addon, declared, pinned source.Ref, m Locked) string {
	switch declared.Kind {
	case source.KindRegistry:
		p, err := name.ParseReference(pinned.Name)
		d, ok := p.(name.Digest)
		if err != nil || !ok {
			return fmt.Sprintf("the lock pins %s, which is not by digest", pinned)
		}
		if m.Digest != d.DigestStr() {
			return fmt.Sprintf("the lock pins %s but records digest %s", pinned, m.Digest)
		}
		if dd, ok := declaredDigest(declared.Name); ok {
			if dd != m.Digest {
				return fmt.Sprintf("the declaration names digest %s, the lock pins %s", dd, m.Digest)
			}
			if m.Tag != "" {
				return fmt.Sprintf("the declaration names digest %s, the lock a tag %q", dd, m.Tag)
			}
			return ""
		}
		if a.Version != "" {
			// Lock checks the tag still points at the digest; the tag
			// itself must be one the range admits.
			c, err := semver.NewConstraint(a.Version)
			if err != nil {
				return fmt.Sprintf("version %q: %v", a.Version, err)
			}
			v, err := semver.NewVersion(m.Tag)
			if err != nil || !c.Check(v) {
				return fmt.Sprintf("the lock's tag %q is not in the declared range %q", m.Tag, a.Version)
			}
			return ""
		}
		if want := reference.Tag(declared.Name); m.Tag != want {
			return fmt.Sprintf("the declaration names tag %q, the lock tag %q", want, m.Tag)
		}
	case source.KindGit:
		if isFullCommit(declared.GitRef) && !strings.EqualFold(declared.GitRef, pinned.GitRef) {
			return fmt.Sprintf("the declaration names commit %s, the lock pins %s", declared.GitRef, pinned.GitRef)
		}
	case source.KindHTTP:
		if m.Digest != "" && pinned.Checksum != "" && m.Digest != pinned.Checksum {
			return fmt.Sprintf("the lock pins checksum %s but records digest %s", pinned.Checksum, m.Digest)
		}
	case source.KindLayout, source.KindArchive:
		if pinned.Name != m.Digest || !strings.HasPrefix(m.Digest, "sha256:") {
			return fmt.Sprintf("the lock pins %s but records digest %s", pinned, m.Digest)
		}
		if strings.HasPrefix(declared.Name, "sha256:") && declared.Name != m.Digest {
			return fmt.Sprintf("the declaration names digest %s, the lock pins %s", declared.Name, m.Digest)
		}
	}
	return ""
}

// declaredDigest is the digest a registry reference names, if any
// (REPO@DIGEST or REPO:TAG@DIGEST).
func declaredDigest(ref string) (string, bool) {
	r, err := name.ParseReference(ref)
	if err != nil {
		return "", false
	}
	d, ok := r.(name.Digest)
	if !ok {
		return "", false
	}
	return d.DigestStr(), true
}

// isFullCommit reports whether a git ref is a whole commit id (SHA-1 or
// SHA-256), which names content as a digest does.
func isFullCommit(r string) bool {
	if len(r) != 40 && len(r) != 64 {
		return false
	}
	for _, c := range strings.ToLower(r) {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// samePlace reports whether a pinned source reads from where the declared
// one does: the same repository, URL and subdirectory, layout or archive
// (and the declared checksum, if any). Review reads the declaration; a
// lock edited to fetch from elsewhere must not pass as its pin.
func samePlace(declared, pinned source.Ref) bool {
	switch declared.Kind {
	case source.KindRegistry:
		return reference.Name(declared.Name) == reference.Name(pinned.Name)
	case source.KindGit:
		return declared.URL == pinned.URL && declared.Subdir == pinned.Subdir
	case source.KindHTTP:
		return declared.URL == pinned.URL && declared.Subdir == pinned.Subdir &&
			(declared.Checksum == "" || declared.Checksum == pinned.Checksum)
	case source.KindLayout, source.KindArchive:
		return filepath.Clean(declared.Path) == filepath.Clean(pinned.Path)
	}
	return true
}

// fetchPinned reads a member from its pin and checks it against the lock:
// a tag that points elsewhere now, or a different identity, is a
// *MismatchError.
func (s *Set) fetchPinned(ctx context.Context, a Addon, m Locked, opts Options) (*unpack.Addon, error) {
	ref, err := s.pinnedRef(a, m)
	if err != nil {
		return nil, err
	}
	uo, err := a.unpackOptions(opts)
	if err != nil {
		return nil, err
	}
	if ref.Kind == source.KindRegistry && m.Tag != "" && m.Digest != "" {
		tagged := reference.Name(ref.Name) + ":" + m.Tag
		d, err := headDigest(ctx, tagged, opts.Source.Registry)
		if err != nil {
			return nil, err
		}
		if d != m.Digest {
			return nil, &MismatchError{Member: a.Name, Source: tagged, What: "now points to", Got: d, Locked: m.Digest}
		}
	}
	if ref.Kind == source.KindLayout || ref.Kind == source.KindArchive {
		// The lock records no tag of a layout: what the declaration names
		// there (its tag, or its one manifest) must be the pinned digest,
		// or the lock could pin any other manifest beside it. The layout
		// or archive is opened once for both reads.
		if layout.HandlesFrom(ctx) == nil {
			h := layout.NewHandles()
			defer h.Close()
			ctx = layout.WithHandles(ctx, h)
		}
		declared, err := s.Ref(a)
		if err != nil {
			return nil, err
		}
		if !strings.HasPrefix(declared.Name, "sha256:") {
			d, err := layoutDigest(ctx, declared, opts)
			if err != nil {
				return nil, err
			}
			if d != m.Digest {
				return nil, &MismatchError{Member: a.Name, Source: declared.String(), What: "now names", Got: d, Locked: m.Digest}
			}
		}
	}
	if ref.Kind == source.KindGit {
		return s.fetchGit(ctx, a, m, ref, opts, uo)
	}
	ad, err := source.Unpack(ctx, ref, opts.sourceOptions(), uo)
	if err != nil {
		return nil, err
	}
	if ad.Identity != m.Identity {
		return nil, &MismatchError{Member: a.Name, Source: m.Pinned, What: "has identity", Got: ad.Identity, Locked: m.Identity}
	}
	return ad, nil
}

// fetchGit reads a git member. One declared by a branch, tag or
// abbreviated commit (or none: the remote HEAD) is read by what the
// declaration names, which must still be the pinned commit, as a
// registry tag must still point at the locked digest: otherwise a lock
// edited to pin any other commit of the repository (an older, vulnerable
// one) passed every check, and a tag that moved is a change someone must
// review. One declared by a full commit is read by it.
func (s *Set) fetchGit(ctx context.Context, a Addon, m Locked, pinned source.Ref, opts Options, uo unpack.Options) (*unpack.Addon, error) {
	declared, err := s.Ref(a)
	if err != nil {
		return nil, err
	}
	read := pinned
	if !isFullCommit(declared.GitRef) {
		read = declared
	}
	ad, err := source.Unpack(ctx, read, opts.sourceOptions(), uo)
	if err != nil {
		return nil, err
	}
	if read != pinned {
		got, err := source.Parse(ad.Pinned)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", read, err)
		}
		if !strings.EqualFold(got.GitRef, pinned.GitRef) {
			return nil, &MismatchError{Member: a.Name, Source: declared.String(), What: "now points to", Got: got.GitRef, Locked: pinned.GitRef}
		}
	}
	if ad.Identity != m.Identity {
		return nil, &MismatchError{Member: a.Name, Source: m.Pinned, What: "has identity", Got: ad.Identity, Locked: m.Identity}
	}
	return ad, nil
}

// layoutDigest is the digest of the manifest a layout or archive source
// names: its tag, or its one manifest. Nothing is verified here: the
// pinned read that follows is.
func layoutDigest(ctx context.Context, ref source.Ref, opts Options) (string, error) {
	so := opts.sourceOptions()
	so.Verify = nil
	art, err := source.Open(ctx, ref, so)
	if err != nil {
		return "", err
	}
	defer art.Close()
	return art.Digest.String(), nil
}

// headDigest asks the registry which manifest a tag points to.
func headDigest(ctx context.Context, ref string, ro registry.Options) (string, error) {
	r, err := ro.ParseReference(ref)
	if err != nil {
		return "", err
	}
	opts, err := ro.Remote(ctx)
	if err != nil {
		return "", err
	}
	d, err := registry.Head(ctx, r, opts...)
	if err != nil {
		return "", registry.Explain(ref, err)
	}
	return d.Digest.String(), nil
}

// HighestTag lists the tags of repo and returns the highest that is a
// semantic version (a leading "v" allowed) inside the range constraint.
// Pre-releases match only a range that names one. Two tags of the same
// version ("1.2.0", "v1.2.0") resolve to the one that sorts first.
func HighestTag(ctx context.Context, repo, constraint string, ro registry.Options) (string, error) {
	c, err := semver.NewConstraint(constraint)
	if err != nil {
		return "", fmt.Errorf("%w: version %q: %w", ErrInvalid, constraint, err)
	}
	r, err := ro.ParseRepository(repo)
	if err != nil {
		return "", err
	}
	opts, err := ro.Remote(ctx)
	if err != nil {
		return "", err
	}
	tags, err := registry.ListTags(ctx, r, opts...)
	if err != nil {
		return "", registry.Explain(repo, err)
	}
	best, bestTag := (*semver.Version)(nil), ""
	for _, t := range tags {
		v, err := semver.NewVersion(t)
		if err != nil || !c.Check(v) {
			continue
		}
		if best == nil || v.GreaterThan(best) || (v.Equal(best) && t < bestTag) {
			best, bestTag = v, t
		}
	}
	if best == nil {
		return "", fmt.Errorf("%s: %w %q (%d tags)", repo, ErrNoVersion, constraint, len(tags))
	}
	return bestTag, nil
}
