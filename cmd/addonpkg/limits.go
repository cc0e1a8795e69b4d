package main

import (
	"github.com/spf13/cobra"

	"github.com/addonpkg/addonpkg/pkg/safetree"
)

// addLayerLimit adds --max-layers to a command that reads images.
func (a *app) addLayerLimit(cmd *cobra.Command) {
	cmd.Flags().IntVar(&a.maxLayers, "max-layers", safetree.DefaultMaxLayers, "limit: layers of one image, checked before any layer is read")
}
