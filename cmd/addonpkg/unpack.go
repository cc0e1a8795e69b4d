package main

import (
	"fmt"
	"io/fs"
	"os"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/addonpkg/addonpkg/pkg/render"
	"github.com/addonpkg/addonpkg/pkg/safetree"
	"github.com/addonpkg/addonpkg/pkg/source"
	"github.com/addonpkg/addonpkg/pkg/unpack"
	"github.com/addonpkg/addonpkg/pkg/values"
)

// unpackFlags are unpack's flags: where the add-on goes (-o, the
// stream, --raw, --list, --json) and how it is read and rendered.
type unpackFlags struct {
	out, contentDir   string
	raw, list, asJSON bool
	rf                renderFlags
	limits            safetree.Limits
	src               sourceFlags
	reloc             relocateFlag
	sopts             source.Options // set by unpack
}

func newUnpackCmd(a *app) *cobra.Command {
	var u unpackFlags
	cmd := &cobra.Command{
		Use: "unpack SOURCE",
		// helm template renders; tar and docker's words extract
		SuggestFor: []string{"template", "extract", "export"},
		Short:      "Unpack an add-on to a directory, or render it to stdout",
		Long: `Unpack reads the add-on in SOURCE, without a container runtime, and either
writes its tree to -o DIR (atomically: DIR appears complete or not at all) or
prints the rendered YAML stream for 'kubectl apply -f -'. Reading an image, -o
writes each file as it becomes final, and the stream keeps what does not fit a
small memory budget in a temporary directory, so memory does not grow with the
add-on (a kustomize render is still built in memory, by kustomize).

SOURCE is a name in the local store, a registry reference (REGISTRY/REPO:TAG,
...@sha256:..., optionally prefixed docker:// or oci://), oci:DIR[:TAG|@DIGEST],
oci-archive:FILE[:TAG], docker-archive:FILE[:REFERENCE], a local folder or manifest file
(./dir, /abs/dir, file.yaml, file://...), an https:// URL of a YAML file or a
tar (.tar, compressed: .tar.gz/.tgz, .tar.xz, .tar.bz2, .tar.zst) or .zip archive (URL[//SUBDIR][?checksum=sha256:HEX]), or a git
repository (git+https://HOST/REPO.git[//SUBDIR][?ref=BRANCH|TAG|COMMIT], also
git+ssh://, git+file://). A name without a registry host (coredns:1.11) is a
local name: it is read from the local store only, never from Docker Hub (write
docker.io/library/coredns:1.11 for that). A registry reference that exists in
the local store is read from there (see --pull).

--json prints "pinned": a SOURCE that resolves to exactly this content
(REPO@sha256:..., a git URL with ?ref=COMMIT, an https URL with
?checksum=sha256:...; empty for a local folder).

--relocate MIRROR renders the add-on with its container images at the mirror,
MIRROR/PATH@DIGEST, from the image lock that 'copy --with-images' wrote beside
it (read from the layout, archive or store without network, or from the
registry's referrers). An image of the stream that the lock lacks is refused.`,
		Example: `  addonpkg unpack metrics-server:0.7 | kubectl apply -f -
  addonpkg unpack registry.example.com/addons/coredns:1.11 -o ./coredns
  addonpkg unpack oci:./layout:1 --list
  addonpkg unpack coredns:1.11 --json
  addonpkg unpack https://example.com/releases/addon.tar.gz//deploy --json
  addonpkg unpack 'git+https://github.com/org/repo.git//deploy/base?ref=v1.2.0'
  addonpkg unpack --relocate mirror.internal mirror.internal/addons/coredns:1.11`,
		Args:              exactArgs("SOURCE"),
		ValidArgsFunction: sourceNames(a, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := u.check(cmd); err != nil {
				return err
			}
			ref, err := source.Parse(args[0])
			if err != nil {
				return err
			}
			ad, release, err := u.unpack(cmd, a, ref)
			if err != nil {
				return err
			}
			defer release()
			if ad.Stale {
				a.warn([]string{fmt.Sprintf("%s: stale labels: the image's identity or config label describes another tree (inherited through FROM?); metadata derived from the content", ref)})
			}
			return u.print(cmd, a, ref, ad)
		},
	}
	f := cmd.Flags()
	f.VarP((*dirValue)(&u.out), "output", "o", "write the tree to this directory (must not exist or be empty; -o yaml, -o json and kubectl's other output formats are refused unless such a folder exists: write ./yaml for a new one)")
	f.BoolVar(&u.raw, "raw", false, "print the tree's manifests as written, without rendering kustomize (kustomization files, and files that are not Kubernetes objects such as JSON patches, are left out)")
	f.BoolVar(&u.list, "list", false, "print the file list with sizes")
	addJSONFlag(cmd, &u.asJSON, "metadata, the file list and the values the add-on declares")
	addQuietFlag(cmd, &a.quiet, "warnings (kustomize's, stale labels, images left unrelocated)")
	f.StringVar(&u.contentDir, "content-dir", "", "content directory of an image-form add-on (default: its label, else /addon)")
	u.rf.add(cmd)
	addLimit(f, &u.limits.MaxAddonBytes, "max-addon-bytes", safetree.DefaultMaxAddonBytes, "limit: bytes of files in the add-on")
	addLimit(f, &u.limits.MaxImageBytes, "max-image-bytes", safetree.DefaultMaxImageBytes, "limit: decompressed bytes of all layers")
	addLimit(f, &u.limits.MaxEntries, "max-entries", safetree.DefaultMaxEntries, "limit: entries in the add-on")
	addLimit(f, &u.limits.MaxFileBytes, "max-file-bytes", safetree.DefaultMaxFileBytes, "limit: bytes of one file")
	addLimit(f, &u.limits.MaxPathLength, "max-path-length", safetree.DefaultMaxPathLength, "limit: bytes of one path")
	addLimit(f, &u.limits.MaxDepth, "max-depth", safetree.DefaultMaxDepth, "limit: components of one path")
	a.addLayerLimit(cmd)
	u.src.add(a, cmd)
	u.reloc.add(cmd)
	return cmd
}

// check refuses flags that ask for two outputs: -o writes the tree,
// --list and --raw print something else (--list -o wrote the tree and
// listed nothing).
func (u *unpackFlags) check(cmd *cobra.Command) error {
	if u.out != "" && (u.list || u.raw) {
		return flagConflict(cmd, "-o writes the tree: it does not go with --list or --raw, which print instead")
	}
	return u.reloc.check(cmd, u.out, u.raw, u.list, u.asJSON)
}

// unpack reads the add-on: into -o DIR, or into a tree that spills to a
// temporary directory, which release removes.
func (u *unpackFlags) unpack(cmd *cobra.Command, a *app, ref source.Ref) (*unpack.Addon, func(), error) {
	u.limits.MaxLayers = a.maxLayers
	sopts, uopts, err := u.src.options(cmd, a)
	if err != nil {
		return nil, nil, err
	}
	uopts.ContentDir, uopts.Limits = u.contentDir, u.limits
	u.sopts = sopts
	if u.out != "" {
		ad, err := source.UnpackTo(cmd.Context(), ref, u.out, sopts, uopts)
		return ad, func() {}, err
	}
	return source.UnpackSpilled(cmd.Context(), ref, sopts, uopts)
}

// print writes what the flags ask for: nothing more for -o (its
// metadata with --json), the metadata, the file list, the manifests as
// written, or the rendered stream with its values filled in (and its
// images relocated).
func (u *unpackFlags) print(cmd *cobra.Command, a *app, ref source.Ref, ad *unpack.Addon) error {
	ctx := cmd.Context()
	switch {
	case u.out != "":
		if u.asJSON {
			// The files are on disk now, not in the tree: read them
			// there, confined to the directory.
			root, err := os.OpenRoot(u.out)
			if err != nil {
				return err
			}
			defer root.Close()
			return a.printDescription(ref, ad, root.FS())
		}
		return nil
	case u.asJSON:
		// A config without an inventory (a foreign image, a minimal
		// third-party config) gets the rendered one.
		if ad.NoInventory {
			res, err := render.Addon(ctx, ad, withDropText(u.rf.limits()))
			if err != nil {
				return fmt.Errorf("render %s: %w", ref, err)
			}
			a.warn(res.Warnings)
			ad.SetInventory(res.Inventory())
		}
		return a.printDescription(ref, ad, ad.FS)
	case u.list:
		return printList(a, ad)
	}
	// The stream reads each document back from the tree as it writes it
	// (the render holds no text), except when relocation rewrites it.
	ropts, err := u.rf.options(!u.raw)
	if err != nil {
		return err
	}
	ropts.Raw, ropts.DropText = u.raw, !u.reloc.enabled()
	res, err := render.Addon(ctx, ad, ropts)
	if err != nil {
		if u.raw {
			return fmt.Errorf("%s: %w", ref, err)
		}
		return fmt.Errorf("render %s: %w", ref, err)
	}
	a.warn(res.Warnings)
	if !u.raw {
		if res, err = u.reloc.apply(ctx, a, ref, u.sopts, ad, res, withValues(u.rf.limits(), ropts.Values)); err != nil {
			return err
		}
	}
	_, err = res.WriteTo(a.stdout)
	return err
}

// fetchFlags bound http and git sources. Their time limit is the
// registry flags' --timeout: an idle timeout (no data for that long), for
// git+ssh:// a bound on the whole fetch.
type fetchFlags struct {
	maxDownload int64
}

func (f *fetchFlags) add(cmd *cobra.Command) {
	addLimit(cmd.Flags(), &f.maxDownload, "max-download-bytes", safetree.DefaultMaxDownloadBytes, "limit: bytes of an http download")
}

// apply sets the fetch limits on o, whose Registry options are set.
func (f *fetchFlags) apply(o *source.Options) {
	o.Timeout = o.Registry.Timeout
	o.MaxDownloadBytes = f.maxDownload
	o.Locations = locations()
}

type fileInfo struct {
	Path   string `json:"path"`
	Type   string `json:"type"`
	Size   int64  `json:"size,omitempty"`
	Target string `json:"target,omitempty"`
}

func files(ad *unpack.Addon) []fileInfo {
	out := []fileInfo{}
	_ = fs.WalkDir(ad.FS, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == "." {
			return err
		}
		fi := fileInfo{Path: p, Type: "file"}
		switch {
		case d.IsDir():
			fi.Type = "dir"
		case d.Type()&fs.ModeSymlink != 0:
			fi.Type = "symlink"
			fi.Target, _ = fs.ReadLink(ad.FS, p)
		default:
			if info, err := d.Info(); err == nil {
				fi.Size = info.Size()
			}
		}
		out = append(out, fi)
		return nil
	})
	return out
}

// printDescription prints what --json says of an add-on: where it came
// from, its config, its files and the values it declares for its
// installer (.addonvalues, read from tree), so that an installer can ask
// which to give.
func (a *app) printDescription(ref source.Ref, ad *unpack.Addon, tree fs.FS) error {
	m := map[string]any{
		"source":   ref.String(),
		"pinned":   ad.Pinned,
		"form":     ad.Form,
		"identity": ad.Identity,
		"config":   ad.Config,
		"files":    files(ad),
	}
	if ad.Stale {
		m["staleLabels"] = true
	}
	if ad.Digest.Hex != "" {
		m["digest"] = ad.Digest.String()
	}
	decl, err := values.Load(tree)
	if err != nil {
		return fmt.Errorf("%s: %w", ref, err)
	}
	if decl != nil {
		vals := make([]declaredValue, len(decl.Values))
		for i, v := range decl.Values {
			vals[i] = declaredValue{Value: v, Required: v.Default == nil}
		}
		m["values"] = vals
	}
	return a.printJSON(m)
}

// declaredValue is a value the add-on declares, and whether an
// installer must give it (it has no default).
type declaredValue struct {
	values.Value
	Required bool `json:"required"`
}

func printList(a *app, ad *unpack.Addon) error {
	tw := tabwriter.NewWriter(terminalSafe(a.stdout), 0, 4, 2, ' ', tabwriter.AlignRight)
	for _, f := range files(ad) {
		switch f.Type {
		case "dir":
			fmt.Fprintf(tw, "-\t %s/\n", safetree.Sanitize(f.Path))
		case "symlink":
			fmt.Fprintf(tw, "-\t %s -> %s\n", safetree.Sanitize(f.Path), safetree.Sanitize(f.Target))
		default:
			fmt.Fprintf(tw, "%d\t %s\n", f.Size, safetree.Sanitize(f.Path))
		}
	}
	return tw.Flush()
}
