package source

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/addonpkg/addonpkg/pkg/layout"
	"github.com/addonpkg/addonpkg/pkg/mediatypes"
	"github.com/addonpkg/addonpkg/pkg/referrers"
)

// ErrNotVerifiable marks a source that Options.Verify cannot check: a
// folder, an http download or a git tree (no manifest digest), or a
// docker-archive (no place for signatures).
var ErrNotVerifiable = errors.New("cannot verify a signature")

// Verifier checks an opened artifact before any of its layers is read:
// that its manifest digest d is signed, by what refers to it at loc
// (where the artifact was read: its registry repository or layout).
// pkg/signature's KeyVerifier implements it with public keys, knowing
// nothing of sources (a signing library compiles no resolver); other
// kinds of verification (keyless) can be added behind the same
// interface.
type Verifier interface {
	VerifyAt(ctx context.Context, loc referrers.Location, d v1.Hash) error
}

// Layout is the OCI image layout the artifact was read from (the local
// store, an oci: directory, an oci-archive's contents), where its
// signatures and referrers are too; nil for a registry or a
// docker-archive.
func (a *Artifact) Layout() *layout.Store { return a.store }

// Beside says where what refers to the artifact lives (package
// referrers): the layout it was read from, with, in the local store, the
// repository its tags are prefixed with; or, for a registry, the
// reference it was read under. A docker-archive has none of them.
func (a *Artifact) Beside() (st *layout.Store, repo, registryRef string) {
	if a.store != nil {
		switch a.Ref.Kind {
		case KindStore, KindRegistry:
			return a.store, a.Repository(), ""
		}
		return a.store, "", ""
	}
	if a.Ref.Kind == KindRegistry {
		return nil, "", a.Ref.Name
	}
	return nil, "", ""
}

// OpenSigned opens ref where its signatures live, to sign or verify it:
// a registry reference (read from the registry, never from the store's
// copy: opts.StoreFirst is ignored), a name in the local store, oci:DIR
// or oci-archive:FILE. Any other kind wraps ErrNotVerifiable. It
// returns the artifact (close it) and where what refers to it lives
// (Beside, referrers.Beside).
func OpenSigned(ctx context.Context, ref Ref, opts Options) (*Artifact, referrers.Location, error) {
	switch ref.Kind {
	case KindRegistry, KindStore, KindLayout, KindArchive:
	default:
		return nil, nil, fmt.Errorf("%s: %w: signatures live beside a manifest in a registry, the local store, or an OCI layout", ref, ErrNotVerifiable)
	}
	opts.StoreFirst = false
	art, err := Open(ctx, ref, opts)
	if err != nil {
		return nil, nil, err
	}
	st, repo, r := art.Beside()
	loc, err := referrers.Beside(ctx, st, repo, r, opts.Registry)
	if err != nil {
		art.Close()
		return nil, nil, err
	}
	return art, loc, nil
}

// Pin opens ref with opts, so that opts.Verify checks it, and returns
// ref pinned to the manifest digest it read (Artifact.Pinned): what is
// read next under the pinned reference is what was checked. A kind
// without a pinned form returns ref itself.
func Pin(ctx context.Context, ref Ref, opts Options) (Ref, error) {
	a, err := Open(ctx, ref, opts)
	if err != nil {
		return ref, err
	}
	defer a.Close()
	if p := a.Pinned(); p != "" {
		return Parse(p)
	}
	return ref, nil
}

func verifyArtifact(ctx context.Context, a *Artifact, opts Options) error {
	if opts.Verify == nil {
		return nil
	}
	if a.Ref.Kind == KindDockerArchive {
		return fmt.Errorf("%s: %w: a docker-archive holds no signatures", a.Ref, ErrNotVerifiable)
	}
	st, repo, ref := a.Beside()
	loc, err := referrers.Beside(ctx, st, repo, ref, opts.Registry)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrNotVerifiable, err)
	}
	err = opts.Verify.VerifyAt(ctx, loc, a.Digest)
	if err == nil || a.Ref.Kind != KindRegistry || a.store == nil || opts.Pull == PullNever {
		return err
	}
	// A registry reference read from the store's copy (StoreFirst): its
	// signature may be beside the copy (pulled with it) or only at the
	// registry the reference names (signed after the copy was pulled, or
	// pushed from a build here). It is the same manifest digest, so a
	// signature at either place signs it; PullNever keeps the check
	// offline.
	rloc, rerr := referrers.Beside(ctx, nil, "", a.Ref.Name, opts.Registry)
	if rerr == nil {
		if rerr = opts.Verify.VerifyAt(ctx, rloc, a.Digest); rerr == nil {
			return nil
		}
	}
	return fmt.Errorf("%w (the local store's copy); at the registry: %w", err, rerr)
}

// withoutReferrers drops from a layout's entries those that refer to
// another manifest: cosign's sha256-HEX.sig, .att and .sbom tags and the
// sha256-HEX fallback tag (by ref name), and manifests with a subject.
// An entry whose manifest cannot be read is kept (opening it will say
// why).
func withoutReferrers(st *layout.Store, entries []v1.Descriptor) []v1.Descriptor {
	var out []v1.Descriptor
	for _, e := range entries {
		if mediatypes.IsReferrerTag(e.Annotations[mediatypes.AnnotationRefName]) {
			continue
		}
		// cosign save names none, but marks its signatures and
		// attestations, which have no subject.
		if mediatypes.CosignSavedSuffix(e.Annotations) != "" {
			continue
		}
		if hasSubject(st, e) {
			continue
		}
		out = append(out, e)
	}
	return out
}

func hasSubject(st *layout.Store, d v1.Descriptor) bool {
	var raw []byte
	if mediatypes.IsIndex(mediatypes.MediaType(d.MediaType)) {
		idx, err := st.Index(d)
		if err != nil {
			return false
		}
		raw, _ = idx.RawManifest()
	} else {
		img, err := st.Image(d)
		if err != nil {
			return false
		}
		raw, _ = img.RawManifest()
	}
	var doc struct {
		Subject *v1.Descriptor `json:"subject"`
	}
	return json.Unmarshal(raw, &doc) == nil && doc.Subject != nil
}
