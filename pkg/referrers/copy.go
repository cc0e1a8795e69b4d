package referrers

import (
	"context"
	"errors"
	"fmt"
	"slices"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/addonpkg/addonpkg/pkg/errdef"
	"github.com/addonpkg/addonpkg/pkg/safetree"
)

// Defaults of Options.
const (
	// DefaultMaxDepth: referrers, their referrers, and so on, four levels.
	DefaultMaxDepth = 4
	// DefaultMaxCount bounds the manifests one Copy writes.
	DefaultMaxCount = 256
)

// CosignTagSuffixes are the suffixes of cosign's tags: a signature, an
// attestation and an SBOM of the manifest sha256:HEX are tagged
// sha256-HEX.sig, sha256-HEX.att and sha256-HEX.sbom.
var CosignTagSuffixes = []string{".sig", ".att", ".sbom"}

// CosignTag is cosign's tag for what refers to d: sha256-HEX + suffix.
func CosignTag(d v1.Hash, suffix string) string {
	return d.Algorithm + "-" + d.Hex + suffix
}

// Options change a Copy.
type Options struct {
	// MaxDepth bounds the levels copied: 1 copies only what refers to the
	// subjects, 2 also what refers to those, and so on. 0 means
	// DefaultMaxDepth.
	MaxDepth int
	// MaxCount caps the manifests written; more is an error wrapping
	// ErrTooMany (and what was written stays). 0 means DefaultMaxCount.
	MaxCount int
	// SkipArtifactTypes lists artifact types not copied (nor counted by
	// Any): a copy that writes its own image lock skips the source's.
	SkipArtifactTypes []string
	// Ignored, when set, hears of each manifest at a cosign tag that is
	// not what the tag says, which is neither copied nor counted.
	Ignored func(Ignored)
	// MaxLayers caps the layers of each referrer copied, checked before
	// its layers are read, as for the add-on itself (a 1,500-layer
	// "SBOM"); 0 means safetree.DefaultMaxLayers.
	MaxLayers int
}

func (o Options) skips(f Copied) bool {
	return f.ArtifactType != "" && slices.Contains(o.SkipArtifactTypes, f.ArtifactType)
}

// Subjects are the manifests whose referrers travel with the manifest d:
// d itself and, when it is an index (idx not nil), each manifest it
// lists, since a signature or SBOM may name one platform's image.
func Subjects(d v1.Hash, idx v1.ImageIndex) ([]v1.Hash, error) {
	out := []v1.Hash{d}
	if idx == nil {
		return out, nil
	}
	im, err := idx.IndexManifest()
	if err != nil {
		return nil, err
	}
	for _, c := range im.Manifests {
		out = append(out, c.Digest)
	}
	return out, nil
}

// Any reports whether anything Copy would carry refers to d at loc (a
// signature, an SBOM, an attestation). A copy that would keep one
// platform of a signed index keeps the index whole instead: the
// signature covers the index, not its children.
func Any(ctx context.Context, loc Location, d v1.Hash, opts Options) (bool, error) {
	found, err := find(ctx, loc, d, opts)
	if err != nil {
		return false, err
	}
	for _, f := range found {
		if !opts.skips(f) {
			return true, nil
		}
	}
	return false, nil
}

// Copied is one manifest a Copy wrote.
type Copied struct {
	// Subject is the manifest it refers to.
	Subject string `json:"subject"`
	// Digest is its own manifest digest.
	Digest string `json:"digest"`
	// ArtifactType is what it is (for a subject referrer), as listed.
	ArtifactType string `json:"artifactType,omitempty"`
	// Tag is the cosign tag it was found (and written) under; "" for a
	// referrer found through its subject.
	Tag string `json:"tag,omitempty"`
}

// Find lists what refers to d at loc: the referrers whose subject is d
// (Tag empty) and the manifests cosign's tags of d name, when they are
// what the tag says (a cosign signature whose payloads name d for .sig,
// DSSE envelopes for .att, an SBOM for .sbom); any other manifest at such
// a tag is left out (Options.Ignored hears of it in Copy and Any).
func Find(ctx context.Context, loc Location, d v1.Hash) ([]Copied, error) {
	return find(ctx, loc, d, Options{})
}

func find(ctx context.Context, loc Location, d v1.Hash, opts Options) ([]Copied, error) {
	var out []Copied
	refs, err := loc.Referrers(ctx, d)
	if err != nil {
		return nil, err
	}
	for _, r := range refs {
		out = append(out, Copied{Subject: d.String(), Digest: r.Digest.String(), ArtifactType: r.ArtifactType})
	}
	for _, suffix := range CosignTagSuffixes {
		tag := CosignTag(d, suffix)
		desc, err := loc.Resolve(ctx, tag)
		if errors.Is(err, errdef.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("look up %s: %w", tag, err)
		}
		why, err := cosignKind(ctx, loc, d, suffix, desc)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", tag, err)
		}
		if why != "" {
			if opts.Ignored != nil {
				opts.Ignored(Ignored{Subject: d.String(), Tag: tag, Digest: desc.Digest.String(), Reason: why})
			}
			continue
		}
		out = append(out, Copied{Subject: d.String(), Digest: desc.Digest.String(), Tag: tag})
	}
	return out, nil
}

// Copy copies from src to dst what refers to each of subjects (see Find),
// then what refers to those, down to Options.MaxDepth levels, each
// manifest once. The subjects themselves must be copied already (or be
// copied after): Copy writes only what refers to them. A referrer listed
// at src but gone from it is skipped.
func Copy(ctx context.Context, src, dst Location, subjects []v1.Hash, opts Options) ([]Copied, error) {
	maxDepth, maxCount := opts.MaxDepth, opts.MaxCount
	if maxDepth <= 0 {
		maxDepth = DefaultMaxDepth
	}
	if maxCount <= 0 {
		maxCount = DefaultMaxCount
	}
	visited := map[string]bool{}
	for _, s := range subjects {
		visited[s.String()] = true
	}
	written := map[string]bool{} // digest+tag
	var out []Copied
	level := subjects
	for depth := 1; depth <= maxDepth && len(level) > 0; depth++ {
		var next []v1.Hash
		for _, s := range level {
			found, err := find(ctx, src, s, opts)
			if err != nil {
				return out, fmt.Errorf("referrers of %s at %s: %w", s, src, err)
			}
			for _, f := range found {
				key := f.Digest + "\x00" + f.Tag
				if written[key] || opts.skips(f) {
					continue
				}
				if len(out) >= maxCount {
					return out, fmt.Errorf("%s at %s: %w: more than %d", s, src, ErrTooMany, maxCount)
				}
				h, err := v1.NewHash(f.Digest)
				if err != nil {
					return out, fmt.Errorf("referrer of %s at %s: %w", s, src, err)
				}
				m, err := src.Open(ctx, h)
				if errors.Is(err, errdef.ErrNotFound) {
					continue
				}
				if err != nil {
					return out, fmt.Errorf("read referrer %s of %s: %w", h, s, err)
				}
				if err := checkLayers(m, opts.MaxLayers); err != nil {
					return out, fmt.Errorf("referrer %s of %s: %w", h, s, err)
				}
				if err := dst.Write(ctx, m, f.Tag); err != nil {
					return out, fmt.Errorf("copy referrer %s of %s to %s: %w", h, s, dst, err)
				}
				written[key] = true
				out = append(out, f)
				if !visited[f.Digest] {
					visited[f.Digest] = true
					next = append(next, h)
				}
			}
		}
		level = next
	}
	return out, nil
}

// checkLayers refuses a referrer image with more layers than max (0: the
// default), before any is read.
func checkLayers(m *Manifest, max int) error {
	if m.Image == nil {
		return nil
	}
	man, err := m.Image.Manifest()
	if err != nil {
		return err
	}
	return safetree.Limits{MaxLayers: max}.WithDefaults().CheckLayers(len(man.Layers))
}
