package source_test

import (
	"context"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	ggcrregistry "github.com/google/go-containerregistry/pkg/registry"

	"github.com/addonpkg/addonpkg/pkg/build"
	"github.com/addonpkg/addonpkg/pkg/source"
	"github.com/addonpkg/addonpkg/pkg/transfer"
)

// noDigestOnHead answers HEAD of a manifest without the
// Docker-Content-Digest header, which the distribution spec makes
// optional.
type noDigestOnHead struct{ h http.Handler }

func (s noDigestOnHead) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodHead || !strings.Contains(r.URL.Path, "/manifests/") {
		s.h.ServeHTTP(w, r)
		return
	}
	rec := httptest.NewRecorder()
	s.h.ServeHTTP(rec, r)
	for k, v := range rec.Header() {
		if k != "Docker-Content-Digest" {
			w.Header()[k] = v
		}
	}
	w.WriteHeader(rec.Code)
}

// A registry whose answers to HEAD carry no Docker-Content-Digest takes
// a push (checked after it) and serves a pull by tag, pinned to the
// pushed digest.
func TestRegistryWithoutDigestOnHead(t *testing.T) {
	ctx := context.Background()
	srv := httptest.NewServer(noDigestOnHead{ggcrregistry.New(ggcrregistry.Logger(log.New(io.Discard, "", 0)))})
	t.Cleanup(srv.Close)
	host := strings.TrimPrefix(srv.URL, "http://")
	res := buildExample(t, build.Options{Name: "coredns"})
	src := host + "/addons/coredns:1"
	pinned := host + "/addons/coredns@" + res.Digest.String()
	dst, err := source.Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	got, err := transfer.Write(ctx, &source.Artifact{Image: res.Image, Digest: res.Digest}, dst, transfer.Options{})
	if err != nil {
		t.Fatalf("push %s: %v", src, err)
	}
	if got.Reference != pinned {
		t.Errorf("push: %s, want %s", got.Reference, pinned)
	}
	ad := resolve(t, src, source.Options{})
	if ad.Pinned != pinned {
		t.Errorf("pull %s: pinned %s, want %s", src, ad.Pinned, pinned)
	}
}
