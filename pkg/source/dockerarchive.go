package source

import (
	"archive/tar"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/addonpkg/addonpkg/internal/atomicfile"
	"github.com/addonpkg/addonpkg/pkg/layout"
	"github.com/addonpkg/addonpkg/pkg/mediatypes"
	"github.com/addonpkg/addonpkg/pkg/safetree"
)

// Bounds of a docker-archive, checked before go-containerregistry's
// tarball reader sees the file: it reads manifest.json and each config
// whole, and scans the archive once for every file it opens.
// Its manifest.json and configs are capped by safetree.Limits.
const (
	maxDockerEntries  = 10_000
	maxDockerLinkHops = 8
)

// ErrBadArchive marks an archive that is malformed or over its bounds.
var ErrBadArchive = errors.New("invalid archive")

// dockerEntry is what the pre-scan keeps of one tar entry.
type dockerEntry struct {
	typ  byte
	size int64
	link string
}

// dockerArchiveLocation is a `docker save` tarball:
// docker-archive:FILE[:REFERENCE], as skopeo reads it.
type dockerArchiveLocation struct{}

func (dockerArchiveLocation) Kind() Kind { return KindDockerArchive }

func (dockerArchiveLocation) Claims(s string) bool { return strings.HasPrefix(s, "docker-archive:") }

func (dockerArchiveLocation) Parse(s string) (Ref, error) {
	// The path ends at the first colon.
	p, n, _ := strings.Cut(strings.TrimPrefix(s, "docker-archive:"), ":")
	if n != "" {
		if _, err := name.NewTag(n); err != nil {
			return Ref{}, fmt.Errorf("%w: %q: %w", ErrBadSource, s, err)
		}
	}
	return Ref{Kind: KindDockerArchive, Path: p, Name: n}, nonEmpty(s, p)
}

func (dockerArchiveLocation) Format(r Ref) string {
	if r.Name == "" {
		return "docker-archive:" + r.Path
	}
	return "docker-archive:" + r.Path + ":" + r.Name
}

func (dockerArchiveLocation) Open(ctx context.Context, ref Ref, opts Options) (*Artifact, error) {
	var tag *name.Tag
	if ref.Name != "" {
		t, err := name.NewTag(ref.Name)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", ref, err)
		}
		tag = &t
	}
	f, _, err := layout.OpenArchiveFile(ref.Path, opts.imageBytes())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ref, err)
	}
	a, err := openDockerArchive(f, ref, tag, opts.MaxLayers)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", ref, err)
	}
	return a, nil
}

// openDockerArchive reads the image of the archive f: ref's file or, when
// it is compressed, its decompressed copy. Its blobs are read through f,
// the file checkDockerArchive checked (never ref's path opened again,
// which another file may have taken since), so the artifact keeps f
// until closed (closer).
func openDockerArchive(f *os.File, ref Ref, tag *name.Tag, maxLayers int) (*Artifact, error) {
	if err := checkDockerArchive(f, maxLayers, tag == nil); err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	img, err := tarball.Image(func() (io.ReadCloser, error) {
		return io.NopCloser(io.NewSectionReader(f, 0, st.Size())), nil
	}, tag)
	if err != nil {
		return nil, err
	}
	d, err := img.Digest()
	if err != nil {
		return nil, err
	}
	return &Artifact{Ref: ref, Image: img, Digest: d, closer: f.Close}, nil
}

func (dockerArchiveLocation) Write(ctx context.Context, a *Artifact, dst Ref, opts Options) (string, error) {
	if a.Index != nil {
		return "", fmt.Errorf("%s: %w: a docker-archive holds one image, not an index", dst, ErrUnsupportedDestination)
	}
	if err := checkDockerImage(a.Image); err != nil {
		return "", fmt.Errorf("%s: %w: %w", dst, ErrUnsupportedDestination, err)
	}
	if err := writeDockerArchive(a.Image, dst); err != nil {
		return "", err
	}
	return "docker-archive:" + dst.Path, nil
}

// Pinned is empty: a docker-archive cannot name a manifest by digest.
func (dockerArchiveLocation) Pinned(*Artifact) string       { return "" }
func (dockerArchiveLocation) Repository(a *Artifact) string { return namedRepository(a.Ref.Name) }

// checkDockerArchive reads the headers of a `docker save` tarball (never
// a file's bytes, but manifest.json's) and refuses it unless
// manifest.json, every config and every layer it names resolves (through
// at most maxDockerLinkHops links, as the tarball reader follows them)
// to a regular file, manifest.json and the configs are within their size
// caps, and there are at most maxLayers layers per image. Unless named
// (a REFERENCE picks the image), it must hold exactly one image: the
// tarball reader's own refusal names its API, not the images to pick from.
func checkDockerArchive(f *os.File, maxLayers int, unnamed bool) error {
	entries, err := scanDockerArchive(f)
	if err != nil {
		return err
	}
	limits := safetree.Limits{MaxLayers: maxLayers}.WithDefaults()
	const manifestName = "manifest.json"
	mpath, err := resolveDockerEntry(entries, manifestName, safetree.LimitManifestBytes, limits)
	if err != nil {
		return err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	raw, err := readDockerEntry(f, mpath, safetree.LimitManifestBytes, limits)
	if err != nil {
		return err
	}
	var manifest []struct {
		Config   string
		RepoTags []string
		Layers   []string
	}
	if err := json.Unmarshal(raw, &manifest); err != nil {
		return fmt.Errorf("%w: manifest.json: %w", ErrBadArchive, err)
	}
	if len(manifest) == 0 {
		return fmt.Errorf("%w: manifest.json lists no image", ErrBadArchive)
	}
	if unnamed && len(manifest) > 1 {
		var tags []string
		for _, m := range manifest {
			tags = append(tags, m.RepoTags...)
		}
		return fmt.Errorf("%w: the archive holds %d images (tagged %s): name one with :REFERENCE", ErrBadSource, len(manifest), oneLine(strings.Join(tags, ", ")))
	}
	for _, m := range manifest {
		if err := limits.CheckLayers(len(m.Layers)); err != nil {
			return err
		}
		if _, err := resolveDockerEntry(entries, m.Config, safetree.LimitConfigBytes, limits); err != nil {
			return err
		}
		for _, l := range m.Layers {
			if _, err := resolveDockerEntry(entries, l, "", limits); err != nil {
				return err
			}
		}
	}
	return nil
}

// scanDockerArchive lists the entries by clean name; the first of a name
// wins, as in the tarball reader.
func scanDockerArchive(r io.Reader) (map[string]dockerEntry, error) {
	entries := map[string]dockerEntry{}
	tr := tar.NewReader(r)
	for n := 0; ; n++ {
		hdr, err := tr.Next()
		if err == io.EOF {
			return entries, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrBadArchive, err)
		}
		if n >= maxDockerEntries {
			return nil, &safetree.LimitError{Name: "docker-archive entry count", Limit: maxDockerEntries}
		}
		name := path.Clean(hdr.Name)
		if _, ok := entries[name]; !ok {
			entries[name] = dockerEntry{typ: hdr.Typeflag, size: hdr.Size, link: hdr.Linkname}
		}
	}
}

// resolveDockerEntry follows name through links to a regular file within
// the cap which of limits (which "": any size) and returns its name.
func resolveDockerEntry(entries map[string]dockerEntry, name string, which safetree.LimitID, limits safetree.Limits) (string, error) {
	p := path.Clean(name)
	for hops := 0; ; hops++ {
		e, ok := entries[p]
		if !ok {
			return "", fmt.Errorf("%w: %s is not in the archive", ErrBadArchive, oneLine(name))
		}
		switch e.typ {
		case tar.TypeSymlink, tar.TypeLink:
			if hops >= maxDockerLinkHops {
				return "", fmt.Errorf("%w: %s: more than %d links to follow", ErrBadArchive, oneLine(name), maxDockerLinkHops)
			}
			p = path.Join(path.Dir(p), path.Clean(e.link))
		case tar.TypeReg, tar.TypeGNUSparse:
			// A sparse file's size is the size a reader gets.
			if which != "" {
				if c := limits.Cap(which); e.size > c.Max {
					return "", &safetree.LimitError{Name: "docker-archive " + path.Base(name) + " size", Limit: c.Max, Which: which, Entry: name}
				}
			}
			return p, nil
		default:
			return "", fmt.Errorf("%w: %s is not a regular file", ErrBadArchive, oneLine(name))
		}
	}
}

// readDockerEntry reads the regular file name, within the cap which of
// limits.
func readDockerEntry(r io.Reader, name string, which safetree.LimitID, limits safetree.Limits) ([]byte, error) {
	max := limits.Cap(which).Max
	tr := tar.NewReader(r)
	for {
		hdr, err := tr.Next()
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrBadArchive, name, err)
		}
		if path.Clean(hdr.Name) != name {
			continue
		}
		b, err := io.ReadAll(io.LimitReader(tr, max+1))
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrBadArchive, name, err)
		}
		if int64(len(b)) > max {
			return nil, &safetree.LimitError{Name: "docker-archive " + name + " size", Limit: max, Which: which, Entry: name}
		}
		return b, nil
	}
}

// checkDockerImage refuses what a docker-archive cannot carry: docker
// load, skopeo and addonpkg read it as a container image, so an add-on
// artifact (or any other artifact) written there would come back as
// something else, or not at all.
func checkDockerImage(img v1.Image) error {
	m, err := img.Manifest()
	if err != nil {
		return err
	}
	cfg := mediatypes.MediaType(m.Config.MediaType)
	if !mediatypes.IsImageConfig(cfg) {
		what := "an artifact"
		if mediatypes.ClassifyManifest(m, nil) == mediatypes.FormArtifact {
			what = "an add-on in the artifact form"
		}
		return fmt.Errorf("a docker-archive holds only container images (the image form), and this is %s (config %s): copy it to oci:DIR or oci-archive:FILE, or build it in the image form", what, m.Config.MediaType)
	}
	for i, l := range m.Layers {
		if !mediatypes.IsImageLayer(mediatypes.MediaType(l.MediaType)) {
			return fmt.Errorf("a docker-archive holds only container images, and layer %d has media type %s", i+1, l.MediaType)
		}
	}
	return nil
}

// writeDockerArchive writes a `docker load` tarball, atomically.
func writeDockerArchive(img v1.Image, dst Ref) error {
	tag := dst.Name
	if tag == "" {
		tag = "addon:latest"
	}
	ref, err := name.NewTag(tag)
	if err != nil {
		return fmt.Errorf("%s: %w", dst, err)
	}
	return atomicfile.Write(absPath(dst.Path), filepath.Base(dst.Path)+".tmp-", 0o644, func(w io.Writer) error {
		return tarball.Write(ref, img, w)
	})
}
