package unpack_test

// Shared helpers of the flatten, hostile, umoci and fuzz tests: hand-made
// tar layers, layers and images built in memory with go-containerregistry,
// and a tree model to compare unpacked trees with.

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/partial"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/addonpkg/addonpkg/pkg/archive"
	"github.com/addonpkg/addonpkg/pkg/filetree"
	"github.com/addonpkg/addonpkg/pkg/mediatypes"
)

// ---------------------------------------------------------------------------
// Tar entries.

// ent is one hand-made tar entry.
type ent struct {
	name string
	typ  byte
	body string
	link string
	mode int64
}

func file(name, body string) ent { return ent{name: name, typ: tar.TypeReg, body: body} }
func dirE(name string) ent       { return ent{name: name, typ: tar.TypeDir} }
func symlink(name, target string) ent {
	return ent{name: name, typ: tar.TypeSymlink, link: target}
}
func hardlink(name, target string) ent { return ent{name: name, typ: tar.TypeLink, link: target} }

// whiteout is an empty regular file named .wh.NAME (what docker writes).
func whiteout(dir, name string) ent {
	if dir == "" {
		return file(".wh."+name, "")
	}
	return file(strings.TrimSuffix(dir, "/")+"/.wh."+name, "")
}

// opaque marks dir opaque.
func opaque(dir string) ent { return file(strings.TrimSuffix(dir, "/")+"/.wh..wh..opq", "") }

// tarBytes writes the entries, in order, as a tar stream. It does not
// check names: hostile names go through as given.
func tarBytes(entries ...ent) []byte {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	mt := time.Unix(1_700_000_000, 0)
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Typeflag: e.typ, Linkname: e.link, Mode: e.mode, ModTime: mt, Format: tar.FormatPAX}
		if h.Mode == 0 {
			h.Mode = 0o644
			if e.typ == tar.TypeDir {
				h.Mode = 0o755
			}
		}
		if e.typ == tar.TypeReg {
			h.Size = int64(len(e.body))
		}
		if err := tw.WriteHeader(h); err != nil {
			panic(fmt.Sprintf("tar header %q: %v", e.name, err))
		}
		if e.body != "" {
			if _, err := io.WriteString(tw, e.body); err != nil {
				panic(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		panic(err)
	}
	return buf.Bytes()
}

// compress compresses b with c (gzip, zstd or none).
func compress(b []byte, c mediatypes.Compression) []byte {
	var buf bytes.Buffer
	w, err := archive.Compressor(&buf, c)
	if err != nil {
		panic(err)
	}
	if _, err := w.Write(b); err != nil {
		panic(err)
	}
	if err := w.Close(); err != nil {
		panic(err)
	}
	return buf.Bytes()
}

func sha(b []byte) v1.Hash {
	s := sha256.Sum256(b)
	return v1.Hash{Algorithm: "sha256", Hex: hex.EncodeToString(s[:])}
}

// ---------------------------------------------------------------------------
// Layers.

// testLayer is a v1.Layer over a blob held in memory, with a DiffID given
// by the test (normally the SHA-256 of the uncompressed tar). body, when
// set, is what Compressed returns instead of blob: a layer that lies.
type testLayer struct {
	blob        []byte
	body        []byte
	mt          types.MediaType
	diffID      v1.Hash
	annotations map[string]string
}

var _ v1.Layer = (*testLayer)(nil)

func (l *testLayer) Digest() (v1.Hash, error)            { return sha(l.blob), nil }
func (l *testLayer) DiffID() (v1.Hash, error)            { return l.diffID, nil }
func (l *testLayer) Size() (int64, error)                { return int64(len(l.blob)), nil }
func (l *testLayer) MediaType() (types.MediaType, error) { return l.mt, nil }
func (l *testLayer) Compressed() (io.ReadCloser, error) {
	if l.body != nil {
		return io.NopCloser(bytes.NewReader(l.body)), nil
	}
	return io.NopCloser(bytes.NewReader(l.blob)), nil
}
func (l *testLayer) Uncompressed() (io.ReadCloser, error) {
	rc, _ := l.Compressed()
	return archive.Decompress(rc, mediatypes.LayerCompression(mediatypes.MediaType(l.mt)))
}

// tarLayer compresses a tar stream with c and labels it mt; the DiffID is
// the tar's digest.
func tarLayer(tarb []byte, c mediatypes.Compression, mt types.MediaType) *testLayer {
	return &testLayer{blob: compress(tarb, c), mt: mt, diffID: sha(tarb)}
}

// ociLayer is the common case: a gzip OCI layer of the entries.
func ociLayer(entries ...ent) *testLayer {
	return tarLayer(tarBytes(entries...), mediatypes.Gzip, types.OCILayer)
}

// rawLayer is a blob taken as is (ORAS files, hostile blobs). Its DiffID
// is its digest, as for an uncompressed layer.
func rawLayer(blob []byte, mt types.MediaType) *testLayer {
	return &testLayer{blob: blob, mt: mt, diffID: sha(blob)}
}

// ---------------------------------------------------------------------------
// Images.

type imageOpts struct {
	docker bool              // Docker schema 2 instead of OCI
	labels map[string]string // image config labels
	noDiff bool              // leave rootfs.diff_ids out of the config
}

// imageOf builds an image-form image (OCI unless o.docker) with
// go-containerregistry's empty and mutate, layers bottom to top.
func imageOf(t testing.TB, o imageOpts, layers ...v1.Layer) v1.Image {
	t.Helper()
	img := empty.Image
	if !o.docker {
		img = mutate.MediaType(img, types.OCIManifestSchema1)
		img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	}
	img, err := mutate.ConfigFile(img, &v1.ConfigFile{
		OS: "linux", Architecture: "amd64",
		Created: v1.Time{Time: time.Unix(0, 0).UTC()},
		RootFS:  v1.RootFS{Type: "layers"},
		Config:  v1.Config{Labels: o.labels},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range layers {
		img, err = mutate.Append(img, mutate.Addendum{Layer: l})
		if err != nil {
			t.Fatal(err)
		}
	}
	if o.noDiff {
		cf, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		cf = cf.DeepCopy()
		cf.RootFS.DiffIDs = nil
		if img, err = mutate.ConfigFile(img, cf); err != nil {
			t.Fatal(err)
		}
	}
	return img
}

// rawImage is an image whose manifest and config the test writes itself,
// for artifacts and shapes that mutate cannot express. It implements
// partial.CompressedImageCore.
type rawImage struct {
	manifest []byte
	config   []byte
	mt       types.MediaType
	layers   map[v1.Hash]*testLayer
}

func (r *rawImage) RawConfigFile() ([]byte, error)      { return r.config, nil }
func (r *rawImage) MediaType() (types.MediaType, error) { return r.mt, nil }
func (r *rawImage) RawManifest() ([]byte, error)        { return r.manifest, nil }
func (r *rawImage) LayerByDigest(h v1.Hash) (partial.CompressedLayer, error) {
	if l, ok := r.layers[h]; ok {
		return l, nil
	}
	if h == sha(r.config) {
		return rawLayer(r.config, "application/octet-stream"), nil
	}
	return nil, fmt.Errorf("no blob %s", h)
}

// artifactOf builds a manifest with the given config blob and media type,
// artifactType and layers (with their annotations).
func artifactOf(t testing.TB, configMT, artifactType types.MediaType, config []byte, annotations map[string]string, layers ...*testLayer) v1.Image {
	t.Helper()
	m := v1.Manifest{
		SchemaVersion: 2,
		MediaType:     types.OCIManifestSchema1,
		ArtifactType:  string(artifactType),
		Config:        v1.Descriptor{MediaType: configMT, Size: int64(len(config)), Digest: sha(config)},
		Annotations:   annotations,
	}
	r := &rawImage{config: config, mt: types.OCIManifestSchema1, layers: map[v1.Hash]*testLayer{}}
	for _, l := range layers {
		m.Layers = append(m.Layers, v1.Descriptor{MediaType: l.mt, Size: int64(len(l.blob)), Digest: sha(l.blob), Annotations: l.annotations})
		r.layers[sha(l.blob)] = l
	}
	raw, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	r.manifest = raw
	img, err := partial.CompressedToImage(r)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// ---------------------------------------------------------------------------
// Trees.

// node is one entry of a golden tree: a file with its content, a
// directory, or a symlink with its target.
type node struct {
	Kind string // "file", "dir", "link"
	Data string // file content or link target
}

func (n node) String() string {
	switch n.Kind {
	case "dir":
		return "dir"
	case "link":
		return "link -> " + n.Data
	}
	return fmt.Sprintf("file %q", n.Data)
}

// F, D and L make golden tree entries.
func F(content string) node { return node{Kind: "file", Data: content} }

var D = node{Kind: "dir"}

func L(target string) node { return node{Kind: "link", Data: target} }

// tree maps slash paths below the root to their entries.
type tree map[string]node

// treeOf reads a whole fs.FS (not following links) into a tree.
func treeOf(t testing.TB, fsys fs.FS) tree {
	t.Helper()
	out := tree{}
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == "." {
			return nil
		}
		switch {
		case d.IsDir():
			out[p] = D
		case d.Type()&fs.ModeSymlink != 0:
			target, err := fs.ReadLink(fsys, p)
			if err != nil {
				return err
			}
			out[p] = L(target)
		case d.Type().IsRegular():
			b, err := fs.ReadFile(fsys, p)
			if err != nil {
				return err
			}
			out[p] = F(string(b))
		default:
			return fmt.Errorf("%s: unexpected type %v", p, d.Type())
		}
		return nil
	})
	if err != nil {
		t.Fatalf("walk tree: %v", err)
	}
	return out
}

// diffTrees describes how got differs from want, one line per path, or
// returns "" when they are equal.
func diffTrees(want, got tree) string {
	var paths []string
	for p := range want {
		paths = append(paths, p)
	}
	for p := range got {
		if _, ok := want[p]; !ok {
			paths = append(paths, p)
		}
	}
	sort.Strings(paths)
	var b strings.Builder
	for _, p := range paths {
		w, inW := want[p]
		g, inG := got[p]
		switch {
		case !inG:
			fmt.Fprintf(&b, "  - %q: %v (missing)\n", p, w)
		case !inW:
			fmt.Fprintf(&b, "  + %q: %v (unexpected)\n", p, g)
		case w != g:
			fmt.Fprintf(&b, "  ~ %q: want %v, got %v\n", p, w, g)
		}
	}
	return b.String()
}

// listTree prints a tree in path order, for failure messages.
func listTree(tr tree) string {
	paths := make([]string, 0, len(tr))
	for p := range tr {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	var b strings.Builder
	for _, p := range paths {
		fmt.Fprintf(&b, "  %q: %v\n", p, tr[p])
	}
	return b.String()
}

// ---------------------------------------------------------------------------
// Streams too big to hold: bombs.

// memberWriter compresses streams that are mostly zeros. It cuts its input
// into 1 MiB chunks and compresses each as a member of its own (gzip
// members and zstd frames may be concatenated), and compresses an all-zero
// chunk only once, so that gigabytes of zeros are written in a fraction of
// a second, also under -race, while the output is an ordinary stream.
type memberWriter struct {
	w      io.Writer
	member func([]byte) []byte
	buf    []byte
	zeros  []byte // the compressed member of one all-zero chunk
}

const bombChunk = 1 << 20

var zeroChunk = make([]byte, bombChunk)

func (z *memberWriter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		k := min(len(p), bombChunk-len(z.buf))
		z.buf = append(z.buf, p[:k]...)
		p = p[k:]
		if len(z.buf) == bombChunk {
			if err := z.flush(); err != nil {
				return 0, err
			}
		}
	}
	return n, nil
}

func (z *memberWriter) flush() error {
	if len(z.buf) == 0 {
		return nil
	}
	var member []byte
	if bytes.Equal(z.buf, zeroChunk) {
		if z.zeros == nil {
			z.zeros = z.member(zeroChunk)
		}
		member = z.zeros
	} else {
		member = z.member(z.buf)
	}
	z.buf = z.buf[:0]
	_, err := z.w.Write(member)
	return err
}

func (z *memberWriter) Close() error { return z.flush() }

func gzipMember(b []byte) []byte {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	zw.Write(b)
	zw.Close()
	return buf.Bytes()
}

func zstdFrame(b []byte) []byte {
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1), zstd.WithEncoderLevel(zstd.SpeedFastest))
	if err != nil {
		panic(err)
	}
	defer enc.Close()
	return enc.EncodeAll(b, nil)
}

// bombBlob streams a tar holding one file of size zero bytes at name
// through compression c (gzip or zstd, as concatenated members) and
// returns the compressed blob. Only the compressed bytes (a few MB for
// gigabytes) are held in memory. The tar's DiffID is not computed: a bomb
// is refused long before its end, where the DiffID would be checked.
func bombBlob(t testing.TB, name string, size int64, c mediatypes.Compression) []byte {
	t.Helper()
	var out bytes.Buffer
	zw := &memberWriter{w: &out, member: gzipMember}
	if c == mediatypes.Zstd {
		zw.member = zstdFrame
	}
	tw := tar.NewWriter(zw)
	if err := tw.WriteHeader(&tar.Header{Name: name, Typeflag: tar.TypeReg, Size: size, Mode: 0o644, Format: tar.FormatPAX}); err != nil {
		t.Fatal(err)
	}
	for left := size; left > 0; left -= bombChunk {
		if _, err := tw.Write(zeroChunk[:min(left, bombChunk)]); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// fsOf builds the in-memory tree of a golden tree (files 0644), to compute
// its identity with archive.Identity.
func fsOf(t testing.TB, tr tree) *filetree.FS {
	t.Helper()
	b := filetree.NewBuilder()
	paths := make([]string, 0, len(tr))
	for p := range tr {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	for _, p := range paths {
		var err error
		switch n := tr[p]; n.Kind {
		case "dir":
			err = b.Mkdir(p, 0o755)
		case "link":
			err = b.Symlink(n.Data, p)
		default:
			err = b.WriteFile(p, []byte(n.Data), 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return b.FS()
}

// identityOf is the content identity of a golden tree.
func identityOf(t testing.TB, tr tree) string {
	t.Helper()
	id, err := archive.Identity(fsOf(t, tr))
	if err != nil {
		t.Fatal(err)
	}
	return id.String()
}
