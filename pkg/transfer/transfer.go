// Package transfer copies add-ons between the places they live: the local
// store, registries, OCI layouts, oci-archive and docker-archive files.
// Digests are preserved: manifests and blobs are copied byte for byte.
package transfer

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/addonpkg/addonpkg/pkg/layout"
	"github.com/addonpkg/addonpkg/pkg/mediatypes"
	"github.com/addonpkg/addonpkg/pkg/referrers"
	"github.com/addonpkg/addonpkg/pkg/registry"
	"github.com/addonpkg/addonpkg/pkg/source"
	"github.com/addonpkg/addonpkg/pkg/unpack"
)

// Options change a copy.
type Options struct {
	source.Options
	// AllPlatforms copies a whole index; otherwise one platform's image.
	AllPlatforms bool
	// Platform picks the image of an index (nil: running platform).
	Platform *v1.Platform
	// BlobProgress, when set, is told how far each blob's copy is.
	BlobProgress layout.Progress
	// Referrers also copies what refers to the add-on (package referrers:
	// signatures, SBOMs, attestations), to any destination but a
	// docker-archive; ReferrerLimits bound it.
	Referrers      bool
	ReferrerLimits referrers.Options
}

// Result describes what was written.
type Result struct {
	// Reference is where it went, with its digest: REGISTRY/REPO@sha256:...
	// for registries, oci:DIR@sha256:... for layouts.
	Reference string          `json:"reference"`
	Digest    string          `json:"digest"`
	Size      int64           `json:"size"`
	MediaType types.MediaType `json:"mediaType"`
	// Referrers counts the referrers copied with it (Options.Referrers).
	Referrers int `json:"referrers"`
}

// ErrUnsupportedDestination marks a destination that cannot hold the source.
var ErrUnsupportedDestination = errors.New("unsupported destination")

// Copy copies src to dst.
func Copy(ctx context.Context, src, dst source.Ref, opts Options) (*Result, error) {
	a, err := source.Open(ctx, src, opts.Options)
	if err != nil {
		return nil, err
	}
	defer a.Close()
	if a.Index != nil && !opts.AllPlatforms {
		img, err := unpack.SelectImage(a.Index, opts.Platform)
		if err != nil {
			return nil, fmt.Errorf("%s: %w (or copy every platform with --all-platforms)", src, err)
		}
		a.Image, a.Index = img, nil
	}
	return Write(ctx, a, dst, opts)
}

// Write writes an opened image or index to dst. The media type written
// (to a registry's Content-Type, a layout's index.json, the Result) is
// the one the manifest's own bytes give (layout.MediaTypeOf), never what
// the source said, which for a registry is a header.
func Write(ctx context.Context, a *source.Artifact, dst source.Ref, opts Options) (*Result, error) {
	a, err := typedByContent(a)
	if err != nil {
		return nil, err
	}
	res, err := describe(a)
	if err != nil {
		return nil, err
	}
	switch dst.Kind {
	case source.KindRegistry:
		ref, err := opts.Registry.ParseReference(dst.Name)
		if err != nil {
			return nil, err
		}
		ropts, err := opts.Registry.Remote(ctx)
		if err != nil {
			return nil, err
		}
		// The registry names what it stored: make sure it is what we sent.
		// A manifest changed on the way is pushed again (blobs already
		// there are not); if it keeps changing, the push fails.
		var got *v1.Descriptor
		for try := 0; try < 3; try++ {
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
				return nil, registry.Explain(dst.Name, err)
			}
			got, err = remote.Head(ref, ropts...)
			if err != nil {
				return nil, registry.Explain(dst.Name, fmt.Errorf("check the pushed manifest: %w", err))
			}
			if got.Digest.String() == res.Digest {
				break
			}
		}
		if got.Digest.String() != res.Digest {
			return nil, fmt.Errorf("%s: the registry holds %s, not the pushed %s: the manifest keeps changing in transit", dst.Name, got.Digest, res.Digest)
		}
		res.Reference = ref.Context().Name() + "@" + res.Digest
		if err := opts.copyReferrers(ctx, a, res, referrers.Registry(ref.Context(), ropts...)); err != nil {
			return nil, err
		}
	case source.KindStore:
		st := opts.Store
		if st == nil {
			if st, err = source.DefaultStore(); err != nil {
				return nil, err
			}
		}
		if err := writeLayout(ctx, st, a, dst.Name, opts.BlobProgress); err != nil {
			return nil, err
		}
		res.Reference = dst.Name + "@" + res.Digest
		if err := opts.copyReferrers(ctx, a, res, referrers.Layout(st, repositoryOf(dst.Name))); err != nil {
			return nil, err
		}
	case source.KindLayout:
		st, err := layout.Init(dst.Path)
		if err != nil {
			return nil, err
		}
		if err := writeLayout(ctx, st, a, dst.Name, opts.BlobProgress); err != nil {
			return nil, err
		}
		res.Reference = "oci:" + dst.Path + "@" + res.Digest
		if err := opts.copyReferrers(ctx, a, res, referrers.Layout(st, "")); err != nil {
			return nil, err
		}
	case source.KindArchive:
		// Referrers go into the archive's layout before it is packed.
		withReferrers := func(st *layout.Store) error {
			return opts.copyReferrers(ctx, a, res, referrers.Layout(st, ""))
		}
		if err := writeArchive(ctx, a, dst, opts.BlobProgress, withReferrers); err != nil {
			return nil, err
		}
		res.Reference = "oci-archive:" + dst.Path + "@" + res.Digest
	case source.KindDockerArchive:
		if a.Index != nil {
			return nil, fmt.Errorf("%s: %w: a docker-archive holds one image, not an index", dst, ErrUnsupportedDestination)
		}
		if err := checkDockerImage(a.Image); err != nil {
			return nil, fmt.Errorf("%s: %w: %w", dst, ErrUnsupportedDestination, err)
		}
		if err := writeDockerArchive(a.Image, dst); err != nil {
			return nil, err
		}
		res.Reference = "docker-archive:" + dst.Path
	default:
		return nil, fmt.Errorf("%s: %w", dst, ErrUnsupportedDestination)
	}
	return res, nil
}

func describe(a *source.Artifact) (*Result, error) {
	var (
		raw []byte
		mt  types.MediaType
		err error
	)
	if a.Index != nil {
		raw, err = a.Index.RawManifest()
		if err == nil {
			mt, err = a.Index.MediaType()
		}
	} else {
		raw, err = a.Image.RawManifest()
		if err == nil {
			mt, err = a.Image.MediaType()
		}
	}
	if err != nil {
		return nil, err
	}
	h, _, err := v1.SHA256(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	return &Result{Digest: h.String(), Size: int64(len(raw)), MediaType: mt}, nil
}

func writeLayout(ctx context.Context, st *layout.Store, a *source.Artifact, tag string, progress layout.Progress) error {
	var names []string
	if tag != "" {
		names = append(names, tag)
	}
	var err error
	if a.Index != nil {
		_, err = st.WriteIndex(ctx, a.Index, progress, names...)
	} else {
		_, err = st.WriteImage(ctx, a.Image, progress, names...)
	}
	return err
}

// writeArchive writes a layout in a temp directory beside the file, then
// packs it; the archive appears only when complete.
func writeArchive(ctx context.Context, a *source.Artifact, dst source.Ref, progress layout.Progress, extra func(*layout.Store) error) error {
	tmp, err := os.MkdirTemp(filepath.Dir(absOf(dst.Path)), ".addonpkg-archive-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", dst, err)
	}
	defer os.RemoveAll(tmp)
	st, err := layout.Init(tmp)
	if err != nil {
		return err
	}
	if err := writeLayout(ctx, st, a, dst.Name, progress); err != nil {
		return err
	}
	if err := extra(st); err != nil {
		return err
	}
	if err := layout.WriteArchive(tmp, dst.Path); err != nil {
		return fmt.Errorf("write %s: %w", dst, err)
	}
	return nil
}

// checkDockerImage refuses what a docker-archive cannot carry: docker
// load, skopeo and addonpkg read it as a container image, so an add-on
// artifact (or any other artifact) written there would come back as
// something else, or not at all.
func checkDockerImage(img v1.Image) error {
	m, err := img.Manifest()
	if err != nil {
		return err
	}
	cfg := mediatypes.MediaType(m.Config.MediaType)
	if cfg != mediatypes.OCIConfig && cfg != mediatypes.DockerConfig {
		what := "an artifact"
		if cfg == mediatypes.AddonConfig || mediatypes.MediaType(m.ArtifactType) == mediatypes.AddonConfig {
			what = "an add-on in the artifact form"
		}
		return fmt.Errorf("a docker-archive holds only container images (the image form), and this is %s (config %s): copy it to oci:DIR or oci-archive:FILE, or build it with --format image", what, m.Config.MediaType)
	}
	for i, l := range m.Layers {
		if !mediatypes.IsImageLayer(mediatypes.MediaType(l.MediaType)) {
			return fmt.Errorf("a docker-archive holds only container images, and layer %d has media type %s", i+1, l.MediaType)
		}
	}
	return nil
}

// writeDockerArchive writes a `docker load` tarball, atomically.
func writeDockerArchive(img v1.Image, dst source.Ref) error {
	tag := dst.Name
	if tag == "" {
		tag = "addon:latest"
	}
	ref, err := name.NewTag(tag)
	if err != nil {
		return fmt.Errorf("%s: %w", dst, err)
	}
	f, err := os.CreateTemp(filepath.Dir(absOf(dst.Path)), filepath.Base(dst.Path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", dst, err)
	}
	defer os.Remove(f.Name())
	if err := tarball.Write(ref, img, f); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", dst, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", dst, err)
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), dst.Path)
}
