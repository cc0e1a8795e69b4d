package archive_test

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"slices"
	"testing"
	"time"

	"github.com/addonpkg/addonpkg/pkg/archive"
	"github.com/addonpkg/addonpkg/pkg/filetree"
	"github.com/addonpkg/addonpkg/pkg/mediatypes"
)

func hexSum(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// The worked example of spec/addon-v1.md section 7.3.
func TestIdentityWorkedExample(t *testing.T) {
	b := filetree.NewBuilder()
	if err := b.WriteFile("base/a.yaml", []byte("x: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	stream := "d\x00base\x000755\x00\x00" + "f\x00base/a.yaml\x000644\x00sha256:" + hexSum([]byte("x: 1\n")) + "\x00"
	if len(stream) != 104 {
		t.Fatalf("the spec's stream is 104 bytes, this one %d", len(stream))
	}
	got, err := archive.Identity(b.FS())
	if err != nil {
		t.Fatal(err)
	}
	if want := "sha256:" + hexSum([]byte(stream)); got.String() != want {
		t.Errorf("identity %s, want %s", got, want)
	}
}

func TestIdentityEmptyTree(t *testing.T) {
	got, err := archive.Identity(filetree.NewBuilder().FS())
	if err != nil {
		t.Fatal(err)
	}
	if want := "sha256:" + hexSum(nil); got.String() != want {
		t.Errorf("identity %s, want %s", got, want)
	}
}

// Modes normalize: only the execute bits count; links are 0777.
func TestIdentityModes(t *testing.T) {
	id := func(perm uint32, link bool) string {
		b := filetree.NewBuilder()
		_ = b.Mkdir("d", 0o700)
		_ = b.WriteFile("f", []byte("x"), fs.FileMode(perm))
		if link {
			_ = b.Symlink("f", "l")
		}
		d, err := archive.Identity(b.FS())
		if err != nil {
			t.Fatal(err)
		}
		return d.String()
	}
	if id(0o600, false) != id(0o644, false) || id(0o400, false) != id(0o664, false) {
		t.Error("read/write bits changed the identity")
	}
	if id(0o700, false) != id(0o755, false) || id(0o744, false) != id(0o755, false) {
		t.Error("different execute bits with one set changed the identity")
	}
	if id(0o644, false) == id(0o755, false) {
		t.Error("the execute bit did not change the identity")
	}
	if id(0o644, false) == id(0o644, true) {
		t.Error("a link did not change the identity")
	}
}

// readTar lists a tar's headers.
func readTar(t *testing.T, b []byte) []*tar.Header {
	t.Helper()
	tr := tar.NewReader(bytes.NewReader(b))
	var out []*tar.Header
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, h)
	}
}

// Entries in tree order, each directory before its contents, owners zero,
// modes normalized, one time; the identity does not depend on the prefix.
func TestWriteTar(t *testing.T) {
	tree := func() *filetree.Builder {
		b := filetree.NewBuilder()
		_ = b.WriteFile("a/b", []byte("b"), 0o600)
		_ = b.WriteFile("a.txt", []byte("text"), 0o775)
		_ = b.WriteFile("z.yaml", []byte("z"), 0o644)
		return b
	}
	mtime := time.Date(2024, 5, 1, 12, 0, 0, 500, time.FixedZone("X", 3600))
	var plain, prefixed bytes.Buffer
	r1, err := archive.WriteTar(&plain, tree().FS(), archive.TarOptions{ModTime: mtime})
	if err != nil {
		t.Fatal(err)
	}
	r2, err := archive.WriteTar(&prefixed, tree().FS(), archive.TarOptions{ModTime: mtime, Prefix: "addon"})
	if err != nil {
		t.Fatal(err)
	}
	if r1.Identity != r2.Identity {
		t.Errorf("identity depends on the prefix: %s, %s", r1.Identity, r2.Identity)
	}
	if id, _ := archive.Identity(tree().FS()); id != r1.Identity {
		t.Errorf("WriteTar identity %s, Identity %s", r1.Identity, id)
	}
	if r1.Files != 3 || r1.Bytes != 6 || r1.Size != int64(plain.Len()) {
		t.Errorf("result %+v", r1)
	}
	if r1.DiffID.String() != "sha256:"+hexSum(plain.Bytes()) {
		t.Errorf("DiffID %s is not the digest of the stream", r1.DiffID)
	}
	for _, tc := range []struct {
		b    []byte
		want []string
	}{
		{plain.Bytes(), []string{"a/", "a/b", "a.txt", "z.yaml"}},
		{prefixed.Bytes(), []string{"addon/", "addon/a/", "addon/a/b", "addon/a.txt", "addon/z.yaml"}},
	} {
		var names []string
		for _, h := range readTar(t, tc.b) {
			names = append(names, h.Name)
			if h.Uid != 0 || h.Gid != 0 || h.Uname != "" || h.Gname != "" {
				t.Errorf("%s: owner %d:%d %q:%q", h.Name, h.Uid, h.Gid, h.Uname, h.Gname)
			}
			if !h.ModTime.Equal(mtime.Truncate(time.Second)) {
				t.Errorf("%s: time %v", h.Name, h.ModTime)
			}
			//lint:ignore SA1019 a writer must leave the deprecated Xattrs empty too
			if !h.AccessTime.IsZero() || !h.ChangeTime.IsZero() || len(h.PAXRecords) > 0 || len(h.Xattrs) > 0 {
				t.Errorf("%s: varying records %+v", h.Name, h)
			}
			want := int64(0o644)
			if h.Typeflag == tar.TypeDir || h.Name == "a.txt" || h.Name == "addon/a.txt" {
				want = 0o755
			}
			if h.Mode != want {
				t.Errorf("%s: mode %o, want %o", h.Name, h.Mode, want)
			}
		}
		if !slices.Equal(names, tc.want) {
			t.Errorf("entries %q, want %q", names, tc.want)
		}
	}
	// The same tree gives the same bytes.
	var again bytes.Buffer
	if _, err := archive.WriteTar(&again, tree().FS(), archive.TarOptions{ModTime: mtime}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again.Bytes(), plain.Bytes()) {
		t.Error("two tars of one tree differ")
	}
}

func TestBuildLayerCompressions(t *testing.T) {
	for _, c := range []mediatypes.Compression{mediatypes.Gzip, mediatypes.Zstd, mediatypes.None} {
		b := filetree.NewBuilder()
		_ = b.WriteFile("a.yaml", bytes.Repeat([]byte("x: 1\n"), 1000), 0o644)
		l, err := archive.BuildLayer(b.FS(), archive.TarOptions{}, c, mediatypes.ContentLayer(c))
		if err != nil {
			t.Fatal(err)
		}
		rc, _ := l.Compressed()
		blob, _ := io.ReadAll(rc)
		if got := archive.Detect(blob); got != c {
			t.Errorf("%s: blob detected as %s", c, got)
		}
		if d, _ := l.Digest(); d.Hex != hexSum(blob) {
			t.Errorf("%s: digest %s is not the blob's", c, d)
		}
		u, err := l.Uncompressed()
		if err != nil {
			t.Fatal(err)
		}
		tarBytes, err := io.ReadAll(u)
		if err != nil {
			t.Fatal(err)
		}
		if d, _ := l.DiffID(); d.Hex != hexSum(tarBytes) {
			t.Errorf("%s: DiffID %s is not the tar's", c, d)
		}
		// Decompress goes by the magic bytes, whatever the media type says.
		r, err := archive.Decompress(bytes.NewReader(blob), mediatypes.None)
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := io.ReadAll(r); !bytes.Equal(got, tarBytes) {
			t.Errorf("%s: Decompress gave other bytes", c)
		}
	}
	if _, err := archive.ParseCompression("lz4"); err == nil {
		t.Error("lz4 accepted")
	}
}
