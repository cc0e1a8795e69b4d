package main

import (
	"github.com/spf13/cobra"

	"github.com/addonpkg/addonpkg/internal/doctor"
	"github.com/addonpkg/addonpkg/pkg/reference"
	"github.com/addonpkg/addonpkg/pkg/source"
	"github.com/addonpkg/addonpkg/pkg/transfer"
)

func newDoctorCmd(a *app) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "doctor REGISTRY/REPO",
		Short: "Find out what a registry accepts: both forms, artifact media types, referrers, mounts, chunked uploads",
		Long: `Doctor pushes small throwaway manifests to scratch tags of REGISTRY/REPO
(addonpkg-doctor-<random>-*) and reports what the registry accepts:

  image-form              an OCI image manifest with an image config
  artifact-form           the artifact form's own config media type
  artifact-type           the artifactType field of an image manifest
  empty-config            the OCI empty config (application/vnd.oci.empty.v1+json)
  zstd-layers             zstd-compressed image layers
  referrers-api           GET /v2/<name>/referrers/<digest>
  referrers-tag-fallback  the referrers tag schema (sha256-<hex> tags)
  cross-repo-mount        POST ?mount=&from= from REPO/addonpkg-doctor
  chunked-upload          PATCH uploads with Content-Range
  delete                  deleting the scratch manifests afterwards

It needs push rights on REPO. Scratch manifests are deleted afterwards where
the registry allows it; the delete check says when they remain. The report is
cached for a day (in the user cache directory) for 'push --format auto'.`,
		Example: `  addonpkg doctor registry.example.com/addons/coredns
  addonpkg doctor localhost:5000/scratch --json`,
		Args: exactArgs("REGISTRY/REPO"),
		RunE: func(cmd *cobra.Command, args []string) error {
			name, err := repositoryArg(cmd, args[0], true)
			if err != nil {
				return err
			}
			rep, err := doctor.Diagnose(cmd.Context(), name, a.reg)
			if err != nil {
				return err
			}
			if err := doctor.Remember(rep); err != nil {
				a.infof("addonpkg: warning: %s", oneLine(err.Error()))
			}
			if asJSON {
				return a.printJSON(rep)
			}
			return rep.WriteTable(a.stdout)
		},
	}
	addJSONFlag(cmd, &asJSON, "the report")
	addQuietFlag(cmd, &a.quiet, "warnings (a report that could not be cached)")
	a.addRegistryFlags(cmd)
	return cmd
}

// pushAuto is `push --format auto`: an artifact-form add-on goes to a
// registry that refuses that form as the image form (same tree, same
// content identity, another digest).
func (a *app) pushAuto(cmd *cobra.Command, src, dst source.Ref, asJSON bool) error {
	sopts, err := a.sourceOptions(source.PullNever)
	if err != nil {
		return err
	}
	cache, err := doctor.DefaultCache()
	if err != nil {
		cache = nil // no cache directory: probe every time
	}
	opts := transfer.Options{Options: sopts, AllPlatforms: true, Referrers: referrersOn(cmd)}
	var wait func()
	opts.BlobProgress, wait = a.blobBars()
	res, converted, err := transfer.PushAuto(cmd.Context(), src, dst, opts, cache)
	wait()
	if err != nil {
		return err
	}
	if converted {
		a.infof("%s does not accept the artifact form: pushed the image form of %s (same content identity, digest %s)", reference.Registry(dst.Name), src.Name, res.Digest)
	}
	return a.printResult(res, asJSON)
}
