package unpack

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"log/slog"
	"path"
	"runtime"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/addonpkg/addonpkg/internal/verify"
	"github.com/addonpkg/addonpkg/pkg/addon"
	"github.com/addonpkg/addonpkg/pkg/archive"
	"github.com/addonpkg/addonpkg/pkg/filetree"
	"github.com/addonpkg/addonpkg/pkg/mediatypes"
	"github.com/addonpkg/addonpkg/pkg/safetree"
)

// Options change how an add-on is unpacked. The zero value is ready to use.
type Options struct {
	// ContentDir overrides the content directory of an image-form add-on
	// (default: the io.cncf.addon.content label, else /addon).
	ContentDir string
	// Platform picks a manifest from an index ("linux/arm64"); empty means
	// the running platform, else the only entry.
	Platform *v1.Platform
	// safetree.Limits bound the work an image can cause; zero fields take defaults.
	Limits safetree.Limits
	// Logger receives debug notes; nil logs nothing.
	Logger *slog.Logger
	// Sink, when set, receives each regular file of the add-on as soon as
	// it is known to be final, while lower layers are still being read
	// (layers apply top-down, so a kept file is final when read): a caller
	// that writes the tree out (output.Writer) then writes while it reads.
	// When Image fails, what the sink received is void.
	Sink Sink
	// Repository is the repository the image was read from
	// (registry.example/addons/coredns): when neither a config nor a label
	// names the add-on, its last segment does (spec 4.3).
	Repository string
	// SinkOnly makes the tree let go of each file's bytes once Sink has
	// them: Addon.FS then holds the tree's shape, sizes and digests
	// (reading a file fails with filetree.ErrDropped), and the memory an
	// unpack needs no longer grows with the add-on's size.
	SinkOnly bool
	// SpillDir, when set, is a directory where regular files over
	// SpillThreshold are streamed while layers are read, instead of being
	// held in memory: the tree then reads them from there
	// (filetree.Builder.WriteFileOnDisk), and a DiskSink takes them by moving
	// them. The caller makes the directory and removes it with whatever
	// the unpack left in it; its files must stay until the tree is read.
	// With a DiskSink and SinkOnly, an unpack's memory no longer depends
	// on the size of its files.
	SpillDir string
	// MemoryBudget, with a SpillDir, bounds the bytes of files the tree
	// holds in memory: the tree keeps files in memory until their bytes
	// would pass it, and after that appends them to one file in the
	// SpillDir and reads them from there (filetree.Builder.SpillPast). Only
	// the read-ahead of the layers (a few MiB) is held on the way. 0 or
	// less means no budget: only files over SpillThreshold spill. Without
	// a SpillDir it does nothing.
	MemoryBudget int64
}

// SpillThreshold is the size over which a file goes to Options.SpillDir.
const SpillThreshold = 1 << 20

// A Remover is a Sink that can take back what it was given (a file, or a
// directory with everything below it): when a layer holds the same path
// twice, the later entry replaces what the first handed over. A sink
// that is no Remover makes such an image fail with ErrUnsupported.
type Remover interface {
	Sink
	Remove(name string)
}

// A DiskSink is a Sink that can take a file the unpacker spilled to disk
// (Options.SpillDir) by moving it, rather than be handed its bytes.
type DiskSink interface {
	Sink
	// TakeFile makes the file at path the add-on's file name; path is in
	// the SpillDir.
	TakeFile(name, path string, mode fs.FileMode)
}

// A Sink receives the add-on's regular files while the image is read. Its
// methods are called from one goroutine at a time.
type Sink interface {
	// File is a file of the add-on. data is the tree's own: it must not
	// be modified.
	File(name string, data []byte, mode fs.FileMode)
	// Copy makes name a copy of target, a file given to File before (a
	// layer's hardlink).
	Copy(name, target string, mode fs.FileMode)
}

// Addon is an unpacked add-on.
type Addon struct {
	// FS is the add-on tree, paths relative to the content directory.
	FS *filetree.FS
	// Form is the shape it travelled in.
	Form mediatypes.Form
	// Config is the add-on's config: read from the artifact's config blob
	// or the image's label, with what it omits derived from the content;
	// else derived from the content and labels alone (Derived is then
	// true).
	Config  *addon.Config
	Derived bool
	// NoInventory says the config carried no inventory: Config.Inventory
	// is empty until one rendered from the tree is recorded with
	// SetInventory (the unpacker does not render: see render.Addon).
	NoInventory bool
	// Stale says the image's identity label or config label describes
	// another tree (labels inherited through FROM, spec 4.5): they were
	// ignored, and the metadata derived from the content.
	Stale bool
	// Identity is the content identity computed from FS.
	Identity string
	// Digest is the manifest the add-on came from.
	Digest v1.Hash
	// ContentDir is where the tree was in the image ("/" for artifacts).
	ContentDir string
	// Manifest is that manifest.
	Manifest *v1.Manifest
	// Pinned is a SOURCE that resolves to exactly this content:
	// REPO@sha256:..., a git URL with ?ref=COMMIT, an https URL with
	// ?checksum=sha256:...; empty when there is none (a local folder).
	Pinned string
	// Source is where it was read from as an installer records it
	// (apply.Addon.Source, an inventory's source): Pinned with the path
	// of a local source (oci:DIR, oci-archive:FILE) made absolute, or,
	// for a source with no pinned form (a folder, a file, a
	// docker-archive), its absolute path, so that it names the same
	// place read back from any directory. package source sets it; it is
	// empty for an Addon made by this package alone.
	Source string
}

// SetInventory records an inventory rendered from the tree (see
// render.Addon) when the config carried none (NoInventory).
func (a *Addon) SetInventory(inv addon.Inventory) {
	a.Config.Inventory = inv
	a.NoInventory = false
}

func (o Options) logger() *slog.Logger {
	if o.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return o.Logger
}

// maxIndexDepth bounds nested indexes: an index may even point to itself.
const maxIndexDepth = safetree.MaxIndexDepth

// Index picks one manifest of an index (by platform) and unpacks it.
func Index(ctx context.Context, idx v1.ImageIndex, opts Options) (*Addon, error) {
	img, err := SelectImage(idx, opts.Platform)
	if err != nil {
		return nil, err
	}
	return Image(ctx, img, opts)
}

// SelectImage picks the image for platform p (nil: the running platform,
// else the only entry that is not an attestation manifest) from an index,
// descending into nested indexes.
//
// The running platform is Go's runtime.GOOS/GOARCH, not linux/GOARCH as
// Docker Desktop's Linux VM or go-containerregistry's linux/amd64
// default would have it (skopeo also takes the host's): on macOS or
// Windows no entry of a Linux index matches, so an index of one image is
// read (the usual add-on: its content has no platform) and an index of
// several is refused naming them, for the user to pick one with
// --platform, rather than read an image the user did not choose
// (spec/addon-v1.md 9.1).
func SelectImage(idx v1.ImageIndex, p *v1.Platform) (v1.Image, error) {
	return selectImage(idx, p, 0, map[v1.Hash]bool{})
}

// hostPlatform is the running platform SelectImage matches when asked
// for none.
var hostPlatform = v1.Platform{OS: runtime.GOOS, Architecture: runtime.GOARCH}

func selectImage(idx v1.ImageIndex, p *v1.Platform, depth int, seen map[v1.Hash]bool) (v1.Image, error) {
	if depth > maxIndexDepth {
		return nil, fmt.Errorf("%w: indexes nest deeper than %d levels", ErrUnsupported, maxIndexDepth)
	}
	if d, err := idx.Digest(); err == nil {
		if seen[d] {
			return nil, fmt.Errorf("%w: index %s refers to itself", ErrUnsupported, d)
		}
		seen[d] = true
	}
	im, err := idx.IndexManifest()
	if err != nil {
		return nil, fmt.Errorf("read index: %w", err)
	}
	if len(im.Manifests) == 0 {
		return nil, fmt.Errorf("%w: the index is empty", ErrNoContent)
	}
	want := p
	explicit := p != nil
	if want == nil {
		want = &hostPlatform
	}
	var pick, only *v1.Descriptor
	var have []string
	candidates := 0
	for i, d := range im.Manifests {
		if isAttestation(d) {
			continue
		}
		candidates++
		only = &im.Manifests[i]
		if d.Platform == nil {
			have = append(have, "(none)")
			continue
		}
		have = append(have, platformString(d.Platform))
		if d.Platform.Satisfies(*want) && pick == nil {
			pick = &im.Manifests[i]
		}
	}
	if pick == nil && !explicit && candidates == 1 {
		pick = only
	}
	if pick == nil {
		return nil, &PlatformError{Want: platformString(want), Have: have}
	}
	if mediatypes.IsIndex(mediatypes.MediaType(pick.MediaType)) {
		child, err := idx.ImageIndex(pick.Digest)
		if err != nil {
			return nil, err
		}
		return selectImage(child, p, depth+1, seen)
	}
	return idx.Image(pick.Digest)
}

// Platforms lists the entries of an index that SelectImage chooses from
// (attestation manifests left out), each by its platform, "(none)" for
// an entry without one.
func Platforms(idx v1.ImageIndex) ([]string, error) {
	im, err := idx.IndexManifest()
	if err != nil {
		return nil, fmt.Errorf("read index: %w", err)
	}
	var out []string
	for _, d := range im.Manifests {
		switch {
		case isAttestation(d):
		case d.Platform == nil:
			out = append(out, "(none)")
		default:
			out = append(out, platformString(d.Platform))
		}
	}
	return out, nil
}

// isAttestation reports whether an index entry is an attestation
// manifest, which BuildKit (docker buildx build) puts beside every image
// it pushes: it holds provenance and SBOM documents about the image, not
// an add-on, so it is neither chosen nor counted when an index has one
// entry to choose from (spec/addon-v1.md 9.1).
func isAttestation(d v1.Descriptor) bool {
	if d.Annotations[mediatypes.AnnotationDockerReferenceType] == mediatypes.DockerReferenceTypeAttestation {
		return true
	}
	return d.Platform != nil && d.Platform.OS == "unknown" && d.Platform.Architecture == "unknown"
}

func platformString(p *v1.Platform) string {
	s := p.OS + "/" + p.Architecture
	if p.Variant != "" {
		s += "/" + p.Variant
	}
	return s
}

// Image unpacks the add-on inside img.
func Image(ctx context.Context, img v1.Image, opts Options) (*Addon, error) {
	log := opts.logger()
	limits := opts.Limits.WithDefaults()
	digest, err := img.Digest()
	if err != nil {
		return nil, fmt.Errorf("read manifest: %w", err)
	}
	m, err := img.Manifest()
	if err != nil {
		return nil, fmt.Errorf("read manifest: %w", err)
	}
	if mt := mediatypes.MediaType(m.MediaType); m.MediaType != "" && !mediatypes.IsManifest(mt) {
		return nil, fmt.Errorf("%w: manifest media type %q", ErrUnsupported, m.MediaType)
	}
	// Before any work per layer.
	if err := limits.CheckLayers(len(m.Layers)); err != nil {
		return nil, err
	}
	rawCfg, err := verify.Config(img, limits.Cap(safetree.LimitConfigBytes))
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	var ic v1.ConfigFile
	cfgType := mediatypes.MediaType(m.Config.MediaType)
	isImageConfig := mediatypes.IsImageConfig(cfgType)
	if isImageConfig {
		if err := json.Unmarshal(rawCfg, &ic); err != nil {
			return nil, fmt.Errorf("%w: decode image config: %w", ErrCorrupt, err)
		}
	}
	form := mediatypes.ClassifyManifest(m, ic.Config.Labels)
	log.Debug("classified", "digest", digest, "form", form)

	a := &Addon{Form: form, Digest: digest, Manifest: m}
	var layers []layerSource
	content := ""
	switch form {
	case mediatypes.FormImage, mediatypes.FormOLM:
		content = contentDir(opts.ContentDir, ic.Config.Labels, form)
		if content == "" {
			return nil, fmt.Errorf("%w: content directory label %q is not a clean absolute path", safetree.ErrUnsafe, ic.Config.Labels[mediatypes.LabelContent])
		}
		// Spec 9.3: one DiffID per layer, or none at all.
		if n := len(ic.RootFS.DiffIDs); n > 0 && n != len(m.Layers) {
			return nil, fmt.Errorf("%w: the image config lists %d diff_ids for %d layers", ErrCorrupt, n, len(m.Layers))
		}
		for i, l := range m.Layers {
			if !mediatypes.IsImageLayer(mediatypes.MediaType(l.MediaType)) {
				return nil, fmt.Errorf("%w: layer %d has media type %q", ErrUnsupported, i+1, l.MediaType)
			}
			ls := layerSource{index: i + 1, desc: l}
			if len(ic.RootFS.DiffIDs) == len(m.Layers) {
				ls.diffID = &ic.RootFS.DiffIDs[i]
			}
			layers = append(layers, ls)
		}
	case mediatypes.FormArtifact, mediatypes.FormFlux:
		content = orasDirRoot(m)
		for i, l := range m.Layers {
			mt := mediatypes.MediaType(l.MediaType)
			if !mediatypes.IsAddonContent(mt) && mt != mediatypes.FluxContentGzip {
				return nil, fmt.Errorf("%w: layer %d of %s has media type %q, not a content layer's", ErrUnsupported, i+1, formName(form), l.MediaType)
			}
			layers = append(layers, layerSource{index: i + 1, desc: l})
		}
	case mediatypes.FormORAS:
		if layers, content, err = orasLayers(m); err != nil {
			return nil, err
		}
	case mediatypes.FormHelm:
		chart, err := ParseHelmChart(rawCfg)
		if err != nil {
			return nil, err
		}
		if layers, content, err = helmLayers(m, chart); err != nil {
			return nil, err
		}
	default:
		if mediatypes.IsReferrer(form) && m.Subject != nil {
			// Pulled by its digest, as if it were the add-on: name what
			// it refers to.
			return nil, fmt.Errorf("%w: not an add-on but %s%s of the manifest %s: unpack that one", ErrUnsupported, formName(form), artifactTypeNote(m), m.Subject.Digest)
		}
		if mediatypes.IsReferrer(form) {
			return nil, fmt.Errorf("%w: not an add-on but %s (what refers to one)", ErrUnsupported, formName(form))
		}
		if isImageConfig {
			// An image, but for a layer: name it.
			for i, l := range m.Layers {
				if mt := mediatypes.MediaType(l.MediaType); !mediatypes.IsImageLayer(mt) {
					return nil, fmt.Errorf("%w: not an add-on: layer %d of the image has media type %q, no image layer's%s", ErrUnsupported, i+1, sanitize(string(mt)), layerHint(mt))
				}
			}
		}
		return nil, fmt.Errorf("%w: not an add-on (config %q, artifactType %q)", ErrUnsupported, m.Config.MediaType, m.ArtifactType)
	}
	if len(layers) == 0 {
		return nil, fmt.Errorf("%w: the image has no layers", ErrNoContent)
	}
	for i := range layers {
		l, err := img.LayerByDigest(layers[i].desc.Digest)
		if err != nil {
			return nil, layerErr(layers[i].index, layers[i].desc.Digest, err)
		}
		layers[i].layer = l
	}

	fl := newFlattener(content, limits, log)
	fl.sink, fl.sinkOnly = opts.Sink, opts.Sink != nil && opts.SinkOnly
	fl.spillDir = opts.SpillDir
	if opts.SpillDir != "" && opts.MemoryBudget > 0 {
		fl.b.SpillPast(opts.SpillDir, opts.MemoryBudget)
	}
	fsys, err := fl.apply(ctx, layers)
	if err != nil {
		fl.b.Close()
		return nil, err
	}
	// A tree that spilled to disk holds its pack file open until the
	// caller closes it; on failure, here.
	if err := a.finish(fsys, content, form, rawCfg, ic, m, opts.Repository, log); err != nil {
		fsys.Close()
		return nil, err
	}
	return a, nil
}

// finish describes the flattened tree: its identity and its metadata.
func (a *Addon) finish(fsys *filetree.FS, content string, form mediatypes.Form, rawCfg []byte, ic v1.ConfigFile, m *v1.Manifest, repo string, log *slog.Logger) error {
	if fsys.Count() == 0 {
		return fmt.Errorf("%w: nothing under %s", ErrNoContent, content)
	}
	a.FS = fsys
	a.ContentDir = content
	id, err := archive.Identity(fsys)
	if err != nil {
		return err
	}
	a.Identity = id.String()
	return a.loadConfig(form, rawCfg, ic, m, repo, log)
}

// layerHint says what to do about a layer media type that is no image
// layer's, when there is something to do.
func layerHint(mt mediatypes.MediaType) string {
	if strings.HasSuffix(string(mt), "+encrypted") {
		// ocicrypt's, from skopeo copy --encryption-key or nerdctl image
		// encrypt: addonpkg holds no keys.
		return ": the layer is encrypted; decrypt the image first (skopeo copy --decryption-key)"
	}
	return ""
}

// formName names a form in a sentence, with its article.
func formName(f mediatypes.Form) string {
	switch f {
	case mediatypes.FormArtifact:
		return "an add-on artifact"
	case mediatypes.FormFlux:
		return "a Flux artifact"
	case mediatypes.FormAttestation:
		return "an attestation"
	case mediatypes.FormImageLock:
		return "an image lock"
	case mediatypes.FormSBOM:
		return "an SBOM"
	}
	return "a " + string(f)
}

// artifactTypeNote is " (artifactType T)" for a manifest that states
// one, else "".
func artifactTypeNote(m *v1.Manifest) string {
	if m.ArtifactType == "" {
		return ""
	}
	return fmt.Sprintf(" (artifactType %q)", sanitize(m.ArtifactType))
}

// contentDir picks the image form's content directory, "" if invalid.
func contentDir(override string, labels map[string]string, form mediatypes.Form) string {
	dir := override
	if dir == "" && form == mediatypes.FormOLM {
		dir = labels[mediatypes.LabelOLMManifests]
	}
	if dir == "" {
		dir = labels[mediatypes.LabelContent]
	}
	if dir == "" {
		// The config label's contentRoot, when it parses.
		if c, err := addon.Parse([]byte(labels[mediatypes.LabelConfig])); err == nil && c.ContentRoot != "" {
			dir = c.ContentRoot
		}
	}
	if dir == "" {
		dir = mediatypes.DefaultContentDir
	}
	// OLM labels are written without the leading slash.
	clean, err := safetree.CleanName(strings.TrimPrefix(dir, "/"))
	if err != nil {
		return ""
	}
	return path.Join("/", clean)
}

// orasLayers maps an oras file/directory artifact to layers: a directory
// layer (a tar+gzip with oras's unpack annotation) unpacks at the root, a
// file layer is placed at its title. A lone directory becomes the content
// directory, as `oras pull -o` puts its files there. Two files of one
// path, or a file where another's path has a directory (sub and
// sub/b.yaml), are refused as oras pull refuses them: as layers, the
// later one would silently replace the earlier.
func orasLayers(m *v1.Manifest) ([]layerSource, string, error) {
	var out []layerSource
	dirs := 0
	files := map[string]int{} // cleaned title: layer
	var order []string
	for i, l := range m.Layers {
		ls := layerSource{index: i + 1, desc: l}
		if l.Annotations[mediatypes.AnnotationORASUnpack] == "true" {
			dirs++
			out = append(out, ls)
			continue
		}
		ls.placement = l.Annotations[mediatypes.AnnotationTitle]
		out = append(out, ls)
		// An unsafe title is refused with its layer, by the flattener.
		p, err := safetree.CleanName(ls.placement)
		if err != nil {
			continue
		}
		if j, ok := files[p]; ok {
			return nil, "", fmt.Errorf("%w: layers %d and %d are both the file %q", ErrCorrupt, j, i+1, sanitize(p))
		}
		files[p] = i + 1
		order = append(order, p)
	}
	for _, p := range order {
		for d := path.Dir(p); d != "." && d != "/"; d = path.Dir(d) {
			if j, ok := files[d]; ok {
				return nil, "", fmt.Errorf("%w: layer %d is the file %q, and layer %d puts the file %q inside it", ErrCorrupt, j, sanitize(d), files[p], sanitize(p))
			}
		}
	}
	if dirs == 1 && len(out) == 1 {
		// By orasDirRoot's rule: a layer titled "." (oras push . from
		// inside the folder) holds the tree at its root, not under "/.".
		return out, orasDirRoot(m), nil
	}
	return out, "/", nil
}

// orasDirRoot is the content directory of an artifact's layers: "/", or
// "/DIR" when every layer is a directory that `oras push DIR/:MEDIATYPE`
// made (a tar of DIR/... titled DIR, with oras's unpack annotation), so a
// third-party artifact pushed that way reads as the tree inside DIR.
func orasDirRoot(m *v1.Manifest) string {
	title := ""
	for i, l := range m.Layers {
		t := strings.Trim(l.Annotations[mediatypes.AnnotationTitle], "/")
		c, err := safetree.CleanName(t)
		unsafe := err != nil || c != t
		if l.Annotations[mediatypes.AnnotationORASUnpack] != "true" || t == "" || t == "." || unsafe || (i > 0 && t != title) {
			return "/"
		}
		title = t
	}
	if title == "" {
		return "/"
	}
	return "/" + title
}

// loadConfig finds the add-on config the form carries, completes what it
// omits and checks what it states against the content, or derives one.
func (a *Addon) loadConfig(form mediatypes.Form, rawCfg []byte, ic v1.ConfigFile, m *v1.Manifest, repo string, log *slog.Logger) error {
	var cfg *addon.Config
	labels := ic.Config.Labels
	switch form {
	case mediatypes.FormArtifact:
		c, err := addon.Parse(rawCfg)
		if err != nil {
			return fmt.Errorf("%w: %w", ErrCorrupt, err)
		}
		if c.Identity != "" && c.Identity != a.Identity {
			return fmt.Errorf("%w: the content's identity is %s, the config claims %s", ErrIdentityMismatch, a.Identity, c.Identity)
		}
		cfg = c
	case mediatypes.FormImage:
		if id := labels[mediatypes.LabelIdentity]; id != "" && id != a.Identity {
			a.Stale = true
		}
		if s := labels[mediatypes.LabelConfig]; s != "" {
			c, err := addon.Parse([]byte(s))
			switch {
			case err != nil:
				log.Debug("ignoring unreadable config label", "err", err)
			case c.Identity != "" && c.Identity != a.Identity:
				a.Stale = true
			default:
				cfg = c
			}
		}
		if a.Stale {
			// Labels inherited through FROM describe the base's tree.
			log.Warn("stale labels: the identity label or config label describes another tree; using the content",
				"label", firstOf(labels[mediatypes.LabelIdentity], identityOf(labels[mediatypes.LabelConfig])), "content", a.Identity)
			cfg = nil
		}
	}
	kind, err := addon.KindOf(a.FS)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	if form == mediatypes.FormHelm {
		chart, err := ParseHelmChart(rawCfg)
		if err != nil {
			return err
		}
		// A chart has no inventory before Helm renders it.
		a.Derived = true
		a.Config = &addon.Config{
			SpecVersion: mediatypes.SpecVersion, Name: firstOf(chart.Name, lastSegment(repo)), Version: chart.Version,
			Description: chart.Description, Kind: kind, ContentRoot: a.ContentDir, Identity: a.Identity,
			Inventory: addon.Inventory{Objects: []addon.Object{}},
		}
		return nil
	}
	if cfg == nil {
		a.Derived, a.NoInventory = true, true
		cfg = &addon.Config{
			SpecVersion: mediatypes.SpecVersion,
			Name:        firstOf(labels[mediatypes.LabelName], m.Annotations[mediatypes.LabelName], m.Annotations[mediatypes.AnnotationTitle], labels[mediatypes.AnnotationTitle], lastSegment(repo)),
			Version:     firstOf(labels[mediatypes.LabelVersion], m.Annotations[mediatypes.AnnotationVersion], labels[mediatypes.AnnotationVersion]),
			Description: firstOf(m.Annotations[mediatypes.AnnotationDescription], labels[mediatypes.AnnotationDescription]),
			Source:      firstOf(m.Annotations[mediatypes.AnnotationSource], labels[mediatypes.AnnotationSource]),
			Revision:    firstOf(m.Annotations[mediatypes.AnnotationRevision], labels[mediatypes.AnnotationRevision]),
			Created:     firstOf(m.Annotations[mediatypes.AnnotationCreated], labels[mediatypes.AnnotationCreated]),
			Kind:        kind,
			ContentRoot: a.ContentDir,
			Identity:    a.Identity,
			Inventory:   addon.Inventory{Objects: []addon.Object{}},
		}
	} else if !cfg.HasInventory() {
		// A minimal third-party config: the inventory is rendered on
		// demand (SetInventory).
		a.NoInventory = true
		cfg.Inventory.Objects = []addon.Object{}
	}
	if form == mediatypes.FormImage && !a.Derived {
		// The individual labels are what a Dockerfile LABEL line edits:
		// they win over the config label (spec 4.3).
		if v := labels[mediatypes.LabelName]; v != "" {
			cfg.Name = v
		}
		if v := labels[mediatypes.LabelVersion]; v != "" {
			cfg.Version = v
		}
		if v := labels[mediatypes.AnnotationDescription]; v != "" {
			cfg.Description = v
		}
	}
	if err := cfg.Complete(kind, a.Identity, a.ContentDir); err != nil {
		return fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	a.Config = cfg
	return nil
}

// identityOf is the identity a config label states, "" if none.
func identityOf(label string) string {
	if c, err := addon.Parse([]byte(label)); err == nil {
		return c.Identity
	}
	return ""
}

// lastSegment is the last path segment of a repository name, "" for none.
func lastSegment(repo string) string {
	return repo[strings.LastIndexByte(repo, '/')+1:]
}

func firstOf(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}
