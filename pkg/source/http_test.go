package source_test

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/addonpkg/addonpkg/internal/netguard"
	"github.com/addonpkg/addonpkg/pkg/registry"
	"github.com/addonpkg/addonpkg/pkg/safetree"
	"github.com/addonpkg/addonpkg/pkg/source"
	"github.com/addonpkg/addonpkg/pkg/unpack"
)

// httpFixture is a TLS server on 127.0.0.1 serving examples as YAML files
// and archives, and misbehaving in the ways a download can.
type httpFixture struct {
	srv   *httptest.Server
	opts  source.Options
	files map[string][]byte
}

func (f *httpFixture) url(p string) string { return f.srv.URL + p }

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(s[:])
}

func newHTTPFixture(t *testing.T) *httpFixture {
	t.Helper()
	stop := make(chan struct{})
	coredns := exampleDir(t, "coredns")
	ms := exampleDir(t, "metrics-server")
	corednsYAML, err := os.ReadFile(filepath.Join(coredns, "coredns.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	bundle := []subtree{{"bundle/coredns/", coredns}, {"bundle/metrics-server/", ms}, {"bundle/", exampleDir(t, "gateway-api-crds")}}
	f := &httpFixture{files: map[string][]byte{
		"/coredns.yaml":    corednsYAML,
		"/coredns":         corednsYAML,
		"/coredns.tar.gz":  tarOf(t, true, subtree{"", coredns}),
		"/ms.tar.gz":       tarOf(t, true, subtree{"", ms}),
		"/ms.tgz":          tarOf(t, true, subtree{"./", ms}),
		"/ms.tar":          tarOf(t, false, subtree{"", ms}),
		"/ms.zip":          zipOf(t, subtree{"", ms}),
		"/release":         tarOf(t, true, subtree{"", ms}), // no extension: sniffed
		"/bundle.tar.gz":   tarOf(t, true, bundle...),
		"/bundle.zip":      zipOf(t, bundle...),
		"/text.tar.gz":     []byte("this is not an archive\n"),
		"/text.zip":        []byte("neither is this\n"),
		"/binary.yaml":     {0x00, 0x01, 0x02, 0xff},
		"/empty.yaml":      {},
		"/evil-dotdot.tar": rawTar(t, &tar.Header{Name: "../evil.yaml", Typeflag: tar.TypeReg, Mode: 0o644, Size: 3}, "a: "),
		"/evil-abs.tar":    rawTar(t, &tar.Header{Name: "/etc/evil.yaml", Typeflag: tar.TypeReg, Mode: 0o644, Size: 3}, "a: "),
		"/evil-link.tar":   rawTar(t, &tar.Header{Name: "link.yaml", Typeflag: tar.TypeSymlink, Linkname: "../../etc/passwd"}, ""),
		"/evil-hard.tar":   rawTar(t, &tar.Header{Name: "hard.yaml", Typeflag: tar.TypeLink, Linkname: "/etc/passwd"}, ""),
		"/evil-dev.tar":    rawTar(t, &tar.Header{Name: "null", Typeflag: tar.TypeChar, Devmajor: 1, Devminor: 3}, ""),
		// GNU tar --format=posix --sparse: a regular entry whose
		// GNU.sparse.* records (renamed after Go's writer, which refuses
		// them) make it a 1 MiB file of holes.
		"/evil-sparse.tar": bytes.ReplaceAll(rawTar(t, &tar.Header{Name: "holes.yaml", Typeflag: tar.TypeReg, Mode: 0o644, Size: 1, Format: tar.FormatPAX,
			PAXRecords: map[string]string{"GNU_sparse_map": "1048575,1", "GNU_sparse_size": "1048576", "GNU_sparse_numblocks": "1"}}, "x"),
			[]byte("GNU_sparse_"), []byte("GNU.sparse.")),
		"/evil-slip.zip":   rawZip(t, `..\..\evil.yaml`, "a: b"),
		"/big-file.tar.gz": tarOfFile(t, "big.yaml", bytes.Repeat([]byte("#"), 4096)),
	}}
	// xz, bzip2 and zstd, as tar -J, -j and --zstd write them (xz and
	// bzip2 by the real tools): they were refused as "binary data".
	xz := func(w io.Writer) io.WriteCloser { return pipeTo(t, w, "xz", "-c") }
	bz2 := func(w io.Writer) io.WriteCloser { return pipeTo(t, w, "bzip2", "-c") }
	zst := func(w io.Writer) io.WriteCloser { zw, _ := zstd.NewWriter(w); return zw }
	msTar := tarOf(t, false, subtree{"", ms})
	for p, c := range map[string]func(io.Writer) io.WriteCloser{
		"/ms.tar.xz": xz, "/ms.txz": xz, "/release-xz": xz,
		"/ms.tar.bz2": bz2, "/ms.tbz2": bz2, "/release-bz2": bz2,
		"/ms.tar.zst": zst,
	} {
		f.files[p] = compressBytes(t, msTar, c)
	}
	f.files["/gzip.tar.xz"] = f.files["/ms.tar.gz"]
	f.files["/text.tar.bz2"] = []byte("this is not an archive\n")
	f.files["/text.tzst"] = []byte("this is not an archive\n")
	bigDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(bigDir, "big.yaml"), bytes.Repeat([]byte("#"), 4096), 0o644); err != nil {
		t.Fatal(err)
	}
	bigTar := tarOf(t, false, subtree{"", bigDir})
	f.files["/big-file.tar.xz"] = compressBytes(t, bigTar, xz)
	f.files["/big-file.tar.bz2"] = compressBytes(t, bigTar, bz2)
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		b, ok := f.files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Write(b)
	})
	mux.HandleFunc("/page.tar.gz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, "<!DOCTYPE html>\n<html><head><title>Sign in</title></head><body>Sign in to continue</body></html>\n")
	})
	mux.HandleFunc("/page.yaml", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<html><body>Not here</body></html>")
	})
	mux.HandleFunc("/big.yaml", func(w http.ResponseWriter, r *http.Request) {
		w.Write(bytes.Repeat([]byte("# padding\n"), 1000))
	})
	mux.HandleFunc("/big-chunked.yaml", func(w http.ResponseWriter, r *http.Request) {
		for range 100 {
			w.Write(bytes.Repeat([]byte("# padding\n"), 10))
			w.(http.Flusher).Flush()
		}
	})
	mux.HandleFunc("/stall.yaml", func(w http.ResponseWriter, r *http.Request) {
		// Take the connection so that no response is ever sent: a handler
		// that just returned when its request context ended (which net/http
		// may do early on a busy machine) would send an empty 200.
		conn, _, err := w.(http.Hijacker).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		select {
		case <-stop:
		case <-time.After(30 * time.Second):
		}
	})
	mux.HandleFunc("/stall-body.tar.gz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "100000")
		w.Write([]byte{0x1f, 0x8b})
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	mux.HandleFunc("/stall-chunked.yaml", func(w http.ResponseWriter, r *http.Request) {
		// A chunked body: one chunk, then nothing.
		conn, bw, err := w.(http.Hijacker).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		bw.WriteString("HTTP/1.1 200 OK\r\nContent-Type: application/yaml\r\nTransfer-Encoding: chunked\r\n\r\n6\r\na: b\n\n\r\n")
		bw.Flush()
		select {
		case <-stop:
		case <-time.After(30 * time.Second):
		}
	})
	mux.HandleFunc("/private/coredns.yaml", func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != "alice" || p != "s3cret" {
			w.Header().Set("WWW-Authenticate", `Basic realm="test"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		w.Write(corednsYAML)
	})
	mux.HandleFunc("/moved/coredns.yaml", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/coredns.yaml", http.StatusFound)
	})
	mux.HandleFunc("/downgrade.yaml", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://198.51.100.7/coredns.yaml", http.StatusFound)
	})
	f.srv = httptest.NewUnstartedServer(mux)
	f.srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the ca-file test fails handshakes on purpose
	f.srv.StartTLS()
	t.Cleanup(f.srv.Close)
	t.Cleanup(func() { close(stop) }) // runs first: releases the stalled handlers
	f.opts = source.Options{Locations: remote,
		HTTPClient: f.srv.Client(),
		Timeout:    20 * time.Second,
		Netrc:      filepath.Join(t.TempDir(), "no-netrc"),
	}
	return f
}

func rawTar(t testing.TB, hdr *tar.Header, data string) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	ok := &tar.Header{Name: "ok.yaml", Typeflag: tar.TypeReg, Mode: 0o644, Size: 9}
	if err := tw.WriteHeader(ok); err != nil {
		t.Fatal(err)
	}
	tw.Write([]byte("a: b\nc: d"))
	if err := tw.WriteHeader(hdr); err != nil {
		t.Fatal(err)
	}
	tw.Write([]byte(data))
	tw.Close()
	return buf.Bytes()
}

func tarOfFile(t testing.TB, name string, data []byte) []byte {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
		t.Fatal(err)
	}
	return tarOf(t, true, subtree{"", dir})
}

func rawZip(t testing.TB, name, data string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, err := zw.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte(data))
	zw.Close()
	return buf.Bytes()
}

func TestHTTPSources(t *testing.T) {
	f := newHTTPFixture(t)
	ms := resolve(t, exampleDir(t, "metrics-server"), source.Options{Locations: remote})
	coredns := resolve(t, exampleDir(t, "coredns"), source.Options{Locations: remote})
	// A download of coredns.yaml is that one file, without the folder's
	// .addonvalues.
	corednsFile := resolve(t, oneFileFolder(t, exampleDir(t, "coredns"), "coredns.yaml"), source.Options{Locations: remote})

	t.Run("yaml", func(t *testing.T) {
		ad := resolve(t, f.url("/coredns.yaml"), f.opts)
		sameAsFolder(t, "yaml", ad, corednsFile)
		body := f.files["/coredns.yaml"]
		if want := f.url("/coredns.yaml") + "?checksum=" + sha(body); ad.Pinned != want {
			t.Errorf("pinned %q, want %q", ad.Pinned, want)
		}
		if ad.Digest.String() != sha(body) {
			t.Errorf("digest %s, want the body's %s", ad.Digest, sha(body))
		}
		if ad.Config.Source != f.url("/coredns.yaml") || ad.Config.Name != "coredns" {
			t.Errorf("config source %q name %q", ad.Config.Source, ad.Config.Name)
		}
		if _, err := ad.FS.Stat("coredns.yaml"); err != nil {
			t.Errorf("the tree is not one file named coredns.yaml: %v", fileList(ad))
		}
	})
	t.Run("archives", func(t *testing.T) {
		for _, p := range []string{"/ms.tar.gz", "/ms.tgz", "/ms.tar", "/ms.zip", "/release",
			"/ms.tar.xz", "/ms.txz", "/release-xz", "/ms.tar.bz2", "/ms.tbz2", "/release-bz2", "/ms.tar.zst"} {
			ad := resolve(t, f.url(p), f.opts)
			sameAsFolder(t, p, ad, ms)
			if strings.HasPrefix(p, "/ms.") && ad.Config.Name != "ms" {
				t.Errorf("%s: named %q, want ms", p, ad.Config.Name)
			}
			if want := f.url(p) + "?checksum=" + sha(f.files[p]); ad.Pinned != want {
				t.Errorf("%s: pinned %q, want %q", p, ad.Pinned, want)
			}
		}
	})
	t.Run("subdir", func(t *testing.T) {
		for _, p := range []string{"/bundle.tar.gz", "/bundle.zip"} {
			sameAsFolder(t, p, resolve(t, f.url(p+"//bundle/metrics-server"), f.opts), ms)
			sameAsFolder(t, p, resolve(t, f.url(p+"//bundle/coredns/"), f.opts), coredns)
			ad := resolve(t, f.url(p+"//bundle/metrics-server/base"), f.opts)
			if ad.Config.Name != "base" || ad.ContentDir != "/bundle/metrics-server/base" {
				t.Errorf("%s: name %q content dir %q", p, ad.Config.Name, ad.ContentDir)
			}
			want := f.url(p) + "//bundle/metrics-server/base?checksum=" + sha(f.files[p])
			if ad.Pinned != want {
				t.Errorf("pinned %q, want %q", ad.Pinned, want)
			}
		}
	})
	t.Run("checksum", func(t *testing.T) {
		good := f.url("/ms.tar.gz?checksum=" + sha(f.files["/ms.tar.gz"]))
		sameAsFolder(t, "checksum", resolve(t, good, f.opts), ms)
		bad := f.url("/ms.tar.gz?checksum=" + sha([]byte("other")))
		err := resolveErr(t, bad, f.opts)
		checkOneLine(t, err, f.url("/ms.tar.gz"), "checksum mismatch", sha(f.files["/ms.tar.gz"]))
	})
	t.Run("redirect", func(t *testing.T) {
		sameAsFolder(t, "redirect", resolve(t, f.url("/moved/coredns.yaml"), f.opts), corednsFile)
		err := resolveErr(t, f.url("/downgrade.yaml"), f.opts)
		checkOneLine(t, err, f.url("/downgrade.yaml"), "plain http")
	})
	t.Run("netrc", func(t *testing.T) {
		u := f.url("/private/coredns.yaml")
		checkOneLine(t, resolveErr(t, u, f.opts), u, "HTTP 401 Unauthorized")
		netrc := filepath.Join(t.TempDir(), "netrc")
		os.WriteFile(netrc, []byte("machine other.example login x password y\n\nmachine 127.0.0.1\n  login alice\n  password s3cret\n"), 0o600)
		opts := f.opts
		opts.Netrc = netrc
		sameAsFolder(t, "netrc", resolve(t, u, opts), corednsFile)
		// Credentials in the URL work, and never show.
		withUser := strings.Replace(u, "https://", "https://alice:s3cret@", 1)
		ad := resolve(t, withUser, f.opts)
		if strings.Contains(ad.Pinned, "s3cret") || strings.Contains(ad.Config.Source, "s3cret") {
			t.Errorf("credentials leak: pinned %q source %q", ad.Pinned, ad.Config.Source)
		}
	})
	t.Run("ca-file", func(t *testing.T) {
		ca := filepath.Join(t.TempDir(), "ca.pem")
		os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: f.srv.Certificate().Raw}), 0o644)
		opts := source.Options{Locations: remote, Registry: registry.Options{CAFile: ca}, Timeout: 20 * time.Second}
		sameAsFolder(t, "ca-file", resolve(t, f.url("/coredns.yaml"), opts), corednsFile)
		// Without it the certificate is unknown.
		err := resolveErr(t, f.url("/coredns.yaml"), source.Options{Locations: remote, Timeout: 20 * time.Second})
		checkOneLine(t, err, f.url("/coredns.yaml"), "certificate")
	})
	t.Run("plain-http", func(t *testing.T) {
		plain := httptest.NewServer(f.srv.Config.Handler)
		defer plain.Close()
		sameAsFolder(t, "loopback http", resolve(t, plain.URL+"/coredns.yaml", source.Options{Locations: remote, Timeout: 20 * time.Second}), corednsFile)
		u := "http://198.51.100.7/coredns.yaml"
		checkOneLine(t, resolveErr(t, u, source.Options{Locations: remote}), u, "plain http:// to 198.51.100.7 is refused")
	})
}

func TestHTTPBadInputs(t *testing.T) {
	f := newHTTPFixture(t)
	small := f.opts
	small.MaxDownloadBytes = 1024
	quick := f.opts
	quick.Timeout = time.Second
	tiny := safetree.Limits{MaxFileBytes: 1024}
	for _, c := range []struct {
		name, path string
		opts       source.Options
		wants      []string
		is         error
	}{
		{"404", "/missing.tar.gz", f.opts, []string{"HTTP 404 Not Found"}, nil},
		{"html archive", "/page.tar.gz", f.opts, []string{"got an HTML page, not a .tar.gz archive"}, nil},
		{"html yaml", "/page.yaml", f.opts, []string{"got an HTML page, not a YAML file"}, nil},
		{"not an archive", "/text.tar.gz", f.opts, []string{"not a .tar.gz archive: the body is text"}, nil},
		{"not a zip", "/text.zip", f.opts, []string{"not a .zip archive"}, nil},
		{"not an xz archive", "/gzip.tar.xz", f.opts, []string{"not a .tar.xz archive: the body is gzip data"}, nil},
		{"not a bzip2 archive", "/text.tar.bz2", f.opts, []string{"not a .tar.bz2 archive: the body is text"}, nil},
		{"not a zstd archive, by its short name", "/text.tzst", f.opts, []string{"not a .tar.zst archive: the body is text"}, nil},
		{"binary yaml", "/binary.yaml", f.opts, []string{"not a YAML file: the body is binary data"}, nil},
		{"empty", "/empty.yaml", f.opts, []string{"the body is empty"}, nil},
		{"too large", "/big.yaml", small, []string{"download size limit of 1024 exceeded"}, safetree.ErrLimit},
		{"too large chunked", "/big-chunked.yaml", small, []string{"download size limit of 1024 exceeded"}, safetree.ErrLimit},
		{"stall", "/stall.yaml", quick, []string{"timed out after 1s"}, netguard.ErrIdleTimeout},
		{"stall in body", "/stall-body.tar.gz", quick, []string{"timed out after 1s"}, netguard.ErrIdleTimeout},
		{"stall in chunked body", "/stall-chunked.yaml", quick, []string{"timed out after 1s"}, netguard.ErrIdleTimeout},
		{"missing subdir", "/bundle.tar.gz//bundle/nope", f.opts, []string{"no directory bundle/nope in the archive"}, nil},
		{"subdir is a file", "/bundle.zip//bundle/kustomization.yaml", f.opts, []string{"bundle/kustomization.yaml in the archive is a file"}, nil},
		{"subdir of a yaml", "/coredns.yaml//x", f.opts, []string{"not an archive"}, nil},
		{"dotdot", "/evil-dotdot.tar", f.opts, []string{"path climbs out"}, safetree.ErrUnsafe},
		{"absolute", "/evil-abs.tar", f.opts, []string{"absolute path"}, safetree.ErrUnsafe},
		{"symlink out", "/evil-link.tar", f.opts, []string{"leads out of the tree"}, safetree.ErrUnsafe},
		{"hardlink out", "/evil-hard.tar", f.opts, []string{"hardlink"}, safetree.ErrUnsafe},
		{"device", "/evil-dev.tar", f.opts, []string{"device"}, safetree.ErrUnsafe},
		{"GNU sparse file in the PAX format", "/evil-sparse.tar", f.opts, []string{"holes.yaml", "sparse"}, safetree.ErrUnsupportedType},
		{"zip slip", "/evil-slip.zip", f.opts, []string{"path climbs out"}, safetree.ErrUnsafe},
	} {
		t.Run(c.name, func(t *testing.T) {
			u := f.url(c.path)
			start := time.Now()
			err := resolveErr(t, u, c.opts)
			base, _, _ := strings.Cut(u, "//bundle")
			base, _, _ = strings.Cut(base, "//x")
			checkOneLine(t, err, base, c.wants...)
			if c.is != nil && !errors.Is(err, c.is) {
				t.Errorf("error is not %v: %v", c.is, err)
			}
			if c.opts.Timeout == time.Second && time.Since(start) > 5*time.Second {
				t.Errorf("a 1s timeout took %v", time.Since(start))
			}
		})
	}
	// The limits are the same whatever the archive's compression.
	for _, p := range []string{"/big-file.tar.gz", "/big-file.tar.xz", "/big-file.tar.bz2"} {
		t.Run("file over the unpack limit "+p, func(t *testing.T) {
			u := f.url(p)
			ref, _ := source.Parse(u)
			_, err := source.Unpack(t.Context(), ref, f.opts, unpack.Options{Limits: tiny})
			var le *safetree.LimitError
			if !errors.As(err, &le) || le.Name != "file size" {
				t.Fatalf("want a file size limit error, got %v", err)
			}
			checkOneLine(t, err, u, "file size limit")
			if le.Which != safetree.LimitFileBytes {
				t.Errorf("LimitError.Which = %q, want %q", le.Which, safetree.LimitFileBytes)
			}
			_, err = source.Unpack(t.Context(), ref, f.opts, unpack.Options{Limits: safetree.Limits{MaxImageBytes: 2048}})
			if !errors.As(err, &le) || le.Which != safetree.LimitImageBytes {
				t.Errorf("over the decompressed size limit: %v, want a %s limit error", err, safetree.LimitImageBytes)
			}
		})
	}
	t.Run("unreachable", func(t *testing.T) {
		u := "https://" + closedPort(t) + "/coredns.yaml"
		checkOneLine(t, resolveErr(t, u, f.opts), u, "connection refused")
	})
}
