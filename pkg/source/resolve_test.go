package source_test

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"io/fs"
	"log"
	"net"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	ggcrregistry "github.com/google/go-containerregistry/pkg/registry"

	"github.com/addonpkg/addonpkg/pkg/build"
	"github.com/addonpkg/addonpkg/pkg/folder"
	"github.com/addonpkg/addonpkg/pkg/layout"
	"github.com/addonpkg/addonpkg/pkg/render"
	"github.com/addonpkg/addonpkg/pkg/source"
	sourcegit "github.com/addonpkg/addonpkg/pkg/source/git"
	sourcehttps "github.com/addonpkg/addonpkg/pkg/source/https"
	"github.com/addonpkg/addonpkg/pkg/transfer"
	"github.com/addonpkg/addonpkg/pkg/unpack"
)

// exampleDir is the absolute path of examples/NAME.
func exampleDir(t testing.TB, name string) string {
	t.Helper()
	d, err := filepath.Abs(filepath.Join("..", "..", "examples", name))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// buildExample builds examples/NAME (opts.Name) with opts.
func buildExample(t testing.TB, opts build.Options) *build.Result {
	t.Helper()
	fsys, err := folder.LoadDir(exampleDir(t, opts.Name))
	if err != nil {
		t.Fatal(err)
	}
	res, err := build.Build(context.Background(), fsys, opts)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// writeBuilt writes the built add-on res to the source s (oci:DIR:TAG,
// docker-archive:FILE...) and returns s parsed.
func writeBuilt(t testing.TB, s string, res *build.Result) source.Ref {
	t.Helper()
	dst, err := source.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := transfer.Write(context.Background(), &source.Artifact{Image: res.Image, Digest: res.Digest}, dst, transfer.Options{}); err != nil {
		t.Fatal(err)
	}
	return dst
}

// oneFileFolder is a folder holding only dir's file name: what a source
// naming that one file (coredns.yaml, without the .addonvalues beside
// it) is the same tree as.
func oneFileFolder(t testing.TB, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	if err := os.WriteFile(filepath.Join(out, name), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}

// resolve parses and unpacks s, failing the test on error.
func resolve(t testing.TB, s string, opts source.Options) *unpack.Addon {
	t.Helper()
	opts = withGit(opts)
	ad, err := source.Resolve(context.Background(), s, opts, unpack.Options{})
	if err != nil {
		t.Fatalf("resolve %s: %v", s, err)
	}
	return ad
}

// resolveErr resolves s and returns the error it must give.
func resolveErr(t testing.TB, s string, opts source.Options) error {
	t.Helper()
	opts = withGit(opts)
	ad, err := source.Resolve(context.Background(), s, opts, unpack.Options{})
	if err == nil {
		t.Fatalf("resolve %s: want an error, got an add-on %s", s, ad.Identity)
	}
	return err
}

// checkOneLine asserts the error is one line naming the source and the
// problem.
func checkOneLine(t testing.TB, err error, source string, wants ...string) {
	t.Helper()
	msg := err.Error()
	t.Logf("error: %s", msg)
	if strings.ContainsAny(msg, "\r\n") {
		t.Errorf("error spans lines: %q", msg)
	}
	if !strings.Contains(msg, source) {
		t.Errorf("error does not name the source %s: %q", source, msg)
	}
	for _, w := range wants {
		if !strings.Contains(msg, w) {
			t.Errorf("error does not say %q: %q", w, msg)
		}
	}
}

func renderYAML(t testing.TB, ad *unpack.Addon) string {
	t.Helper()
	res, err := render.Addon(context.Background(), ad, render.Options{})
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	return string(res.YAML())
}

// sameAsFolder asserts ad holds exactly the tree of the folder and
// renders to the same YAML.
func sameAsFolder(t testing.TB, label string, ad, folder *unpack.Addon) {
	t.Helper()
	if ad.Identity != folder.Identity {
		t.Errorf("%s: identity %s, the folder's is %s (files: %v, folder: %v)", label, ad.Identity, folder.Identity, fileList(ad), fileList(folder))
		return
	}
	if got, want := renderYAML(t, ad), renderYAML(t, folder); got != want {
		t.Errorf("%s: renders differently from the folder", label)
	}
}

func fileList(ad *unpack.Addon) []string {
	var out []string
	_ = fs.WalkDir(ad.FS, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && p != "." {
			out = append(out, p)
		}
		return err
	})
	return out
}

// subtree is a directory to archive under a prefix.
type subtree struct{ prefix, dir string }

// tarOf archives the trees as a tar, gzip-compressed if gz.
func tarOf(t testing.TB, gz bool, trees ...subtree) []byte {
	t.Helper()
	var buf bytes.Buffer
	var w io.Writer = &buf
	var zw *gzip.Writer
	if gz {
		zw = gzip.NewWriter(&buf)
		w = zw
	}
	tw := tar.NewWriter(w)
	for _, st := range trees {
		walkTree(t, st, func(name string, data []byte, isDir bool) {
			hdr := &tar.Header{Name: name, Mode: 0o644, Size: int64(len(data)), Typeflag: tar.TypeReg, ModTime: time.Unix(1e9, 0)}
			if isDir {
				hdr = &tar.Header{Name: name + "/", Mode: 0o755, Typeflag: tar.TypeDir, ModTime: time.Unix(1e9, 0)}
			}
			if err := tw.WriteHeader(hdr); err != nil {
				t.Fatal(err)
			}
			if _, err := tw.Write(data); err != nil {
				t.Fatal(err)
			}
		})
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if zw != nil {
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}

// zipOf archives the trees as a zip.
func zipOf(t testing.TB, trees ...subtree) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, st := range trees {
		walkTree(t, st, func(name string, data []byte, isDir bool) {
			h := &zip.FileHeader{Name: name, Method: zip.Deflate}
			h.SetMode(0o644)
			if isDir {
				h.Name += "/"
				h.SetMode(fs.ModeDir | 0o755)
			}
			w, err := zw.CreateHeader(h)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := w.Write(data); err != nil {
				t.Fatal(err)
			}
		})
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func walkTree(t testing.TB, st subtree, visit func(name string, data []byte, isDir bool)) {
	t.Helper()
	err := filepath.WalkDir(st.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(st.dir, p)
		if err != nil {
			return err
		}
		if rel == "." {
			if st.prefix != "" && st.prefix != "./" {
				visit(strings.TrimSuffix(st.prefix, "/"), nil, true)
			}
			return nil
		}
		name := st.prefix + filepath.ToSlash(rel)
		if d.IsDir() {
			visit(name, nil, true)
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		visit(name, data, false)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// closedPort is a 127.0.0.1 address nothing listens on.
func closedPort(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// TestEveryKindSameTree: each kind of SOURCE holding an example yields
// exactly the folder's tree (content identity) and rendered YAML, and a
// pinned SOURCE that resolves to the same tree again.
func TestEveryKindSameTree(t *testing.T) {
	ctx := context.Background()
	hf := newHTTPFixture(t)
	gf := newGitFixture(t)
	regSrv := httptest.NewServer(ggcrregistry.New(ggcrregistry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(regSrv.Close)
	regHost := strings.TrimPrefix(regSrv.URL, "http://")
	st, err := layout.Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()

	for _, ex := range []struct {
		name   string
		https  []string // SOURCE paths on the http fixture
		gitSub string   // where the git fixture holds it
	}{
		{"coredns", []string{"/coredns.yaml", "/coredns", "/coredns.tar.gz", "/bundle.tar.gz//bundle/coredns", "/bundle.zip//bundle/coredns"}, "addons/coredns"},
		{"metrics-server", []string{"/ms.tar.gz", "/ms.tgz", "/ms.tar", "/ms.zip", "/release", "/bundle.tar.gz//bundle/metrics-server/", "/bundle.zip//bundle/metrics-server"}, "deploy/nested/metrics-server"},
	} {
		t.Run(ex.name, func(t *testing.T) {
			dir := exampleDir(t, ex.name)
			dirAd := resolve(t, dir, source.Options{})
			if dirAd.Pinned != "" {
				t.Errorf("a folder's pinned SOURCE is %q, want none", dirAd.Pinned)
			}

			// OCI kinds: build once, write to a layout, an archive, the
			// store and a registry.
			fsys, err := folder.LoadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			res, err := build.Build(ctx, fsys, build.Options{Name: ex.name})
			if err != nil {
				t.Fatal(err)
			}
			art := &source.Artifact{Image: res.Image, Digest: res.Digest}
			layoutDir := filepath.Join(tmp, ex.name+"-layout")
			archiveFile := filepath.Join(tmp, ex.name+".tar")
			regRef := regHost + "/addons/" + ex.name + ":1"
			for _, dst := range []string{"oci:" + layoutDir + ":1", "oci-archive:" + archiveFile + ":1", regRef} {
				ref, err := source.Parse(dst)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := transfer.Write(ctx, art, ref, transfer.Options{}); err != nil {
					t.Fatalf("write %s: %v", dst, err)
				}
			}
			if _, err := st.WriteImage(ctx, res.Image, nil, ex.name+":1"); err != nil {
				t.Fatal(err)
			}
			d := res.Digest.String()

			type want struct {
				src, pinned string
				opts        source.Options
			}
			storeOpts := source.Options{Store: st, Pull: source.PullNever}
			cases := []want{
				{"oci:" + layoutDir + ":1", "oci:" + layoutDir + "@" + d, source.Options{}},
				{"oci-archive:" + archiveFile + ":1", "oci-archive:" + archiveFile + "@" + d, source.Options{}},
				{ex.name + ":1", ex.name + "@" + d, storeOpts},
				{regRef, regHost + "/addons/" + ex.name + "@" + d, source.Options{}},
				{"file://" + dir, "", source.Options{}},
				{gf.httpsURL("public.git") + "//" + ex.gitSub, "", gf.opts(t)},
				{gf.httpsURL("public.git") + "//" + ex.gitSub + "?ref=v1", "", gf.opts(t)},
				{"git+" + gf.plain.URL + "/public.git//" + ex.gitSub + "?ref=main", "", gf.opts(t)},
				{"git+file://" + gf.work + "//" + ex.gitSub + "?ref=light", "", gf.opts(t)},
				{"git+file://" + filepath.Join(gf.root, "public.git") + "//" + ex.gitSub, "", gf.opts(t)},
			}
			if ex.name == "coredns" {
				cases = append(cases, want{filepath.Join(dir, "coredns.yaml"), "", source.Options{}})
			}
			for _, p := range ex.https {
				cases = append(cases, want{hf.url(p), "", hf.opts})
			}
			var fileAd *unpack.Addon // the tree of a source naming coredns.yaml alone
			if ex.name == "coredns" {
				fileAd = resolve(t, oneFileFolder(t, dir, "coredns.yaml"), source.Options{})
			}
			for _, c := range cases {
				ad := resolve(t, c.src, c.opts)
				if strings.HasSuffix(c.src, "coredns.yaml") || c.src == hf.url("/coredns") {
					sameAsFolder(t, c.src, ad, fileAd)
				} else {
					sameAsFolder(t, c.src, ad, dirAd)
				}
				if c.pinned != "" && ad.Pinned != c.pinned {
					t.Errorf("%s: pinned %q, want %q", c.src, ad.Pinned, c.pinned)
				}
				if ref, _ := source.Parse(c.src); ref.Kind == source.KindDir {
					continue
				}
				if ad.Pinned == "" {
					t.Errorf("%s: no pinned SOURCE", c.src)
					continue
				}
				again := resolve(t, ad.Pinned, c.opts)
				if again.Identity != ad.Identity || again.Pinned != ad.Pinned {
					t.Errorf("%s: the pinned %s resolves to %s pinned %s", c.src, ad.Pinned, again.Identity, again.Pinned)
				}
			}
		})
	}
}

// TestLocalFile: a single manifest file is a one-file tree, named after
// the file, however it is written.
func TestLocalFile(t *testing.T) {
	dir := exampleDir(t, "coredns")
	file := filepath.Join(dir, "coredns.yaml")
	folder := resolve(t, oneFileFolder(t, dir, "coredns.yaml"), source.Options{})
	for _, s := range []string{file, "file://" + file} {
		ad := resolve(t, s, source.Options{})
		sameAsFolder(t, s, ad, folder)
		if ad.Config.Name != "coredns" {
			t.Errorf("%s: name %q, want coredns", s, ad.Config.Name)
		}
	}
	// A bare relative file name is a file, not a store name.
	t.Chdir(dir)
	ref, err := source.Parse("coredns.yaml")
	if err != nil || ref.Kind != source.KindDir {
		t.Fatalf("Parse(coredns.yaml) = %+v, %v; want a local file", ref, err)
	}
	sameAsFolder(t, "coredns.yaml", resolve(t, "coredns.yaml", source.Options{}), folder)
}

func TestParseRemote(t *testing.T) {
	sum := "sha256:" + strings.Repeat("ab", 32)
	for _, c := range []struct {
		in   string
		want source.Ref
		str  string
	}{
		{"https://h.example/x.yaml", source.Ref{Kind: source.KindHTTP, URL: "https://h.example/x.yaml"}, ""},
		{"https://h.example/x.tar.gz//deploy/base", source.Ref{Kind: source.KindHTTP, URL: "https://h.example/x.tar.gz", Subdir: "deploy/base"}, ""},
		{"https://h.example/x.tar.gz//deploy/base/?checksum=" + sum, source.Ref{Kind: source.KindHTTP, URL: "https://h.example/x.tar.gz", Subdir: "deploy/base", Checksum: sum},
			"https://h.example/x.tar.gz//deploy/base?checksum=" + sum},
		{"https://h.example/dl?id=3&checksum=" + strings.ToUpper(sum[7:]) + "&x=y", source.Ref{}, "bad"},
		{"https://h.example/dl?id=3&checksum=" + sum + "&x=y", source.Ref{Kind: source.KindHTTP, URL: "https://h.example/dl?id=3&x=y", Checksum: sum},
			"https://h.example/dl?id=3&x=y&checksum=" + sum},
		{"http://127.0.0.1:8080/a.zip", source.Ref{Kind: source.KindHTTP, URL: "http://127.0.0.1:8080/a.zip"}, ""},
		{"https://u:secret@h.example/a.yaml", source.Ref{Kind: source.KindHTTP, URL: "https://u:secret@h.example/a.yaml"}, "https://h.example/a.yaml"},
		{"git+https://h.example/org/repo.git//sub/dir?ref=v1.2", source.Ref{Kind: source.KindGit, URL: "https://h.example/org/repo.git", Subdir: "sub/dir", GitRef: "v1.2"}, ""},
		{"git+https://tok@h.example/org/repo.git", source.Ref{Kind: source.KindGit, URL: "https://tok@h.example/org/repo.git"}, "git+https://h.example/org/repo.git"},
		{"git+ssh://git@h.example/org/repo.git?ref=main", source.Ref{Kind: source.KindGit, URL: "ssh://git@h.example/org/repo.git", GitRef: "main"}, ""},
		{"git+file:///srv/repo//a?ref=feature/x", source.Ref{Kind: source.KindGit, URL: "file:///srv/repo", Subdir: "a", GitRef: "feature/x"}, ""},
		{"https://h.example/x.tar.gz//../etc", source.Ref{}, "bad"},
		{"https://h.example/x?checksum=md5:00", source.Ref{}, "bad"},
		{"https:///x.yaml", source.Ref{}, "bad"},
		{"git+https://h.example/r.git?ref=", source.Ref{}, "bad"},
		{"git+https://h.example/r.git?depth=1", source.Ref{}, "bad"},
		{"git+https://h.example/r.git?ref=a..b", source.Ref{}, "bad"},
		{"git+ftp://h.example/r.git", source.Ref{}, "bad"},
		{"git+file://", source.Ref{}, "bad"},
		{"file://", source.Ref{}, "bad"},
	} {
		ref, err := source.Parse(c.in)
		if c.str == "bad" {
			if err == nil {
				t.Errorf("Parse(%q) = %+v, want an error", c.in, ref)
			}
			continue
		}
		if err != nil {
			t.Errorf("Parse(%q): %v", c.in, err)
			continue
		}
		if ref != c.want {
			t.Errorf("Parse(%q) = %+v, want %+v", c.in, ref, c.want)
		}
		str := c.str
		if str == "" {
			str = c.in
		}
		if ref.String() != str {
			t.Errorf("Parse(%q).String() = %q, want %q", c.in, ref.String(), str)
		}
		if again, err := source.Parse(ref.String()); err != nil || again.String() != ref.String() {
			t.Errorf("Parse(%q) does not round-trip: %+v, %v", ref.String(), again, err)
		}
	}
}

// remote are the opt-in locations, which the command line lists.
var remote = []source.Location{sourcegit.Location{}, sourcehttps.Location{}}

// withGit lists the git and https locations in opts, as the command line
// does.
func withGit(opts source.Options) source.Options {
	if opts.Locations == nil {
		opts.Locations = remote
	}
	return opts
}
