package main

import (
	"errors"
	"fmt"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/spf13/cobra"

	"github.com/addonpkg/addonpkg/pkg/reference"
	"github.com/addonpkg/addonpkg/pkg/referrers"
	"github.com/addonpkg/addonpkg/pkg/registry"
	"github.com/addonpkg/addonpkg/pkg/safetree"
	"github.com/addonpkg/addonpkg/pkg/source"
	"github.com/addonpkg/addonpkg/pkg/transfer"
)

func (a *app) printResult(res *transfer.Result, asJSON bool) error {
	if asJSON {
		return a.printJSON(res)
	}
	fmt.Fprintln(a.stdout, res.Reference)
	return nil
}

func (a *app) copyCmd(cmd *cobra.Command, src, dst source.Ref, all bool, platform string, asJSON bool) error {
	sopts, err := a.sourceOptions(source.PullNever)
	if err != nil {
		return err
	}
	sopts.StoreFirst = false // copy and pull read what they name
	if err := applyVerifyKeys(cmd, &sopts); err != nil {
		return err
	}
	opts := transfer.Options{Options: sopts, AllPlatforms: all, Referrers: referrersOn(cmd)}
	opts.ReferrerLimits.Ignored = a.ignoredReferrer
	if opts.Platform, err = parsePlatform(platform); err != nil {
		return err
	}
	var wait func()
	opts.BlobProgress, wait = a.blobBars()
	res, err := transfer.Copy(cmd.Context(), src, dst, opts)
	wait()
	if err != nil {
		return referrersHint(err)
	}
	if res.WholeIndex {
		a.infof("copied the whole index %s: something refers to it (a signature), which one platform's image would lose", res.Digest)
	}
	if len(res.IndexPlatforms) > 0 {
		which := "one image"
		if res.Platform != "" {
			which = "the " + safetree.Sanitize(res.Platform) + " image"
		}
		a.infof("copied %s alone, of an index of %s; --all-platforms copies the index whole", which, strings.Join(sanitizeAll(res.IndexPlatforms), ", "))
	}
	if opts.Referrers && res.Referrers > 0 {
		a.infof("%s", copiedReferrers(res.Referrers))
	}
	return a.printResult(res, asJSON)
}

// copiedReferrers is the note of n referrers copied: "copied 1 referrer"
// read "copied 1 referrers".
func copiedReferrers(n int) string {
	if n == 1 {
		return "copied 1 referrer (a signature, SBOM or attestation)"
	}
	return fmt.Sprintf("copied %d referrers (signatures, SBOMs, attestations)", n)
}

func newPushCmd(a *app) *cobra.Command {
	var (
		asJSON bool
		format string
	)
	cmd := &cobra.Command{
		Use:   "push NAME[:TAG] [DEST]",
		Short: "Push an add-on from the local store to a registry",
		Long: `Push uploads an add-on from the local store to a registry: blobs first (those
the registry has are skipped), then the manifest. DEST defaults to NAME. It
prints REGISTRY/REPO@sha256:... on stdout. What refers to the add-on in the
store travels with it, as with copy (--no-referrers to leave it): a signature
made with 'addonpkg sign' in the store, SBOMs, attestations.

A NAME without a registry host (coredns:1.11) is a local name: push it with a
DEST. Docker Hub is reached only by an explicit docker.io/... reference.`,
		Example: `  addonpkg push registry.example.com/addons/coredns:1.11
  addonpkg push coredns:1.11 localhost:5000/addons/coredns:1.11 --json`,
		Args:              rangeArgs([]string{"NAME[:TAG]"}, "DEST"),
		ValidArgsFunction: storeNames(a, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			src := source.Ref{Kind: source.KindStore, Name: reference.WithDefaultTag(args[0])}
			dstName := args[0]
			if len(args) == 2 {
				dstName = args[1]
			} else if r, err := source.Parse(dstName); err == nil && r.Kind == source.KindStore {
				return fmt.Errorf("push %s: a local name needs a destination: addonpkg push %s REGISTRY/REPO[:TAG] (for Docker Hub: %s)", dstName, dstName, reference.DockerHub(dstName))
			}
			dst, err := registryRef(dstName)
			if err != nil {
				return err
			}
			if format == transfer.FormatAuto {
				return a.pushAuto(cmd, src, dst, asJSON)
			}
			return a.copyCmd(cmd, src, dst, true, "", asJSON)
		},
	}
	addJSONFlag(cmd, &asJSON, copiedJSON)
	addEnumFlag(cmd, &format, "format", transfer.FormatKeep, "keep: push the add-on as it is; auto: push an artifact-form add-on as the image form to a registry that refuses the artifact form", transfer.FormatKeep, transfer.FormatAuto)
	addQuietFlag(cmd, &a.quiet, "progress output nor notes (referrers copied or ignored, one platform of an index copied alone, the image form pushed by --format auto)")
	addReferrersFlag(cmd)
	a.addRegistryFlags(cmd)
	return cmd
}

// ignoredReferrer says that a manifest at a cosign tag was left because
// it is not what its tag says.
func (a *app) ignoredReferrer(i referrers.Ignored) {
	a.infof("ignored %s", safetree.Sanitize(i.String()))
}

// registryRef takes a registry reference with or without a docker:// prefix.
func registryRef(s string) (source.Ref, error) {
	r, err := source.Parse(s)
	if err != nil {
		return source.Ref{}, err
	}
	if r.Kind == source.KindStore {
		// A name without a registry host is a local name: Docker Hub is
		// reached only by an explicit docker.io/ reference.
		return source.Ref{}, fmt.Errorf("%s: %w: a name without a registry host is a local name (for Docker Hub write %s)", s, source.ErrShortName, reference.DockerHub(s))
	}
	if r.Kind != source.KindRegistry {
		return source.Ref{}, fmt.Errorf("%s: want a registry reference REGISTRY/REPO[:TAG]", s)
	}
	return r, nil
}

// repositoryArg parses a REGISTRY/REPO argument (ls, doctor) as a
// registry reference (docker:// and oci:// as for any SOURCE) and gives
// its name: a name without a registry host is refused, as everywhere,
// so it never reaches Docker Hub, and so is a registry named alone and,
// unless tagOK, a tag or digest.
func repositoryArg(cmd *cobra.Command, s string, tagOK bool) (string, error) {
	if reference.IsHost(s) {
		return "", fmt.Errorf("%s names a registry, not a repository: want REGISTRY/REPO (%s/NAME)", s, s)
	}
	ref, err := registryRef(s)
	if err != nil {
		return "", err
	}
	if repo, tag := reference.Split(ref.Name); tag != "" && !tagOK {
		return "", &usageError{cmd: cmd, msg: fmt.Sprintf("%q names a tag or digest; drop %q to list the tags of %s", s, tag, repo)}
	}
	return ref.Name, nil
}

func newPullCmd(a *app) *cobra.Command {
	var (
		asJSON, all bool
		platform    string
	)
	cmd := &cobra.Command{
		Use:   "pull REF",
		Short: "Pull an add-on from a registry into the local store",
		Long: `Pull copies an add-on from a registry into the local store, under the name
REF (with :latest when it has no tag), and prints REGISTRY/REPO@sha256:...,
as push does: the add-on pinned, in the store and in the registry.`,
		Example: `  addonpkg pull registry.example.com/addons/coredns:1.11`,
		Args:    exactArgs("REF"),
		RunE: func(cmd *cobra.Command, args []string) error {
			src, err := registryRef(args[0])
			if err != nil {
				return err
			}
			name := args[0]
			if r, err := source.Parse(name); err == nil && r.Kind == source.KindRegistry {
				name = r.Name
			}
			dst := source.Ref{Kind: source.KindStore, Name: reference.WithDefaultTag(name)}
			return a.copyCmd(cmd, src, dst, all, platform, asJSON)
		},
	}
	a.addCopyFlags(cmd, "pull", &asJSON, &all, &platform)
	a.addRegistryFlags(cmd)
	return cmd
}

func newCopyCmd(a *app) *cobra.Command {
	var (
		asJSON, all bool
		platform    string
		images      airgapFlags
	)
	cmd := &cobra.Command{
		Use:        "copy SRC DST",
		SuggestFor: []string{"save", "load"}, // docker save and load: an archive is a DST or SRC
		Short:      "Copy an add-on between registries, OCI layouts, archives and the store",
		Long: `Copy copies an add-on, digests preserved, between any two of: a registry
reference, oci:DIR[:TAG], oci-archive:FILE[:TAG], and a name in the local store.
It is the air-gap path: copy to an oci-archive on the connected side, carry the
file across, copy it into the mirror inside.

What refers to the add-on travels with it (--no-referrers to leave it): its
cosign signatures, attestations and SBOMs (sha256-HEX.sig, .att, .sbom tags)
and the OCI referrers whose subject it is (an SBOM attached with oras attach),
and what refers to those; a registry without the referrers API gets the
sha256-HEX tag index that cosign and oras read. An index that something refers
to (a signature) is copied whole even with --platform: the signature covers the
index, not one platform's image. --verify-key checks the add-on's signature
before anything is copied (spec/signatures.md).

--with-images also copies every container image the add-on runs, by digest,
to MIRROR/PATH@DIGEST in a registry (PATH: the image's repository without its
registry host) or beside the add-on in a layout or archive, and writes an image
lock (a referrer of the add-on) that 'unpack --relocate MIRROR' reads. From an
archive made this way, the images and their digests come from its lock: the
original registries need not be reachable.`,
		Example: `  addonpkg copy registry.example.com/addons/coredns:1.11 oci-archive:coredns.tar
  addonpkg copy oci-archive:coredns.tar mirror.internal/addons/coredns:1.11
  addonpkg copy --with-images registry.example.com/addons/coredns:1.11 oci-archive:coredns.tar:1.11
  addonpkg copy --with-images oci-archive:coredns.tar:1.11 mirror.internal/addons/coredns:1.11`,
		Args: exactArgs("SRC", "DST"),
		RunE: func(cmd *cobra.Command, args []string) error {
			src, err := source.Parse(args[0])
			if err != nil {
				return err
			}
			dst, err := source.Parse(args[1])
			if err != nil {
				return err
			}
			if src.Kind == source.KindDir || dst.Kind == source.KindDir {
				return fmt.Errorf("copy moves OCI content: to package a folder, use 'addonpkg build'")
			}
			if images.withImages {
				return a.copyWithImages(cmd, src, dst, all, platform, asJSON, images)
			}
			if images.mirror != "" {
				return flagConflict(cmd, "--image-mirror goes with --with-images")
			}
			return a.copyCmd(cmd, src, dst, all, platform, asJSON)
		},
	}
	a.addCopyFlags(cmd, "copy", &asJSON, &all, &platform)
	images.add(cmd)
	a.addRegistryFlags(cmd)
	return cmd
}

// lsArgs takes one REGISTRY/REPO, as crane ls does; to ls alone (helm
// ls lists the releases installed, and addonpkg list the local store) it
// says which commands list what.
func lsArgs(cmd *cobra.Command, args []string) error {
	err := exactArgs("REGISTRY/REPO")(cmd, args)
	var ue *usageError
	if len(args) == 0 && errors.As(err, &ue) {
		ue.extra = append(ue.extra, "ls lists a registry repository's tags; the add-ons installed in a cluster: addonpkg status; the local store: addonpkg images")
	}
	return err
}

func newLsCmd(a *app) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:     "ls REGISTRY/REPO",
		Short:   "List a repository's tags, semver-sorted",
		Example: `  addonpkg ls registry.example.com/addons/coredns`,
		Args:    lsArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			name, err := repositoryArg(cmd, args[0], false)
			if err != nil {
				return err
			}
			repo, err := a.reg.ParseRepository(name)
			if err != nil {
				return err
			}
			ropts, err := a.reg.Remote(cmd.Context())
			if err != nil {
				return err
			}
			tags, err := registry.ListTags(cmd.Context(), repo, ropts...)
			if err != nil {
				return registry.Explain(name, err)
			}
			registry.SortTags(tags)
			if asJSON {
				return a.printJSON(tags)
			}
			for _, t := range tags {
				fmt.Fprintln(a.stdout, safetree.Sanitize(t)) // tags come from the registry
			}
			return nil
		},
	}
	addJSONFlag(cmd, &asJSON, "the tags (a list, semver-sorted)")
	a.addRegistryFlags(cmd)
	return cmd
}

// copiedJSON is what push, pull and copy print with --json (a
// transfer.Result), said once so that their help agrees.
const copiedJSON = "the reference, digest, size, media type and referrers copied"

// addCopyFlags adds the flags pull and copy share.
func (a *app) addCopyFlags(cmd *cobra.Command, verb string, asJSON, all *bool, platform *string) {
	f := cmd.Flags()
	addJSONFlag(cmd, asJSON, copiedJSON)
	f.BoolVar(all, "all-platforms", false, verb+" a whole index, not one platform's image")
	addPlatformFlag(cmd, platform, false)
	addQuietFlag(cmd, &a.quiet, "progress output nor notes (referrers copied or ignored, one platform of an index copied alone)")
	a.addLayerLimit(cmd)
	addVerifyKeyFlag(cmd)
	addReferrersFlag(cmd)
}

// parsePlatform parses --platform: nil when it is not given.
func parsePlatform(s string) (*v1.Platform, error) {
	if s == "" {
		return nil, nil
	}
	p, err := v1.ParsePlatform(s)
	if err != nil {
		return nil, fmt.Errorf("--platform %q: %w", s, err)
	}
	return p, nil
}
