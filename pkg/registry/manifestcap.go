package registry

import (
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/addonpkg/addonpkg/pkg/safetree"
)

// manifestLimit caps a manifest or index read from a registry, which
// says which of the two it is only once it is read: the index cap of
// safetree.Limits. go-containerregistry allows 100 MiB, which a hostile
// registry could make addonpkg read and decode for nothing.
var manifestLimit = safetree.DefaultCap(safetree.LimitIndexBytes)

// manifestCap refuses a manifest response over manifestLimit, with a
// *safetree.LimitError: by its Content-Length before the body is read,
// or as soon as the body brings more. So it does a page of tags and a
// referrers index, documents of that kind that go-containerregistry
// decodes whole: a registry's endless tag list grew addonpkg ls, and
// every command whose not-found message lists the tags, by about 80 MB
// a second.
type manifestCap struct{ inner http.RoundTripper }

// documentPath reports whether a GET of path answers such a document.
func documentPath(path string) bool {
	return strings.Contains(path, "/manifests/") || strings.HasSuffix(path, "/tags/list") || strings.Contains(path, "/referrers/")
}

func (m manifestCap) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := m.inner.RoundTrip(req)
	if err != nil || req.Method != http.MethodGet || !documentPath(req.URL.Path) {
		return resp, err
	}
	if err := manifestLimit.Check("", resp.ContentLength); err != nil {
		resp.Body.Close()
		return nil, fmt.Errorf("GET %s: %w", req.URL.Redacted(), err)
	}
	resp.Body = &cappedBody{ReadCloser: resp.Body, left: manifestLimit.Max, url: req.URL.Redacted()}
	return resp, nil
}

type cappedBody struct {
	io.ReadCloser
	left int64
	url  string
}

func (c *cappedBody) Read(p []byte) (int, error) {
	if c.left <= 0 {
		// One byte more than the cap tells a body at the cap from one over it.
		var one [1]byte
		if n, _ := c.ReadCloser.Read(one[:]); n > 0 {
			return 0, fmt.Errorf("GET %s: %w", c.url, manifestLimit.Exceeded(""))
		}
		return c.ReadCloser.Read(p)
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.ReadCloser.Read(p)
	c.left -= int64(n)
	return n, err
}
