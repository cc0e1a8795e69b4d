package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/addonpkg/addonpkg/pkg/safetree"
	"github.com/addonpkg/addonpkg/pkg/signature"
	"github.com/addonpkg/addonpkg/pkg/source"
	"github.com/addonpkg/addonpkg/pkg/transfer"
)

// Flags of the commands that read add-ons (unpack, pull, copy): signature
// checks and referrers. copyCmd is shared with push, which has neither:
// a flag a command lacks reads as unset.
const (
	flagVerifyKey   = "verify-key"
	flagNoReferrers = "no-referrers"
)

// addVerifyKeyFlag adds --verify-key and the bounds of its search.
func addVerifyKeyFlag(cmd *cobra.Command) {
	cmd.Flags().StringArray(flagVerifyKey, nil, "refuse the add-on, before any layer is read, unless its manifest digest is signed (as cosign sign --key does) by this public key; repeatable: any one key suffices")
	addBundleLimits(cmd)
}

// addBundleLimits adds the bounds of the search for a Sigstore bundle
// that verifies (safetree.Limits): --max-bundle-referrers and
// --max-bundle-search-bytes, for a repository busy with referrers.
func addBundleLimits(cmd *cobra.Command) {
	var l safetree.Limits
	f := cmd.Flags()
	addLimit(f, &l.MaxBundleReferrers, "max-bundle-referrers", safetree.DefaultMaxBundleReferrers, "limit: referrers listed as Sigstore bundles that one signature check reads (anyone who can push can push junk ones)")
	addLimit(f, &l.MaxBundleSearchBytes, "max-bundle-search-bytes", safetree.DefaultMaxBundleSearchBytes, "limit: bytes of signatures (legacy .sig payloads, Sigstore bundle referrers and bundles) that one signature check reads, over all of them")
}

// bundleLimits are the values of addBundleLimits' flags; a command
// without them gets the defaults.
func bundleLimits(cmd *cobra.Command) safetree.Limits {
	var l safetree.Limits
	l.MaxBundleReferrers, _ = cmd.Flags().GetInt("max-bundle-referrers")
	l.MaxBundleSearchBytes, _ = cmd.Flags().GetInt64("max-bundle-search-bytes")
	return l
}

// applyVerifyKeys sets o.Verify from --verify-key.
func applyVerifyKeys(cmd *cobra.Command, o *source.Options) error {
	files, err := cmd.Flags().GetStringArray(flagVerifyKey)
	if err != nil || len(files) == 0 {
		return nil
	}
	v, err := signature.LoadKeyVerifier(files...)
	if err != nil {
		return flagValueError(flagVerifyKey, err)
	}
	v.Limits = bundleLimits(cmd)
	o.Verify = v
	return nil
}

// addReferrersFlag adds --no-referrers.
func addReferrersFlag(cmd *cobra.Command) {
	cmd.Flags().Bool(flagNoReferrers, false, "copy only the add-on, not what refers to it (signatures, SBOMs, attestations)")
}

// referrersHint names --no-referrers on a copy that failed on the
// add-on's referrers (transfer.ErrReferrers): without them it goes
// through.
func referrersHint(err error) error {
	if errors.Is(err, transfer.ErrReferrers) {
		return fmt.Errorf("%w (--%s copies the add-on alone)", err, flagNoReferrers)
	}
	return err
}

// referrersOn reports whether referrers are copied: on unless
// --no-referrers, off for commands without the flag.
func referrersOn(cmd *cobra.Command) bool {
	off, err := cmd.Flags().GetBool(flagNoReferrers)
	return err == nil && !off
}

// verifiedSource checks the signature of src when --verify-key is given,
// and returns src pinned to the digest it checked (source.Pin; src itself
// without the flag).
func verifiedSource(cmd *cobra.Command, src source.Ref, sopts source.Options) (source.Ref, error) {
	if err := applyVerifyKeys(cmd, &sopts); err != nil || sopts.Verify == nil {
		return src, err
	}
	return source.Pin(cmd.Context(), src, sopts)
}

// flagValueError names the flag whose value (a file it names) could not
// be used. A key's error is an *fs.PathError, which fail says as
// "--key FILE: ..." (namedInput); this is the word for any other. The
// cause stays wrapped for errors.Is.
func flagValueError(flag string, err error) error {
	return fmt.Errorf("--%s: %w", flag, err)
}
