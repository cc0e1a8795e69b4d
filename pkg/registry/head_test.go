package registry_test

import (
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	ggcrregistry "github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"

	"github.com/addonpkg/addonpkg/pkg/registry"
)

// headAnswer rewrites a registry's answers to HEAD of a manifest, and
// counts the GETs of manifests.
type headAnswer struct {
	h      http.Handler
	answer func(w http.ResponseWriter, rec *httptest.ResponseRecorder)
	gets   atomic.Int32
}

func (a *headAnswer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !strings.Contains(r.URL.Path, "/manifests/") {
		a.h.ServeHTTP(w, r)
		return
	}
	if r.Method == http.MethodGet {
		a.gets.Add(1)
	}
	if r.Method != http.MethodHead || a.answer == nil {
		a.h.ServeHTTP(w, r)
		return
	}
	rec := httptest.NewRecorder()
	a.h.ServeHTTP(rec, r)
	a.answer(w, rec)
}

// without answers as the registry did, but for the header named.
func without(header string) func(http.ResponseWriter, *httptest.ResponseRecorder) {
	return func(w http.ResponseWriter, rec *httptest.ResponseRecorder) {
		for k, v := range rec.Header() {
			if k != header {
				w.Header()[k] = v
			}
		}
		w.WriteHeader(rec.Code)
	}
}

func status(code int) func(http.ResponseWriter, *httptest.ResponseRecorder) {
	return func(w http.ResponseWriter, _ *httptest.ResponseRecorder) { w.WriteHeader(code) }
}

// Head gives the manifest's descriptor whether or not the registry's
// answer to HEAD carries the optional Docker-Content-Digest header (or
// allows HEAD at all), asking with GET only when HEAD's answer cannot
// give it; a status that GET would only repeat is HEAD's error.
func TestHeadWithoutDigestHeader(t *testing.T) {
	img, err := random.Image(64, 1)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := img.Digest()
	for _, tc := range []struct {
		name   string
		answer func(http.ResponseWriter, *httptest.ResponseRecorder)
		gets   int32 // GETs of the manifest
		status int   // the error's status; 0: no error
	}{
		{"as the registry answers", nil, 0, 0},
		{"without Docker-Content-Digest", without("Docker-Content-Digest"), 1, 0},
		{"without Content-Type", without("Content-Type"), 1, 0},
		{"HEAD not allowed", status(http.StatusMethodNotAllowed), 1, 0},
		{"unauthorized", status(http.StatusUnauthorized), 0, http.StatusUnauthorized},
		{"not found", status(http.StatusNotFound), 0, http.StatusNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := &headAnswer{h: ggcrregistry.New(ggcrregistry.Logger(log.New(io.Discard, "", 0)))}
			srv := httptest.NewServer(a)
			defer srv.Close()
			o := registry.Options{Retries: -1}
			ref, err := o.ParseReference(strings.TrimPrefix(srv.URL, "http://") + "/addons/x:1")
			if err != nil {
				t.Fatal(err)
			}
			ropts, err := o.Remote(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if err := remote.Write(ref, img, ropts...); err != nil {
				t.Fatal(err)
			}
			a.answer = tc.answer
			d, err := registry.Head(t.Context(), ref, ropts...)
			if tc.status != 0 {
				var te *transport.Error
				if !errors.As(err, &te) || te.StatusCode != tc.status {
					t.Fatalf("Head: %v, want the registry's %d", err, tc.status)
				}
			} else if err != nil {
				t.Fatalf("Head: %v", err)
			} else if d.Digest != want {
				t.Fatalf("Head: digest %s, want %s", d.Digest, want)
			}
			if got := a.gets.Load(); got != tc.gets {
				t.Errorf("%d GETs of the manifest, want %d", got, tc.gets)
			}
		})
	}
}
