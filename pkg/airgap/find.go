package airgap

import (
	"context"
	"errors"
	"fmt"

	"github.com/addonpkg/addonpkg/pkg/imagelock"
	"github.com/addonpkg/addonpkg/pkg/layout"
	"github.com/addonpkg/addonpkg/pkg/source"
)

// FindLocks finds the image locks of the add-on a SOURCE names: in the layout
// of an oci: or oci-archive: source or the local store, without network;
// for a registry reference, in the local store when opts would read the
// add-on from there (opts.StoreFirst) and it has a lock, else through the
// registry's referrers. imagelock.ErrNoLock when there is none; other sources (a
// folder, a URL, git) have none.
func FindLocks(ctx context.Context, ref source.Ref, opts source.Options) ([]*imagelock.Lock, error) {
	switch ref.Kind {
	case source.KindLayout, source.KindArchive, source.KindStore, source.KindRegistry:
	default:
		return nil, fmt.Errorf("%s: %w: a %s source carries no image lock", ref, imagelock.ErrNoLock, ref.Kind)
	}
	a, err := source.Open(ctx, ref, opts)
	if err != nil {
		return nil, err
	}
	subject := a.Digest
	if ref.Kind == source.KindLayout || ref.Kind == source.KindArchive {
		// The layout Open found: oci:DIR:REGISTRY/REPO:TAG is split there.
		ref = a.Ref
	}
	a.Close()
	switch ref.Kind {
	case source.KindLayout:
		st, err := layout.HandlesFrom(ctx).Open(ref.Path)
		if err != nil {
			return nil, err
		}
		return imagelock.FromLayout(st, subject)
	case source.KindArchive:
		h := layout.HandlesFrom(ctx)
		st, err := h.OpenArchive(ref.Path)
		if err != nil {
			return nil, err
		}
		if !h.Shared() {
			defer st.Close()
		}
		return imagelock.FromLayout(st, subject)
	case source.KindStore:
		st, err := storeOf(ctx, opts)
		if err != nil {
			return nil, err
		}
		return imagelock.FromLayout(st, subject)
	}
	if opts.StoreFirst && !ref.Explicit && opts.Pull != source.PullAlways {
		st, err := storeOf(ctx, opts)
		if err != nil {
			return nil, err
		}
		locks, err := imagelock.FromLayout(st, subject)
		if err == nil || !errors.Is(err, imagelock.ErrNoLock) {
			return locks, err
		}
		if opts.Pull == source.PullNever {
			return nil, err
		}
	}
	r, err := opts.Registry.ParseReference(ref.Name)
	if err != nil {
		return nil, err
	}
	return imagelock.FromRegistry(ctx, r.Context(), subject, opts.Registry)
}

// FindLocksOf is FindLocks for the add-on that was read from ref as
// pinned (a SOURCE by digest: unpack.Addon.Pinned, source.Artifact.Pinned;
// "" when there is none): a registry tag is not resolved again, since by
// now it may name another manifest, and so other locks. Other sources
// are read as ref.
func FindLocksOf(ctx context.Context, ref source.Ref, pinned string, opts source.Options) ([]*imagelock.Lock, error) {
	if ref.Kind == source.KindRegistry && pinned != "" {
		p, err := source.Parse(pinned)
		if err != nil {
			return nil, fmt.Errorf("%s: pinned as %s: %w", ref, pinned, err)
		}
		if p.Kind == source.KindRegistry {
			p.Explicit = ref.Explicit
			ref = p
		}
	}
	return FindLocks(ctx, ref, opts)
}

func storeOf(ctx context.Context, opts source.Options) (*layout.Store, error) {
	return source.StoreOf(ctx, opts)
}

// SelectLock picks the lock to relocate with: the one whose Mirror is mirror,
// else the first. Every lock of an add-on names the digests that were
// copied, so any of them relocates; the one made for mirror also names
// where each image is there.
func SelectLock(locks []*imagelock.Lock, mirror string) *imagelock.Lock {
	for _, l := range locks {
		if l.Mirror == mirror {
			return l
		}
	}
	if len(locks) == 0 {
		return nil
	}
	return locks[0]
}
