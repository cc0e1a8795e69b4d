package doctor_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/addonpkg/addonpkg/internal/doctor"
	"github.com/addonpkg/addonpkg/internal/testing/testregistry"
	"github.com/addonpkg/addonpkg/pkg/build"
	"github.com/addonpkg/addonpkg/pkg/folder"
	"github.com/addonpkg/addonpkg/pkg/layout"
	"github.com/addonpkg/addonpkg/pkg/mediatypes"
	"github.com/addonpkg/addonpkg/pkg/pack"
	"github.com/addonpkg/addonpkg/pkg/registry"
	"github.com/addonpkg/addonpkg/pkg/source"
	"github.com/addonpkg/addonpkg/pkg/transfer"
	"github.com/addonpkg/addonpkg/pkg/unpack"
)

var allChecks = []string{
	doctor.CheckImage, doctor.CheckArtifact, doctor.CheckArtifactType, doctor.CheckEmptyConfig,
	doctor.CheckZstd, doctor.CheckReferrers, doctor.CheckTagFallback, doctor.CheckMount,
	doctor.CheckChunked, doctor.CheckDelete,
}

// gitlabProxy fronts a registry and, as GitLab's registry does, refuses
// image manifests whose config is not an OCI or Docker image config.
type gitlabProxy struct {
	*httptest.Server
	manifestPuts atomic.Int64
}

func newGitLabProxy(t *testing.T, target string) *gitlabProxy {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(u)
	p := &gitlabProxy{}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut && strings.Contains(r.URL.Path, "/manifests/") {
			p.manifestPuts.Add(1)
			body, err := io.ReadAll(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			var m struct {
				Config *struct {
					MediaType string `json:"mediaType"`
				} `json:"config"`
			}
			_ = json.Unmarshal(body, &m)
			if m.Config != nil && m.Config.MediaType != string(mediatypes.OCIConfig) && m.Config.MediaType != string(mediatypes.DockerConfig) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusBadRequest)
				_, _ = io.WriteString(w, `{"errors":[{"code":"MANIFEST_INVALID","message":"manifest invalid","detail":"unknown media type: `+m.Config.MediaType+`"}]}`)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			r.ContentLength = int64(len(body))
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(p.Close)
	return p
}

// Registries with the referrers API answer it; Distribution 2.8 has none,
// so a proxy answers for it here.
func TestProbeReferrersAPI(t *testing.T) {
	reg := testregistry.Start(t, testregistry.Options{DeleteEnabled: true})
	u, err := url.Parse(reg.URL)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(u)
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/referrers/") {
			w.Header().Set("Content-Type", string(mediatypes.OCIIndex))
			_, _ = io.WriteString(w, `{"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json","manifests":[]}`)
			return
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(proxy.Close)
	ropts, dopts := connect(t)
	rep, err := doctor.Probe(context.Background(), repoAt(t, strings.TrimPrefix(proxy.URL, "http://"), "r"), ropts, dopts...)
	if err != nil {
		t.Fatal(err)
	}
	if c, _ := rep.Get(doctor.CheckReferrers); !c.OK || !strings.Contains(c.Detail, "does not list the new referrer") {
		t.Errorf("referrers API %+v", c)
	}
	if c, _ := rep.Get(doctor.CheckTagFallback); !c.OK || !strings.Contains(c.Detail, "written and read back") {
		t.Errorf("tag fallback %+v", c)
	}
	if c, _ := rep.Get(doctor.CheckDelete); !c.OK {
		t.Errorf("delete %+v", c)
	}
}

// Without push rights there is nothing to report: Probe fails, and so
// does AcceptsArtifact, whose answer is unknown then.
func TestProbeNeedsCredentials(t *testing.T) {
	t.Setenv("DOCKER_CONFIG", t.TempDir())
	reg := testregistry.Start(t, testregistry.Options{Mode: testregistry.BasicAuth})
	ropts, dopts := connect(t)
	repo := repoAt(t, reg.Host, "x")
	if _, err := doctor.Probe(context.Background(), repo, ropts, dopts...); err == nil || !strings.Contains(err.Error(), "cannot push") {
		t.Errorf("Probe: %v", err)
	}
	cache := &doctor.Cache{Dir: t.TempDir()}
	if _, err := doctor.AcceptsArtifact(context.Background(), repo, ropts, cache); err == nil || !strings.Contains(err.Error(), "addonpkg login") {
		t.Errorf("AcceptsArtifact: %v", err)
	}
	if _, ok := cache.Load(reg.Host); ok {
		t.Error("an unknown answer was cached")
	}
}

func connect(t *testing.T) ([]remote.Option, []doctor.Option) {
	t.Helper()
	ropts, dopts, err := doctor.Connect(context.Background(), registry.Options{Retries: -1})
	if err != nil {
		t.Fatal(err)
	}
	return ropts, dopts
}

func repoAt(t *testing.T, host, path string) name.Repository {
	t.Helper()
	repo, err := name.NewRepository(host + "/" + path)
	if err != nil {
		t.Fatal(err)
	}
	return repo
}

func TestProbe(t *testing.T) {
	reg := testregistry.Start(t, testregistry.Options{DeleteEnabled: true})
	ropts, dopts := connect(t)
	repo := repoAt(t, reg.Host, "addons/probe")
	rep, err := doctor.Probe(context.Background(), repo, ropts, dopts...)
	if err != nil {
		t.Fatal(err)
	}
	var tbl strings.Builder
	if err := rep.WriteTable(&tbl); err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", tbl.String())
	for _, n := range allChecks {
		c, ok := rep.Get(n)
		if !ok {
			t.Errorf("no %s check", n)
			continue
		}
		if c.Detail == "" {
			t.Errorf("%s has no detail", n)
		}
	}
	// What Distribution 2.8 does.
	for _, n := range []string{doctor.CheckImage, doctor.CheckArtifact, doctor.CheckArtifactType, doctor.CheckEmptyConfig,
		doctor.CheckZstd, doctor.CheckTagFallback, doctor.CheckMount, doctor.CheckChunked, doctor.CheckDelete} {
		if c, _ := rep.Get(n); !c.OK {
			t.Errorf("%s: not OK: %s", n, c.Detail)
		}
	}
	if c, _ := rep.Get(doctor.CheckReferrers); c.OK || !strings.Contains(c.Detail, "is not an index (404)") {
		t.Errorf("referrers API on Distribution 2.8: %+v, want it missing (404)", c)
	}
	if rep.Registry != reg.Host || rep.Repository != repo.Name() {
		t.Errorf("report names %s %s", rep.Registry, rep.Repository)
	}
	// Every scratch tag is gone.
	tags, err := remote.List(repo, ropts...)
	if err != nil && !strings.Contains(err.Error(), "NAME_UNKNOWN") {
		t.Fatal(err)
	}
	for _, tg := range tags {
		if strings.HasPrefix(tg, "addonpkg-doctor-") || strings.HasPrefix(tg, "sha256-") {
			t.Errorf("scratch tag %s left behind", tg)
		}
	}
	b, err := json.Marshal(rep)
	if err != nil || !strings.Contains(string(b), `"name":"artifact-form","ok":true`) {
		t.Errorf("json %s %v", b, err)
	}
}

// Without deletes, the probe still reports, and says the scratch tags remain.
func TestProbeDeletesDisabled(t *testing.T) {
	reg := testregistry.Start(t, testregistry.Options{})
	ropts, dopts := connect(t)
	rep, err := doctor.Probe(context.Background(), repoAt(t, reg.Host, "x"), ropts, append(dopts, doctor.WithTagPrefix("scratch"))...)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := rep.Get(doctor.CheckDelete)
	if c.OK || !strings.Contains(c.Detail, "scratch-* remain") {
		t.Errorf("delete check %+v", c)
	}
	if c, _ := rep.Get(doctor.CheckImage); !c.OK {
		t.Errorf("image form %+v", c)
	}
}

func TestGitLabLikeRegistry(t *testing.T) {
	ctx := context.Background()
	reg := testregistry.Start(t, testregistry.Options{DeleteEnabled: true})
	proxy := newGitLabProxy(t, reg.URL)
	host := strings.TrimPrefix(proxy.URL, "http://")
	ropts, dopts := connect(t)
	repo := repoAt(t, host, "group/project/addon")

	rep, err := doctor.Probe(ctx, repo, ropts, dopts...)
	if err != nil {
		t.Fatal(err)
	}
	var tbl strings.Builder
	_ = rep.WriteTable(&tbl)
	t.Logf("\n%s", tbl.String())
	if c, _ := rep.Get(doctor.CheckArtifact); c.OK || !strings.Contains(c.Detail, "MANIFEST_INVALID") {
		t.Errorf("artifact form %+v", c)
	}
	if c, _ := rep.Get(doctor.CheckEmptyConfig); c.OK {
		t.Errorf("empty config %+v", c)
	}
	for _, n := range []string{doctor.CheckImage, doctor.CheckArtifactType, doctor.CheckZstd, doctor.CheckDelete} {
		if c, _ := rep.Get(n); !c.OK {
			t.Errorf("%s: %+v", n, c)
		}
	}

	// AcceptsArtifact asks once, then the cache answers.
	cache := &doctor.Cache{Dir: t.TempDir()}
	ok, err := doctor.AcceptsArtifact(ctx, repo, ropts, cache)
	if err != nil || ok {
		t.Fatalf("AcceptsArtifact = %v, %v", ok, err)
	}
	if _, err := os.Stat(filepath.Join(cache.Dir, strings.ReplaceAll(host, ":", "_")+".json")); err != nil {
		t.Errorf("no cache file: %v", err)
	}
	puts := proxy.manifestPuts.Load()
	if ok, err := doctor.AcceptsArtifact(ctx, repo, ropts, cache); err != nil || ok {
		t.Fatalf("cached AcceptsArtifact = %v, %v", ok, err)
	}
	if n := proxy.manifestPuts.Load(); n != puts {
		t.Errorf("the cached answer pushed %d manifests", n-puts)
	}

	// The artifact form is refused; converted, it goes through and reads
	// back as the same tree.
	src, err := folder.LoadDir(filepath.Join("..", "..", "examples", "metrics-server"))
	if err != nil {
		t.Fatal(err)
	}
	art, err := build.Build(ctx, src, build.Options{Format: pack.FormatArtifact, Name: "metrics-server", Version: "0.7.2", Created: time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	ref := repo.Tag("0.7.2")
	if err := remote.Write(ref, art.Image, ropts...); err == nil || !strings.Contains(err.Error(), "MANIFEST_INVALID") {
		t.Fatalf("artifact push: %v", err)
	}
	img, err := transfer.ConvertToImage(ctx, art.Image)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(ref, img, ropts...); err != nil {
		t.Fatal(err)
	}
	pulled, err := remote.Image(ref, ropts...)
	if err != nil {
		t.Fatal(err)
	}
	ad, err := unpack.Image(ctx, pulled, unpack.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if ad.Form != mediatypes.FormImage || ad.Derived || ad.Identity != art.Config.Identity {
		t.Errorf("converted: form %s derived %v identity %s, artifact %s", ad.Form, ad.Derived, ad.Identity, art.Config.Identity)
	}
	c := ad.Config
	if c.Name != "metrics-server" || c.Version != "0.7.2" || c.Created != "2024-05-01T00:00:00Z" || len(c.Inventory.Objects) != len(art.Config.Inventory.Objects) {
		t.Errorf("converted config %+v", c)
	}

	// push --format auto: from the store, through the proxy (converted)
	// and straight to the registry (kept).
	st, err := layout.Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.WriteImage(ctx, art.Image, nil, "metrics-server:0.7.2"); err != nil {
		t.Fatal(err)
	}
	topts := transfer.Options{Options: source.Options{Store: st, Registry: registry.Options{Retries: -1}}}
	srcRef := source.Ref{Kind: source.KindStore, Name: "metrics-server:0.7.2"}
	res, converted, err := transfer.PushAuto(ctx, srcRef, source.Ref{Kind: source.KindRegistry, Name: host + "/group/project/auto:1"}, topts, cache)
	if err != nil || !converted {
		t.Fatalf("PushAuto through the proxy: converted %v, %v", converted, err)
	}
	if d, _ := img.Digest(); res.Digest != d.String() {
		t.Errorf("pushed %s, converted image is %s", res.Digest, d)
	}
	res, converted, err = transfer.PushAuto(ctx, srcRef, source.Ref{Kind: source.KindRegistry, Name: reg.Host + "/plain/auto:1"}, topts, cache)
	if err != nil || converted || res.Digest != art.Digest.String() {
		t.Fatalf("PushAuto to the registry: converted %v, %v, %v", converted, res, err)
	}

	// A stale cache says "accepted", the push finds out otherwise.
	stale := &doctor.Cache{Dir: t.TempDir()}
	if err := stale.Store(&doctor.Report{Registry: host, Time: time.Now(), Checks: []doctor.Check{{Name: doctor.CheckArtifact, OK: true}}}); err != nil {
		t.Fatal(err)
	}
	_, converted, err = transfer.PushAuto(ctx, srcRef, source.Ref{Kind: source.KindRegistry, Name: host + "/group/project/auto:2"}, topts, stale)
	if err != nil || !converted {
		t.Fatalf("PushAuto with a wrong cache: converted %v, %v", converted, err)
	}
	if ok, _ := doctor.AcceptsArtifact(ctx, repo, ropts, stale); ok {
		t.Errorf("the refusal was not recorded")
	}
}

func TestConvertKeepsImageForm(t *testing.T) {
	src, err := folder.LoadDir(filepath.Join("..", "..", "examples", "coredns"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := build.Build(context.Background(), src, build.Options{Name: "coredns"})
	if err != nil {
		t.Fatal(err)
	}
	img, err := transfer.ConvertToImage(context.Background(), res.Image)
	if err != nil {
		t.Fatal(err)
	}
	if d, _ := img.Digest(); d != res.Digest {
		t.Errorf("image form changed: %s -> %s", res.Digest, d)
	}
}

func TestCache(t *testing.T) {
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	c := &doctor.Cache{Dir: t.TempDir(), Now: func() time.Time { return now }}
	rep := &doctor.Report{Registry: "registry.example.com:5000", Time: now, Checks: []doctor.Check{{Name: doctor.CheckArtifact, OK: false, Detail: "no"}}}
	if err := c.Store(rep); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(c.Dir, "registry.example.com_5000.json")); err != nil {
		t.Fatal(err)
	}
	got, ok := c.Load("registry.example.com:5000")
	if !ok || len(got.Checks) != 1 || got.Checks[0].Detail != "no" {
		t.Fatalf("load %+v %v", got, ok)
	}
	if _, ok := c.Load("other.example.com"); ok {
		t.Error("loaded another registry's report")
	}
	now = now.Add(doctor.DefaultTTL + time.Minute)
	if _, ok := c.Load("registry.example.com:5000"); ok {
		t.Error("a report older than the TTL was used")
	}
	c.TTL = 48 * time.Hour
	if _, ok := c.Load("registry.example.com:5000"); !ok {
		t.Error("a longer TTL did not keep the report")
	}
	var nilCache *doctor.Cache
	if _, ok := nilCache.Load("x"); ok {
		t.Error("nil cache loaded")
	}
	if err := nilCache.Store(rep); err != nil {
		t.Error(err)
	}
}
