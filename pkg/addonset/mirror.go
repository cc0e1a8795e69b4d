package addonset

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/addonpkg/addonpkg/internal/atomicfile"
	"github.com/addonpkg/addonpkg/pkg/build"
	"github.com/addonpkg/addonpkg/pkg/layout"
	"github.com/addonpkg/addonpkg/pkg/pack"
	"github.com/addonpkg/addonpkg/pkg/referrers"
	"github.com/addonpkg/addonpkg/pkg/source"
	"github.com/addonpkg/addonpkg/pkg/unpack"
)

// MirrorOptions change Mirror.
type MirrorOptions struct {
	Options
	// To is where the set goes: REGISTRY/PREFIX (each member becomes
	// REGISTRY/PREFIX/NAME:TAG) or oci-archive:FILE (one archive, each
	// member tagged NAME).
	To string
	// Lock pins what is mirrored; nil locks the set first. A stale lock
	// is an error.
	Lock *LockFile
	// DeclDir is the directory the mirrored declaration will be written
	// to: an oci-archive path in it is written relative to DeclDir. ""
	// writes the path as given.
	DeclDir string
	// Referrers also copies what refers to each OCI member (package
	// referrers: its signatures, SBOMs, attestations), as copy does;
	// ReferrerLimits bound it. A packaged tree has none.
	Referrers      bool
	ReferrerLimits referrers.Options
}

// MirrorResult is the mirrored set: a declaration whose sources are the
// mirror, and its lock, with the same identities as the original.
type MirrorResult struct {
	Set  *Set
	Lock *LockFile
	// Pinned names each member's copy by digest, in member order, as
	// MirrorOptions.To names the destination: an oci-archive path as the
	// caller gave it, where the lock's Pinned is relative to the mirrored
	// declaration's folder.
	Pinned []string
	// Referrers counts what MirrorOptions.Referrers copied.
	Referrers int
}

// Mirror copies every member of the set, as its lock pins it, to a
// registry or one oci-archive file, and returns the declaration and lock
// of the mirrored set. OCI members are copied byte for byte (digests
// preserved); folder, git and https members are packaged as artifact-form
// add-ons (same tree, same identity). Every member is checked against the
// lock before it is copied.
func Mirror(ctx context.Context, s *Set, opts MirrorOptions) (*MirrorResult, error) {
	l := opts.Lock
	if l == nil {
		var err error
		if l, err = Lock(ctx, s, LockOptions{Options: opts.Options}); err != nil {
			return nil, err
		}
	} else if err := l.Stale(s); err != nil {
		return nil, err
	}
	var (
		archive, prefix string
		tmp             string
		limit           = opts.Concurrency
	)
	if p, ok := strings.CutPrefix(opts.To, "oci-archive:"); ok {
		if p == "" {
			return nil, fmt.Errorf("mirror destination %q names no file", opts.To)
		}
		archive = p
		var err error
		if tmp, err = atomicfile.TempDir(archive, ".addonpkg-mirror-"); err != nil {
			return nil, fmt.Errorf("mirror to %s: %w", opts.To, err)
		}
		defer os.RemoveAll(tmp)
		if _, err := layout.Init(tmp); err != nil {
			return nil, err
		}
		limit = 1 // one layout, written member by member
	} else {
		prefix = strings.TrimSuffix(opts.To, "/")
		// Strict: a prefix without a registry host must not mean Docker Hub.
		if _, err := name.NewRepository(prefix+"/x", name.StrictValidation); err != nil {
			return nil, fmt.Errorf("mirror destination %q: want REGISTRY/PREFIX or oci-archive:FILE", opts.To)
		}
	}
	archiveSrc := archive
	if archive != "" && opts.DeclDir != "" {
		if rel, err := filepath.Rel(absPath(opts.DeclDir), absPath(archive)); err == nil {
			archiveSrc = rel
			if !strings.HasPrefix(rel, ".") && !filepath.IsAbs(rel) {
				archiveSrc = "./" + rel
			}
		}
	}

	outA := make([]Addon, len(s.Addons))
	outL := make([]Locked, len(s.Addons))
	pinned := make([]string, len(s.Addons))
	var referred atomic.Int64
	err := forEach(ctx, len(s.Addons), limit, func(ctx context.Context, i int) error {
		a := s.Addons[i]
		m, _ := l.Member(a.Name)
		art, ma, err := s.mirrorArtifact(ctx, a, m, opts.Options)
		if err != nil {
			return &MemberError{Member: a.Name, Err: err}
		}
		defer art.Close()
		tag := m.Tag
		if tag == "" {
			tag = strings.Replace(m.Identity, ":", "-", 1)
		}
		var dst source.Ref
		if archive != "" {
			dst = source.Ref{Kind: source.KindLayout, Path: tmp, Name: a.Name}
			ma.Source = "oci-archive:" + archiveSrc + ":" + a.Name
		} else {
			dst = source.Ref{Kind: source.KindRegistry, Name: prefix + "/" + a.Name + ":" + tag}
			ma.Source = dst.Name
		}
		res, err := source.Write(ctx, art, dst, opts.sourceOptions())
		if err != nil {
			return &MemberError{Member: a.Name, Err: err}
		}
		if opts.Referrers && !source.IsTree(art.Ref.Kind) {
			n, err := mirrorReferrers(ctx, art, dst, opts)
			if err != nil {
				return &MemberError{Member: a.Name, Err: err}
			}
			referred.Add(int64(n))
		}
		lm := Locked{Name: a.Name, Entry: ma.EntryDigest(), Source: ma.Source, Digest: res.Digest, Identity: m.Identity}
		if archive != "" {
			lm.Pinned = "oci-archive:" + archiveSrc + "@" + res.Digest
			pinned[i] = "oci-archive:" + archive + "@" + res.Digest
		} else {
			lm.Tag = tag
			lm.Pinned = prefix + "/" + a.Name + "@" + res.Digest
			pinned[i] = lm.Pinned
		}
		outA[i], outL[i] = ma, lm
		return nil
	})
	if err != nil {
		return nil, err
	}
	if archive != "" {
		if err := layout.WriteArchive(tmp, archive); err != nil {
			return nil, fmt.Errorf("write %s: %w", archive, err)
		}
	}
	ms := &Set{APIVersion: APIVersion, Kind: KindSet, Addons: outA, Dir: opts.DeclDir}
	ml := &LockFile{APIVersion: APIVersion, Kind: KindLock, Addons: outL}
	return &MirrorResult{Set: ms, Lock: ml, Pinned: pinned, Referrers: int(referred.Load())}, nil
}

// mirrorReferrers copies what refers to a mirrored OCI member (and, for
// an index, to its manifests) from where it was read to dst, a registry
// reference or the archive's temporary layout.
func mirrorReferrers(ctx context.Context, art *source.Artifact, dst source.Ref, opts MirrorOptions) (int, error) {
	st, repo, ref := art.Beside()
	from, err := referrers.Beside(ctx, st, repo, ref, opts.Source.Registry)
	if errors.Is(err, referrers.ErrUnsupported) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	var to referrers.Location
	if dst.Kind == source.KindRegistry {
		r, err := opts.Source.Registry.ParseReference(dst.Name)
		if err != nil {
			return 0, err
		}
		to, err = referrers.Registry(r.Context(), opts.Source.Registry)
		if err != nil {
			return 0, err
		}
	} else {
		lst, err := layout.Open(dst.Path)
		if err != nil {
			return 0, err
		}
		to = referrers.Layout(lst, "")
	}
	subjects, err := referrers.Subjects(art.Digest, art.Index)
	if err != nil {
		return 0, err
	}
	limits := opts.ReferrerLimits
	if limits.MaxLayers == 0 {
		limits.MaxLayers = opts.Limits.MaxLayers
	}
	copied, err := referrers.Copy(ctx, from, to, subjects, limits)
	if err != nil {
		return len(copied), fmt.Errorf("copy referrers of %s: %w", art.Ref, err)
	}
	return len(copied), nil
}

// mirrorArtifact checks a member against its pin and returns what to copy
// (the OCI artifact itself, or the tree packaged as an artifact) and the
// mirrored entry without its source.
func (s *Set) mirrorArtifact(ctx context.Context, a Addon, m Locked, opts Options) (*source.Artifact, Addon, error) {
	ad, err := s.fetchPinned(ctx, a, m, opts)
	if err != nil {
		return nil, Addon{}, err
	}
	ref, err := s.pinnedRef(a, m)
	if err != nil {
		return nil, Addon{}, err
	}
	ma := Addon{Name: a.Name, DependsOn: a.DependsOn, Platform: a.Platform, Values: a.Values}
	if !source.IsTree(ref.Kind) {
		ma.ContentDir = a.ContentDir
		art, err := source.Open(ctx, ref, opts.sourceOptions())
		if err != nil {
			return nil, Addon{}, err
		}
		if art.Digest.String() != m.Digest {
			art.Close()
			return nil, Addon{}, &MismatchError{Member: a.Name, Source: m.Pinned, What: "has digest", Got: art.Digest.String(), Locked: m.Digest}
		}
		return art, ma, nil
	}
	bo := build.Options{Format: pack.FormatArtifact, Name: a.Name}
	if ad.Config != nil {
		bo.Source, bo.Revision = ad.Config.Source, ad.Config.Revision
	}
	res, err := build.Build(ctx, ad.FS, bo)
	if err != nil {
		return nil, Addon{}, err
	}
	// The package must carry the tree the lock names.
	back, err := unpack.Image(ctx, res.Image, unpack.Options{Limits: opts.Limits})
	if err != nil {
		return nil, Addon{}, err
	}
	if back.Identity != m.Identity {
		return nil, Addon{}, &MismatchError{Member: a.Name, Source: "the packaged " + m.Pinned, What: "has identity", Got: back.Identity, Locked: m.Identity}
	}
	return &source.Artifact{Ref: ref, Image: res.Image, Digest: res.Digest}, ma, nil
}

// declHeader opens a declaration that Mirror wrote.
const declHeader = "# Written by 'addonpkg mirror': the mirrored set. Render it with its lock.\n"

// Marshal returns the declaration as YAML (the mirrored set's, say).
func (s *Set) Marshal() ([]byte, error) {
	c := *s
	c.APIVersion, c.Kind = APIVersion, KindSet
	if c.Addons == nil {
		c.Addons = []Addon{}
	}
	return encodeYAML(declHeader, &c)
}

// WriteDeclaration writes the declaration to file atomically.
func WriteDeclaration(s *Set, file string) error {
	b, err := s.Marshal()
	if err != nil {
		return err
	}
	return writeAtomic(file, b)
}

func absPath(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}
