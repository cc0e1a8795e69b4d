package referrers

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"

	"github.com/addonpkg/addonpkg/pkg/errdef"
	"github.com/addonpkg/addonpkg/pkg/layout"
	"github.com/addonpkg/addonpkg/pkg/mediatypes"
	"github.com/addonpkg/addonpkg/pkg/registry"
	"github.com/addonpkg/addonpkg/pkg/safetree"
)

// Errors callers can test with errors.Is.
var (
	// ErrUnsupported: a manifest has no place beside it where referrers
	// could live (one read from a docker-archive), which Beside says
	// instead of a Location; a copy of referrers copies none. A Location
	// never returns it: a registry without the referrers API is read
	// through the tag-schema fallback.
	ErrUnsupported = errors.New("referrers unsupported")
	// ErrTooMany: more referrers than Options.MaxCount, or a listing
	// longer than safetree.MaxIndexManifests (a *ListingError).
	ErrTooMany = errors.New("too many referrers")
)

// ListingError says a listing of the referrers of Subject at Location
// (Location.Referrers) names Listed of them, over Max: a registry (or
// anyone who can push to it) that lists that many is not read further.
// A listing is an index, bounded as every index is: at most
// safetree.MaxIndexManifests entries, and its bytes capped before it is
// decoded, as any manifest a registry serves (safetree's index cap, a
// *safetree.LimitError) or as a layout's index.json. It wraps ErrTooMany.
type ListingError struct {
	Location, Subject string
	Listed, Max       int
}

func (e *ListingError) Error() string {
	return fmt.Sprintf("%s@%s: %d referrers listed, over %d", e.Location, e.Subject, e.Listed, e.Max)
}

func (e *ListingError) Unwrap() error { return ErrTooMany }

// Manifest is an opened manifest: an image or an index (exactly one is
// set), and its descriptor, whose media type is the one its bytes give.
type Manifest struct {
	Descriptor v1.Descriptor
	Image      v1.Image
	Index      v1.ImageIndex
}

// Location is where manifests and what refers to them live.
type Location interface {
	// String names the location in messages.
	String() string
	// Resolve gives the descriptor of the manifest a tag names, or an
	// error wrapping errdef.ErrNotFound.
	Resolve(ctx context.Context, tag string) (v1.Descriptor, error)
	// Referrers lists the manifests whose subject is d, sorted by digest.
	Referrers(ctx context.Context, d v1.Hash) ([]v1.Descriptor, error)
	// Open opens the manifest d, or fails with an error wrapping
	// errdef.ErrNotFound.
	Open(ctx context.Context, d v1.Hash) (*Manifest, error)
	// Write writes m (its blobs, then the manifest), tagged tag, or only
	// by digest when tag is "".
	Write(ctx context.Context, m *Manifest, tag string) error
}

// Registry is the repository repo of a registry, reached with ro. The
// Location builds its own transport from ro (registry.Options.Remote),
// so what a registry serves is bounded whatever ro says: a manifest, a
// referrers listing or a page of tags by safetree's index cap (a
// *safetree.LimitError) rather than go-containerregistry's 100 MiB, and
// the blobs of what Open gives are verified as every registry blob is
// (registry.Blobs). The error is one of ro's (an unreadable CAFile).
func Registry(repo name.Repository, ro registry.Options) (Location, error) {
	// The context of each call is given again with each request (options).
	ropts, err := ro.Remote(context.Background())
	if err != nil {
		return nil, err
	}
	return &registryLocation{repo: repo, opts: ropts, blobs: ro.Blobs(repo)}, nil
}

type registryLocation struct {
	repo name.Repository
	opts []remote.Option
	// blobs, when set, reads the blobs of what Open gives, judged as every
	// registry blob is (registry.Blobs.Image).
	blobs *registry.Blobs
}

func (r *registryLocation) String() string { return r.repo.Name() }

func (r *registryLocation) options(ctx context.Context) []remote.Option {
	return append(slices.Clip(r.opts), remote.WithContext(ctx))
}

func isNotFound(err error) bool {
	var terr *transport.Error
	return errors.As(err, &terr) && terr.StatusCode == http.StatusNotFound
}

func (r *registryLocation) Resolve(ctx context.Context, tag string) (v1.Descriptor, error) {
	ref := r.repo.Tag(tag)
	d, err := registry.Head(ctx, ref, r.options(ctx)...)
	if err != nil {
		if isNotFound(err) {
			return v1.Descriptor{}, fmt.Errorf("%s: %w", ref, errdef.ErrNotFound)
		}
		return v1.Descriptor{}, registry.Explain(ref.String(), err)
	}
	return *d, nil
}

func (r *registryLocation) Referrers(ctx context.Context, d v1.Hash) ([]v1.Descriptor, error) {
	ref := r.repo.Digest(d.String())
	idx, err := remote.Referrers(ref, r.options(ctx)...)
	if err != nil {
		if isNotFound(err) {
			return nil, nil
		}
		return nil, registry.Explain(ref.String(), fmt.Errorf("list referrers: %w", err))
	}
	im, err := idx.IndexManifest()
	if err != nil {
		return nil, registry.Explain(ref.String(), fmt.Errorf("list referrers: %w", err))
	}
	return listed(r, d, im.Manifests)
}

func (r *registryLocation) Open(ctx context.Context, d v1.Hash) (*Manifest, error) {
	ref := r.repo.Digest(d.String())
	desc, err := remote.Get(ref, r.options(ctx)...)
	if err != nil {
		if isNotFound(err) {
			return nil, fmt.Errorf("%s: %w", ref, errdef.ErrNotFound)
		}
		return nil, registry.Explain(ref.String(), err)
	}
	mt, err := mediatypes.Sniff(desc.Manifest)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ref, err)
	}
	m := &Manifest{Descriptor: v1.Descriptor{MediaType: mt, Size: desc.Size, Digest: desc.Digest}}
	if mediatypes.IsIndex(mediatypes.MediaType(mt)) {
		idx, err := desc.ImageIndex()
		if err != nil {
			return nil, registry.Explain(ref.String(), err)
		}
		if r.blobs != nil {
			idx = r.blobs.Index(ctx, idx)
		}
		m.Index = layout.TypedIndex(idx, mt)
	} else {
		img, err := desc.Image()
		if err != nil {
			return nil, registry.Explain(ref.String(), err)
		}
		if r.blobs != nil {
			img = r.blobs.Image(ctx, img)
		}
		m.Image = layout.TypedImage(img, mt)
	}
	return m, nil
}

func (r *registryLocation) Write(ctx context.Context, m *Manifest, tag string) error {
	var ref name.Reference = r.repo.Digest(m.Descriptor.Digest.String())
	if tag != "" {
		ref = r.repo.Tag(tag)
	}
	// go-containerregistry updates the subject's sha256-HEX fallback index
	// when the manifest has a subject and the registry has no referrers API.
	var err error
	if m.Index != nil {
		err = remote.WriteIndex(ref, m.Index, r.options(ctx)...)
	} else {
		err = remote.Write(ref, m.Image, r.options(ctx)...)
	}
	if err != nil {
		return registry.Explain(ref.String(), err)
	}
	return nil
}

// Layout is an OCI image layout. With repo set (the local store), a tag
// T is the layout's ref name REPO:T; without, the ref name is T.
func Layout(st *layout.Store, repo string) Location {
	return &layoutLocation{st: st, repo: repo}
}

type layoutLocation struct {
	st   *layout.Store
	repo string
}

func (l *layoutLocation) String() string {
	if l.repo != "" {
		return l.repo
	}
	return "oci:" + l.st.Dir()
}

func (l *layoutLocation) refName(tag string) string {
	if l.repo != "" {
		return l.repo + ":" + tag
	}
	return tag
}

func (l *layoutLocation) Resolve(_ context.Context, tag string) (v1.Descriptor, error) {
	d, err := l.st.Resolve(l.refName(tag))
	if errors.Is(err, errdef.ErrNotFound) {
		if d, ok, err := l.cosignSaved(tag); ok || err != nil {
			return d, err
		}
		return v1.Descriptor{}, fmt.Errorf("%s: %w", l.refName(tag), errdef.ErrNotFound)
	}
	return d, err
}

// cosignSaved finds what cosign's tag (sha256-HEX.sig, .att, .sbom) would
// name in a layout `cosign save` wrote, which tags nothing: the one
// entry of the tag's kind (mediatypes.CosignSavedSuffix), when the
// layout's saved image (or index) is sha256:HEX. cosign saves one image
// with what refers to it; a layout with more than one of either is not
// guessed at. The local store (repo set) is never such a layout.
func (l *layoutLocation) cosignSaved(tag string) (v1.Descriptor, bool, error) {
	if l.repo != "" {
		return v1.Descriptor{}, false, nil
	}
	var subject, suffix string
	for _, s := range CosignTagSuffixes {
		if rest, ok := strings.CutSuffix(tag, s); ok {
			subject, suffix = strings.Replace(rest, "-", ":", 1), s
			break
		}
	}
	if suffix == "" {
		return v1.Descriptor{}, false, nil
	}
	entries, err := l.st.Descriptors()
	if err != nil {
		return v1.Descriptor{}, false, err
	}
	var subjects, found []v1.Descriptor
	for _, e := range entries {
		switch {
		case mediatypes.IsCosignSavedSubject(e.Annotations):
			subjects = append(subjects, e)
		case mediatypes.CosignSavedSuffix(e.Annotations) == suffix:
			found = append(found, e)
		}
	}
	if len(subjects) != 1 || subjects[0].Digest.String() != subject || len(found) != 1 {
		return v1.Descriptor{}, false, nil
	}
	return found[0], true, nil
}

// Referrers is the store's own discovery (layout.Store.Referrers): the
// manifests of index.json whose subject is d, and those of a sha256-HEX
// fallback index a copy carried into the layout.
func (l *layoutLocation) Referrers(ctx context.Context, d v1.Hash) ([]v1.Descriptor, error) {
	ds, err := l.st.Referrers(ctx, d, l.repo)
	if err != nil {
		return nil, err
	}
	return listed(l, d, ds)
}

func (l *layoutLocation) Open(_ context.Context, d v1.Hash) (*Manifest, error) {
	desc, err := l.st.Resolve(d.String())
	if errors.Is(err, errdef.ErrNotFound) {
		return nil, fmt.Errorf("%s@%s: %w", l, d, errdef.ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	return l.open(desc)
}

func (l *layoutLocation) open(desc v1.Descriptor) (*Manifest, error) {
	desc.Annotations = nil
	m := &Manifest{Descriptor: desc}
	var err error
	if mediatypes.IsIndex(mediatypes.MediaType(desc.MediaType)) {
		m.Index, err = l.st.Index(desc)
	} else {
		m.Image, err = l.st.Image(desc)
	}
	if err != nil {
		return nil, fmt.Errorf("%s@%s: %w", l, desc.Digest, err)
	}
	return m, nil
}

func (l *layoutLocation) Write(ctx context.Context, m *Manifest, tag string) error {
	var names []string
	if tag != "" {
		names = append(names, l.refName(tag))
	}
	var err error
	if m.Index != nil {
		_, err = l.st.WriteIndex(ctx, m.Index, nil, names...)
	} else {
		_, err = l.st.WriteImage(ctx, m.Image, nil, names...)
	}
	if err != nil {
		return fmt.Errorf("write %s@%s: %w", l, m.Descriptor.Digest, err)
	}
	return nil
}

// listed is the listing ds of the referrers of d at loc, sorted, or a
// *ListingError when it names more than safetree.MaxIndexManifests.
func listed(loc Location, d v1.Hash, ds []v1.Descriptor) ([]v1.Descriptor, error) {
	if len(ds) > safetree.MaxIndexManifests {
		return nil, &ListingError{Location: loc.String(), Subject: d.String(), Listed: len(ds), Max: safetree.MaxIndexManifests}
	}
	return sorted(ds), nil
}

// sorted drops descriptors that are not manifests of a valid sha256
// digest, and sorts the rest by digest: registries list referrers in any
// order.
func sorted(ds []v1.Descriptor) []v1.Descriptor {
	out := make([]v1.Descriptor, 0, len(ds))
	for _, d := range ds {
		if d.Digest.Algorithm != "sha256" || len(d.Digest.Hex) != 64 {
			continue
		}
		out = append(out, d)
	}
	slices.SortFunc(out, func(a, b v1.Descriptor) int { return strings.Compare(a.Digest.Hex, b.Digest.Hex) })
	return slices.CompactFunc(out, func(a, b v1.Descriptor) bool { return a.Digest == b.Digest })
}
