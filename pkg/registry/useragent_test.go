package registry

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// Every request says who it is: addonpkg/VERSION.
func TestUserAgent(t *testing.T) {
	var ua atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ua.Store(r.UserAgent())
		w.WriteHeader(http.StatusNotFound)
	}))
	defer srv.Close()
	o := Options{Keychain: authn.NewMultiKeychain(), Retries: -1}
	ref, err := o.ParseReference(strings.TrimPrefix(srv.URL, "http://") + "/x:1")
	if err != nil {
		t.Fatal(err)
	}
	ropts, err := o.Remote(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	_, _ = remote.Head(ref, ropts...)
	got, _ := ua.Load().(string)
	if !strings.HasPrefix(got, "addonpkg/"+moduleVersion()) {
		t.Errorf("user agent %q, want addonpkg/%s first", got, moduleVersion())
	}
}
