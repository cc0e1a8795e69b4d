package unpack

import (
	"encoding/json"
	"fmt"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/addonpkg/addonpkg/pkg/mediatypes"
	"github.com/addonpkg/addonpkg/pkg/safetree"
)

// HelmChart is what a Helm chart's config blob says about it (the fields
// of its Chart.yaml that addonpkg shows).
type HelmChart struct {
	Name        string `json:"name"`
	Version     string `json:"version"`
	AppVersion  string `json:"appVersion,omitempty"`
	Description string `json:"description,omitempty"`
}

// ParseHelmChart reads a Helm chart's config blob.
func ParseHelmChart(raw []byte) (*HelmChart, error) {
	var c HelmChart
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, fmt.Errorf("%w: decode Helm chart config: %w", ErrCorrupt, err)
	}
	return &c, nil
}

// helmLayers picks the chart archive among a chart's layers (the
// provenance file is not part of the tree), and the content directory:
// the chart's directory inside the archive, "/NAME", so that the tree is
// the chart's own files (Chart.yaml at its root).
func helmLayers(m *v1.Manifest, chart *HelmChart) ([]layerSource, string, error) {
	var out []layerSource
	for i, l := range m.Layers {
		switch mediatypes.MediaType(l.MediaType) {
		case mediatypes.HelmChartContent:
			out = append(out, layerSource{index: i + 1, desc: l})
		case mediatypes.HelmProvenance:
		default:
			return nil, "", fmt.Errorf("%w: layer %d of a Helm chart has media type %q", ErrUnsupported, i+1, l.MediaType)
		}
	}
	name := ""
	if chart != nil {
		name = chart.Name
	}
	if safetree.CleanComponent(name) != nil || strings.ContainsRune(name, '\\') {
		return out, "/", nil
	}
	return out, "/" + name, nil
}
