// Package inspect describes an add-on from its manifest and config: its
// form, metadata, inventory, layers and platforms. An artifact with a
// complete config is described without reading a layer; anything else is
// also unpacked in memory, as spec/addon-v1.md section 4.3 says its
// metadata must be derived and checked.
package inspect

import (
	"context"
	"fmt"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/addonpkg/addonpkg/pkg/addon"
	"github.com/addonpkg/addonpkg/pkg/layout"
	"github.com/addonpkg/addonpkg/pkg/mediatypes"
	"github.com/addonpkg/addonpkg/pkg/reference"
	"github.com/addonpkg/addonpkg/pkg/render"
	"github.com/addonpkg/addonpkg/pkg/source"
	"github.com/addonpkg/addonpkg/pkg/unpack"
)

// Inspection is what Source reports.
//
// A plain tree (a folder, a download, a git commit) has no manifest:
// Digest, MediaType and Layers are left out, Form is source.FormFolder
// and the config is derived from the content (Derived).
type Inspection struct {
	Source      string            `json:"source"`
	Digest      string            `json:"digest,omitempty"`
	MediaType   string            `json:"mediaType,omitempty"`
	Form        mediatypes.Form   `json:"form"`
	Config      *addon.Config     `json:"config,omitempty"`
	Layers      []v1.Descriptor   `json:"layers,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
	Platforms   []string          `json:"platforms,omitempty"`
	// Derived says the config was derived from the content and labels
	// (the image carries no add-on config, or only stale labels).
	Derived bool `json:"derived,omitempty"`
	// StaleLabels says the image's identity or config label describes
	// another tree (spec 4.5): they were ignored.
	StaleLabels bool `json:"staleLabels,omitempty"`
	// Problem says why the content could not be read as an add-on.
	Problem string `json:"problem,omitempty"`
	// Chart is a Helm chart's name and version (form helm-chart).
	Chart *unpack.HelmChart `json:"chart,omitempty"`
}

// Options change an inspection.
type Options struct {
	// Source opens the SOURCE (store, registry choices, pull policy).
	Source source.Options
	// Platform picks the image of an index; nil means the running
	// platform, else the only one.
	Platform *v1.Platform
}

// Source inspects a SOURCE. A content problem (a layer that does not
// unpack, a tree that does not render) is reported in Problem, not as an
// error: what the manifest and config say is still worth showing. A
// plain tree (a folder, a download, a git commit) is read and described
// by what its content says (see Inspection).
func Source(ctx context.Context, ref source.Ref, opts Options) (*Inspection, error) {
	if source.IsTree(ref.Kind) {
		return tree(ctx, ref, opts)
	}
	art, err := source.Open(ctx, ref, opts.Source)
	if err != nil {
		return nil, err
	}
	defer art.Close()
	in := &Inspection{Source: ref.String(), Digest: art.Digest.String()}
	img := art.Image
	if art.Index != nil {
		// The platforms to choose from, by the unpacker's rule: attestation
		// manifests are not among them (spec 9.1).
		if in.Platforms, err = unpack.Platforms(art.Index); err != nil {
			return nil, fmt.Errorf("%s: %w", ref, err)
		}
		if img, err = unpack.SelectImage(art.Index, opts.Platform); err != nil {
			return nil, fmt.Errorf("%s: %w", ref, err)
		}
	}
	if err := in.header(img); err != nil {
		return nil, fmt.Errorf("%s: %w", ref, err)
	}
	if in.needsContent() {
		in.content(ctx, img, art.Repository())
	}
	return in, nil
}

// header fills what the manifest and config say.
func (in *Inspection) header(img v1.Image) error {
	h, err := unpack.ReadHeader(img)
	if err != nil {
		return err
	}
	in.MediaType = string(h.MediaType)
	in.Layers = h.Manifest.Layers
	in.Annotations = h.Manifest.Annotations
	in.Form = h.Form
	switch h.Form {
	case mediatypes.FormHelm:
		if in.Chart, err = unpack.ParseHelmChart(h.Config); err != nil {
			return err
		}
	case mediatypes.FormArtifact:
		if c, err := addon.Parse(h.Config); err == nil {
			in.Config = c
		}
	case mediatypes.FormImage:
		if s := h.Labels[mediatypes.LabelConfig]; s != "" {
			if c, err := addon.Parse([]byte(s)); err == nil {
				in.Config = c
			}
		}
	}
	return nil
}

// needsContent says whether the manifest and config leave something to
// read from the content: everything but a complete artifact config.
func (in *Inspection) needsContent() bool {
	switch in.Form {
	case mediatypes.FormArtifact:
		return in.Config == nil || in.Config.Identity == "" || !in.Config.HasInventory()
	case mediatypes.FormImage, mediatypes.FormFlux, mediatypes.FormOLM, mediatypes.FormORAS:
		return true
	}
	return false
}

// content unpacks img in memory and takes its checked (or derived)
// config, with the inventory rendered when it has none.
func (in *Inspection) content(ctx context.Context, img v1.Image, repo string) {
	ad, err := unpack.Image(ctx, img, unpack.Options{Repository: repo})
	if err != nil {
		in.Problem = err.Error()
		return
	}
	in.Config, in.Derived, in.StaleLabels = ad.Config, ad.Derived, ad.Stale
	if ad.NoInventory {
		res, err := render.Addon(ctx, ad, render.Options{})
		if err != nil {
			in.Problem = "render: " + err.Error()
			return
		}
		ad.SetInventory(res.Inventory())
	}
}

// tree inspects a plain tree: its derived config, with the inventory
// rendered.
func tree(ctx context.Context, ref source.Ref, opts Options) (*Inspection, error) {
	ad, err := source.Unpack(ctx, ref, opts.Source, unpack.Options{})
	if err != nil {
		return nil, err
	}
	in := &Inspection{Source: ref.String(), Form: ad.Form, Config: ad.Config, Derived: ad.Derived}
	res, err := render.Addon(ctx, ad, render.Options{})
	if err != nil {
		in.Problem = "render: " + err.Error()
		return in, nil
	}
	ad.SetInventory(res.Inventory())
	return in, nil
}

// StoreImage is one name of the local store, as `addonpkg images` lists
// it.
type StoreImage struct {
	Name      string `json:"name"`
	Digest    string `json:"digest"`
	MediaType string `json:"mediaType"`
	Form      string `json:"form,omitempty"`
}

// StoreImages lists the names of the store, in the store's order, each
// with its form (StoreForm); the tags named after a digest (a cosign
// signature's sha256-HEX.sig, reference.Attachment) only when all.
func StoreImages(st *layout.Store, all bool) ([]StoreImage, error) {
	entries, err := st.List()
	if err != nil {
		return nil, err
	}
	out := []StoreImage{}
	for _, e := range entries {
		if _, ok := reference.Attachment(e.Name); ok && !all {
			continue // a signature or SBOM, shown with its add-on by inspect
		}
		out = append(out, StoreImage{Name: e.Name, Digest: e.Descriptor.Digest.String(), MediaType: string(e.Descriptor.MediaType), Form: StoreForm(st, e.Descriptor)})
	}
	return out, nil
}

// StoreForm classifies an entry of a store (the library's rules: a Helm
// chart is no image); an index is shown as the form of its image for the
// running platform, "index" when that cannot be told.
func StoreForm(st *layout.Store, d v1.Descriptor) string {
	// An artifact that says what it is in its descriptor needs no read.
	if f := mediatypes.Classify("", mediatypes.MediaType(d.ArtifactType), nil, nil); f == mediatypes.FormArtifact {
		return string(f)
	}
	var img v1.Image
	if mediatypes.IsIndex(mediatypes.MediaType(d.MediaType)) {
		idx, err := st.Index(d)
		if err == nil {
			img, err = unpack.SelectImage(idx, nil)
		}
		if err != nil {
			return "index"
		}
	} else {
		var err error
		if img, err = st.Image(d); err != nil {
			return string(mediatypes.FormUnknown)
		}
	}
	h, err := unpack.ReadHeader(img)
	switch {
	case err == nil:
		return string(h.Form)
	case mediatypes.IsIndex(mediatypes.MediaType(d.MediaType)):
		return "index"
	}
	return string(mediatypes.FormUnknown)
}
