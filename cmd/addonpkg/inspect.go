package main

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"text/tabwriter"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/spf13/cobra"

	"github.com/addonpkg/addonpkg/internal/verify"
	"github.com/addonpkg/addonpkg/pkg/addon"
	"github.com/addonpkg/addonpkg/pkg/mediatypes"
	"github.com/addonpkg/addonpkg/pkg/render"
	"github.com/addonpkg/addonpkg/pkg/safetree"
	"github.com/addonpkg/addonpkg/pkg/source"
	"github.com/addonpkg/addonpkg/pkg/unpack"
)

// inspection is what inspect reports; it reads manifests and config only.
type inspection struct {
	Source      string            `json:"source"`
	Digest      string            `json:"digest"`
	MediaType   string            `json:"mediaType"`
	Form        mediatypes.Form   `json:"form"`
	Config      *addon.Config     `json:"config,omitempty"`
	Layers      []v1.Descriptor   `json:"layers"`
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

func newInspectCmd(a *app) *cobra.Command {
	var (
		asJSON         bool
		pull, platform string
	)
	cmd := &cobra.Command{
		Use:   "inspect SOURCE",
		Short: "Show an add-on's form, metadata, inventory and layers",
		Long: `Inspect shows an add-on's form, metadata, inventory and layers.

An artifact whose config blob is complete is described from its manifest and
config alone. Any other add-on (the image form, whose labels must be checked
against the content; an image that addonpkg did not build; a Flux, OLM or
oras artifact; a minimal third-party config) is also unpacked in memory: the
name comes from the labels, else the last segment of the repository name
(spec 4.3), the inventory is rendered when the config has none, and stale
labels (an identity that does not match the content, inherited through FROM)
are ignored with a warning.`,
		Example: `  addonpkg inspect coredns:1.11
  addonpkg inspect registry.example.com/addons/coredns:1.11 --json`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: storeNames(a),
		RunE: func(cmd *cobra.Command, args []string) error {
			ref, err := source.Parse(args[0])
			if err != nil {
				return err
			}
			if ref.Kind == source.KindDir {
				return fmt.Errorf("%s is a folder: use 'addonpkg unpack %s --json'", ref, ref)
			}
			sopts, err := a.sourceOptions(pull)
			if err != nil {
				return err
			}
			art, err := source.Open(cmd.Context(), ref, sopts)
			if err != nil {
				return err
			}
			defer art.Close()
			in := inspection{Source: ref.String(), Digest: art.Digest.String()}
			img := art.Image
			if art.Index != nil {
				im, err := art.Index.IndexManifest()
				if err != nil {
					return err
				}
				for _, d := range im.Manifests {
					if d.Platform != nil {
						in.Platforms = append(in.Platforms, d.Platform.String())
					}
				}
				var p *v1.Platform
				if platform != "" {
					if p, err = v1.ParsePlatform(platform); err != nil {
						return err
					}
				}
				if img, err = unpack.SelectImage(art.Index, p); err != nil {
					return fmt.Errorf("%s: %w", ref, err)
				}
			}
			if err := inspectImage(img, &in); err != nil {
				return fmt.Errorf("%s: %w", ref, err)
			}
			if needsContent(&in) {
				inspectContent(cmd.Context(), img, art.Repository(), &in)
			}
			if in.StaleLabels {
				fmt.Fprintf(a.stderr, "warning: %s: stale labels: the image's identity or config label describes another tree (inherited through FROM?); metadata derived from the content\n", ref)
			}
			if in.Problem != "" {
				fmt.Fprintf(a.stderr, "warning: %s: %s\n", ref, in.Problem)
			}
			if asJSON {
				return a.printJSON(in)
			}
			return printInspection(a, &in)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.Flags().StringVar(&pull, "pull", source.PullMissing, "for REGISTRY/REPO references: missing (a copy in the local store wins), always or never read the registry")
	cmd.Flags().StringVar(&platform, "platform", "", "platform to pick from an index")
	a.addRegistryFlags(cmd)
	return cmd
}

func inspectImage(img v1.Image, in *inspection) error {
	m, err := img.Manifest()
	if err != nil {
		return err
	}
	mt, _ := img.MediaType()
	in.MediaType = string(mt)
	in.Layers = m.Layers
	in.Annotations = m.Annotations
	raw, err := verify.Config(img, addon.MaxConfigSize)
	if err != nil {
		return fmt.Errorf("read config: %w", err)
	}
	var labels map[string]string
	var ic v1.ConfigFile
	if json.Unmarshal(raw, &ic) == nil {
		labels = ic.Config.Labels
	}
	var ls []mediatypes.Layer
	for _, l := range m.Layers {
		ls = append(ls, mediatypes.Layer{MediaType: mediatypes.MediaType(l.MediaType), Annotations: l.Annotations})
	}
	in.Form = mediatypes.Classify(mediatypes.MediaType(m.Config.MediaType), mediatypes.MediaType(m.ArtifactType), ls, labels)
	switch in.Form {
	case mediatypes.FormHelm:
		c, err := unpack.ParseHelmChart(raw)
		if err != nil {
			return err
		}
		in.Chart = c
	case mediatypes.FormArtifact:
		if c, err := addon.Parse(raw); err == nil {
			in.Config = c
		}
	case mediatypes.FormImage:
		if s := labels[mediatypes.LabelConfig]; s != "" {
			if c, err := addon.Parse([]byte(s)); err == nil {
				in.Config = c
			}
		}
	}
	return nil
}

// needsContent says whether the manifest and config leave something to
// read from the content: everything but a complete artifact config.
func needsContent(in *inspection) bool {
	switch in.Form {
	case mediatypes.FormArtifact:
		return in.Config == nil || in.Config.Identity == "" || !in.Config.HasInventory()
	case mediatypes.FormImage, mediatypes.FormFlux, mediatypes.FormOLM, mediatypes.FormORAS:
		return true
	}
	return false
}

// inspectContent unpacks img in memory and takes its checked (or
// derived) config, with the inventory rendered when it has none.
func inspectContent(ctx context.Context, img v1.Image, repo string, in *inspection) {
	ad, err := unpack.Image(ctx, img, unpack.Options{Repository: repo})
	if err != nil {
		in.Problem = err.Error()
		return
	}
	in.Config, in.Derived, in.StaleLabels = ad.Config, ad.Derived, ad.Stale
	if ad.NoInventory {
		res, err := render.Addon(ctx, ad.FS, ad.Form, ad.Config, render.Options{})
		if err != nil {
			in.Problem = "render: " + err.Error()
			return
		}
		ad.SetInventory(res.Inventory())
	}
}

func printInspection(a *app, in *inspection) error {
	tw := tabwriter.NewWriter(terminalSafe(a.stdout), 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "Source:\t%s\n", in.Source)
	fmt.Fprintf(tw, "Digest:\t%s\n", in.Digest)
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
	if in.Derived {
		fmt.Fprintf(tw, "Metadata:\tderived from the content and labels (no add-on config)\n")
	}
	if c := in.Config; c != nil {
		fmt.Fprintf(tw, "Name:\t%s\n", c.Name)
		fmt.Fprintf(tw, "Version:\t%s\n", c.Version)
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
			fmt.Fprintf(tw, "CRDs:\t%v\n", c.Inventory.CRDs)
		}
		if len(c.Inventory.Images) > 0 {
			fmt.Fprintf(tw, "Images:\t%v\n", c.Inventory.Images)
		}
	}
	fmt.Fprintln(tw, "Layers:")
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
