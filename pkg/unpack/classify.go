package unpack

import (
	"encoding/json"
	"fmt"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/addonpkg/addonpkg/internal/verify"
	"github.com/addonpkg/addonpkg/pkg/mediatypes"
	"github.com/addonpkg/addonpkg/pkg/safetree"
)

// Header is what an image's manifest and config say about it, read
// without any layer: enough to classify it (spec/addon-v1.md section 10,
// and Helm charts) and to describe it.
type Header struct {
	Manifest  *v1.Manifest
	MediaType types.MediaType
	// Config is the config blob, read within the config cap of safetree.Limits.
	Config []byte
	// Labels are an image config's labels (nil for an artifact).
	Labels map[string]string
	Form   mediatypes.Form
}

// ReadHeader reads img's manifest and config (capped) and classifies it.
func ReadHeader(img v1.Image) (*Header, error) {
	m, err := img.Manifest()
	if err != nil {
		return nil, fmt.Errorf("read manifest: %w", err)
	}
	mt, _ := img.MediaType()
	raw, err := verify.Config(img, safetree.DefaultCap(safetree.LimitConfigBytes))
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	h := &Header{Manifest: m, MediaType: mt, Config: raw}
	cfgType := mediatypes.MediaType(m.Config.MediaType)
	if mediatypes.IsImageConfig(cfgType) {
		var ic v1.ConfigFile
		if json.Unmarshal(raw, &ic) == nil {
			h.Labels = ic.Config.Labels
		}
	}
	h.Form = mediatypes.ClassifyManifest(m, h.Labels)
	return h, nil
}
