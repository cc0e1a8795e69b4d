package source

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/addonpkg/addonpkg/pkg/errdef"
	"github.com/addonpkg/addonpkg/pkg/layout"
	"github.com/addonpkg/addonpkg/pkg/reference"
)

// ErrStoreName marks a name the local store does not take: a name in it
// is NAME[:TAG] or REGISTRY/REPO[:TAG] (or @DIGEST), never oci:DIR, a
// path or a URL.
var ErrStoreName = errors.New("want NAME[:TAG] or REGISTRY/REPO[:TAG]")

// StoreName is s as the local store names it, with the default tag
// when it has no tag or digest (reference.WithDefaultTag). The error, for
// any s that is not a store name or a registry reference, wraps
// ErrStoreName and quotes s: `"oci:x": want NAME[:TAG] or ...`.
func StoreName(s string) (string, error) {
	name := reference.WithDefaultTag(s)
	if r, err := Parse(name); err != nil || (r.Kind != KindStore && r.Kind != KindRegistry) {
		return "", fmt.Errorf("%q: %w", s, ErrStoreName)
	}
	return name, nil
}

// storeLocation is the local store: NAME[:TAG] or NAME@DIGEST, a name
// without a registry host (told by look, not by a prefix).
type storeLocation struct{}

func (storeLocation) Kind() Kind         { return KindStore }
func (storeLocation) Claims(string) bool { return false }
func (storeLocation) Parse(s string) (Ref, error) {
	return Ref{Kind: KindStore, Name: reference.WithDefaultTag(s)}, nil
}

func (storeLocation) Format(r Ref) string {
	// "oci:latest" would read back as a layout: the default tag is
	// implied by the bare name.
	for _, p := range []string{"oci:", "oci-archive:", "docker-archive:"} {
		if strings.HasPrefix(r.Name, p) && strings.TrimPrefix(r.Name, p) == "latest" {
			return strings.TrimSuffix(p, ":")
		}
	}
	return r.Name
}

func (storeLocation) Open(ctx context.Context, ref Ref, opts Options) (*Artifact, error) {
	st, err := storeOf(ctx, opts)
	if err != nil {
		return nil, err
	}
	// A short name is a local name: it never falls through to a
	// registry (Docker Hub is reached only by docker.io/NAME), so a
	// mistyped name neither leaks nor waits on the network.
	if opts.Pull == PullAlways {
		return nil, fmt.Errorf("%w: %s is a local name, there is no registry to pull it from (for Docker Hub write %s)", ErrShortName, ref.Name, reference.DockerHub(ref.Name))
	}
	d, err := st.Resolve(ref.Name)
	if err == nil {
		return fromStore(st, ref, d, nil)
	}
	if !errors.Is(err, errdef.ErrNotFound) {
		return nil, err
	}
	// Under PullNever (push's source, --pull never) a registry is not
	// reached either, so Docker Hub's spelling is no way out.
	return nil, notInStore(st, ref.Name, opts.Pull == PullNever)
}

func (storeLocation) Write(ctx context.Context, a *Artifact, dst Ref, opts Options) (string, error) {
	st, err := storeOf(ctx, opts)
	if err != nil {
		return "", err
	}
	if err := writeLayout(ctx, st, a, dst.Name, opts.BlobProgress); err != nil {
		return "", err
	}
	// REPO@DIGEST, as a registry's Write gives (push prints it): the
	// tag is not part of a pinned reference. It names the same add-on in
	// the store (Pinned) and, for a name pulled, in the registry.
	return reference.Repository(dst.Name) + "@" + a.Digest.String(), nil
}

func (storeLocation) Pinned(a *Artifact) string {
	return reference.Repository(a.Ref.Name) + "@" + a.Digest.String()
}
func (storeLocation) Repository(a *Artifact) string { return namedRepository(a.Ref.Name) }

// storeOf is the local store, the operation's own when ctx carries
// Handles (layout.Handles.Own).
func storeOf(ctx context.Context, opts Options) (*layout.Store, error) {
	st := opts.Store
	if st == nil {
		var err error
		if st, err = DefaultStore(); err != nil {
			return nil, err
		}
	}
	return layout.HandlesFrom(ctx).Own(st), nil
}

// StoreOf is the local store as Open and Write reach it with ctx and
// opts: opts.Store (else DefaultStore), or the operation's own Store of
// it when ctx carries Handles (layout.Handles.Own).
func StoreOf(ctx context.Context, opts Options) (*layout.Store, error) { return storeOf(ctx, opts) }
