package source_test

import (
	"archive/tar"
	"bytes"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/addonpkg/addonpkg/pkg/safetree"
	"github.com/addonpkg/addonpkg/pkg/source"
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
	err := resolveErr(t, u, source.Options{Timeout: 20 * time.Second})
	if !errors.Is(err, safetree.ErrLinkEscape) {
		t.Fatalf("got %v, want ErrLinkEscape", err)
	}
	checkOneLine(t, err, u, "passwd.yaml", "outside the tree")
}
