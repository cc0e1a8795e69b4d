package addon_test

import (
	"testing"

	"github.com/addonpkg/addonpkg/pkg/addon"
)

// Helm's inputs are told by name (render says "this is a Helm chart"
// rather than "invalid manifest" for them).
func TestHelmNames(t *testing.T) {
	for name, want := range map[string]bool{
		"values.yaml": true, "chart/values.yml": true, "values-prod.yaml": true, "prod-values.yaml": true,
		"prod.values.yaml": true, "Values.YAML": true, "my_values.yaml": true,
		"values.json": false, "values": false, "invalues.yaml": false, "valuesfile.yaml": false, "deployment.yaml": false,
	} {
		if got := addon.IsHelmValuesFile(name); got != want {
			t.Errorf("IsHelmValuesFile(%q) = %v, want %v", name, got, want)
		}
	}
	for name, want := range map[string]bool{"Chart.yaml": true, "charts/x/Chart.yaml": true, "chart.yaml": false, "Chart.yml": false} {
		if got := addon.IsHelmChartFile(name); got != want {
			t.Errorf("IsHelmChartFile(%q) = %v, want %v", name, got, want)
		}
	}
}
