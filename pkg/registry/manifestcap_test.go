package registry

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/addonpkg/addonpkg/pkg/safetree"
)

// A manifest over the index cap is refused with a *safetree.LimitError
// naming it: by its Content-Length before the body is read, and by its
// bytes when it is chunked. Blobs and smaller manifests pass untouched.
func TestManifestCap(t *testing.T) {
	big := bytes.Repeat([]byte("a"), safetree.DefaultMaxIndexBytes+1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v2/x/manifests/sized", "/v2/x/blobs/sha256:big":
			w.Write(big)
		case "/v2/x/manifests/chunked":
			for i := 0; i < len(big); i += 1 << 20 {
				w.Write(big[i:min(i+1<<20, len(big))])
				w.(http.Flusher).Flush()
			}
		case "/v2/x/manifests/small":
			w.Write([]byte("{}"))
		}
	}))
	defer srv.Close()
	c := &http.Client{Transport: manifestCap{http.DefaultTransport}}
	get := func(path string) ([]byte, error) {
		resp, err := c.Get(srv.URL + path)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		return io.ReadAll(resp.Body)
	}
	for _, p := range []string{"/v2/x/manifests/sized", "/v2/x/manifests/chunked"} {
		b, err := get(p)
		var le *safetree.LimitError
		if !errors.As(err, &le) || le.Which != safetree.LimitIndexBytes {
			t.Errorf("%s: %d bytes, %v; want the limit error", p, len(b), err)
		}
	}
	if b, err := get("/v2/x/manifests/small"); err != nil || string(b) != "{}" {
		t.Errorf("small manifest: %q %v", b, err)
	}
	if b, err := get("/v2/x/blobs/sha256:big"); err != nil || len(b) != len(big) {
		t.Errorf("blob: %d bytes, %v", len(b), err)
	}
}

// A page of tags and a referrers index are capped as a manifest is: an
// endless tag list grew addonpkg ls by about 80 MB a second.
func TestTagListAndReferrersCapped(t *testing.T) {
	var asked atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v2/" {
			return
		}
		asked.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"name":"x","tags":[`))
		tag := []byte(`"` + string(bytes.Repeat([]byte("a"), 100)) + `",`)
		// Past the cap (a client that stops reading is not waited for).
		for i := 0; i < 200_000; i++ {
			if _, err := w.Write(tag); err != nil {
				return
			}
		}
	}))
	defer srv.Close()
	defer srv.CloseClientConnections()
	o := Options{}
	ropts, err := o.Remote(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	repo, err := o.ParseRepository(strings.TrimPrefix(srv.URL, "http://") + "/x")
	if err != nil {
		t.Fatal(err)
	}
	tags, err := remote.List(repo, ropts...)
	var le *safetree.LimitError
	if !errors.As(err, &le) || le.Which != safetree.LimitIndexBytes {
		t.Errorf("tag list: %d tags, %v; want the limit error", len(tags), err)
	}
	// A body over the cap is not asked for again: it would be refused again.
	if n := asked.Load(); n != 1 {
		t.Errorf("tag list over the cap: asked %d times, want once", n)
	}
	d := repo.Digest("sha256:" + strings.Repeat("0", 64))
	if _, err := remote.Referrers(d, ropts...); !errors.As(err, &le) {
		t.Errorf("referrers: %v; want the limit error", err)
	}
}
