package imagelock

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/partial"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/addonpkg/addonpkg/internal/verify"
	"github.com/addonpkg/addonpkg/pkg/errdef"
	"github.com/addonpkg/addonpkg/pkg/layout"
	"github.com/addonpkg/addonpkg/pkg/mediatypes"
	"github.com/addonpkg/addonpkg/pkg/registry"
	"github.com/addonpkg/addonpkg/pkg/safetree"
)

// emptyJSON is the OCI empty descriptor's content: an artifact without a
// config of its own points its config at it.
var emptyJSON = []byte("{}")

// Artifact builds the lock artifact: an OCI image manifest whose
// artifactType and only layer are mediatypes.ImagesLock, whose config is
// the OCI empty descriptor, and whose subject is the add-on. The lock's
// Subject is set to subject's digest.
func Artifact(l *Lock, subject v1.Descriptor) (v1.Image, error) {
	c := *l
	c.Subject = subject.Digest.String()
	doc, err := c.Encode()
	if err != nil {
		return nil, err
	}
	a := &artifact{doc: doc, docDigest: digestOf(doc), emptyDigest: digestOf(emptyJSON)}
	sub := v1.Descriptor{MediaType: subject.MediaType, Size: subject.Size, Digest: subject.Digest}
	m := v1.Manifest{
		SchemaVersion: 2,
		MediaType:     types.OCIManifestSchema1,
		ArtifactType:  string(mediatypes.ImagesLock),
		Config:        v1.Descriptor{MediaType: mediatypes.OCIEmpty, Size: int64(len(emptyJSON)), Digest: a.emptyDigest, Data: emptyJSON},
		Layers:        []v1.Descriptor{{MediaType: mediatypes.ImagesLock, Size: int64(len(doc)), Digest: a.docDigest}},
		Subject:       &sub,
	}
	if a.manifest, err = json.Marshal(&m); err != nil {
		return nil, err
	}
	return partial.CompressedToImage(a)
}

func digestOf(b []byte) v1.Hash {
	h, _, _ := v1.SHA256(bytes.NewReader(b))
	return h
}

// artifact is the partial.CompressedImageCore of a lock artifact.
type artifact struct {
	manifest, doc          []byte
	docDigest, emptyDigest v1.Hash
}

func (a *artifact) MediaType() (types.MediaType, error) { return types.OCIManifestSchema1, nil }
func (a *artifact) RawManifest() ([]byte, error)        { return a.manifest, nil }
func (a *artifact) RawConfigFile() ([]byte, error)      { return emptyJSON, nil }
func (a *artifact) LayerByDigest(h v1.Hash) (partial.CompressedLayer, error) {
	switch h {
	case a.docDigest:
		return static.NewLayer(a.doc, mediatypes.ImagesLock), nil
	case a.emptyDigest:
		return static.NewLayer(emptyJSON, mediatypes.OCIEmpty), nil
	}
	return nil, fmt.Errorf("lock artifact has no blob %s", h)
}

// Push writes the lock artifact into repo, beside the add-on (subject),
// by digest. On a registry without the referrers API, go-containerregistry
// adds it to the index tagged sha256-<hex> of the subject (the referrers
// tag schema), keeping the referrers already listed there.
func Push(ctx context.Context, l *Lock, subject v1.Descriptor, repo name.Repository, opts registry.Options) (v1.Hash, error) {
	img, err := Artifact(l, subject)
	if err != nil {
		return v1.Hash{}, err
	}
	d, err := img.Digest()
	if err != nil {
		return v1.Hash{}, err
	}
	ropts, err := opts.Remote(ctx)
	if err != nil {
		return v1.Hash{}, err
	}
	ref := repo.Digest(d.String())
	if err := remote.Write(ref, img, ropts...); err != nil {
		return v1.Hash{}, registry.Explain(ref.String(), fmt.Errorf("push the image lock: %w", err))
	}
	return d, nil
}

// Store writes the lock artifact into an OCI layout (or the local store)
// as an untagged entry of index.json, whose descriptor carries the
// artifactType that FromLayout looks for.
func Store(ctx context.Context, l *Lock, subject v1.Descriptor, st *layout.Store) (v1.Hash, error) {
	img, err := Artifact(l, subject)
	if err != nil {
		return v1.Hash{}, err
	}
	d, err := st.WriteImage(ctx, img, nil)
	if err != nil {
		return v1.Hash{}, fmt.Errorf("write the image lock: %w", err)
	}
	return d.Digest, nil
}

// FromLayout finds the locks of subject in a layout, as
// layout.Store.Referrers discovers referrers there: every manifest of
// index.json whose subject is subject, and every one listed in an index
// tagged sha256-<hex> of the subject (the referrers tag schema, should a
// copy have carried it into the layout), that is a lock of subject. It
// reads no network; ErrNoLock when there is none.
func FromLayout(st *layout.Store, subject v1.Hash) ([]*Lock, error) {
	// A local read: nothing to cancel.
	ds, err := st.Referrers(context.Background(), subject, "")
	if err != nil {
		return nil, err
	}
	var out []*Lock
	for _, d := range ds {
		if !maybeLock(d) {
			continue
		}
		img, err := st.Image(d)
		if err != nil {
			return nil, fmt.Errorf("image lock %s: %w", d.Digest, err)
		}
		l, err := read(img, subject)
		if errors.Is(err, errOtherSubject) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("image lock %s: %w", d.Digest, err)
		}
		out = append(out, l)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: %w", subject, ErrNoLock)
	}
	return out, nil
}

// FromRegistry finds the locks of the add-on repo@subject through the
// referrers API, or the referrers tag schema where the registry has no
// referrers API. ErrNoLock when there is none.
func FromRegistry(ctx context.Context, repo name.Repository, subject v1.Hash, opts registry.Options) ([]*Lock, error) {
	ropts, err := opts.Remote(ctx)
	if err != nil {
		return nil, err
	}
	ref := repo.Digest(subject.String())
	// No artifactType filter: some registries (go-containerregistry's
	// own) list a referrer under its config media type, which for the lock
	// is the OCI empty one, not under its manifest's artifactType.
	idx, err := remote.Referrers(ref, ropts...)
	if err != nil {
		return nil, registry.Explain(ref.String(), fmt.Errorf("list referrers: %w", err))
	}
	im, err := idx.IndexManifest()
	if err != nil {
		return nil, registry.Explain(ref.String(), fmt.Errorf("list referrers: %w", err))
	}
	var out []*Lock
	for _, d := range im.Manifests {
		if !maybeLock(d) {
			continue
		}
		img, err := remote.Image(repo.Digest(d.Digest.String()), ropts...)
		if err != nil {
			return nil, registry.Explain(ref.String(), fmt.Errorf("image lock %s: %w", d.Digest, err))
		}
		// Its blob is read and judged as every registry blob is.
		img = opts.Blobs(repo).Image(ctx, img)
		l, err := read(img, subject)
		if errors.Is(err, errOtherSubject) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("%s: image lock %s: %w", ref, d.Digest, err)
		}
		out = append(out, l)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: %w", ref, ErrNoLock)
	}
	return out, nil
}

// maybeLock tells from a referrers list entry whether it may be a lock:
// its artifactType is the lock's, or the OCI empty config's, or absent.
func maybeLock(d v1.Descriptor) bool {
	switch mediatypes.MediaType(d.ArtifactType) {
	case mediatypes.ImagesLock, mediatypes.OCIEmpty, "":
		return mediatypes.IsManifest(mediatypes.MediaType(d.MediaType)) || d.MediaType == ""
	}
	return false
}

// errOtherSubject marks a referrer that is no lock of the subject.
var errOtherSubject = errors.New("not a lock of this subject")

// read reads a lock artifact, checking its shape and that it belongs to
// subject (both the manifest's subject and the document's).
func read(img v1.Image, subject v1.Hash) (*Lock, error) {
	m, err := img.Manifest()
	if err != nil {
		return nil, err
	}
	if m.Subject == nil || m.Subject.Digest != subject || m.ArtifactType != string(mediatypes.ImagesLock) {
		return nil, errOtherSubject
	}
	if len(m.Layers) != 1 || m.Layers[0].MediaType != mediatypes.ImagesLock {
		return nil, fmt.Errorf("%w: want one layer of %s", ErrInvalid, mediatypes.ImagesLock)
	}
	if err := lockCap.Check("", m.Layers[0].Size); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	b, err := verify.Layer(img, m.Layers[0], lockCap)
	if errors.Is(err, errdef.ErrDigestMismatch) || errors.Is(err, safetree.ErrLimit) {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if err != nil {
		return nil, err
	}
	l, err := Parse(b)
	if err != nil {
		return nil, err
	}
	if l.Subject != subject.String() {
		return nil, fmt.Errorf("%w: the document names subject %s, the manifest %s", ErrInvalid, l.Subject, subject)
	}
	return l, nil
}
