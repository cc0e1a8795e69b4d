package registry

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

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
