package main

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/spf13/cobra"

	"github.com/addonpkg/addonpkg/pkg/archive"
	"github.com/addonpkg/addonpkg/pkg/build"
	"github.com/addonpkg/addonpkg/pkg/folder"
	"github.com/addonpkg/addonpkg/pkg/memfs"
	"github.com/addonpkg/addonpkg/pkg/reference"
	"github.com/addonpkg/addonpkg/pkg/safetree"
	"github.com/addonpkg/addonpkg/pkg/source"
	"github.com/addonpkg/addonpkg/pkg/transfer"
	"github.com/addonpkg/addonpkg/pkg/unpack"
)

func newBuildCmd(a *app) *cobra.Command {
	var (
		tags, outputs, labels, annotations []string
		format, compression                string
		opts                               build.Options
		asJSON                             bool
		fetch                              fetchFlags
		base                               string
		deletes                            []string
		layered                            bool
	)
	cmd := &cobra.Command{
		Use:   "build PATH",
		Short: "Package a folder, a manifest file, a YAML stream, a download or a git repository as an add-on",
		Long: `Build packages PATH (a directory, a single YAML file, or - for a YAML stream
on stdin) as an add-on in the image form (default) or the artifact form, into
the local store and/or the --output destinations. The same input gives the same
digest on any machine: times come from SOURCE_DATE_EPOCH, else, when PATH is
in a git work tree and has no untracked, modified or deleted file, from the last
commit that changed PATH (also recorded as the revision), else the Unix epoch.
A commit elsewhere in the repository changes nothing.

PATH may also be an https:// URL of a YAML file or a .tar.gz/.tgz/.tar/.zip
archive (URL[//SUBDIR][?checksum=sha256:HEX]), recorded as the source, or a git
repository (git+https://HOST/REPO.git[//SUBDIR][?ref=BRANCH|TAG|COMMIT], also
git+ssh:// and git+file://), whose URL and commit are recorded as source and
revision and whose commit time is the build time.

The tree is validated first: every YAML document must parse and name an
apiVersion, kind and metadata.name; a kustomize tree must render offline.`,
		Example: `  addonpkg build examples/coredns -t coredns:1.11
  addonpkg build examples/metrics-server --format artifact -t metrics-server:0.7
  addonpkg build ./addon -t registry.example.com/addons/x:1 --output oci:./layout:1
  kustomize build overlays/prod | addonpkg build - --name prod -t prod:1
  addonpkg build 'git+https://github.com/org/repo.git//deploy?ref=v1.2.0' -t x:1.2.0`,
		Args: exactArgs("PATH"),
		RunE: func(cmd *cobra.Command, args []string) error {
			var err error
			if opts.Format, err = build.ParseFormat(format); err != nil {
				return err
			}
			if opts.Compression, err = archive.ParseCompression(compression); err != nil {
				return err
			}
			if opts.Labels, err = keyValues("--label", labels); err != nil {
				return err
			}
			if opts.Annotations, err = keyValues("--annotation", annotations); err != nil {
				return err
			}
			dsts := make([]source.Ref, 0, len(outputs))
			for _, o := range outputs {
				ref, err := parseOutput(o, opts.Format)
				if err != nil {
					return err
				}
				dsts = append(dsts, ref)
			}
			path := args[0]
			sopts := source.Options{Registry: a.reg}
			fetch.apply(&sopts)
			var fsys fs.FS
			tree, err := source.ReadTree(cmd.Context(), path, a.stdin, sopts, source.Limits{})
			switch {
			case err == nil:
				defer tree.Close()
				fsys = tree.FS
				if opts.Name == "" && base == "" {
					opts.Name = tree.Name
				}
				if opts, err = opts.WithProvenance(build.Provenance{Source: tree.Source, Revision: tree.Revision, Time: tree.Time}); err != nil {
					return err
				}
			case base != "" && len(deletes) > 0 && errors.Is(err, folder.ErrEmpty):
				// A patch may only delete: an empty folder is fine then.
				fsys = memfs.NewBuilder().FS()
				if opts, err = opts.WithProvenance(build.Provenance{}); err != nil {
					return err
				}
			default:
				return err
			}
			var res *build.Result
			if base != "" {
				var closeBase func() error
				res, closeBase, err = a.patchBase(cmd, base, fsys, deletes, opts, layered)
				if closeBase != nil {
					defer closeBase()
				}
				if err == nil {
					opts.Name, opts.Version = res.Config.Name, res.Config.Version
				}
			} else {
				if len(deletes) > 0 {
					return fmt.Errorf("--delete needs --base: only a patch deletes files of another add-on")
				}
				if layered {
					return fmt.Errorf("--layered needs --base: only a patch of an artifact has layers to keep")
				}
				res, err = build.Build(cmd.Context(), fsys, opts)
			}
			if err != nil {
				return fmt.Errorf("build %s: %w", path, err)
			}
			defaultTag := len(tags) == 0 && len(dsts) == 0
			if defaultTag {
				v := opts.Version
				if v == "" {
					v = reference.DefaultTag
				}
				tags = []string{opts.Name + ":" + v}
			}
			var names []string
			for _, t := range tags {
				ref, err := source.Parse(t)
				if err != nil || (ref.Kind != source.KindStore && ref.Kind != source.KindRegistry) {
					return fmt.Errorf("invalid tag %q: want NAME[:TAG] or REGISTRY/REPO[:TAG]", t)
				}
				names = append(names, reference.WithDefaultTag(t))
			}
			art := &source.Artifact{Image: res.Image, Digest: res.Digest}
			if len(names) > 0 {
				st, err := a.store()
				if err != nil {
					return err
				}
				if _, err := st.WriteImage(cmd.Context(), res.Image, nil, names...); err != nil {
					return fmt.Errorf("write to store %s: %w", st.Dir(), err)
				}
				if defaultTag {
					a.infof("Tagged %s in the local store (no -t given; name it with -t NAME:TAG)", safetree.Sanitize(names[0]))
				}
			}
			for _, d := range dsts {
				if _, err := transfer.Write(cmd.Context(), art, d, transfer.Options{}); err != nil {
					return err
				}
			}
			a.warn(res.Warnings)
			for _, w := range build.FluxWarnings(res.Image) {
				fmt.Fprintf(a.stderr, "warning: %s\n", w)
			}
			if asJSON {
				return a.printJSON(map[string]any{
					"digest": res.Digest.String(), "tags": names, "format": opts.Format, "config": res.Config,
				})
			}
			fmt.Fprintln(a.stdout, res.Digest.String())
			return nil
		},
	}
	f := cmd.Flags()
	f.StringArrayVarP(&tags, "tag", "t", nil, "name in the local store, NAME[:TAG] or REGISTRY/REPO[:TAG] (repeatable)")
	f.StringVar(&format, "format", "image", "add-on form: image or artifact")
	f.StringVar(&opts.Name, "name", "", "add-on name (default: the directory's name)")
	f.StringVar(&opts.Version, "version", "", "add-on version")
	f.StringVar(&opts.Description, "description", "", "one-line description")
	f.StringArrayVar(&labels, "label", nil, "image config label k=v (repeatable)")
	f.StringArrayVar(&annotations, "annotation", nil, "manifest annotation k=v (repeatable)")
	f.StringVar(&opts.Source, "source", "", "source URL (default: the git remote of PATH)")
	f.StringVar(&opts.Revision, "revision", "", "source revision (default: the last git commit that changed PATH, when PATH has no changes)")
	f.StringVar(&compression, "compression", "gzip", "layer compression: gzip, zstd or none")
	f.StringArrayVar(&outputs, "output", nil, "also write to oci:DIR[:TAG], oci-archive:FILE[:TAG] or docker-archive:FILE[:REFERENCE] (repeatable)")
	f.BoolVar(&opts.NoValidate, "no-validate", false, "skip parsing and rendering the manifests")
	f.BoolVar(&opts.AllowRemote, "allow-remote", false, "let a kustomization load remote resources while validating")
	addJSONFlag(cmd, &asJSON, "digest, tags and config")
	f.StringVar(&base, "base", "", "patch this add-on (a store name, REGISTRY/REPO:TAG, oci:DIR...): an image keeps its layers and gets PATH's files in one layer on top; an artifact becomes one layer of the patched tree (see --layered)")
	f.StringArrayVar(&deletes, "delete", nil, "with --base: delete this path of the base's tree (repeatable)")
	f.BoolVar(&layered, "layered", false, "with --base of an artifact: keep the base's layers and add one (default: one layer of the patched tree; Flux and oras read only single-layer artifacts)")
	fetch.add(cmd)
	a.addRegistryFlags(cmd)
	_ = cmd.RegisterFlagCompletionFunc("format", fixedCompletion("image", "artifact"))
	_ = cmd.RegisterFlagCompletionFunc("compression", fixedCompletion("gzip", "zstd", "none"))
	return cmd
}

func fixedCompletion(values ...string) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return values, cobra.ShellCompDirectiveNoFileComp
	}
}

func parseOutput(s string, f build.Format) (source.Ref, error) {
	ref, err := source.Parse(s)
	if err != nil {
		return source.Ref{}, fmt.Errorf("--output %s: %w", s, err)
	}
	switch ref.Kind {
	case source.KindLayout, source.KindArchive:
	case source.KindDockerArchive:
		if f != build.FormatImage {
			return source.Ref{}, fmt.Errorf("--output %s: docker-archive holds only the image form", s)
		}
	default:
		return source.Ref{}, fmt.Errorf("--output %s: want oci:DIR[:TAG], oci-archive:FILE[:TAG] or docker-archive:FILE[:REFERENCE]", s)
	}
	return ref, nil
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

// patchBase opens --base (a store name, a registry reference, oci:DIR...)
// and puts fsys on top of it as one new layer, with the --delete paths as
// whiteouts. The base's form is kept. The closer releases the base (an
// oci-archive stays open until the result is written): call it when done.
func (a *app) patchBase(cmd *cobra.Command, base string, fsys fs.FS, deletes []string, opts build.Options, layered bool) (*build.Result, func() error, error) {
	f := cmd.Flags()
	if f.Changed("format") {
		return nil, nil, fmt.Errorf("--format: a patch keeps the form of its --base")
	}
	ref, err := source.Parse(base)
	if err != nil {
		return nil, nil, fmt.Errorf("--base: %w", err)
	}
	if source.IsTree(ref.Kind) {
		return nil, nil, fmt.Errorf("--base %s: want a built add-on (a store name, REGISTRY/REPO:TAG, oci:DIR...), not a %s source", base, ref.Kind)
	}
	sopts, err := a.sourceOptions(source.PullMissing)
	if err != nil {
		return nil, nil, err
	}
	art, err := source.Open(cmd.Context(), ref, sopts)
	if err != nil {
		return nil, nil, err
	}
	img := art.Image
	if art.Index != nil {
		if img, err = unpack.SelectImage(art.Index, nil); err != nil {
			return nil, art.Close, fmt.Errorf("--base %s: %w", base, err)
		}
	}
	popts := build.PatchOptions{
		Deletes: deletes, Created: opts.Created, Compression: opts.Compression,
		Version: opts.Version, Description: opts.Description,
		Labels: opts.Labels, Annotations: opts.Annotations,
		NoValidate: opts.NoValidate, AllowRemote: opts.AllowRemote,
		Layered: layered,
	}
	if f.Changed("name") {
		popts.Name = opts.Name
	}
	if f.Changed("source") {
		popts.Source = opts.Source
	}
	if f.Changed("revision") {
		popts.Revision = opts.Revision
	}
	res, err := build.Patch(cmd.Context(), img, fsys, popts)
	if err != nil {
		return nil, art.Close, fmt.Errorf("--base %s: %w", base, err)
	}
	return res, art.Close, nil
}
