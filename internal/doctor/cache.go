package doctor

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"

	"github.com/addonpkg/addonpkg/internal/atomicfile"
	"github.com/addonpkg/addonpkg/internal/netguard"
	"github.com/addonpkg/addonpkg/pkg/registry"
)

// DefaultTTL is how long a cached report stays valid.
const DefaultTTL = 24 * time.Hour

// Cache keeps the last report of each registry as a JSON file,
// <Dir>/<registry>.json.
type Cache struct {
	// Dir holds the files; DefaultCache puts it under os.UserCacheDir().
	Dir string
	// TTL is how long a report is used; 0 means DefaultTTL.
	TTL time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// DefaultCache is the cache in os.UserCacheDir()/addonpkg/doctor.
func DefaultCache() (*Cache, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return nil, fmt.Errorf("registry capability cache: %w", err)
	}
	return &Cache{Dir: filepath.Join(dir, "addonpkg", "doctor")}, nil
}

func (c *Cache) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

func (c *Cache) ttl() time.Duration {
	if c.TTL > 0 {
		return c.TTL
	}
	return DefaultTTL
}

// path is the file of a registry: its host with every character other
// than letters, digits, dots and dashes turned into "_".
func (c *Cache) path(reg string) string {
	safe := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '-':
			return r
		}
		return '_'
	}, reg)
	if safe == "" || strings.Trim(safe, ".") == "" {
		safe = "_"
	}
	return filepath.Join(c.Dir, safe+".json")
}

// Load returns the registry's report if there is one younger than the TTL.
func (c *Cache) Load(reg string) (*Report, bool) {
	if c == nil {
		return nil, false
	}
	b, err := os.ReadFile(c.path(reg))
	if err != nil {
		return nil, false
	}
	var r Report
	if err := json.Unmarshal(b, &r); err != nil || r.Registry != reg {
		return nil, false
	}
	age := c.now().Sub(r.Time)
	if age < 0 || age > c.ttl() {
		return nil, false
	}
	return &r, true
}

// Store saves a report as its registry's entry, atomically.
func (c *Cache) Store(r *Report) error {
	if c == nil {
		return nil
	}
	if err := os.MkdirAll(c.Dir, 0o700); err != nil {
		return fmt.Errorf("registry capability cache: %w", err)
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := atomicfile.WriteBytes(c.path(r.Registry), ".report-", 0o600, append(b, '\n')); err != nil {
		return fmt.Errorf("registry capability cache: %w", err)
	}
	return nil
}

// record adds checks to the registry's cached report (a fresh one if the
// cached one is missing or too old).
func (c *Cache) record(repo name.Repository, checks ...Check) error {
	if c == nil {
		return nil
	}
	r, ok := c.Load(repo.RegistryStr())
	if !ok {
		r = &Report{Registry: repo.RegistryStr(), Repository: repo.Name(), Time: c.now().UTC()}
	}
	for _, ch := range checks {
		r.set(ch)
	}
	return c.Store(r)
}

// AcceptsArtifact tells whether the registry of repo takes the artifact
// form (its own config media type). A fresh cached answer is used; else
// one throwaway artifact is pushed to repo (and deleted) and the answer
// cached. It fails only when the question could not be answered
// (credentials, network). cache may be nil.
func AcceptsArtifact(ctx context.Context, repo name.Repository, ropts []remote.Option, cache *Cache) (bool, error) {
	if r, ok := cache.Load(repo.RegistryStr()); ok {
		if c, ok := r.Get(CheckArtifact); ok {
			return c.OK, nil
		}
	}
	p, err := newProber(ctx, repo, ropts, nil)
	if err != nil {
		return false, err
	}
	c, err := p.artifactForm()
	scratch := &Report{}
	p.cleanup(scratch)
	if err != nil {
		return false, registry.Explain(repo.Name(), err)
	}
	if err := cache.record(repo, c); err != nil {
		return c.OK, err
	}
	return c.OK, nil
}

// AcceptsArtifact is the package's AcceptsArtifact with this cache, so
// that a *Cache is the transfer.FormProbe of transfer.PushAuto.
func (c *Cache) AcceptsArtifact(ctx context.Context, repo name.Repository, ropts []remote.Option) (bool, error) {
	return AcceptsArtifact(ctx, repo, ropts, c)
}

// Refused reports whether err, from pushing the artifact form to repo,
// is the registry refusing that form, and then remembers the refusal (a
// probe may have been accepted where a repository's policy refuses).
func (c *Cache) Refused(repo name.Repository, err error) bool {
	if !isRefusal(err) {
		return false
	}
	_ = c.record(repo, Check{Name: CheckArtifact, Detail: describe(err)})
	return true
}

// Connect turns registry options into the remote options and the Probe
// options of one registry connection: both go through the same base
// transport (TLS choices, proxy) and keychain.
func Connect(ctx context.Context, o registry.Options) ([]remote.Option, []Option, error) {
	base := o.Transport
	if base == nil {
		t, err := o.BaseTransport()
		if err != nil {
			return nil, nil, err
		}
		base = t
	}
	o.Transport = base
	ropts, err := o.Remote(ctx)
	if err != nil {
		return nil, nil, err
	}
	ua := o.UserAgent
	if ua == "" {
		ua = "addonpkg/" + registry.Version
	}
	// The user agent goes under the guard (it adds no credentials), so
	// that WithHTTP finds the base guarded and does not guard it twice.
	if g, ok := base.(*netguard.Transport); ok {
		ng := *g
		ng.Base = transport.NewUserAgent(g.Base, ua)
		return ropts, []Option{WithHTTP(&ng, o.Keychain)}, nil
	}
	return ropts, []Option{WithHTTP(transport.NewUserAgent(base, ua), o.Keychain)}, nil
}
