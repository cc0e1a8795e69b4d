package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	ggcrregistry "github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/addonpkg/addonpkg/pkg/layout"
	"github.com/addonpkg/addonpkg/pkg/mediatypes"
)

// storeCLIRegistry serves go-containerregistry's registry on 127.0.0.1.
// With a manifestType, every manifest response (GET and HEAD) carries that
// Content-Type instead of the manifest's own media type, as some
// registries and proxies do.
func storeCLIRegistry(t *testing.T, manifestType string) *httptest.Server {
	t.Helper()
	reg := ggcrregistry.New(ggcrregistry.Logger(log.New(io.Discard, "", 0)))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if manifestType != "" && strings.Contains(r.URL.Path, "/manifests/") && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
			w = &contentTypeWriter{ResponseWriter: w, contentType: manifestType}
		}
		reg.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// contentTypeWriter replaces the Content-Type a handler set.
type contentTypeWriter struct {
	http.ResponseWriter
	contentType string
	wrote       bool
}

func (w *contentTypeWriter) WriteHeader(code int) {
	if !w.wrote {
		w.wrote = true
		w.Header().Set("Content-Type", w.contentType)
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *contentTypeWriter) Write(b []byte) (int, error) {
	if !w.wrote {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(b)
}

// storeCLIBlobs gives the manifest, config and layer digests of name.
func storeCLIBlobs(t *testing.T, home, name string) (manifest, config, layer v1.Hash) {
	t.Helper()
	st, err := layout.Open(home)
	if err != nil {
		t.Fatal(err)
	}
	d, err := st.Resolve(name)
	if err != nil {
		t.Fatal(err)
	}
	img, err := st.Image(d)
	if err != nil {
		t.Fatal(err)
	}
	m, err := img.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Layers) != 1 {
		t.Fatalf("%s: %d layers, want 1", name, len(m.Layers))
	}
	return d.Digest, m.Config.Digest, m.Layers[0].Digest
}

func storeCLIBlobPath(home string, h v1.Hash) string {
	return filepath.Join(home, "blobs", "sha256", h.Hex)
}

// storeCLIVerified fails unless the blob file hashes to h.
func storeCLIVerified(t *testing.T, home string, h v1.Hash) {
	t.Helper()
	b, err := os.ReadFile(storeCLIBlobPath(home, h))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	if got := hex.EncodeToString(sum[:]); got != h.Hex {
		t.Errorf("blob %s holds bytes hashing to sha256:%s", h, got)
	}
}

// A registry that answers manifests with Content-Type text/plain: pull
// records the manifest's own media type, and gc keeps every blob the
// pulled name needs (issue 11, finding 5).
func TestCLIPullNonOCIContentType(t *testing.T) {
	t.Parallel()
	for _, form := range cliForms {
		t.Run(form, func(t *testing.T) {
			home := cliNewHome(t)
			srv := storeCLIRegistry(t, "text/plain; charset=utf-8")
			ref := strings.TrimPrefix(srv.URL, "http://") + "/addons/coredns:1"
			digest := strings.TrimSpace(cliMust(t, "build", cliExampleDir("coredns"), "--format", form, "-t", "coredns:1"))
			want := filepath.Join(t.TempDir(), "want")
			cliMust(t, "unpack", "coredns:1", "-o", want)
			cliMust(t, "push", "-q", "coredns:1", ref)
			cliMust(t, "rm", "coredns:1")
			cliMust(t, "gc")
			if got := cliBlobNames(t, home); len(got) != 0 {
				t.Fatalf("blobs left before the pull: %q", got)
			}

			var res struct {
				Digest    string `json:"digest"`
				MediaType string `json:"mediaType"`
			}
			out := cliMust(t, "pull", "-q", "--json", ref)
			if err := json.Unmarshal([]byte(out), &res); err != nil {
				t.Fatalf("pull --json: %v\n%s", err, out)
			}
			if res.Digest != digest || res.MediaType != string(mediatypes.OCIManifest) {
				t.Errorf("pull --json: digest %s media type %q, want %s %q", res.Digest, res.MediaType, digest, mediatypes.OCIManifest)
			}
			rows := cliImagesJSON(t)
			if len(rows) != 1 || rows[0].MediaType != string(mediatypes.OCIManifest) {
				t.Fatalf("images after the pull: %+v, want one %s", rows, mediatypes.OCIManifest)
			}

			before := cliBlobNames(t, home)
			r := cliRun(t, "gc")
			if r.code != 0 || !strings.Contains(r.stderr, "removed 0 files") {
				t.Errorf("gc: exit %d, %q, want 0 files removed", r.code, r.stderr)
			}
			if got := cliBlobNames(t, home); !slices.Equal(got, before) || len(got) != 3 {
				t.Errorf("blobs after gc: %q, before %q", got, before)
			}
			// From the store alone: the registry is gone.
			srv.Close()
			got := filepath.Join(t.TempDir(), "got")
			cliMust(t, "unpack", "--pull", "never", rows[0].Name, "-o", got)
			cliSameTree(t, want, got)
		})
	}
}

// gc deletes nothing while a name's manifest cannot be read, and says on
// one line which name and what to do; a media type in index.json that is
// not a manifest's (a store written by an older version) does not matter.
//
// Each case damages a copy of one store, built once: two builds per case
// cost about 5 s each under -race.
func TestCLIGCUnreadableTag(t *testing.T) {
	t.Parallel()
	template := cliNewHome(t)
	cliMust(t, "build", cliExampleDir("coredns"), "-t", "coredns:1")
	// Something gc would delete: the blobs of a removed name.
	cliMust(t, "build", cliExampleDir("metrics-server"), "-t", "gone:1")
	cliMust(t, "rm", "gone:1")
	for _, c := range []struct {
		name   string
		damage func(t *testing.T, home string, manifest v1.Hash)
		refuse string // "" when gc must succeed and keep the blobs
	}{
		{"index.json records text/plain", func(t *testing.T, home string, _ v1.Hash) {
			p := filepath.Join(home, "index.json")
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			b = bytes.ReplaceAll(b, []byte(mediatypes.OCIManifest), []byte("text/plain"))
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}, ""},
		{"manifest missing", func(t *testing.T, home string, m v1.Hash) {
			if err := os.Remove(storeCLIBlobPath(home, m)); err != nil {
				t.Fatal(err)
			}
		}, "missing"},
		{"manifest corrupted", func(t *testing.T, home string, m v1.Hash) {
			p := storeCLIBlobPath(home, m)
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			b[len(b)/2] ^= 0x20
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}, "digest mismatch"},
		{"not a manifest", func(t *testing.T, home string, m v1.Hash) {
			// A well-formed blob, digest right, that is no manifest.
			body := []byte(`{"schemaVersion":2,"hello":"world"}`)
			sum := sha256.Sum256(body)
			h := v1.Hash{Algorithm: "sha256", Hex: hex.EncodeToString(sum[:])}
			if err := os.WriteFile(storeCLIBlobPath(home, h), body, 0o644); err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(home, "index.json")
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			var idx v1.IndexManifest
			if err := json.Unmarshal(b, &idx); err != nil {
				t.Fatal(err)
			}
			for i, d := range idx.Manifests {
				if d.Digest == m {
					idx.Manifests[i].Digest, idx.Manifests[i].Size = h, int64(len(body))
				}
			}
			if b, err = json.Marshal(idx); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}, "not an image manifest or index"},
	} {
		t.Run(c.name, func(t *testing.T) {
			home := cliNewHome(t)
			if err := os.CopyFS(home, os.DirFS(template)); err != nil {
				t.Fatal(err)
			}
			if n := len(cliBlobNames(t, home)); n <= 3 {
				t.Fatalf("%d blobs in the store, want more than coredns:1's 3 (gone:1's, for gc)", n)
			}
			m, cfg, layer := storeCLIBlobs(t, home, "coredns:1")
			c.damage(t, home, m)
			state := cliStoreState(t, home)

			r := cliRun(t, "gc")
			if c.refuse == "" {
				if r.code != 0 {
					t.Fatalf("gc: exit %d: %s", r.code, r.stderr)
				}
				for _, h := range []v1.Hash{m, cfg, layer} {
					storeCLIVerified(t, home, h)
				}
				if n := len(cliBlobNames(t, home)); n != 3 {
					t.Errorf("%d blobs after gc, want the 3 of coredns:1", n)
				}
				cliMust(t, "unpack", "coredns:1", "-o", filepath.Join(t.TempDir(), "out"))
				return
			}
			cliCheckError(t, r, "gc deleted nothing", `coredns:1`, c.refuse, "addonpkg rm coredns:1")
			if got := cliStoreState(t, home); got != state {
				t.Errorf("gc changed the store although it refused:\nbefore %s\nafter  %s", state, got)
			}
			// Doing what it says lets gc run.
			cliMust(t, "rm", "coredns:1")
			cliMust(t, "gc")
			if got := cliBlobNames(t, home); len(got) != 0 {
				t.Errorf("blobs left after rm and gc: %q", got)
			}
		})
	}
}

// pull of a name whose blob in the store was corrupted (or cut short)
// fetches the blob again, and the add-on unpacks (issue 11, finding 12).
func TestCLIPullRepairsCorruptBlob(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name     string
		which    int // 0 manifest, 1 config, 2 layer
		truncate bool
	}{
		{"layer flipped", 2, false},
		{"layer truncated", 2, true},
		{"config flipped", 1, false},
		{"manifest flipped", 0, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			home := cliNewHome(t)
			srv := storeCLIRegistry(t, "")
			ref := strings.TrimPrefix(srv.URL, "http://") + "/addons/coredns:1"
			cliMust(t, "build", cliExampleDir("coredns"), "-t", "coredns:1")
			want := filepath.Join(t.TempDir(), "want")
			cliMust(t, "unpack", "coredns:1", "-o", want)
			cliMust(t, "push", "-q", "coredns:1", ref)
			cliMust(t, "pull", "-q", ref)
			m, cfg, layer := storeCLIBlobs(t, home, ref)
			h := []v1.Hash{m, cfg, layer}[c.which]
			p := storeCLIBlobPath(home, h)
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if c.truncate {
				b = b[:len(b)-1]
			} else {
				b[len(b)/2] ^= 0x20
			}
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
			// The damage is real: reading the name fails.
			if r := cliRun(t, "unpack", "--pull", "never", ref, "-o", filepath.Join(t.TempDir(), "broken")); r.code == 0 {
				t.Fatal("unpack of the corrupted store succeeded")
			}

			cliMust(t, "pull", "-q", ref)
			for _, h := range []v1.Hash{m, cfg, layer} {
				storeCLIVerified(t, home, h)
			}
			srv.Close()
			got := filepath.Join(t.TempDir(), "got")
			cliMust(t, "unpack", "--pull", "never", ref, "-o", got)
			cliSameTree(t, want, got)
		})
	}
}
