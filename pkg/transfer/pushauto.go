package transfer

import (
	"context"
	"fmt"
	"maps"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/addonpkg/addonpkg/pkg/addon"
	"github.com/addonpkg/addonpkg/pkg/mediatypes"
	"github.com/addonpkg/addonpkg/pkg/pack"
	"github.com/addonpkg/addonpkg/pkg/source"
	"github.com/addonpkg/addonpkg/pkg/unpack"
)

// ConvertToImage rebuilds an artifact-form add-on as the image form: the
// same tree (so the same content identity), name, version, description,
// source, revision, created time and inventory, and the artifact's own
// manifest annotations; one gzip layer, as build writes it (pack). An add-on already in
// the image form is returned as it is.
func ConvertToImage(ctx context.Context, artifact v1.Image) (v1.Image, error) {
	ad, err := unpack.Image(ctx, artifact, unpack.Options{})
	if err != nil {
		return nil, err
	}
	if ad.Form == mediatypes.FormImage {
		return artifact, nil
	}
	if ad.Form != mediatypes.FormArtifact {
		return nil, fmt.Errorf("convert to the image form: a %s is not an add-on in the artifact form", ad.Form)
	}
	// The tree is packed again with the config it carries: its inventory
	// was derived when it was built, so nothing renders here (and copy and
	// push compile no kustomize: TestDependencyBudgets).
	src := ad.Config
	created := time.Unix(0, 0).UTC()
	if src.Created != "" {
		t, err := time.Parse(time.RFC3339, src.Created)
		if err != nil {
			return nil, fmt.Errorf("convert to the image form: created %q: %w", src.Created, err)
		}
		created = t.UTC().Truncate(time.Second)
	}
	name := src.Name
	if name == "" {
		name = "addon" // as build names an add-on without one
	}
	if err := pack.CheckName(name); err != nil {
		return nil, fmt.Errorf("convert to the image form: %w", err)
	}
	kind, err := addon.KindOf(ad.FS)
	if err != nil {
		return nil, fmt.Errorf("convert to the image form: %w", err)
	}
	inv := src.Inventory
	if inv.Objects == nil {
		inv.Objects = []addon.Object{}
	}
	cfg := &addon.Config{
		SpecVersion: mediatypes.SpecVersion,
		Name:        name,
		Version:     src.Version,
		Description: src.Description,
		Kind:        kind,
		Source:      src.Source,
		Revision:    src.Revision,
		Created:     created.Format(time.RFC3339),
		Inventory:   inv,
	}
	popts := pack.Options{Format: pack.FormatImage, Compression: mediatypes.Gzip, Created: created}
	if ann := extraAnnotations(ad.Manifest.Annotations); len(ann) > 0 {
		popts.Annotations = ann
	}
	layer, err := pack.Layer(ad.FS, popts)
	if err != nil {
		return nil, fmt.Errorf("convert to the image form: build layer: %w", err)
	}
	img, err := pack.Assemble(layer, cfg, popts)
	if err != nil {
		return nil, fmt.Errorf("convert to the image form: %w", err)
	}
	if cfg.Identity != ad.Identity {
		return nil, fmt.Errorf("convert to the image form: identity changed from %s to %s", ad.Identity, cfg.Identity)
	}
	return img, nil
}

// extraAnnotations are the annotations build does not compute itself.
func extraAnnotations(ann map[string]string) map[string]string {
	out := maps.Clone(ann)
	for _, k := range []string{
		mediatypes.LabelSpec, mediatypes.LabelName, mediatypes.LabelVersion, mediatypes.LabelKind, mediatypes.LabelIdentity,
		mediatypes.AnnotationTitle, mediatypes.AnnotationVersion, mediatypes.AnnotationDescription,
		mediatypes.AnnotationSource, mediatypes.AnnotationRevision, mediatypes.AnnotationCreated,
	} {
		delete(out, k)
	}
	return out
}

// Push formats: what PushAuto is asked to do with an artifact.
const (
	// FormatKeep pushes the add-on as it is.
	FormatKeep = "keep"
	// FormatAuto pushes the image form instead of the artifact form to a
	// registry that does not accept the artifact form.
	FormatAuto = "auto"
)

// A FormProbe knows which registries take the artifact form: it answers
// from what it learnt before or by asking the registry (doctor.Cache
// probes once and caches the answer). PushAuto asks it; transfer does not
// probe registries itself.
type FormProbe interface {
	// AcceptsArtifact tells whether the registry of repo takes the
	// artifact form; it fails only when that cannot be found out.
	AcceptsArtifact(ctx context.Context, repo name.Repository, ropts []remote.Option) (bool, error)
	// Refused reports whether err, from pushing the artifact form to
	// repo, is the registry refusing that form (and remembers it).
	Refused(repo name.Repository, err error) bool
}

// PushAuto copies src to the registry reference dst as Copy does, except
// that an artifact-form add-on goes as the image form (ConvertToImage)
// when the registry does not accept the artifact form: as probe says, or
// as the push itself finds out. Converted tells whether it did. An index
// is copied as it is.
func PushAuto(ctx context.Context, src, dst source.Ref, opts Options, probe FormProbe) (res *Result, converted bool, err error) {
	if dst.Kind != source.KindRegistry {
		return nil, false, fmt.Errorf("%s: want a registry reference", dst)
	}
	art, err := source.Open(ctx, src, opts.Options)
	if err != nil {
		return nil, false, err
	}
	defer art.Close()
	if art.Image == nil || !isArtifact(art.Image) {
		res, err := Write(ctx, art, dst, opts)
		return res, false, err
	}
	ref, err := opts.Registry.ParseReference(dst.Name)
	if err != nil {
		return nil, false, err
	}
	ropts, err := opts.Registry.Remote(ctx)
	if err != nil {
		return nil, false, err
	}
	ok, err := probe.AcceptsArtifact(ctx, ref.Context(), ropts)
	if err != nil {
		return nil, false, err
	}
	if ok {
		res, err := Write(ctx, art, dst, opts)
		// Accepted in the probe, refused here (a policy of this
		// repository?): the image form then.
		if err == nil || !probe.Refused(ref.Context(), err) {
			return res, false, err
		}
	}
	img, err := ConvertToImage(ctx, art.Image)
	if err != nil {
		return nil, false, err
	}
	d, err := img.Digest()
	if err != nil {
		return nil, false, err
	}
	res, err = Write(ctx, &source.Artifact{Ref: art.Ref, Image: img, Digest: d}, dst, opts)
	return res, true, err
}

// isArtifact reports whether img's manifest is the artifact form.
func isArtifact(img v1.Image) bool {
	m, err := img.Manifest()
	return err == nil && mediatypes.ClassifyManifest(m, nil) == mediatypes.FormArtifact
}
