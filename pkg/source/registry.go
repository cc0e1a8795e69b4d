package source

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/addonpkg/addonpkg/internal/retry"
	"github.com/addonpkg/addonpkg/pkg/errdef"
	"github.com/addonpkg/addonpkg/pkg/mediatypes"
	"github.com/addonpkg/addonpkg/pkg/reference"
	"github.com/addonpkg/addonpkg/pkg/registry"
)

// registryLocation is a registry: REGISTRY/REPO[:TAG|@DIGEST], told by
// its first component being a host, or docker://REF and oci://REF
// written out.
type registryLocation struct{}

func (registryLocation) Kind() Kind { return KindRegistry }

func (registryLocation) Claims(s string) bool {
	return strings.HasPrefix(s, "docker://") || (strings.HasPrefix(s, "oci://") && !strings.HasPrefix(s, "oci:///"))
}

func (registryLocation) Parse(s string) (Ref, error) {
	r := s[strings.Index(s, "://")+3:]
	if _, err := name.ParseReference(r); err != nil {
		return Ref{}, fmt.Errorf("%w: %q: %w", ErrBadSource, s, err)
	}
	return Ref{Kind: KindRegistry, Name: r, Explicit: true}, nil
}

func (registryLocation) Format(r Ref) string {
	if !reference.HasRegistry(r.Name) {
		// docker://NAME without a host: without the prefix it would
		// read back as a store name.
		return "docker://" + r.Name
	}
	return r.Name
}

func (registryLocation) Open(ctx context.Context, ref Ref, opts Options) (*Artifact, error) {
	// As docker run does: a copy in the local store (a pull or a build
	// tagged with the full name) wins, unless the pull policy is always.
	if opts.StoreFirst && !ref.Explicit && opts.Pull != PullAlways {
		st, err := storeOf(ctx, opts)
		if err != nil {
			return nil, err
		}
		d, err := st.Resolve(reference.WithDefaultTag(ref.Name))
		if err == nil {
			return fromStore(st, ref, d, nil)
		}
		if !errors.Is(err, errdef.ErrNotFound) {
			return nil, err
		}
		if opts.Pull == PullNever {
			return nil, &NotInStoreError{Name: ref.Name, PullNever: true}
		}
	}
	return openRemote(ctx, ref, opts)
}

// Write pushes a, then checks that the registry names what it stored as
// what was sent: a manifest changed on the way is pushed again (retry.Do;
// blobs already there are not); if it keeps changing, the push fails
// with errdef.ErrDigestMismatch.
func (registryLocation) Write(ctx context.Context, a *Artifact, dst Ref, opts Options) (string, error) {
	ref, err := opts.Registry.ParseReference(dst.Name)
	if err != nil {
		return "", err
	}
	ropts, err := opts.Registry.Remote(ctx)
	if err != nil {
		return "", err
	}
	err = retry.Do(ctx, func() error {
		var err error
		if a.Index != nil {
			err = remote.WriteIndex(ref, a.Index, ropts...)
		} else {
			img := a.Image
			if opts.BlobProgress != nil {
				img = progressImage{Image: img, report: opts.BlobProgress}
			}
			err = remote.Write(ref, img, ropts...)
		}
		if err != nil {
			return registry.Explain(dst.Name, err)
		}
		got, err := registry.Head(ctx, ref, ropts...)
		if err != nil {
			return registry.Explain(dst.Name, fmt.Errorf("check the pushed manifest: %w", err))
		}
		if got.Digest != a.Digest {
			return fmt.Errorf("%s: %w: the registry holds %s, not the pushed %s: the manifest keeps changing in transit", dst.Name, errdef.ErrDigestMismatch, got.Digest, a.Digest)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	return ref.Context().Name() + "@" + a.Digest.String(), nil
}

func (registryLocation) Pinned(a *Artifact) string {
	if r, err := name.ParseReference(a.Ref.Name); err == nil {
		return r.Context().Name() + "@" + a.Digest.String()
	}
	return reference.Repository(a.Ref.Name) + "@" + a.Digest.String()
}

func (registryLocation) Repository(a *Artifact) string { return namedRepository(a.Ref.Name) }

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
	// A registry that answers HEAD without the digest is asked with GET
	// (registry.Head): there is then no digest of its own to check.
	if _, isTag := r.(name.Tag); isTag {
		head, err := registry.Head(ctx, r, ropts...)
		if err != nil {
			return nil, registry.Explain(ref.Name, err)
		}
		r = r.Context().Digest(head.Digest.String())
	}
	// A manifest fetched by digest is verified; one that arrives changed
	// or cut short is fetched again (retry.Do).
	var desc *remote.Descriptor
	err = retry.Do(ctx, func() (err error) {
		desc, err = remote.Get(r, ropts...)
		return err
	})
	if err != nil {
		return nil, registry.Explain(ref.Name, err)
	}
	a := &Artifact{Ref: ref, Digest: desc.Digest, remote: true, blobs: opts.Registry.Blobs(r.Context())}
	// Image or index, as the manifest's own bytes say: the media type of
	// desc is the registry's Content-Type header.
	mt := desc.MediaType
	if own, err := mediatypes.Sniff(desc.Manifest); err == nil {
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
	// Every blob is read and judged one way, whoever reads it (pull,
	// copy, inspect; the unpacker reads them unverified and judges them
	// itself, with the same digest and size): registry.Blobs.
	a.Image, a.Index = a.blobs.Image(ctx, a.Image), a.blobs.Index(ctx, a.Index)
	return a, nil
}
