package main

import (
	"fmt"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/addonpkg/addonpkg/internal/inspect"
	"github.com/addonpkg/addonpkg/pkg/safetree"
	"github.com/addonpkg/addonpkg/pkg/source"
)

func newInspectCmd(a *app) *cobra.Command {
	var (
		asJSON bool
		src    sourceFlags
	)
	cmd := &cobra.Command{
		Use:        "inspect SOURCE",
		SuggestFor: []string{"show", "describe"}, // helm show, kubectl describe
		Short:      "Show an add-on's form, metadata, inventory and layers",
		Long: `Inspect shows an add-on's form, metadata, inventory and layers.

A folder (or a download, or a git commit) has no manifest: inspect shows the
metadata derived from its content (name, kind, identity) and its rendered
inventory, and no digest or layers.

An artifact whose config blob is complete is described from its manifest and
config alone. Any other add-on (the image form, whose labels must be checked
against the content; an image that addonpkg did not build; a Flux, OLM or
oras artifact; a minimal third-party config) is also unpacked in memory: the
name comes from the labels, else the last segment of the repository name
(spec 4.3), the inventory is rendered when the config has none, and stale
labels (an identity that does not match the content, inherited through FROM)
are ignored with a warning.`,
		Example: `  addonpkg inspect coredns:1.11
  addonpkg inspect registry.example.com/addons/coredns:1.11 --json
  addonpkg inspect ./examples/coredns`,
		Args:              exactArgs("SOURCE"),
		ValidArgsFunction: sourceNames(a, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ref, err := source.Parse(args[0])
			if err != nil {
				return err
			}
			sopts, uopts, err := src.options(cmd, a)
			if err != nil {
				return err
			}
			in, err := inspect.Source(cmd.Context(), ref, inspect.Options{Source: sopts, Platform: uopts.Platform})
			if err != nil {
				return err
			}
			inspectWarnings(a, ref, in)
			if asJSON {
				return a.printJSON(in)
			}
			return printInspection(a, in)
		},
	}
	addJSONFlag(cmd, &asJSON, "the form, metadata, inventory and layers")
	src.add(a, cmd)
	return cmd
}

// inspectWarnings prints on stderr what is wrong with the inspected
// add-on that did not stop inspect.
func inspectWarnings(a *app, ref source.Ref, in *inspect.Inspection) {
	if in.StaleLabels {
		fmt.Fprintf(a.stderr, "warning: %s: stale labels: the image's identity or config label describes another tree (inherited through FROM?); metadata derived from the content\n", ref)
	}
	if in.Problem != "" {
		fmt.Fprintf(a.stderr, "warning: %s: %s\n", ref, in.Problem)
	}
}

func printInspection(a *app, in *inspect.Inspection) error {
	tw := tabwriter.NewWriter(terminalSafe(a.stdout), 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "Source:\t%s\n", in.Source)
	if in.Digest != "" {
		fmt.Fprintf(tw, "Digest:\t%s\n", in.Digest)
	}
	fmt.Fprintf(tw, "Form:\t%s\n", in.Form)
	if len(in.Platforms) > 0 {
		fmt.Fprintf(tw, "Platforms:\t%v\n", sanitizeAll(in.Platforms))
	}
	if c := in.Chart; c != nil {
		fmt.Fprintf(tw, "Helm chart:\t%s %s\n", c.Name, c.Version)
		if c.AppVersion != "" {
			fmt.Fprintf(tw, "App version:\t%s\n", c.AppVersion)
		}
		if c.Description != "" {
			fmt.Fprintf(tw, "Description:\t%s\n", c.Description)
		}
		fmt.Fprintf(tw, "Note:\trender it with helm template; addonpkg unpack -o DIR writes its files\n")
	}
	switch {
	case in.Derived && in.Form == source.FormFolder:
		fmt.Fprintf(tw, "Metadata:\tderived from the content (a plain tree: no manifest, no add-on config)\n")
	case in.Derived:
		fmt.Fprintf(tw, "Metadata:\tderived from the content and labels (no add-on config)\n")
	}
	if c := in.Config; c != nil {
		fmt.Fprintf(tw, "Name:\t%s\n", c.Name)
		if c.Version != "" {
			fmt.Fprintf(tw, "Version:\t%s\n", c.Version)
		}
		fmt.Fprintf(tw, "Kind:\t%s\n", c.Kind)
		fmt.Fprintf(tw, "Identity:\t%s\n", c.Identity)
		if c.Source != "" {
			fmt.Fprintf(tw, "Source repository:\t%s @ %s\n", c.Source, c.Revision)
		}
		kinds := map[string]int{}
		for _, o := range c.Inventory.Objects {
			kinds[o.Kind]++
		}
		var ks []string
		for k := range kinds {
			ks = append(ks, k)
		}
		sort.Strings(ks)
		fmt.Fprintf(tw, "Objects:\t%d\n", len(c.Inventory.Objects))
		for _, k := range ks {
			fmt.Fprintf(tw, "  %s\t%d\n", k, kinds[k])
		}
		if len(c.Inventory.CRDs) > 0 {
			fmt.Fprintf(tw, "CRDs:\t%s\n", strings.Join(c.Inventory.CRDs, ", "))
		}
		if len(c.Inventory.Images) > 0 {
			fmt.Fprintf(tw, "Images:\t%s\n", strings.Join(c.Inventory.Images, ", "))
		}
	}
	if len(in.Layers) > 0 {
		fmt.Fprintln(tw, "Layers:")
	}
	for i, l := range in.Layers {
		fmt.Fprintf(tw, "  %d\t%s\t%d bytes\t%s\n", i+1, l.Digest, l.Size, l.MediaType)
	}
	if len(in.Annotations) > 0 {
		fmt.Fprintln(tw, "Annotations:")
		keys := make([]string, 0, len(in.Annotations))
		for k := range in.Annotations {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(tw, "  %s\t%s\n", safetree.Sanitize(k), safetree.Sanitize(in.Annotations[k]))
		}
	}
	return tw.Flush()
}
