package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/addonpkg/addonpkg/pkg/addonset"
	"github.com/addonpkg/addonpkg/pkg/referrers"
)

func newMirrorCmd(a *app) *cobra.Command {
	var (
		sf      setFlags
		to, out string
		asJSON  bool
	)
	cmd := &cobra.Command{
		Use:   "mirror [-f addons.yaml] --to REGISTRY/PREFIX|oci-archive:FILE [-o FILE]",
		Short: "Copy every member of an add-on set to a registry or one archive",
		Long: `Mirror copies every member of the add-on set, exactly as its lock pins it (the
set is locked first when there is no lock; a stale lock is an error), to a
registry, as REGISTRY/PREFIX/NAME:TAG, or to one oci-archive file, each member
tagged NAME. Registry, oci: and oci-archive: members are copied byte for byte;
folder, git and https members are packaged as artifact-form add-ons of the same
tree (the same content identity). What refers to an OCI member (its
signatures, SBOMs, attestations) travels with it, as with copy
(--no-referrers to leave it).

It writes the mirrored set's declaration (-o, default addons-mirror.yaml beside
the declaration) and its lock beside it, so that an air-gapped site renders
from the mirror with the same identities: carry the archive, the declaration
and the lock across, then 'addonpkg render -f addons-mirror.yaml'.`,
		Example: `  addonpkg mirror -f addons.yaml --to registry.internal/addons
  addonpkg mirror -f addons.yaml --to oci-archive:addons.tar -o addons-mirror.yaml
  addonpkg mirror -f addons.yaml --to registry.internal/addons --json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if to == "" {
				return &usageError{cmd: cmd, msg: "--to is required: REGISTRY/PREFIX or oci-archive:FILE"}
			}
			s, opts, err := sf.load(a, cmd)
			if err != nil {
				return err
			}
			res, files, err := addonset.MirrorTo(cmd.Context(), s, out, addonset.MirrorOptions{
				Options: opts, To: to, Referrers: referrersOn(cmd),
				ReferrerLimits: referrers.Options{Ignored: a.ignoredReferrer},
			})
			if err != nil {
				return err
			}
			if asJSON {
				return a.printJSON(res.Lock)
			}
			for _, p := range res.Pinned {
				fmt.Fprintln(a.stdout, p)
			}
			if referrersOn(cmd) && res.Referrers > 0 {
				a.infof("%s", copiedReferrers(res.Referrers))
			}
			a.infof("wrote %s and %s", files.Declaration, files.Lock)
			return nil
		},
	}
	sf.add(a, cmd)
	f := cmd.Flags()
	f.StringVar(&to, "to", "", "REGISTRY/PREFIX or oci-archive:FILE")
	f.VarP(&checkedString{v: &out, check: notOutputFormat("mirror prints the mirrored lock as JSON with --json")},
		"output", "o", "the mirrored declaration (default: NAME-mirror.yaml beside -f; kubectl's output formats, -o json, -o yaml, are refused unless such a file exists); its lock is written beside it")
	addJSONFlag(cmd, &asJSON, "the mirrored lock")
	addQuietFlag(cmd, &a.quiet, "notes (referrers copied, files written)")
	addReferrersFlag(cmd)
	return cmd
}
