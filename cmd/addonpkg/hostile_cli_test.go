package main

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/klauspost/compress/gzip"

	"github.com/addonpkg/addonpkg/pkg/layout"
)

// hostileCLIEntry is one hand-made tar entry.
type hostileCLIEntry struct {
	name, body, link string
	typ              byte
}

func hostileCLIFile(name, body string) hostileCLIEntry {
	return hostileCLIEntry{name: name, body: body, typ: tar.TypeReg}
}

func hostileCLILink(name, target string, typ byte) hostileCLIEntry {
	return hostileCLIEntry{name: name, link: target, typ: typ}
}

// hostileCLITar writes the entries as given, unchecked.
func hostileCLITar(t *testing.T, entries ...hostileCLIEntry) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Typeflag: e.typ, Linkname: e.link, Mode: 0o644, ModTime: time.Unix(1_700_000_000, 0), Format: tar.FormatPAX}
		if e.typ == tar.TypeDir {
			h.Mode = 0o755
		}
		if e.typ == tar.TypeReg {
			h.Size = int64(len(e.body))
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatalf("tar header %q: %v", e.name, err)
		}
		if _, err := io.WriteString(tw, e.body); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func hostileCLISHA(b []byte) v1.Hash {
	s := sha256.Sum256(b)
	return v1.Hash{Algorithm: "sha256", Hex: hex.EncodeToString(s[:])}
}

// hostileCLILayer is a layer over a compressed blob held in memory or in
// a file, with the DiffID and media type the test gives it.
type hostileCLILayer struct {
	blob   []byte // the blob, or
	file   string // the file holding it
	digest v1.Hash
	size   int64
	diffID v1.Hash
	mt     types.MediaType
}

var _ v1.Layer = (*hostileCLILayer)(nil)

func (l *hostileCLILayer) Digest() (v1.Hash, error)            { return l.digest, nil }
func (l *hostileCLILayer) DiffID() (v1.Hash, error)            { return l.diffID, nil }
func (l *hostileCLILayer) Size() (int64, error)                { return l.size, nil }
func (l *hostileCLILayer) MediaType() (types.MediaType, error) { return l.mt, nil }
func (l *hostileCLILayer) Compressed() (io.ReadCloser, error) {
	if l.file != "" {
		return os.Open(l.file)
	}
	return io.NopCloser(bytes.NewReader(l.blob)), nil
}
func (l *hostileCLILayer) Uncompressed() (io.ReadCloser, error) {
	rc, err := l.Compressed()
	if err != nil {
		return nil, err
	}
	return gzip.NewReader(rc)
}

// hostileCLIGzipLayer is a gzip layer of the tar stream tb, labelled mt.
func hostileCLIGzipLayer(t *testing.T, tb []byte, mt types.MediaType) *hostileCLILayer {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(tb); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	return &hostileCLILayer{blob: b, digest: hostileCLISHA(b), size: int64(len(b)), diffID: hostileCLISHA(tb), mt: mt}
}

// hostileCLIOne is a gzip OCI layer of the entries.
func hostileCLIOne(t *testing.T, entries ...hostileCLIEntry) *hostileCLILayer {
	t.Helper()
	return hostileCLIGzipLayer(t, hostileCLITar(t, entries...), types.OCILayer)
}

// hostileCLIZeroBomb writes to a file in dir a gzip stream of a tar
// holding one file of size zero bytes at name. The stream is a series of
// gzip members, one per MiB, and the member of an all-zero MiB is
// compressed once: gigabytes are written in about a second, streamed, and
// only the compressed bytes reach the disk. Its DiffID is made up: the
// bomb is refused long before its end, where the DiffID would be checked.
func hostileCLIZeroBomb(t *testing.T, dir, name string, size int64) *hostileCLILayer {
	t.Helper()
	f, err := os.CreateTemp(dir, "bomb-*.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h := sha256.New()
	zw := &hostileCLIMembers{w: io.MultiWriter(f, h)}
	tw := tar.NewWriter(zw)
	if err := tw.WriteHeader(&tar.Header{Name: name, Typeflag: tar.TypeReg, Size: size, Mode: 0o644, Format: tar.FormatPAX}); err != nil {
		t.Fatal(err)
	}
	zero := make([]byte, hostileCLIChunk)
	for left := size; left > 0; left -= hostileCLIChunk {
		if _, err := tw.Write(zero[:min(left, hostileCLIChunk)]); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.flush(); err != nil {
		t.Fatal(err)
	}
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	return &hostileCLILayer{
		file:   f.Name(),
		digest: v1.Hash{Algorithm: "sha256", Hex: hex.EncodeToString(h.Sum(nil))},
		size:   st.Size(),
		diffID: hostileCLISHA([]byte("a made-up DiffID")),
		mt:     types.OCILayer,
	}
}

const hostileCLIChunk = 1 << 20

// hostileCLIZeroChunk is a chunk of zeros, to compare with (bytes.Equal
// runs in assembly, a byte loop does not under the race detector).
var hostileCLIZeroChunk [hostileCLIChunk]byte

// hostileCLIMembers compresses each MiB written to it as a gzip member.
type hostileCLIMembers struct {
	w     io.Writer
	buf   []byte
	zeros []byte // the member of an all-zero chunk
}

func (z *hostileCLIMembers) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		k := min(len(p), hostileCLIChunk-len(z.buf))
		z.buf = append(z.buf, p[:k]...)
		p = p[k:]
		if len(z.buf) == hostileCLIChunk {
			if err := z.flush(); err != nil {
				return 0, err
			}
		}
	}
	return n, nil
}

func (z *hostileCLIMembers) flush() error {
	if len(z.buf) == 0 {
		return nil
	}
	member := func(b []byte) []byte {
		var out bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&out, gzip.BestCompression)
		zw.Write(b)
		zw.Close()
		return out.Bytes()
	}
	var m []byte
	if len(z.buf) == hostileCLIChunk && bytes.Equal(z.buf, hostileCLIZeroChunk[:]) {
		if z.zeros == nil {
			z.zeros = member(z.buf)
		}
		m = z.zeros
	} else {
		m = member(z.buf)
	}
	z.buf = z.buf[:0]
	_, err := z.w.Write(m)
	return err
}

// hostileCLIImage is an OCI image of the layers, bottom to top.
func hostileCLIImage(t *testing.T, layers ...v1.Layer) v1.Image {
	t.Helper()
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	img, err := mutate.ConfigFile(img, &v1.ConfigFile{
		OS: "linux", Architecture: "amd64",
		Created: v1.Time{Time: time.Unix(0, 0).UTC()},
		RootFS:  v1.RootFS{Type: "layers"},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range layers {
		if img, err = mutate.Append(img, mutate.Addendum{Layer: l}); err != nil {
			t.Fatal(err)
		}
	}
	return img
}

// hostileCLIWrite writes img to a new OCI layout in dir, tagged t, and
// returns the layout.
func hostileCLIWrite(t *testing.T, dir string, img v1.Image) string {
	t.Helper()
	st, err := layout.Init(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.WriteImage(context.Background(), img, nil, "t"); err != nil {
		t.Fatal(err)
	}
	return dir
}

// hostileCLIBlob is the path of a layer's blob in the layout dir.
func hostileCLIBlob(dir string, l *hostileCLILayer) string {
	return filepath.Join(dir, "blobs", "sha256", l.digest.Hex)
}

// hostileCLIResult is one run of the binary.
type hostileCLIResult struct {
	code           int
	stdout, stderr string
	took           time.Duration
}

func hostileCLIRun(t *testing.T, dir string, env []string, args ...string) hostileCLIResult {
	t.Helper()
	return runPeak(t, dir, env, args...).hostileCLIResult
}

// hostileCLIListing lists root recursively (slash paths, "/" after
// directories), for checking that nothing was written.
func hostileCLIListing(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if rel == "." {
			return nil
		}
		if d.IsDir() {
			rel += "/"
		}
		out = append(out, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// addonpkg unpack -o, the real binary, refuses hostile images: exit 1,
// one line on stderr that says what is wrong, nothing written (neither
// the output directory, nor a temporary one beside it, nor what a
// traversal aims at), quickly.
func TestHostileCLI(t *testing.T) {
	t.Parallel()
	binary(t)
	etcX := "/etc/x"
	_, err := os.Lstat(etcX)
	etcXBefore := err == nil

	addonA := hostileCLIFile("addon/a.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n")
	type hostileCLICase struct {
		name string
		// image writes the hostile image to the OCI layout dir (under
		// work, which the case may use for scratch files) and returns
		// more substrings the error line must hold.
		image func(t *testing.T, dir, work string) []string
		args  []string
		want  []string // substrings of the error line
	}
	one := func(entries ...hostileCLIEntry) func(t *testing.T, dir, work string) []string {
		return func(t *testing.T, dir, work string) []string {
			hostileCLIWrite(t, dir, hostileCLIImage(t, hostileCLIOne(t, entries...)))
			return nil
		}
	}
	cases := []hostileCLICase{
		{name: "entry ../escape", image: one(addonA, hostileCLIFile("../escape", "x")), want: []string{`"../escape"`, "climbs out"}},
		{name: "entry addon/../../escape", image: one(addonA, hostileCLIFile("addon/../../escape", "x")), want: []string{"escape", "climbs out"}},
		{name: "absolute entry /abs", image: one(addonA, hostileCLIFile("/abs", "x")), want: []string{`"/abs"`, "absolute path"}},
		{
			name:  "symlink addon/etc -> /etc, then addon/etc/x",
			image: one(addonA, hostileCLILink("addon/etc", "/etc", tar.TypeSymlink), hostileCLIFile("addon/etc/x", "owned")),
			want:  []string{"addon/etc", "symlink"},
		},
		{name: "symlink addon/l -> ../../x", image: one(addonA, hostileCLILink("addon/l", "../../x", tar.TypeSymlink)), want: []string{"addon/l", "symlink", "leads out"}},
		{name: "hardlink addon/h -> /etc/passwd", image: one(addonA, hostileCLILink("addon/h", "/etc/passwd", tar.TypeLink)), want: []string{"addon/h", "hardlink", "/etc/passwd"}},
		{name: "char device addon/null", image: one(addonA, hostileCLIEntry{name: "addon/null", typ: tar.TypeChar}), want: []string{"addon/null", "device"}},
		{
			name: "gzip bomb: 3 GiB of zeros outside /addon",
			image: func(t *testing.T, dir, work string) []string {
				bomb := hostileCLIZeroBomb(t, work, "var/bomb", 3<<30)
				t.Logf("gzip bomb: %d compressed bytes for 3 GiB", bomb.size)
				hostileCLIWrite(t, dir, hostileCLIImage(t, hostileCLIOne(t, addonA), bomb))
				return nil
			},
			args: []string{"--max-image-bytes", "268435456"},
			want: []string{"limit of 268435456 exceeded", "--max-image-bytes"},
		},
		{
			name:  "2 MiB file over --max-file-bytes 1 MiB",
			image: one(addonA, hostileCLIFile("addon/big", strings.Repeat("\x00", 2<<20))),
			args:  []string{"--max-file-bytes", "1048576"},
			want:  []string{"big: file size limit of 1048576 exceeded", "--max-file-bytes"},
		},
		{
			name: "layer blob overwritten in the layout",
			image: func(t *testing.T, dir, work string) []string {
				l := hostileCLIOne(t, addonA)
				hostileCLIWrite(t, dir, hostileCLIImage(t, l))
				// Another gzip header mtime: same tar, other digest.
				b := bytes.Clone(l.blob)
				b[4] ^= 0x5a
				if err := os.WriteFile(hostileCLIBlob(dir, l), b, 0o644); err != nil {
					t.Fatal(err)
				}
				return []string{l.digest.String()}
			},
			want: []string{"digest mismatch"},
		},
		{
			name: "layer blob missing from the layout",
			image: func(t *testing.T, dir, work string) []string {
				l := hostileCLIOne(t, addonA)
				hostileCLIWrite(t, dir, hostileCLIImage(t, l))
				if err := os.Remove(hostileCLIBlob(dir, l)); err != nil {
					t.Fatal(err)
				}
				return []string{"blob " + l.digest.String()}
			},
			want: []string{"missing from layout"},
		},
		{name: "no addon/ in the image", image: one(hostileCLIFile("etc/hostname", "x"), hostileCLIFile("app/addon/a", "not at /addon")), want: []string{"no add-on content"}},
		// An image config with a layer that is not an image layer is
		// no image-form add-on (mediatypes.Classify): the error names the
		// config, not the layer's media type.
		{
			name: "layer of an unknown media type",
			image: func(t *testing.T, dir, work string) []string {
				l := hostileCLIGzipLayer(t, hostileCLITar(t, addonA), "application/vnd.example.foo")
				hostileCLIWrite(t, dir, hostileCLIImage(t, l))
				return nil
			},
			want: []string{"unsupported media type", "not an add-on"},
		},
		{
			name: "add-on layer, then a layer of an unknown media type",
			image: func(t *testing.T, dir, work string) []string {
				l := hostileCLIGzipLayer(t, hostileCLITar(t, hostileCLIFile("addon/b.yaml", "x")), "application/vnd.example.foo")
				hostileCLIWrite(t, dir, hostileCLIImage(t, hostileCLIOne(t, addonA), l))
				return nil
			},
			want: []string{"unsupported media type", "not an add-on"},
		},
	}

	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			work := t.TempDir()
			layoutDir := filepath.Join(work, "layout")
			want := append(tc.image(t, layoutDir, work), tc.want...)

			// root/cwd is the working directory; the output goes to
			// root/a/b/out. Afterwards root holds exactly these
			// directories, empty.
			cwd := filepath.Join(root, "cwd")
			parent := filepath.Join(root, "a", "b")
			for _, d := range []string{cwd, parent} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			out := filepath.Join(parent, "out")
			args := append([]string{"unpack", "oci:" + layoutDir + ":t", "-o", out}, tc.args...)
			r := hostileCLIRun(t, cwd, []string{"ADDONPKG_HOME=" + filepath.Join(work, "home")}, args...)

			if r.code != 1 {
				t.Errorf("exit %d, want 1\nstdout %q\nstderr %q", r.code, r.stdout, r.stderr)
			}
			line, rest, _ := strings.Cut(r.stderr, "\n")
			t.Logf("took %v: %s", r.took.Round(time.Millisecond), line)
			if rest != "" || !strings.HasSuffix(r.stderr, "\n") || !strings.HasPrefix(line, "addonpkg: ") {
				t.Errorf("stderr is not one line starting with \"addonpkg: \": %q", r.stderr)
			}
			for _, w := range want {
				if !strings.Contains(line, w) {
					t.Errorf("stderr %q does not mention %q", line, w)
				}
			}
			if r.stdout != "" {
				t.Errorf("stdout %q", r.stdout)
			}
			if got, want := hostileCLIListing(t, root), []string{"a/", "a/b/", "cwd/"}; !slices.Equal(got, want) {
				t.Errorf("written: %q, want only %q", got, want)
			}
			if _, err := os.Lstat(filepath.Join(work, "escape")); err == nil {
				t.Errorf("%s was written", filepath.Join(work, "escape"))
			}
			if _, err := os.Lstat(etcX); err == nil && !etcXBefore {
				t.Errorf("%s was written", etcX)
			}
			if r.took > 20*time.Second {
				t.Errorf("took %v, want < 20s", r.took)
			}
		})
	}

	// A valid add-on, but the output directory is not empty: nothing
	// in it changes.
	t.Run("output directory not empty", func(t *testing.T) {
		work := t.TempDir()
		layoutDir := hostileCLIWrite(t, filepath.Join(work, "layout"), hostileCLIImage(t, hostileCLIOne(t, addonA)))
		parent := t.TempDir()
		out := filepath.Join(parent, "out")
		if err := os.MkdirAll(filepath.Join(out, "sub"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(out, "keep"), []byte("mine"), 0o600); err != nil {
			t.Fatal(err)
		}
		before := readTree(t, parent)
		r := hostileCLIRun(t, work, []string{"ADDONPKG_HOME=" + filepath.Join(work, "home")}, "unpack", "oci:"+layoutDir+":t", "-o", out)
		if r.code != 1 || strings.Count(r.stderr, "\n") != 1 || !strings.HasPrefix(r.stderr, "addonpkg: ") || !strings.Contains(r.stderr, "not empty") {
			t.Errorf("exit %d, stderr %q", r.code, r.stderr)
		}
		after := readTree(t, parent)
		for p, v := range before {
			if after[p] != v {
				t.Errorf("%s changed", p)
			}
		}
		for p := range after {
			if _, ok := before[p]; !ok {
				t.Errorf("%s appeared", p)
			}
		}
		if st, err := os.Stat(filepath.Join(out, "keep")); err != nil || st.Mode().Perm() != 0o600 {
			t.Errorf("keep: %v %v", st, err)
		}
	})
}
