package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/addonpkg/addonpkg/pkg/archive"
	"github.com/addonpkg/addonpkg/pkg/build"
	"github.com/addonpkg/addonpkg/pkg/mediatypes"
	"github.com/addonpkg/addonpkg/pkg/pack"
	"github.com/addonpkg/addonpkg/pkg/publish"
	"github.com/addonpkg/addonpkg/pkg/safetree"
	"github.com/addonpkg/addonpkg/pkg/source"
)

// buildFlags are build's flags, parsed into publish.Options by options.
type buildFlags struct {
	tags, outputs, labels, annotations, deletes []string
	format, compression, base, platform         string
	layered, asJSON                             bool
	opts                                        build.Options
	fetch                                       fetchFlags
}

func newBuildCmd(a *app) *cobra.Command {
	var bf buildFlags
	cmd := &cobra.Command{
		Use:        "build PATH",
		SuggestFor: []string{"package"}, // helm package
		Short:      "Package a folder, a manifest file, a YAML stream, a download or a git repository as an add-on",
		Long: `Build packages PATH (a directory, a single YAML file, or - for a YAML stream
on stdin) as an add-on in the image form (default) or the artifact form, into
the local store and/or the --output destinations. The same input gives the same
digest on any machine: times come from SOURCE_DATE_EPOCH, else, when PATH is
in a git work tree and has no untracked, modified or deleted file, from the last
commit that changed PATH (also recorded as the revision), else the Unix epoch.
A commit elsewhere in the repository changes nothing.

PATH may also be an https:// URL of a YAML file or a tar (.tar, compressed:
.tar.gz/.tgz, .tar.xz, .tar.bz2, .tar.zst) or .zip archive (URL[//SUBDIR][?checksum=sha256:HEX]), recorded as the source, or a git
repository (git+https://HOST/REPO.git[//SUBDIR][?ref=BRANCH|TAG|COMMIT], also
git+ssh:// and git+file://), whose URL and commit are recorded as source and
revision and whose commit time is the build time.

The tree is validated first: every YAML document must parse and name an
apiVersion, kind and metadata.name; a kustomize tree must render offline.`,
		Example: `  addonpkg build examples/coredns -t coredns:1.11
  addonpkg build examples/metrics-server --format artifact -t metrics-server:0.7
  addonpkg build ./addon -t registry.example.com/addons/x:1 -o oci:./layout:1
  kustomize build overlays/prod | addonpkg build - --name prod -t prod:1
  addonpkg build 'git+https://github.com/org/repo.git//deploy?ref=v1.2.0' -t x:1.2.0`,
		Args: exactArgs("PATH"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts, err := bf.options(a, cmd, args[0])
			if err != nil {
				return err
			}
			res, err := publish.Build(cmd.Context(), args[0], opts)
			if be := (*publish.BaseError)(nil); errors.As(err, &be) {
				return fmt.Errorf("build %s: --base %s: %w", args[0], bf.base, be.Err)
			}
			if err != nil {
				return err
			}
			if res.DefaultTag {
				a.infof("tagged %s in the local store (no -t given; name it with -t NAME:TAG)", safetree.Sanitize(res.Tags[0]))
			}
			a.warn(append(res.Warnings, res.Flux...))
			if bf.asJSON {
				return a.printJSON(map[string]any{"digest": res.Digest.String(), "tags": res.Tags, "format": opts.Build.Format, "config": res.Config})
			}
			fmt.Fprintln(a.stdout, res.Digest.String())
			return nil
		},
	}
	bf.add(a, cmd)
	return cmd
}

func (bf *buildFlags) add(a *app, cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringArrayVarP(&bf.tags, "tag", "t", nil, "name in the local store, NAME[:TAG] or REGISTRY/REPO[:TAG] (repeatable)")
	addEnumFlag(cmd, &bf.format, "format", string(pack.FormatImage), "add-on form: image or artifact", string(pack.FormatImage), string(pack.FormatArtifact))
	f.StringVar(&bf.opts.Name, "name", "", "add-on name (default: the directory's name)")
	f.StringVar(&bf.opts.Version, "version", "", "add-on version")
	f.StringVar(&bf.opts.Description, "description", "", "one-line description")
	addCheckedArray(cmd, &bf.labels, "label", "image config label k=v (repeatable)", checkKeyValue)
	addCheckedArray(cmd, &bf.annotations, "annotation", "manifest annotation k=v (repeatable)", checkKeyValue)
	f.StringVar(&bf.opts.Source, "source", "", "source URL (default: the git remote of PATH)")
	f.StringVar(&bf.opts.Revision, "revision", "", "source revision (default: the last git commit that changed PATH, when PATH has no changes)")
	addEnumFlag(cmd, &bf.compression, "compression", string(mediatypes.Gzip), "layer compression: gzip, zstd or none", string(mediatypes.Gzip), string(mediatypes.Zstd), string(mediatypes.None))
	f.VarP(&checkedArray{v: &bf.outputs, check: checkBuildOutput}, "output", "o", "also write to oci:DIR[:TAG], oci-archive:FILE[:TAG] or docker-archive:FILE[:REFERENCE] (repeatable)")
	f.BoolVar(&bf.opts.NoValidate, "no-validate", false, "skip parsing and rendering the manifests")
	f.BoolVar(&bf.opts.AllowRemote, "allow-remote", false, "let a kustomization load remote resources while validating")
	addKustomizeLimits(cmd, &bf.opts.MaxMappingKeys, &bf.opts.MaxKustomizeObjects, &bf.opts.MaxPatchTargets)
	addJSONFlag(cmd, &bf.asJSON, "digest, tags and config")
	addQuietFlag(cmd, &a.quiet, "warnings (kustomize's, Flux's), nor the note of the name given without -t")
	f.StringVar(&bf.base, "base", "", "patch this add-on (a store name, REGISTRY/REPO:TAG, oci:DIR...): an image keeps its layers and gets PATH's files in one layer on top; an artifact becomes one layer of the patched tree (see --layered)")
	f.StringArrayVar(&bf.deletes, "delete", nil, "with --base: delete this path of the base's tree (repeatable)")
	addPlatformFlag(cmd, &bf.platform, false)
	f.BoolVar(&bf.layered, "layered", false, "with --base of an artifact: keep the base's layers and add one (default: one layer of the patched tree; Flux and oras read only single-layer artifacts)")
	bf.fetch.add(cmd)
	a.addRegistryFlags(cmd)
}

// options parses the flags for a build of path. Which flags go together
// is checked here, in their words; what a build does with them is
// publish's.
func (bf *buildFlags) options(a *app, cmd *cobra.Command, path string) (publish.Options, error) {
	o := publish.Options{Build: bf.opts, Tags: bf.tags, Deletes: bf.deletes, Layered: bf.layered, Stdin: a.stdin, Store: a.store}
	var err error
	if o.Build.Format, err = pack.ParseFormat(bf.format); err != nil {
		return o, err
	}
	if o.Build.Compression, err = archive.ParseCompression(bf.compression); err != nil {
		return o, err
	}
	if o.Build.Labels, err = keyValues("--label", bf.labels); err != nil {
		return o, err
	}
	if o.Build.Annotations, err = keyValues("--annotation", bf.annotations); err != nil {
		return o, err
	}
	for _, s := range bf.outputs {
		ref, err := parseOutput(s, o.Build.Format)
		if err != nil {
			return o, err
		}
		o.Outputs = append(o.Outputs, ref)
	}
	o.Tree = source.Options{Registry: a.reg}
	bf.fetch.apply(&o.Tree)
	switch {
	case bf.base == "" && len(bf.deletes) > 0:
		return o, flagConflict(cmd, "--delete needs --base: only a patch deletes files of another add-on")
	case bf.base == "" && bf.layered:
		return o, flagConflict(cmd, "--layered needs --base: only a patch of an artifact has layers to keep")
	case bf.base == "" && bf.platform != "":
		return o, flagConflict(cmd, "--platform needs --base: it picks the base's image from an index of several")
	case bf.base == "":
		return o, nil
	case cmd.Flags().Changed("format"):
		return o, fmt.Errorf("build %s: --format: a patch keeps the form of its --base", path)
	}
	if o.Base, err = source.Parse(bf.base); err != nil {
		return o, fmt.Errorf("build %s: --base: %w", path, err)
	}
	if o.BaseSource, err = a.sourceOptions(source.PullMissing); err != nil {
		return o, fmt.Errorf("build %s: %w", path, err)
	}
	if o.BasePlatform, err = parsePlatform(bf.platform); err != nil {
		return o, err
	}
	return o, nil
}

func fixedCompletion(values ...string) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return values, cobra.ShellCompDirectiveNoFileComp
	}
}

// parseOutput parses an --output destination of a build of the form f
// (publish.CheckOutput).
func parseOutput(s string, f pack.Format) (source.Ref, error) {
	ref, err := source.Parse(s)
	if err != nil {
		return source.Ref{}, fmt.Errorf("--output %s: %w", s, err)
	}
	if err := publish.CheckOutput(ref, f); err != nil {
		return source.Ref{}, fmt.Errorf("--output %s: %w", s, err)
	}
	return ref, nil
}

// checkBuildOutput refuses, as the flag is parsed, an --output that is no
// destination of any build (parseOutput, before --format is known), and
// says so of kubectl's -o yaml or -o json, which build has no use for.
func checkBuildOutput(s string) error {
	if format, ok := kubectlOutput(s); ok {
		return fmt.Errorf("want oci:DIR[:TAG], oci-archive:FILE[:TAG] or docker-archive:FILE[:REFERENCE], not kubectl's output format %s: build prints the digest, and JSON with --json", format)
	}
	if _, err := parseOutput(s, ""); err != nil {
		return errors.Unwrap(err)
	}
	return nil
}

func keyValues(flag string, kvs []string) (map[string]string, error) {
	if len(kvs) == 0 {
		return nil, nil
	}
	m := map[string]string{}
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("%s %q: want KEY=VALUE", flag, kv)
		}
		m[k] = v
	}
	return m, nil
}
