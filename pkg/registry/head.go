package registry

import (
	"context"
	"errors"
	"net/http"
	"net/url"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
)

// Head is the descriptor of the manifest ref names (its digest, size and
// media type), asked with HEAD and, when the registry's answer to HEAD
// cannot give it, with a GET of the manifest, whose digest is that of
// its bytes.
//
// go-containerregistry's remote.Head fails on a 200 without a
// Docker-Content-Digest, Content-Type or Content-Length header; the
// distribution spec makes Docker-Content-Digest optional ("clients SHOULD
// NOT depend on" it), and registries serving static files or behind
// some proxies leave it out, or refuse HEAD (405). A tag could then be
// neither pulled nor checked after a push, though a GET serves it. Any
// other status (401, 404, 5xx, after the retries) and a request that
// did not get an answer are the error of HEAD, not tried again by GET.
func Head(ctx context.Context, ref name.Reference, opts ...remote.Option) (*v1.Descriptor, error) {
	d, err := remote.Head(ref, opts...)
	if err == nil || !headUnusable(ctx, err) {
		return d, err
	}
	desc, err := remote.Get(ref, opts...)
	if err != nil {
		return nil, err
	}
	return &desc.Descriptor, nil
}

// headUnusable reports whether err is a registry's answer to HEAD that a
// GET may do better with: HEAD refused as a method, or a 200 without the
// headers remote.Head reads.
func headUnusable(ctx context.Context, err error) bool {
	if ctx.Err() != nil {
		return false
	}
	var te *transport.Error
	if errors.As(err, &te) {
		return te.StatusCode == http.StatusMethodNotAllowed
	}
	// No answer at all (refused, reset, timed out): GET would fare no
	// better, and costs the retries again.
	var ue *url.Error
	return !errors.As(err, &ue) && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded)
}
