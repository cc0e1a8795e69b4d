package main

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/addonpkg/addonpkg/internal/inspect"
	"github.com/addonpkg/addonpkg/pkg/errdef"
	"github.com/addonpkg/addonpkg/pkg/layout"
	"github.com/addonpkg/addonpkg/pkg/reference"
	"github.com/addonpkg/addonpkg/pkg/safetree"
	"github.com/addonpkg/addonpkg/pkg/source"
)

func newImagesCmd(a *app) *cobra.Command {
	var asJSON, all bool
	cmd := &cobra.Command{
		Use:     "images",
		Aliases: []string{"list"},
		Short:   "List the add-ons in the local store",
		Example: `  addonpkg images
  addonpkg images --json | jq -r '.[].name'`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, err := a.store()
			if err != nil {
				return err
			}
			rows, err := inspect.StoreImages(st, all)
			if err != nil {
				return err
			}
			if asJSON {
				return a.printJSON(rows)
			}
			tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tDIGEST\tFORM")
			for _, r := range rows {
				fmt.Fprintf(tw, "%s\t%s\t%s\n", safetree.Sanitize(r.Name), r.Digest, r.Form)
			}
			return tw.Flush()
		},
	}
	addJSONFlag(cmd, &asJSON, "each name, digest, form and media type")
	cmd.Flags().BoolVarP(&all, "all", "a", false, "also list the tags named after a digest: signatures, SBOMs and attestations (sha256-HEX.sig ...)")
	return cmd
}

// storeNames completes the first n arguments (any number when n < 0)
// with names from the local store, leaving out the names already given:
// past them the command takes no more names, so there is nothing to offer.
func storeNames(a *app, n int) cobra.CompletionFunc {
	return completeNames(a, n, cobra.ShellCompDirectiveNoFileComp)
}

// sourceNames completes the first n SOURCE arguments of a command that
// reads any SOURCE: the store's names, and the shell's own completion of
// files and folders when none of them matches (./examples/<TAB>), as
// helm completes a chart's path. Past the last SOURCE there is nothing.
func sourceNames(a *app, n int) cobra.CompletionFunc {
	return completeNames(a, n, cobra.ShellCompDirectiveDefault)
}

// completeNames offers the store's names not given yet for the first n
// arguments, with directive; past them, nothing. The tags named after a
// digest (a signature's sha256-HEX.sig, an SBOM's) are offered only to a
// word that begins like one, as images lists them only with --all: else
// they would crowd out the add-ons (unpack cor<TAB> would offer
// coredns:1.11 and its signature). A store that cannot be read is an error where only its
// names could do, and leaves the shell's completion of files where a
// path does as well.
func completeNames(a *app, n int, directive cobra.ShellCompDirective) cobra.CompletionFunc {
	failed := cobra.ShellCompDirectiveError
	if directive == cobra.ShellCompDirectiveDefault {
		failed = directive
	}
	return func(_ *cobra.Command, args []string, word string) ([]string, cobra.ShellCompDirective) {
		if n >= 0 && len(args) >= n {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		st, err := a.store()
		if err != nil {
			return nil, failed
		}
		entries, err := st.List()
		if err != nil {
			return nil, failed
		}
		var names []string
		_, v := reference.Split(word)
		tag := strings.TrimPrefix(v, ":")
		attachments := tag != "" && (strings.HasPrefix("sha256-", tag) || strings.HasPrefix(tag, "sha256-"))
		for _, e := range entries {
			if _, attached := reference.Attachment(e.Name); attached && !attachments {
				continue
			}
			if !slices.Contains(args, e.Name) {
				names = append(names, e.Name)
			}
		}
		return names, directive
	}
}

func newTagCmd(a *app) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:               "tag SRC DST",
		Short:             "Give an add-on in the local store another name",
		Example:           `  addonpkg tag coredns:1.11 registry.example.com/addons/coredns:1.11`,
		Args:              exactArgs("SRC", "DST"),
		ValidArgsFunction: storeNames(a, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := a.store()
			if err != nil {
				return err
			}
			dst, err := source.StoreName(args[1])
			if err != nil {
				return fmt.Errorf("invalid name %w", err)
			}
			src := reference.WithDefaultTag(args[0])
			d, err := st.Tag(src, dst)
			if errors.Is(err, errdef.ErrNotFound) {
				return source.NotInStore(st, src)
			}
			if err != nil {
				return err
			}
			if asJSON {
				return a.printJSON(tagResult{Source: src, Name: dst, Digest: d.Digest.String()})
			}
			fmt.Fprintln(a.stdout, d.Digest.String())
			return nil
		},
	}
	addJSONFlag(cmd, &asJSON, "the name given, its source and digest")
	return cmd
}

// tagResult is tag --json: the new name, the name it was given from
// (with its default tag) and the digest both now name.
type tagResult struct {
	Source string `json:"source"`
	Name   string `json:"name"`
	Digest string `json:"digest"`
}

func newRmCmd(a *app) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:               "rm NAME...",
		SuggestFor:        []string{"remove", "rmi"},
		Short:             "Remove names from the local store (blobs go with gc)",
		Example:           `  addonpkg rm coredns:1.11 && addonpkg gc`,
		Args:              minimumArgs("NAME"),
		ValidArgsFunction: storeNames(a, -1),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := a.store()
			if err != nil {
				return err
			}
			removed := []string{}
			for _, n := range args {
				n = reference.WithDefaultTag(n)
				err := st.Untag(n)
				if errors.Is(err, errdef.ErrNotFound) {
					return source.NotInStore(st, n)
				}
				if err != nil {
					return err
				}
				removed = append(removed, n)
				a.infof("removed %s (its blobs go with 'addonpkg gc')", safetree.Sanitize(n))
			}
			if asJSON {
				return a.printJSON(rmResult{Removed: removed})
			}
			return nil
		},
	}
	addJSONFlag(cmd, &asJSON, "the names removed")
	addQuietFlag(cmd, &a.quiet, "notes (the names removed)")
	return cmd
}

// rmResult is rm --json: the names removed, with their default tag.
type rmResult struct {
	Removed []string `json:"removed"`
}

func newGCCmd(a *app) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:     "gc",
		Short:   "Delete what no name in the local store reaches: an add-on's images, lock and signatures go with its last name",
		Example: `  addonpkg gc`,
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, err := a.store()
			if err != nil {
				return err
			}
			res, err := st.GarbageCollect()
			if ue := (*layout.UnreadableError)(nil); errors.As(err, &ue) {
				return gcRefusal(ue)
			}
			if err != nil {
				return err
			}
			if asJSON {
				return a.printJSON(res)
			}
			printGCNotes(a, res)
			return nil
		},
	}
	addJSONFlag(cmd, &asJSON, "what was removed (files and bytes freed)")
	addQuietFlag(cmd, &a.quiet, "notes (what was removed, files and bytes freed)")
	return cmd
}

// printGCNotes says on stderr what gc removed and kept, unless --quiet.
func printGCNotes(a *app, res *layout.GCResult) {
	for _, e := range res.Removed {
		a.infof("removed %s %s: %s", safetree.Sanitize(cmp.Or(e.Name, "untagged")), e.Digest, safetree.Sanitize(e.Why))
	}
	kept := ""
	if len(res.Kept) > 0 {
		kept = fmt.Sprintf("; kept %d untagged entries that names reach (gc --json says how)", len(res.Kept))
	}
	a.infof("removed %d files, freed %d bytes%s", res.Files, res.Bytes, kept)
}

// gcRefusal says, on one line, which names keep gc from running and what
// to do about them.
func gcRefusal(ue *layout.UnreadableError) error {
	var what, names []string
	for _, e := range ue.Entries {
		name := e.Name
		if name == "" {
			name = e.Digest.String()
		}
		what = append(what, fmt.Sprintf("%s (%v)", name, e.Err))
		names = append(names, name)
	}
	return fmt.Errorf("gc deleted nothing: the manifest of %s cannot be read; pull or build it again, or remove it with 'addonpkg rm %s', then run gc",
		strings.Join(what, ", "), strings.Join(names, " "))
}
