package source

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/addonpkg/addonpkg/internal/atomicfile"
	"github.com/addonpkg/addonpkg/pkg/errdef"
	"github.com/addonpkg/addonpkg/pkg/layout"
	"github.com/addonpkg/addonpkg/pkg/mediatypes"
	"github.com/addonpkg/addonpkg/pkg/reference"
	"github.com/addonpkg/addonpkg/pkg/safetree"
)

// layoutLocation is an OCI image layout directory: oci:DIR[:TAG|@DIGEST].
type layoutLocation struct{}

func (layoutLocation) Kind() Kind { return KindLayout }

// Claims oci:DIR, but not oci://REGISTRY/REPO, which is a registry
// reference (registryLocation), as Flux and oras write it. oci:///DIR
// (an absolute path, as a file URL writes it) stays a layout: as a
// registry reference it named Docker Hub's repository /DIR.
func (layoutLocation) Claims(s string) bool {
	return strings.HasPrefix(s, "oci:") && (!strings.HasPrefix(s, "oci://") || strings.HasPrefix(s, "oci:///"))
}

func (layoutLocation) Parse(s string) (Ref, error) { return parseInLayout(KindLayout, s) }
func (layoutLocation) Format(r Ref) string         { return formatInLayout(r) }

func (layoutLocation) Open(ctx context.Context, ref Ref, opts Options) (*Artifact, error) {
	ref = resplit(ref)
	st, err := layout.HandlesFrom(ctx).Open(ref.Path)
	if err != nil {
		return nil, err
	}
	return openInLayout(st, ref, nil)
}

func (layoutLocation) Write(ctx context.Context, a *Artifact, dst Ref, opts Options) (string, error) {
	st, err := layout.HandlesFrom(ctx).Init(dst.Path)
	if err != nil {
		return "", err
	}
	if err := writeLayout(ctx, st, a, dst.Name, opts.BlobProgress); err != nil {
		return "", err
	}
	return "oci:" + dst.Path + "@" + a.Digest.String(), nil
}

func (layoutLocation) Pinned(a *Artifact) string   { return pinnedInLayout(a) }
func (layoutLocation) Repository(*Artifact) string { return "" }

// archiveLocation is an OCI layout in a tar file:
// oci-archive:FILE[:TAG|@DIGEST].
type archiveLocation struct{}

func (archiveLocation) Kind() Kind                  { return KindArchive }
func (archiveLocation) Claims(s string) bool        { return strings.HasPrefix(s, "oci-archive:") }
func (archiveLocation) Parse(s string) (Ref, error) { return parseInLayout(KindArchive, s) }
func (archiveLocation) Format(r Ref) string         { return formatInLayout(r) }

func (archiveLocation) Open(ctx context.Context, ref Ref, opts Options) (*Artifact, error) {
	ref = resplit(ref)
	h := layout.HandlesFrom(ctx)
	st, err := h.OpenArchiveLimit(ref.Path, opts.imageBytes())
	if err != nil {
		return nil, err
	}
	closer := st.Close
	if h.Shared() {
		closer = nil // the Handles close it
	}
	a, err := openInLayout(st, ref, closer)
	if err != nil && closer != nil {
		closer()
	}
	return a, err
}

// Write writes a layout in a temp directory beside the file, then packs
// it: the archive appears only when complete.
func (archiveLocation) Write(ctx context.Context, a *Artifact, dst Ref, opts Options) (string, error) {
	tmp, err := atomicfile.TempDir(dst.Path, ".addonpkg-archive-")
	if err != nil {
		return "", fmt.Errorf("write %s: %w", dst, err)
	}
	defer os.RemoveAll(tmp)
	st, err := layout.Init(tmp)
	if err != nil {
		return "", err
	}
	if err := writeLayout(ctx, st, a, dst.Name, opts.BlobProgress); err != nil {
		return "", err
	}
	if err := layout.WriteArchive(tmp, dst.Path); err != nil {
		return "", fmt.Errorf("write %s: %w", dst, err)
	}
	return "oci-archive:" + dst.Path + "@" + a.Digest.String(), nil
}

func (archiveLocation) Pinned(a *Artifact) string   { return pinnedInLayout(a) }
func (archiveLocation) Repository(*Artifact) string { return "" }

func parseInLayout(k Kind, s string) (Ref, error) {
	p, n := reference.SplitPath(strings.TrimPrefix(s, string(k)+":"))
	return Ref{Kind: k, Path: p, Name: n}, nonEmpty(s, p)
}

// resplit reads oci:DIR:NAME and oci-archive:FILE:NAME as skopeo does
// when the path that Parse's split at the last colon leaves is not
// there: a ref name with a registry and a repository (skopeo copy ...
// oci:DIR:registry.example.com/x:1) has colons of its own. The path is
// then the longest one before a colon that exists, and the rest the
// name, when it is a reference. Parse never reads the disk, so this
// happens as the layout is opened; a path that exists is kept, colons
// and all.
func resplit(ref Ref) Ref {
	if ref.Name == "" || strings.HasPrefix(ref.Name, "sha256:") {
		return ref
	}
	if _, err := os.Lstat(ref.Path); !errors.Is(err, fs.ErrNotExist) {
		return ref
	}
	for i := strings.LastIndex(ref.Path, ":"); i > 0; i = strings.LastIndex(ref.Path[:i], ":") {
		p, n := ref.Path[:i], ref.Path[i+1:]+":"+ref.Name
		if _, err := name.ParseReference(n); err != nil {
			continue
		}
		if _, err := os.Stat(p); err == nil {
			ref.Path, ref.Name = p, n
			return ref
		}
	}
	return ref
}

func formatInLayout(r Ref) string {
	if r.Name == "" {
		return string(r.Kind) + ":" + r.Path
	}
	sep := ":"
	if strings.HasPrefix(r.Name, "sha256:") {
		sep = "@"
	}
	return string(r.Kind) + ":" + r.Path + sep + r.Name
}

func pinnedInLayout(a *Artifact) string {
	return string(a.Ref.Kind) + ":" + a.Ref.Path + "@" + a.Digest.String()
}

func writeLayout(ctx context.Context, st *layout.Store, a *Artifact, tag string, progress layout.Progress) error {
	var names []string
	if tag != "" {
		names = append(names, tag)
	}
	var err error
	if a.Index != nil {
		_, err = st.WriteIndex(ctx, a.Index, progress, names...)
	} else {
		_, err = st.WriteImage(ctx, a.Image, progress, names...)
	}
	return err
}

// openInLayout resolves the tag or digest inside a layout; without one, the
// layout must hold exactly one manifest.
func openInLayout(st *layout.Store, ref Ref, closer func() error) (*Artifact, error) {
	var d v1.Descriptor
	if ref.Name == "" {
		entries, err := st.Descriptors()
		if err != nil {
			return nil, err
		}
		// What refers to an add-on (its signatures, an SBOM) travels
		// beside it: the add-on is the one manifest left without them.
		entries = withoutReferrers(st, entries)
		if len(entries) != 1 {
			return nil, fmt.Errorf("%s: the layout holds %d manifests: name one with :TAG or @DIGEST", ref, len(entries))
		}
		d = entries[0]
	} else {
		var err error
		if d, err = st.Resolve(ref.Name); err != nil {
			if d, err = resolveTagOfName(st, ref.Name, err); err != nil {
				if errors.Is(err, errdef.ErrNotFound) {
					err = notInLayout(st, ref.Name)
				}
				return nil, fmt.Errorf("%s: %w", ref, err)
			}
		}
	}
	return fromStore(st, ref, d, closer)
}

// notInLayout is the error for a tag or digest a layout lacks: it names
// the tags the layout has, as a registry's missing tag names those there
// (the store's own "not found in store" said nothing of a layout).
func notInLayout(st *layout.Store, name string) error {
	// A digest is what reference.SplitPath split at "@sha256:", as
	// formatInLayout writes it back; any other name is a tag.
	what := "tag " + safetree.Sanitize(name)
	if strings.HasPrefix(name, "sha256:") {
		what = "digest " + safetree.Sanitize(name)
	}
	entries, _ := st.Descriptors() // it was read a moment ago
	var tags []string
	for _, e := range entries {
		if n := e.Annotations[mediatypes.AnnotationRefName]; n != "" {
			tags = append(tags, safetree.Sanitize(n))
		}
	}
	switch {
	case len(tags) == 0:
		return fmt.Errorf("%s %w: the layout has no tags", what, errdef.ErrNotFound)
	case len(tags) > 10:
		tags = append(tags[:10], "...")
	}
	return fmt.Errorf("%s %w in the layout; its tags: %s", what, errdef.ErrNotFound, strings.Join(tags, ", "))
}

// resolveTagOfName finds TAG in a layout whose ref names are store names
// (NAME:TAG, as the local store and a layout.Store written with a build's
// name hold them): oci:DIR:1.11 is the one "coredns:1.11" there. An
// exact ref name always wins (it was tried first); two names with the
// tag are ambiguous. notFound is returned when no name has the tag.
func resolveTagOfName(st *layout.Store, tag string, notFound error) (v1.Descriptor, error) {
	if !errors.Is(notFound, errdef.ErrNotFound) || !reference.IsTag(tag) {
		return v1.Descriptor{}, notFound
	}
	entries, err := st.Descriptors()
	if err != nil {
		return v1.Descriptor{}, err
	}
	var found []v1.Descriptor
	var names []string
	for _, e := range entries {
		n := e.Annotations[mediatypes.AnnotationRefName]
		if repo, v := reference.Split(n); repo != "" && v == ":"+tag {
			found = append(found, e)
			names = append(names, n)
		}
	}
	switch len(found) {
	case 0:
		return v1.Descriptor{}, notFound
	case 1:
		return found[0], nil
	}
	return v1.Descriptor{}, fmt.Errorf("tag %s is ambiguous: the layout names %s", tag, strings.Join(names, ", "))
}

func fromStore(st *layout.Store, ref Ref, d v1.Descriptor, closer func() error) (*Artifact, error) {
	a := &Artifact{Ref: ref, Digest: d.Digest, closer: closer, store: st}
	var err error
	if mediatypes.IsIndex(mediatypes.MediaType(d.MediaType)) {
		a.Index, err = st.Index(d)
	} else {
		a.Image, err = st.Image(d)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ref, err)
	}
	return a, nil
}
