package unpack

import (
	"encoding/json"
	"fmt"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/addonpkg/addonpkg/internal/verify"
	"github.com/addonpkg/addonpkg/pkg/addon"
	"github.com/addonpkg/addonpkg/pkg/mediatypes"
)

// Classify tells the form of img from its manifest and config, reading no
// layer (spec/addon-v1.md section 10, and Helm charts).
func Classify(img v1.Image) (mediatypes.Form, error) {
	m, err := img.Manifest()
	if err != nil {
		return "", fmt.Errorf("read manifest: %w", err)
	}
	var labels map[string]string
	cfgType := mediatypes.MediaType(m.Config.MediaType)
	if cfgType == mediatypes.OCIConfig || cfgType == mediatypes.DockerConfig {
		raw, err := verify.Config(img, addon.MaxConfigSize)
		if err != nil {
			return "", fmt.Errorf("read config: %w", err)
		}
		var ic v1.ConfigFile
		if json.Unmarshal(raw, &ic) == nil {
			labels = ic.Config.Labels
		}
	}
	return mediatypes.Classify(cfgType, mediatypes.MediaType(m.ArtifactType), layersOf(m), labels), nil
}

func layersOf(m *v1.Manifest) []mediatypes.Layer {
	var out []mediatypes.Layer
	for _, l := range m.Layers {
		out = append(out, mediatypes.Layer{MediaType: mediatypes.MediaType(l.MediaType), Annotations: l.Annotations})
	}
	return out
}
