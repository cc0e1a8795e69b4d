package source_test

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"testing"

	"github.com/addonpkg/addonpkg/pkg/safetree"
	"github.com/addonpkg/addonpkg/pkg/source"
)

// bodyTransport answers every request with one body, without a network.
type bodyTransport []byte

func (b bodyTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	return &http.Response{
		StatusCode:    http.StatusOK,
		Header:        http.Header{"Content-Type": {"application/octet-stream"}},
		Body:          io.NopCloser(bytes.NewReader(b)),
		ContentLength: int64(len(b)),
		Request:       r,
	}, nil
}

// fuzzLimits keep a bomb cheap: the readers must stop at them.
var fuzzLimits = safetree.Limits{
	MaxAddonBytes: 2 << 20, MaxImageBytes: 4 << 20, MaxEntries: 200,
	MaxFileBytes: 1 << 20, MaxPathLength: 256, MaxDepth: 16,
}

// fuzzPaths are the URL paths a body is served under: the extension
// decides which reader gets it (none: sniffed).
var fuzzPaths = []string{"/a.tar", "/a.tar.gz", "/a.tgz", "/a.zip", "/release", "/a.yaml"}

// FuzzHTTPArchive feeds the http source's .tar, .tar.gz and .zip readers
// (and the sniffing that picks them) arbitrary bodies. Whatever the body:
// no panic; an error is one line; a tree that loads has only valid,
// bounded paths, files within the file limit, and links that stay inside
// the tree.
// Run: go test ./pkg/source -run '^$' -fuzz FuzzHTTPArchive
func FuzzHTTPArchive(f *testing.F) {
	for _, seed := range archiveSeeds(f) {
		for i := range fuzzPaths {
			f.Add(seed, uint8(i))
		}
	}
	f.Fuzz(func(t *testing.T, body []byte, which uint8) {
		p := fuzzPaths[int(which)%len(fuzzPaths)]
		ref, err := source.Parse("https://addons.example.test" + p)
		if err != nil {
			t.Fatal(err)
		}
		opts := source.Options{Locations: remote,
			HTTPClient:       &http.Client{Transport: bodyTransport(body)},
			MaxDownloadBytes: 1 << 20,
			Netrc:            "/nonexistent/netrc",
		}
		tree, err := source.LoadTree(context.Background(), ref, opts, fuzzLimits)
		if err != nil {
			if msg := err.Error(); strings.ContainsAny(msg, "\r\n") || !strings.Contains(msg, "addons.example.test") {
				t.Fatalf("error is not one line naming the source: %q", msg)
			}
			return
		}
		checkFuzzTree(t, tree)
	})
}

func checkFuzzTree(t *testing.T, tree *source.Tree) {
	t.Helper()
	entries := 0
	err := fs.WalkDir(tree.FS, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == "." {
			return nil
		}
		entries++
		if !fs.ValidPath(p) || len(p) > fuzzLimits.MaxPathLength || strings.Count(p, "/")+1 > fuzzLimits.MaxDepth {
			t.Errorf("entry %q: invalid or over the path limits", p)
		}
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := tree.FS.ReadLink(p)
			if err != nil {
				t.Errorf("link %q: %v", p, err)
				return nil
			}
			if path.IsAbs(target) {
				t.Errorf("link %q -> %q is absolute", p, target)
			}
			if r := path.Join(path.Dir(p), target); r == ".." || strings.HasPrefix(r, "../") {
				t.Errorf("link %q -> %q leaves the tree", p, target)
			}
		case d.Type().IsRegular():
			b, err := tree.FS.ReadFile(p)
			if err != nil {
				t.Errorf("file %q: %v", p, err)
			} else if int64(len(b)) > fuzzLimits.MaxFileBytes {
				t.Errorf("file %q: %d bytes, over the limit", p, len(b))
			}
		case d.IsDir():
		default:
			t.Errorf("entry %q has type %v", p, d.Type())
		}
		return nil
	})
	if err != nil {
		t.Errorf("walk: %v", err)
	}
	if entries > fuzzLimits.MaxEntries {
		t.Errorf("%d entries, over the limit", entries)
	}
}

// archiveSeeds are small archives of every kind the readers take, and
// the hostile shapes they must refuse.
func archiveSeeds(f *testing.F) [][]byte {
	const yaml = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n"
	hdrs := func(hs ...*tar.Header) []byte {
		var buf bytes.Buffer
		tw := tar.NewWriter(&buf)
		for _, h := range hs {
			data := ""
			if h.Typeflag == tar.TypeReg {
				data = yaml
				h.Size = int64(len(data))
			}
			if err := tw.WriteHeader(h); err != nil {
				f.Fatal(err)
			}
			io.WriteString(tw, data)
		}
		tw.Close()
		return buf.Bytes()
	}
	gz := func(b []byte) []byte {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		zw.Write(b)
		zw.Close()
		return buf.Bytes()
	}
	zipped := func(names ...string) []byte {
		var buf bytes.Buffer
		zw := zip.NewWriter(&buf)
		for _, n := range names {
			if strings.HasSuffix(n, "@") { // a symlink to a.yaml
				h := &zip.FileHeader{Name: strings.TrimSuffix(n, "@")}
				h.SetMode(fs.ModeSymlink | 0o777)
				w, _ := zw.CreateHeader(h)
				io.WriteString(w, "a.yaml")
				continue
			}
			w, _ := zw.Create(n)
			io.WriteString(w, yaml)
		}
		zw.Close()
		return buf.Bytes()
	}
	reg := func(name string) *tar.Header { return &tar.Header{Name: name, Typeflag: tar.TypeReg, Mode: 0o644} }
	plain := hdrs(&tar.Header{Name: "addon/", Typeflag: tar.TypeDir, Mode: 0o755}, reg("addon/a.yaml"),
		&tar.Header{Name: "addon/kustomization.yaml", Typeflag: tar.TypeReg, Mode: 0o644},
		&tar.Header{Name: "addon/link.yaml", Typeflag: tar.TypeSymlink, Linkname: "a.yaml"},
		&tar.Header{Name: "addon/hard.yaml", Typeflag: tar.TypeLink, Linkname: "addon/a.yaml"})
	return [][]byte{
		plain,
		gz(plain),
		hdrs(reg("../evil.yaml")),
		hdrs(reg("/etc/evil.yaml")),
		hdrs(reg("a.yaml"), &tar.Header{Name: "up", Typeflag: tar.TypeSymlink, Linkname: "../.."}),
		hdrs(reg("a.yaml"), &tar.Header{Name: "h", Typeflag: tar.TypeLink, Linkname: "/etc/passwd"}),
		hdrs(&tar.Header{Name: "null", Typeflag: tar.TypeChar, Devmajor: 1, Devminor: 3}),
		hdrs(reg("A.yaml"), reg("a.yaml")),
		gz(gz(plain)),
		zipped("a.yaml", "sub/b.yaml", "link.yaml@"),
		zipped(`..\..\evil.yaml`),
		[]byte(yaml),
		{0x1f, 0x8b},
		[]byte("PK\x03\x04"),
		{},
	}
}
