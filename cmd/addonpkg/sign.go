package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/addonpkg/addonpkg/pkg/referrers"
	"github.com/addonpkg/addonpkg/pkg/signature"
	"github.com/addonpkg/addonpkg/pkg/source"
)

// onSigned opens REF for sign and verify (source.OpenSigned), runs do on
// it, and prints what do returns: as JSON, or the pinned REF on stdout
// and do's message on stderr.
func (a *app) onSigned(cmd *cobra.Command, s string, asJSON bool, do func(*source.Artifact, referrers.Location) (res any, msg string, err error)) error {
	ref, err := source.Parse(s)
	if err != nil {
		return err
	}
	sopts, err := a.sourceOptions(source.PullNever)
	if err != nil {
		return err
	}
	art, loc, err := source.OpenSigned(cmd.Context(), ref, sopts)
	if err != nil {
		return err
	}
	defer art.Close()
	res, msg, err := do(art, loc)
	if err != nil {
		return err
	}
	if asJSON {
		return a.printJSON(res)
	}
	fmt.Fprintln(a.stdout, pinnedOr(art, s))
	a.infof("%s", msg)
	return nil
}

func newSignCmd(a *app) *cobra.Command {
	var (
		key    string
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "sign --key FILE REF",
		Short: "Sign an add-on with a key, as cosign sign --key does",
		Long: `Sign signs the manifest digest of the add-on REF with a private key and stores
the signature as cosign does, offline (nothing goes to a transparency log):
the simple-signing payload, in an image tagged sha256-HEX.sig beside the
add-on (cosign 2's form, which cosign 3 still reads; cosign 3 itself writes
a Sigstore bundle). 'cosign verify --key cosign.pub --insecure-ignore-tlog'
of cosign 2 and 3 accepts it,
and so do 'addonpkg verify' and --verify-key of unpack, pull and copy.

FILE is a cosign key (cosign generate-key-pair), decrypted with the password
in $COSIGN_PASSWORD (empty when unset), or an unencrypted PEM private key.
REF is a registry reference, a name in the local store, or oci:DIR[:TAG].
It prints REF@sha256:... on stdout.`,
		Example: `  COSIGN_PASSWORD=... addonpkg sign --key cosign.key registry.example.com/addons/coredns:1.11
  addonpkg sign --key cosign.key oci:./layout:1 --json`,
		Args: exactArgs("REF"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if key == "" {
				return &usageError{cmd: cmd, msg: "--key is required: a private key file (cosign generate-key-pair)"}
			}
			signer, err := signature.LoadPrivateKeyFile(key)
			if err != nil {
				return flagValueError("key", err)
			}
			return a.onSigned(cmd, args[0], asJSON, func(art *source.Artifact, loc referrers.Location) (any, string, error) {
				res, err := signature.Sign(cmd.Context(), loc, art.Digest, signer, signature.SignOptions{Identity: art.Repository()})
				if err != nil {
					return nil, "", err
				}
				return res, fmt.Sprintf("signed %s: signature at %s:%s", res.Digest, res.Location, res.Tag), nil
			})
		},
	}
	cmd.Flags().StringVar(&key, "key", "", "private key file (cosign's format; password in $COSIGN_PASSWORD)")
	addJSONFlag(cmd, &asJSON, "digest, signature tag, location and signature")
	addQuietFlag(cmd, &a.quiet, "messages on stderr")
	a.addRegistryFlags(cmd)
	return cmd
}

func newVerifyCmd(a *app) *cobra.Command {
	var (
		keys   []string
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "verify --key FILE REF",
		Short: "Verify an add-on's signature with a public key, as cosign verify --key does",
		Long: `Verify checks that the manifest digest of the add-on REF is signed by one of
the public keys (--key, repeatable: any one suffices), as 'cosign verify --key
--insecure-ignore-tlog' does: it reads the signatures tagged sha256-HEX.sig
beside the add-on (cosign 2, addonpkg sign) and the Sigstore bundles that
refer to it (cosign 3 sign), checks each against the keys, and checks that
what was signed names this digest. A missing or bad signature is an error.

REF is a registry reference, a name in the local store, or
oci:DIR[:TAG] or oci-archive:FILE[:TAG]. It prints REF@sha256:... on stdout.`,
		Example: `  addonpkg verify --key cosign.pub registry.example.com/addons/coredns:1.11
  addonpkg verify --key old.pub --key new.pub oci-archive:coredns.tar --json`,
		Args: exactArgs("REF"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(keys) == 0 {
				return &usageError{cmd: cmd, msg: "--key is required: a public key file (cosign.pub)"}
			}
			v, err := signature.LoadKeyVerifier(keys...)
			if err != nil {
				return flagValueError("key", err)
			}
			v.Limits = bundleLimits(cmd)
			return a.onSigned(cmd, args[0], asJSON, func(art *source.Artifact, loc referrers.Location) (any, string, error) {
				res, err := v.Verify(cmd.Context(), loc, art.Digest)
				if err != nil {
					return nil, "", err
				}
				return res, fmt.Sprintf("verified %s: signed by %s", res.Digest, res.Key), nil
			})
		},
	}
	cmd.Flags().StringArrayVar(&keys, "key", nil, "public key file (cosign.pub); repeatable: any one key suffices")
	addJSONFlag(cmd, &asJSON, "the digest, the key that verified it and where the signature is")
	addBundleLimits(cmd)
	addQuietFlag(cmd, &a.quiet, "messages on stderr")
	a.addRegistryFlags(cmd)
	return cmd
}

// pinnedOr is the artifact's pinned SOURCE, else what the user wrote.
func pinnedOr(art *source.Artifact, s string) string {
	if p := art.Pinned(); p != "" {
		return p
	}
	return s
}
