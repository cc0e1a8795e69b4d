package source_test

import (
	"archive/tar"
	"bytes"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/addonpkg/addonpkg/pkg/registry"
	"github.com/addonpkg/addonpkg/pkg/safetree"
	"github.com/addonpkg/addonpkg/pkg/source"
	"github.com/addonpkg/addonpkg/pkg/unpack"
)

// chainTar is the review's symlink chain: each link's text stays inside
// the tree, followed together they reach /etc/passwd.
func chainTar(t testing.TB) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, h := range []*tar.Header{
		{Name: "ok.yaml", Typeflag: tar.TypeReg, Mode: 0o644, Size: 9},
		{Name: "a/b/c/d/", Typeflag: tar.TypeDir, Mode: 0o755},
		{Name: "a/b/c/d/up", Typeflag: tar.TypeSymlink, Linkname: "../.."},
		{Name: "passwd.yaml", Typeflag: tar.TypeSymlink, Linkname: "a/b/c/d/up/../../../../etc/passwd"},
	} {
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Size > 0 {
			tw.Write([]byte("a: b\nc: d"))
		}
	}
	tw.Close()
	return buf.Bytes()
}

// Issue 11, finding 4, for tree sources: an http archive's links are
// judged through each other, as an image's are.
func TestHTTPSymlinkChain(t *testing.T) {
	body := chainTar(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write(body) }))
	defer srv.Close()
	u := srv.URL + "/chain.tar"
	err := resolveErr(t, u, source.Options{Locations: remote, Timeout: 20 * time.Second})
	if !errors.Is(err, safetree.ErrLinkEscape) {
		t.Fatalf("got %v, want ErrLinkEscape", err)
	}
	checkOneLine(t, err, u, "passwd.yaml", "outside the tree")
}

// An http source's requests are logged like a registry's (--verbose),
// with the URL's credentials left out.
func TestHTTPSourceLogsRequests(t *testing.T) {
	body := []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write(body) }))
	defer srv.Close()
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	u := strings.Replace(srv.URL, "http://", "http://alice:s3cret@", 1) + "/cm.yaml"
	ref, err := source.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := source.Unpack(t.Context(), ref, source.Options{Locations: remote, Registry: registry.Options{Logger: log}, Timeout: 20 * time.Second}, unpack.Options{}); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	if !strings.Contains(out, "> GET "+srv.URL+"/cm.yaml") || !strings.Contains(out, "< 200 OK GET") {
		t.Errorf("request lines missing:\n%s", out)
	}
	if strings.Contains(out, "s3cret") || strings.Contains(out, "alice") {
		t.Errorf("credentials logged:\n%s", out)
	}
}

// An archive or commit holding an Emacs lock file (.#a.yaml, a link that
// leads nowhere, left out by the default ignore rules) reads as the
// folder it was made from does: the link is left out, not refused as
// broken.
func TestTreeIgnoredDanglingLink(t *testing.T) {
	tb := source.NewTreeBuilder("the archive", "", safetree.Limits{}.WithDefaults())
	if err := tb.File("a.yaml", "a.yaml", []byte("a: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := tb.Symlink(".#a.yaml", ".#a.yaml", "user@host.1234:1700000000"); err != nil {
		t.Fatal(err)
	}
	fsys, err := tb.Done()
	if err != nil {
		t.Fatal(err)
	}
	entries, err := fsys.ReadDir(".")
	if err != nil || len(entries) != 1 || entries[0].Name() != "a.yaml" {
		t.Errorf("tree: %v, %v; want a.yaml alone", entries, err)
	}
}
