// Package doctor finds out what a registry accepts before addonpkg relies
// on it: the image form, the artifact form's own config media type, the
// artifactType field, the empty config, zstd layers, the referrers API
// and its tag fallback, cross-repository blob mounts and chunked uploads.
// It pushes small throwaway manifests to scratch tags and deletes them
// afterwards where the registry allows deletes.
//
// Results are cached per registry (Cache), so that transfer.PushAuto
// asks a registry once a day, not on every push.
package doctor

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/addonpkg/addonpkg/internal/netguard"
	"github.com/addonpkg/addonpkg/pkg/build"
	"github.com/addonpkg/addonpkg/pkg/filetree"
	"github.com/addonpkg/addonpkg/pkg/mediatypes"
	"github.com/addonpkg/addonpkg/pkg/pack"
	"github.com/addonpkg/addonpkg/pkg/registry"
)

// Names of the checks, in the order a Report lists them.
const (
	CheckImage        = "image-form"
	CheckArtifact     = "artifact-form"
	CheckArtifactType = "artifact-type"
	CheckEmptyConfig  = "empty-config"
	CheckZstd         = "zstd-layers"
	CheckReferrers    = "referrers-api"
	CheckTagFallback  = "referrers-tag-fallback"
	CheckMount        = "cross-repo-mount"
	CheckChunked      = "chunked-upload"
	CheckDelete       = "delete"
)

// Check is one capability and whether the registry has it.
type Check struct {
	Name string `json:"name"`
	OK   bool   `json:"ok"`
	// Detail says what was tried, or what the registry answered.
	Detail string `json:"detail,omitempty"`
}

// Report is what a probe found out about one registry.
type Report struct {
	// Registry is the host, Repository the repository probed in.
	Registry   string    `json:"registry"`
	Repository string    `json:"repository"`
	Time       time.Time `json:"time"`
	Checks     []Check   `json:"checks"`
}

// Get returns the check called name.
func (r *Report) Get(name string) (Check, bool) {
	for _, c := range r.Checks {
		if c.Name == name {
			return c, true
		}
	}
	return Check{}, false
}

// set adds c, replacing a check of the same name.
func (r *Report) set(c Check) {
	for i := range r.Checks {
		if r.Checks[i].Name == c.Name {
			r.Checks[i] = c
			return
		}
	}
	r.Checks = append(r.Checks, c)
}

// WriteTable prints the checks as a table for people.
func (r *Report) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CHECK\tRESULT\tDETAIL")
	for _, c := range r.Checks {
		res := "ok"
		if !c.OK {
			res = "no"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", c.Name, res, c.Detail)
	}
	return tw.Flush()
}

// Option changes how Probe talks to the registry beyond the remote options.
type Option func(*prober)

// WithHTTP sets the base transport and the keychain of the checks that
// send raw requests (mounts, chunked uploads, blob deletes); the default
// is registry.Options{}.BaseTransport() and authn.DefaultKeychain. A base
// that is not a *netguard.Transport is put under one (credentials only to
// their origin and never in clear text off this machine, idle timeouts),
// so that the policy holds whatever the caller passes. Use Connect to get
// remote options and this option from the same registry.Options.
func WithHTTP(base http.RoundTripper, kc authn.Keychain) Option {
	return func(p *prober) {
		if base != nil {
			p.base = guarded(base)
		}
		if kc != nil {
			p.keychain = kc
		}
	}
}

// WithTagPrefix sets the scratch tags' prefix (default
// addonpkg-doctor-<random>).
func WithTagPrefix(prefix string) Option {
	return func(p *prober) { p.prefix = prefix }
}

// ScratchRepo is the repository, below the probed one, that the mount
// check uploads a blob to before mounting it into the probed repository.
const ScratchRepo = "addonpkg-doctor"

// Probe finds out what the registry of repo accepts, pushing scratch
// manifests to repo (tags addonpkg-doctor-<random>-*) and deleting them
// afterwards. It fails only when it cannot push at all (credentials,
// network); every other refusal is a check that is not OK.
func Probe(ctx context.Context, repo name.Repository, ropts []remote.Option, opts ...Option) (*Report, error) {
	p, err := newProber(ctx, repo, ropts, opts)
	if err != nil {
		return nil, err
	}
	defer p.cleanupBlobs()
	rep := &Report{Registry: repo.RegistryStr(), Repository: repo.Name(), Time: time.Now().UTC()}

	c, err := p.imageForm()
	rep.set(c)
	if err != nil {
		p.cleanup(rep)
		return nil, err
	}
	// From here on a failure is what a check reports.
	for _, f := range []func() (Check, error){p.artifactForm, p.artifactType, p.emptyConfig, p.zstd} {
		c, _ := f()
		rep.set(c)
		if ctx.Err() != nil {
			p.cleanup(rep)
			return nil, ctx.Err()
		}
	}
	for _, c := range p.referrers() {
		rep.set(c)
	}
	rep.set(p.mount())
	rep.set(p.chunked())
	p.cleanup(rep)
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return rep, nil
}

type prober struct {
	ctx      context.Context
	repo     name.Repository
	ropts    []remote.Option
	base     http.RoundTripper
	keychain authn.Keychain
	prefix   string
	client   *http.Client

	img      v1.Image // the image form, once pushed
	imgDesc  v1.Descriptor
	pushed   []v1.Hash // manifests to delete, in push order
	blobs    []blobRef // blobs the raw checks uploaded
	tree     *filetree.FS
	nonce    string
	deleteOK *bool
}

type blobRef struct {
	repo name.Repository
	d    v1.Hash
}

func newProber(ctx context.Context, repo name.Repository, ropts []remote.Option, opts []Option) (*prober, error) {
	nonce, err := randomHex(6)
	if err != nil {
		return nil, err
	}
	// The zero value is safe: without WithHTTP (Probe called without
	// Connect) the raw checks, and the remote calls unless ropts name a
	// transport of their own, go through the same policy as every other
	// request of addonpkg (registry.Options.BaseTransport).
	base, err := registry.Options{}.BaseTransport()
	if err != nil {
		return nil, err
	}
	p := &prober{
		ctx:      ctx,
		repo:     repo,
		ropts:    append(append([]remote.Option{remote.WithTransport(base)}, ropts...), remote.WithContext(ctx)),
		base:     base,
		keychain: authn.DefaultKeychain,
		prefix:   "addonpkg-doctor-" + nonce,
		nonce:    nonce,
	}
	for _, o := range opts {
		o(p)
	}
	b := filetree.NewBuilder()
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: addonpkg-doctor\ndata:\n  nonce: \"" + nonce + "\"\n"
	if err := b.WriteFile("doctor.yaml", []byte(cm), 0o644); err != nil {
		return nil, err
	}
	p.tree = b.FS()
	return p, nil
}

// guarded puts base under the transport policy, unless it is under it.
func guarded(base http.RoundTripper) http.RoundTripper {
	if _, ok := base.(*netguard.Transport); ok {
		return base
	}
	g, err := registry.Options{Transport: base}.BaseTransport()
	if err != nil {
		// BaseTransport fails only reading a CA file, which these
		// options do not name.
		return &netguard.Transport{Base: base}
	}
	return g
}

func randomHex(n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

func (p *prober) tag(suffix string) name.Tag {
	return p.repo.Tag(p.prefix + "-" + suffix)
}

// build makes a scratch add-on of the tiny tree.
func (p *prober) build(f pack.Format, c mediatypes.Compression) (v1.Image, error) {
	res, err := build.Build(p.ctx, p.tree, build.Options{
		Format: f, Compression: c, Name: "addonpkg-doctor", NoValidate: true,
	})
	if err != nil {
		return nil, err
	}
	return res.Image, nil
}

// push writes img to a scratch tag and reads it back.
func (p *prober) push(suffix string, img v1.Image) (v1.Hash, error) {
	d, err := img.Digest()
	if err != nil {
		return v1.Hash{}, err
	}
	t := p.tag(suffix)
	if err := remote.Write(t, img, p.ropts...); err != nil {
		return v1.Hash{}, err
	}
	p.pushed = append(p.pushed, d)
	return d, p.readBack(t, d)
}

// put writes a raw manifest to a scratch tag and reads it back.
func (p *prober) put(suffix string, raw []byte, mt types.MediaType) (v1.Hash, error) {
	d, _, err := v1.SHA256(bytes.NewReader(raw))
	if err != nil {
		return v1.Hash{}, err
	}
	t := p.tag(suffix)
	if err := remote.Put(t, rawManifest{raw, mt}, p.ropts...); err != nil {
		return v1.Hash{}, err
	}
	p.pushed = append(p.pushed, d)
	return d, p.readBack(t, d)
}

// readBack checks the registry serves the manifest it took, unchanged.
func (p *prober) readBack(ref name.Reference, want v1.Hash) error {
	desc, err := remote.Get(ref, p.ropts...)
	if err != nil {
		return fmt.Errorf("accepted, but reading it back failed: %w", err)
	}
	if desc.Digest != want {
		return fmt.Errorf("accepted, but served back as %s, not %s", desc.Digest, want)
	}
	return nil
}

type rawManifest struct {
	b  []byte
	mt types.MediaType
}

func (r rawManifest) RawManifest() ([]byte, error)        { return r.b, nil }
func (r rawManifest) MediaType() (types.MediaType, error) { return r.mt, nil }

func (p *prober) imageForm() (Check, error) {
	c := Check{Name: CheckImage}
	img, err := p.build(pack.FormatImage, mediatypes.Gzip)
	if err != nil {
		return fail(c, err), err
	}
	d, err := p.push("image", img)
	if err != nil {
		if isAuth(err) || !isRefusal(err) {
			// What the registry package can say in its words (no
			// connection, no credentials, a failing registry), it says.
			var re *registry.Error
			if ex := registry.Explain(p.repo.String(), err); errors.As(ex, &re) && re.Message != "" {
				re.Message = "cannot push: " + re.Message
				return fail(c, err), re
			}
			return fail(c, err), fmt.Errorf("%s: cannot push: %s", p.repo, describe(err))
		}
		return fail(c, err), nil
	}
	p.img = img
	mt, _ := img.MediaType()
	size, _ := img.Size()
	p.imgDesc = v1.Descriptor{MediaType: mt, Digest: d, Size: size}
	c.OK, c.Detail = true, "OCI image manifest with an image config (gzip layer)"
	return c, nil
}

func (p *prober) artifactForm() (Check, error) {
	c := Check{Name: CheckArtifact}
	img, err := p.build(pack.FormatArtifact, mediatypes.Gzip)
	if err != nil {
		return fail(c, err), err
	}
	if _, err := p.push("artifact", img); err != nil {
		return fail(c, err), refusalOr(err)
	}
	c.OK, c.Detail = true, "config media type "+string(mediatypes.AddonConfig)
	return c, nil
}

// artifactType pushes the image form with an artifactType field.
func (p *prober) artifactType() (Check, error) {
	c := Check{Name: CheckArtifactType}
	if p.img == nil {
		c.Detail = "not tried: the image form was refused"
		return c, nil
	}
	m, err := p.img.Manifest()
	if err != nil {
		return fail(c, err), err
	}
	m = m.DeepCopy()
	m.ArtifactType = string(mediatypes.AddonConfig)
	raw, err := json.Marshal(m)
	if err != nil {
		return fail(c, err), err
	}
	if _, err := p.put("artifacttype", raw, types.OCIManifestSchema1); err != nil {
		return fail(c, err), refusalOr(err)
	}
	c.OK, c.Detail = true, "an image manifest with artifactType is kept as pushed"
	return c, nil
}

// emptyConfig pushes a manifest whose config is the OCI empty descriptor.
func (p *prober) emptyConfig() (Check, error) {
	c := Check{Name: CheckEmptyConfig}
	if p.img == nil {
		c.Detail = "not tried: the image form was refused"
		return c, nil
	}
	empty := static.NewLayer([]byte("{}"), mediatypes.OCIEmpty)
	if err := remote.WriteLayer(p.repo, empty, p.ropts...); err != nil {
		return fail(c, err), refusalOr(err)
	}
	m, err := p.img.Manifest()
	if err != nil {
		return fail(c, err), err
	}
	ed, _ := empty.Digest()
	em := v1.Manifest{
		SchemaVersion: 2,
		MediaType:     types.OCIManifestSchema1,
		ArtifactType:  "application/vnd.addonpkg.doctor.v1",
		Config:        v1.Descriptor{MediaType: mediatypes.OCIEmpty, Digest: ed, Size: 2},
		Layers:        m.Layers,
	}
	raw, err := json.Marshal(em)
	if err != nil {
		return fail(c, err), err
	}
	if _, err := p.put("emptyconfig", raw, types.OCIManifestSchema1); err != nil {
		return fail(c, err), refusalOr(err)
	}
	c.OK, c.Detail = true, "config "+string(mediatypes.OCIEmpty)
	return c, nil
}

func (p *prober) zstd() (Check, error) {
	c := Check{Name: CheckZstd}
	img, err := p.build(pack.FormatImage, mediatypes.Zstd)
	if err != nil {
		return fail(c, err), err
	}
	if _, err := p.push("zstd", img); err != nil {
		return fail(c, err), refusalOr(err)
	}
	c.OK, c.Detail = true, "image layer "+string(mediatypes.OCILayerZstd)
	return c, nil
}

// referrers pushes a manifest whose subject is the image form, then asks
// the referrers API for it and tries the referrers tag schema
// (sha256-<hex>), which clients use where the API is missing.
func (p *prober) referrers() []Check {
	api := Check{Name: CheckReferrers}
	fb := Check{Name: CheckTagFallback}
	if p.img == nil {
		api.Detail = "not tried: the image form was refused"
		fb.Detail = api.Detail
		return []Check{api, fb}
	}
	// Subject last: mutate drops the subject of the image it wraps.
	annotated := mutate.Annotations(p.img, map[string]string{"io.addonpkg.doctor": "referrer"}).(v1.Image)
	ref := mutate.Subject(annotated, p.imgDesc).(v1.Image)
	refDigest, err := ref.Digest()
	if err != nil {
		return []Check{fail(api, err), fail(fb, err)}
	}
	refSize, _ := ref.Size()
	pushErr := remote.Write(p.repo.Digest(refDigest.String()), ref, p.ropts...)
	if pushErr != nil {
		api = fail(api, fmt.Errorf("pushing a manifest with a subject: %w", pushErr))
		fb = fail(fb, fmt.Errorf("pushing a manifest with a subject: %w", pushErr))
		return []Check{api, fb}
	}
	p.pushed = append(p.pushed, refDigest)

	// Without the tag fallback, so that what the registry does is seen.
	switch im, err := p.referrersAPI(p.imgDesc.Digest); {
	case errors.Is(err, errNoReferrersAPI):
		api = fail(api, err)
		api.Detail = "GET /v2/<name>/referrers/<digest> is not an index (404): clients fall back to sha256-<hex> tags"
	case err != nil:
		api = fail(api, err)
	default:
		api.OK = true
		api.Detail = "GET /v2/<name>/referrers/<digest> answers an index"
		if !hasDigest(im, refDigest) {
			api.Detail += ", which does not list the new referrer yet"
		}
	}

	// The fallback tag: written by the push above when the API is
	// missing; written here otherwise, then read back.
	ft := p.repo.Tag(strings.Replace(p.imgDesc.Digest.String(), ":", "-", 1))
	fbIdx, err := fallbackIndex(ft, p.ropts)
	switch {
	case err == nil && hasDigest(fbIdx, refDigest):
		fb.OK, fb.Detail = true, "tag "+ft.TagStr()+" written by the push and read back"
	default:
		im := v1.IndexManifest{SchemaVersion: 2, MediaType: types.OCIImageIndex, Manifests: []v1.Descriptor{{
			MediaType: types.OCIManifestSchema1, Digest: refDigest, Size: refSize, ArtifactType: string(types.OCIConfigJSON),
		}}}
		raw, _ := json.Marshal(im)
		d, _, _ := v1.SHA256(bytes.NewReader(raw))
		if err := remote.Put(ft, rawManifest{raw, types.OCIImageIndex}, p.ropts...); err != nil {
			fb = fail(fb, err)
			break
		}
		p.pushed = append(p.pushed, d)
		if got, err := fallbackIndex(ft, p.ropts); err != nil {
			fb = fail(fb, err)
		} else if !hasDigest(got, refDigest) {
			fb.Detail = "tag " + ft.TagStr() + " written, but read back without the referrer"
		} else {
			fb.OK, fb.Detail = true, "tag "+ft.TagStr()+" written and read back"
		}
	}
	if fb.OK {
		if d, err := remote.Head(ft, p.ropts...); err == nil && !containsHash(p.pushed, d.Digest) {
			p.pushed = append(p.pushed, d.Digest)
		}
	}
	return []Check{api, fb}
}

func fallbackIndex(t name.Tag, ropts []remote.Option) (*v1.IndexManifest, error) {
	desc, err := remote.Get(t, ropts...)
	if err != nil {
		return nil, err
	}
	idx, err := desc.ImageIndex()
	if err != nil {
		return nil, err
	}
	return idx.IndexManifest()
}

func hasDigest(im *v1.IndexManifest, d v1.Hash) bool {
	if im == nil {
		return false
	}
	for _, m := range im.Manifests {
		if m.Digest == d {
			return true
		}
	}
	return false
}

func containsHash(hs []v1.Hash, h v1.Hash) bool {
	for _, x := range hs {
		if x == h {
			return true
		}
	}
	return false
}

// httpClient is an authenticated client for the raw checks, with push
// rights on the probed and the scratch repository.
func (p *prober) httpClient() (*http.Client, error) {
	if p.client != nil {
		return p.client, nil
	}
	auth, err := p.keychain.Resolve(p.repo)
	if err != nil {
		return nil, err
	}
	scopes := []string{p.repo.Scope(transport.PushScope), p.scratchRepo().Scope(transport.PushScope)}
	rt, err := transport.NewWithContext(p.ctx, p.repo.Registry, auth, p.base, scopes)
	if err != nil {
		return nil, err
	}
	p.client = &http.Client{Transport: rt}
	return p.client, nil
}

// errNoReferrersAPI: the registry answers the referrers endpoint with
// something other than an index.
var errNoReferrersAPI = errors.New("the registry does not support the Referrers API")

// referrersAPI asks the registry's referrers endpoint for the referrers
// of subject, as go-containerregistry does before its tag fallback: an
// answer of 404, 400 or 406, or one that is not an index, is
// errNoReferrersAPI (ggcr says so only in its message).
func (p *prober) referrersAPI(subject v1.Hash) (*v1.IndexManifest, error) {
	resp, b, err := p.do(http.MethodGet, p.url(p.repo, "referrers/"+subject.String()), map[string]string{"Accept": string(types.OCIImageIndex)}, nil)
	if err != nil {
		return nil, err
	}
	switch resp.StatusCode {
	case http.StatusOK:
		if resp.Header.Get("Content-Type") != string(types.OCIImageIndex) {
			return nil, errNoReferrersAPI
		}
	case http.StatusNotFound, http.StatusBadRequest, http.StatusNotAcceptable:
		return nil, errNoReferrersAPI
	default:
		return nil, fmt.Errorf("GET referrers: HTTP %d", resp.StatusCode)
	}
	var im v1.IndexManifest
	if err := json.Unmarshal(b, &im); err != nil {
		return nil, fmt.Errorf("GET referrers: %w", err)
	}
	return &im, nil
}

func (p *prober) scratchRepo() name.Repository {
	return p.repo.Registry.Repo(p.repo.RepositoryStr(), ScratchRepo)
}

func (p *prober) url(repo name.Repository, rest string) string {
	return fmt.Sprintf("%s://%s/v2/%s/%s", repo.Scheme(), repo.RegistryStr(), repo.RepositoryStr(), rest)
}

// do sends a raw request and returns the response with its body read.
func (p *prober) do(method, u string, hdr map[string]string, body []byte) (*http.Response, []byte, error) {
	cl, err := p.httpClient()
	if err != nil {
		return nil, nil, err
	}
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(p.ctx, method, u, r)
	if err != nil {
		return nil, nil, err
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	if body != nil {
		req.ContentLength = int64(len(body))
	}
	resp, err := cl.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	return resp, b, err
}

// location resolves an upload Location header against the request URL.
func location(reqURL string, resp *http.Response) (string, error) {
	loc := resp.Header.Get("Location")
	if loc == "" {
		return "", fmt.Errorf("HTTP %d without a Location header", resp.StatusCode)
	}
	base, err := url.Parse(reqURL)
	if err != nil {
		return "", err
	}
	u, err := base.Parse(loc)
	if err != nil {
		return "", err
	}
	return u.String(), nil
}

// mount uploads a random blob to the scratch repository, then asks the
// registry to mount it into the probed one (POST ?mount=&from=).
func (p *prober) mount() Check {
	c := Check{Name: CheckMount}
	scratch := p.scratchRepo()
	blob := []byte("addonpkg doctor mount " + p.nonce + "\n")
	l := static.NewLayer(blob, types.OCILayer)
	d, _ := l.Digest()
	if err := remote.WriteLayer(scratch, l, p.ropts...); err != nil {
		c.Detail = "not tried: cannot upload to " + scratch.RepositoryStr() + ": " + describe(err)
		return c
	}
	p.blobs = append(p.blobs, blobRef{scratch, d})
	v := url.Values{"mount": {d.String()}, "from": {scratch.RepositoryStr()}}
	u := p.url(p.repo, "blobs/uploads/?"+v.Encode())
	resp, body, err := p.do(http.MethodPost, u, nil, nil)
	if err != nil {
		return fail(c, err)
	}
	switch resp.StatusCode {
	case http.StatusCreated:
		p.blobs = append(p.blobs, blobRef{p.repo, d})
		c.OK, c.Detail = true, "POST ?mount=&from="+scratch.RepositoryStr()+" answered 201 Created"
	case http.StatusAccepted:
		if loc, err := location(u, resp); err == nil {
			_, _, _ = p.do(http.MethodDelete, loc, nil, nil)
		}
		c.Detail = "POST ?mount= answered 202 Accepted: the registry starts an upload instead, blobs are copied"
	default:
		c.Detail = fmt.Sprintf("POST ?mount= answered HTTP %d%s", resp.StatusCode, bodyNote(body))
	}
	return c
}

// chunked uploads a blob in two PATCH requests with Content-Range.
func (p *prober) chunked() Check {
	c := Check{Name: CheckChunked}
	blob := []byte("addonpkg doctor chunked upload " + p.nonce + ": first chunk | second chunk\n")
	h, _, _ := v1.SHA256(bytes.NewReader(blob))
	u := p.url(p.repo, "blobs/uploads/")
	resp, body, err := p.do(http.MethodPost, u, nil, nil)
	if err != nil {
		return fail(c, err)
	}
	if resp.StatusCode != http.StatusAccepted {
		c.Detail = fmt.Sprintf("POST blobs/uploads/ answered HTTP %d%s", resp.StatusCode, bodyNote(body))
		return c
	}
	loc, err := location(u, resp)
	if err != nil {
		return fail(c, err)
	}
	half := len(blob) / 2
	for i, part := range [][2]int{{0, half}, {half, len(blob)}} {
		hdr := map[string]string{
			"Content-Type":  "application/octet-stream",
			"Content-Range": fmt.Sprintf("%d-%d", part[0], part[1]-1),
		}
		resp, body, err := p.do(http.MethodPatch, loc, hdr, blob[part[0]:part[1]])
		if err != nil {
			return fail(c, err)
		}
		if resp.StatusCode != http.StatusAccepted {
			_, _, _ = p.do(http.MethodDelete, loc, nil, nil)
			c.Detail = fmt.Sprintf("PATCH chunk %d with Content-Range answered HTTP %d%s", i+1, resp.StatusCode, bodyNote(body))
			return c
		}
		if loc, err = location(loc, resp); err != nil {
			return fail(c, err)
		}
	}
	cu, err := url.Parse(loc)
	if err != nil {
		return fail(c, err)
	}
	q := cu.Query()
	q.Set("digest", h.String())
	cu.RawQuery = q.Encode()
	resp, body, err = p.do(http.MethodPut, cu.String(), nil, nil)
	if err != nil {
		return fail(c, err)
	}
	if resp.StatusCode != http.StatusCreated {
		c.Detail = fmt.Sprintf("PUT to close the chunked upload answered HTTP %d%s", resp.StatusCode, bodyNote(body))
		return c
	}
	p.blobs = append(p.blobs, blobRef{p.repo, h})
	resp, _, err = p.do(http.MethodHead, p.url(p.repo, "blobs/"+h.String()), nil, nil)
	if err != nil {
		return fail(c, err)
	}
	if resp.StatusCode != http.StatusOK || resp.ContentLength != int64(len(blob)) {
		c.Detail = fmt.Sprintf("upload closed, but HEAD of the blob answered HTTP %d, %d bytes", resp.StatusCode, resp.ContentLength)
		return c
	}
	c.OK, c.Detail = true, "two PATCH requests with Content-Range, then PUT ?digest="
	return c
}

// cleanup deletes the scratch manifests, newest first, and records
// whether deletes work.
func (p *prober) cleanup(rep *Report) {
	c := Check{Name: CheckDelete}
	if len(p.pushed) == 0 {
		c.Detail = "not tried: nothing was pushed"
		rep.set(c)
		return
	}
	ctx := context.WithoutCancel(p.ctx)
	ropts := append(append([]remote.Option{}, p.ropts...), remote.WithContext(ctx))
	var failed error
	for i := len(p.pushed) - 1; i >= 0; i-- {
		err := remote.Delete(p.repo.Digest(p.pushed[i].String()), ropts...)
		if err != nil && !isNotFound(err) && failed == nil {
			failed = err
		}
	}
	if failed != nil {
		c = fail(c, failed)
		c.Detail += fmt.Sprintf("; scratch tags %s-* remain in %s", p.prefix, p.repo)
	} else {
		c.OK, c.Detail = true, fmt.Sprintf("%d scratch manifests deleted by digest", len(p.pushed))
	}
	rep.set(c)
	ok := c.OK
	p.deleteOK = &ok
}

// cleanupBlobs deletes the blobs the raw checks uploaded, best effort.
func (p *prober) cleanupBlobs() {
	if p.client == nil || (p.deleteOK != nil && !*p.deleteOK) {
		return
	}
	for _, b := range p.blobs {
		_, _, _ = p.do(http.MethodDelete, p.url(b.repo, "blobs/"+b.d.String()), nil, nil)
	}
}

// fail records err as the reason c is not OK.
func fail(c Check, err error) Check {
	c.OK = false
	c.Detail = describe(err)
	return c
}

// describe makes one short line of a registry error.
func describe(err error) string {
	var te *transport.Error
	if errors.As(err, &te) {
		var parts []string
		for _, d := range te.Errors {
			s := string(d.Code)
			if d.Message != "" {
				s += ": " + d.Message
			}
			parts = append(parts, s)
		}
		msg := fmt.Sprintf("HTTP %d", te.StatusCode)
		if len(parts) > 0 {
			msg += " " + strings.Join(parts, "; ")
		}
		return truncate(msg)
	}
	return truncate(err.Error())
}

func truncate(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 240 {
		s = s[:237] + "..."
	}
	return s
}

func bodyNote(b []byte) string {
	s := strings.TrimSpace(string(b))
	if s == "" {
		return ""
	}
	return ": " + truncate(s)
}

// isAuth reports a refusal for want of credentials or rights.
func isAuth(err error) bool {
	var te *transport.Error
	if !errors.As(err, &te) {
		return false
	}
	if te.StatusCode == http.StatusUnauthorized || te.StatusCode == http.StatusForbidden {
		return true
	}
	for _, d := range te.Errors {
		if d.Code == transport.UnauthorizedErrorCode || d.Code == transport.DeniedErrorCode {
			return true
		}
	}
	return false
}

func isNotFound(err error) bool {
	var te *transport.Error
	return errors.As(err, &te) && te.StatusCode == http.StatusNotFound
}

// isRefusal reports whether the registry answered that it does not take
// this content (as opposed to an outage, or missing credentials).
func isRefusal(err error) bool {
	var te *transport.Error
	if !errors.As(err, &te) || isAuth(err) {
		return false
	}
	for _, d := range te.Errors {
		switch d.Code {
		case transport.ManifestInvalidErrorCode, transport.UnsupportedErrorCode, transport.ManifestBlobUnknownErrorCode,
			transport.BlobUnknownErrorCode, transport.NameInvalidErrorCode, transport.TagInvalidErrorCode,
			transport.SizeInvalidErrorCode, transport.DigestInvalidErrorCode:
			return true
		}
	}
	switch te.StatusCode {
	case http.StatusBadRequest, http.StatusMethodNotAllowed, http.StatusUnsupportedMediaType,
		http.StatusUnprocessableEntity, http.StatusNotFound, http.StatusNotImplemented:
		return true
	}
	return false
}

// refusalOr is nil for a refusal and err for anything else (the answer
// is then unknown).
func refusalOr(err error) error {
	if isRefusal(err) {
		return nil
	}
	return err
}
