package pack

import (
	"maps"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/partial"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/addonpkg/addonpkg/pkg/addon"
	"github.com/addonpkg/addonpkg/pkg/archive"
	"github.com/addonpkg/addonpkg/pkg/mediatypes"
)

// Platform of every image-form build. Add-ons are platform independent,
// and a fixed value keeps builds reproducible across machines.
const (
	imageOS   = "linux"
	imageArch = "amd64"
)

// buildImage makes the image form: one layer holding the tree under
// addon/, exactly what FROM scratch + COPY . /addon/ gives, and labels.
func buildImage(layer *archive.Layer, cfg *addon.Config, opts Options, created time.Time) (v1.Image, error) {
	cfg.ContentRoot = mediatypes.DefaultContentDir
	cfg.Identity = layer.Tar.Identity.String()
	cfgJSON, err := cfg.Marshal()
	if err != nil {
		return nil, err
	}
	ann := Annotations(cfg, opts.Annotations)
	labels := map[string]string{}
	// The standard and add-on annotations double as labels, so that tools
	// that only show labels (docker inspect) see them.
	maps.Copy(labels, ann)
	labels[mediatypes.LabelConfig] = string(cfgJSON)
	maps.Copy(labels, opts.Labels)

	// Config first, then media types: mutate recomputes the config
	// digest only from the final config file.
	img, err := mutate.ConfigFile(empty.Image, &v1.ConfigFile{
		Architecture: imageArch,
		OS:           imageOS,
		Created:      v1.Time{Time: created},
		Config:       v1.Config{Labels: labels},
		RootFS:       v1.RootFS{Type: "layers"},
	})
	if err != nil {
		return nil, err
	}
	img, err = AppendLayer(img, layer, created, "addonpkg build", "add-on "+cfg.Name)
	if err != nil {
		return nil, err
	}
	img = mutate.MediaType(img, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	return freeze(mutate.Annotations(img, ann).(v1.Image))
}

// freeze encodes img's config and manifest once. A mutate image encodes
// them again on every call (its digest, its manifest, each write), and the
// image form's config carries the add-on config, inventory and all, in a
// label: megabytes of JSON for a large add-on, a tenth of its build's CPU
// time when encoded over and over.
func freeze(img v1.Image) (v1.Image, error) {
	f := &frozenImage{img: img}
	var err error
	if f.rawConfig, err = img.RawConfigFile(); err != nil {
		return nil, err
	}
	if f.rawManifest, err = img.RawManifest(); err != nil {
		return nil, err
	}
	if f.mediaType, err = img.MediaType(); err != nil {
		return nil, err
	}
	return partial.CompressedToImage(f)
}

// frozenImage is the encoded manifest and config of an image, with its
// layers.
type frozenImage struct {
	img                    v1.Image
	rawConfig, rawManifest []byte
	mediaType              types.MediaType
}

func (f *frozenImage) RawConfigFile() ([]byte, error)      { return f.rawConfig, nil }
func (f *frozenImage) RawManifest() ([]byte, error)        { return f.rawManifest, nil }
func (f *frozenImage) MediaType() (types.MediaType, error) { return f.mediaType, nil }
func (f *frozenImage) LayerByDigest(h v1.Hash) (partial.CompressedLayer, error) {
	return f.img.LayerByDigest(h)
}

// AppendLayer puts layer on top of img with its history entry (created
// time, created_by, comment), as a Dockerfile step records one.
func AppendLayer(img v1.Image, layer v1.Layer, created time.Time, createdBy, comment string) (v1.Image, error) {
	return mutate.Append(img, mutate.Addendum{
		Layer:   layer,
		History: v1.History{Created: v1.Time{Time: created}, CreatedBy: createdBy, Comment: comment},
	})
}
