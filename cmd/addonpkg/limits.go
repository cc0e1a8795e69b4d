package main

import (
	"github.com/spf13/cobra"

	"github.com/addonpkg/addonpkg/pkg/safetree"
)

// addLayerLimit adds --max-layers to a command that reads images.
func (a *app) addLayerLimit(cmd *cobra.Command) {
	cmd.Flags().IntVar(&a.maxLayers, "max-layers", safetree.DefaultMaxLayers, "limit: layers of one image, checked before any layer is read")
}

// addMappingKeysLimit adds --max-mapping-keys to a command that renders
// kustomize trees.
func addMappingKeysLimit(cmd *cobra.Command, keys *int) {
	cmd.Flags().IntVar(keys, "max-mapping-keys", safetree.DefaultMaxMappingKeys, "limit: keys of one YAML mapping, or of one generated ConfigMap or Secret, in a kustomize tree (kustomize takes time quadratic in them)")
}
