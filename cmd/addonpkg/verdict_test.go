package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// longer serves b, then more: an endless chunked body whose first bytes
// are right, or b under a Content-Length of a terabyte.
func longer(b []byte, huge bool) http.HandlerFunc {
	return func(w http.ResponseWriter, req *http.Request) {
		if huge {
			w.Header().Set("Content-Length", "1099511627776")
			w.Write(b)
			return
		}
		w.Write(b)
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
		endless(w, req)
	}
}

// TestOneVerdictPerBlob runs one hostile registry, whose blobs are
// longer than their descriptors, through every command that reads them:
// unpack, pull, copy and inspect give one verdict, "size mismatch"
// (issue 25: unpack refused the blob, pull and copy took its first bytes).
func TestOneVerdictPerBlob(t *testing.T) {
	t.Parallel()
	cliNewHome(t)
	reg := newEvilRegistry(t)
	cfg := []byte(`{"architecture":"amd64","os":"linux","rootfs":{"type":"layers","diff_ids":[]},"config":{}}`)
	layer := hostileCLIOne(t, hostileCLIFile("addon/a.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n"))
	goodCfg := v1.Descriptor{MediaType: types.OCIConfigJSON, Digest: sha(cfg), Size: int64(len(cfg))}
	goodLayer := v1.Descriptor{MediaType: types.OCILayer, Digest: layer.digest, Size: layer.size}
	reg.blob(sha(cfg).String(), func(w http.ResponseWriter, _ *http.Request) { w.Write(cfg) })
	reg.blob(layer.digest.String(), func(w http.ResponseWriter, _ *http.Request) { w.Write(layer.blob) })
	// The blobs are served per digest: make a distinct config and layer
	// for each hostile case so the handlers do not collide.
	type hostile struct {
		name, ref string
		readers   []string // the commands that read the hostile blob
	}
	var cases []hostile
	for _, huge := range []bool{false, true} {
		how := "endless body"
		if huge {
			how = "Content-Length 1 TiB"
		}
		// A config longer than described: every command reads it.
		c := []byte(fmt.Sprintf(`{"architecture":"amd64","os":"linux","rootfs":{"type":"layers","diff_ids":[]},"config":{},"variant":"%v"}`, huge))
		reg.blob(sha(c).String(), longer(c, huge))
		repo := fmt.Sprintf("cfg%v", huge)
		reg.manifest(repo, "1", v1.Manifest{SchemaVersion: 2, MediaType: types.OCIManifestSchema1,
			Config: v1.Descriptor{MediaType: types.OCIConfigJSON, Digest: sha(c), Size: int64(len(c))}, Layers: []v1.Descriptor{goodLayer}})
		cases = append(cases, hostile{"config, " + how, reg.host() + "/" + repo + ":1", []string{"unpack", "pull", "copy", "inspect"}})

		// A layer longer than described (a second layer, so that its
		// digest has its own handler).
		l := hostileCLIOne(t, hostileCLIFile(fmt.Sprintf("addon/b%v.yaml", huge), "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n"))
		reg.blob(l.digest.String(), longer(l.blob, huge))
		repo = fmt.Sprintf("layer%v", huge)
		reg.manifest(repo, "1", v1.Manifest{SchemaVersion: 2, MediaType: types.OCIManifestSchema1,
			Config: goodCfg, Layers: []v1.Descriptor{{MediaType: types.OCILayer, Digest: l.digest, Size: l.size}}})
		cases = append(cases, hostile{"layer, " + how, reg.host() + "/" + repo + ":1", []string{"unpack", "pull", "copy", "inspect"}})
	}
	for _, tc := range cases {
		for _, cmd := range tc.readers {
			t.Run(tc.name+"/"+cmd, func(t *testing.T) {
				args := []string{cmd, tc.ref}
				if cmd == "copy" {
					args = append(args, "oci:"+filepath.Join(t.TempDir(), "copy")+":1")
				}
				r := cliRun(t, args...)
				if cmd == "inspect" && strings.HasPrefix(tc.name, "layer") {
					// inspect shows what it can read of an add-on and
					// reports a layer it cannot trust: the same verdict,
					// as a warning.
					if !strings.Contains(r.stderr, "size mismatch") {
						t.Errorf("inspect of a layer longer than described: exit %d, stderr %q; want the size mismatch reported", r.code, r.stderr)
					}
					return
				}
				cliCheckError(t, r, "size mismatch")
				if cmd == "pull" {
					if out := cliMust(t, "images"); strings.Contains(out, tc.ref[strings.LastIndexByte(tc.ref, '/')+1:]) {
						t.Errorf("pull stored the add-on:\n%s", out)
					}
				}
			})
		}
	}
}

// A registry that answers every tag with the same manifest holds, at
// cosign's sha256-HEX.sig, .att and .sbom tags, something that is not a
// signature, attestation or SBOM: pull and copy leave it and say so
// (issue 25: they reported "copied 3 referrers" for an image with none).
func TestReferrerTagsMustBeWhatTheySay(t *testing.T) {
	t.Parallel()
	cliNewHome(t)
	reg := newEvilRegistry(t)
	cfg := []byte(`{"architecture":"amd64","os":"linux","rootfs":{"type":"layers","diff_ids":[]},"config":{}}`)
	layer := hostileCLIOne(t, hostileCLIFile("addon/a.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n"))
	reg.blob(sha(cfg).String(), func(w http.ResponseWriter, _ *http.Request) { w.Write(cfg) })
	reg.blob(layer.digest.String(), func(w http.ResponseWriter, _ *http.Request) { w.Write(layer.blob) })
	reg.manifest("same", "1", v1.Manifest{SchemaVersion: 2, MediaType: types.OCIManifestSchema1,
		Config: v1.Descriptor{MediaType: types.OCIConfigJSON, Digest: sha(cfg), Size: int64(len(cfg))},
		Layers: []v1.Descriptor{{MediaType: types.OCILayer, Digest: layer.digest, Size: layer.size}}})
	// Every tag is "1".
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if repo, ref, ok := strings.Cut(strings.TrimPrefix(req.URL.Path, "/v2/"), "/manifests/"); ok && !strings.HasPrefix(ref, "sha256:") {
			req.URL.Path = "/v2/" + repo + "/manifests/1"
		}
		reg.serve(w, req)
	}))
	t.Cleanup(srv.Close)
	ref := strings.TrimPrefix(srv.URL, "http://") + "/same:1"
	for _, args := range [][]string{
		{"pull", ref},
		{"copy", ref, "oci:" + filepath.Join(t.TempDir(), "copy") + ":1"},
	} {
		t.Run(args[0], func(t *testing.T) {
			r := cliRun(t, args...)
			// None copied: no count is printed, only what was ignored.
			if r.code != 0 || strings.Contains(r.stderr, "copied") {
				t.Fatalf("%s: exit %d, want 0 and no referrers copied:\n%s", args[0], r.code, r.stderr)
			}
			for _, suffix := range []string{".sig", ".att", ".sbom"} {
				if !strings.Contains(r.stderr, suffix+" (sha256:") || !strings.Contains(r.stderr, "ignored sha256-") {
					t.Errorf("%s does not say it ignored the manifest at the %s tag:\n%s", args[0], suffix, r.stderr)
				}
			}
		})
	}
}
