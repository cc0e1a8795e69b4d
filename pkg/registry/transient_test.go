package registry_test

import (
	"bytes"
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/addonpkg/addonpkg/internal/retry"

	"github.com/google/go-containerregistry/pkg/authn"
	ggcrregistry "github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/addonpkg/addonpkg/pkg/errdef"
	"github.com/addonpkg/addonpkg/pkg/registry"
)

// corruptingRegistry serves a registry whose blob and manifest bodies,
// fetched by digest, come with one byte changed (or one byte short),
// and counts them.
func corruptingRegistry(t *testing.T, kind, fault string) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	inner := ggcrregistry.New(ggcrregistry.Logger(log.New(io.Discard, "", 0)))
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || !strings.Contains(r.URL.Path, "/"+kind+"/sha256:") || r.Header.Get("X-Seed") != "" {
			inner.ServeHTTP(w, r)
			return
		}
		hits.Add(1)
		rec := httptest.NewRecorder()
		inner.ServeHTTP(rec, r)
		b := bytes.Clone(rec.Body.Bytes())
		switch fault {
		case "flip":
			b[len(b)/2] ^= 0xff
		case "short", "short-length":
			b = b[:len(b)-1]
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.Header().Del("Content-Length")
		if fault == "short-length" {
			// A short body under a Content-Length that says so.
			w.Header().Set("Content-Length", strconv.Itoa(len(b)))
		}
		w.WriteHeader(rec.Code)
		if fault != "short-length" {
			w.(http.Flusher).Flush() // chunked: no Content-Length
		}
		w.Write(b)
	}))
	t.Cleanup(srv.Close)
	return srv, &hits
}

// Bytes that arrive changed are reported as errdef.ErrDigestMismatch (typed: a
// library user tests for it with errors.Is), and retry.Transient says so
// without reading the message.
func TestDigestMismatchIsTyped(t *testing.T) {
	for _, c := range []struct{ kind, fault string }{
		{"blobs", "flip"}, {"blobs", "short"}, {"blobs", "short-length"}, {"manifests", "flip"},
	} {
		t.Run(c.kind+" "+c.fault, func(t *testing.T) {
			srv, hits := corruptingRegistry(t, c.kind, c.fault)
			img, err := random.Image(1024, 1)
			if err != nil {
				t.Fatal(err)
			}
			host := strings.TrimPrefix(srv.URL, "http://")
			o := registry.Options{Keychain: authn.NewMultiKeychain(), Retries: -1}
			ref, _ := o.ParseReference(host + "/addons/x:1")
			if err := remote.Write(ref, img); err != nil {
				t.Fatal(err)
			}
			d, _ := img.Digest()
			ropts, _ := o.Remote(t.Context())
			err = func() error {
				got, err := remote.Image(ref.Context().Digest(d.String()), ropts...)
				if err != nil {
					return err
				}
				layers, err := got.Layers()
				if err != nil {
					return err
				}
				rc, err := layers[0].Compressed()
				if err != nil {
					return err
				}
				defer rc.Close()
				_, err = io.Copy(io.Discard, rc)
				return err
			}()
			if hits.Load() == 0 {
				t.Fatal("nothing was corrupted")
			}
			if !errors.Is(err, errdef.ErrDigestMismatch) {
				t.Fatalf("want errdef.ErrDigestMismatch, got %v", err)
			}
			if !retry.Transient(err) {
				t.Errorf("retry.Transient(%v) = false", err)
			}
		})
	}
}

// What is not about bytes on the way is not transient.
