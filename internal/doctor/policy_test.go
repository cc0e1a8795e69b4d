package doctor

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"

	"github.com/addonpkg/addonpkg/internal/netguard"
	"github.com/addonpkg/addonpkg/internal/testing/testregistry"
)

// recorder is a transport that answers 200 and counts the requests that
// reached it.
type recorder struct{ n int }

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	r.n++
	return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody, Request: req}, nil
}

// Probe used as a library, without Connect, applies the transport policy
// all the same: the zero value's raw checks go through a netguard
// transport, and a base given to WithHTTP is put under one. (Before,
// the zero value used remote.DefaultTransport and WithHTTP took any base
// as it was: credentials went in clear text to any host.)
func TestProbeWithoutConnectKeepsThePolicy(t *testing.T) {
	repo, err := name.NewRepository("registry.example.com/addons/x")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	cleartext := func(t *testing.T, rt http.RoundTripper) error {
		t.Helper()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://registry.example.com/v2/", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.SetBasicAuth("u", "secret")
		resp, err := rt.RoundTrip(req)
		if err == nil {
			resp.Body.Close()
		}
		return err
	}

	p, err := newProber(ctx, repo, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := p.base.(*netguard.Transport); !ok {
		t.Fatalf("the zero value's transport is a %T, not under the policy", p.base)
	}
	if err := cleartext(t, p.base); !errors.Is(err, netguard.ErrCleartextCredentials) {
		t.Errorf("zero value: credentials in clear text to a remote host: %v", err)
	}

	rec := &recorder{}
	p, err = newProber(ctx, repo, nil, []Option{WithHTTP(rec, authn.DefaultKeychain)})
	if err != nil {
		t.Fatal(err)
	}
	if err := cleartext(t, p.base); !errors.Is(err, netguard.ErrCleartextCredentials) || rec.n != 0 {
		t.Errorf("WithHTTP(plain transport): %v, %d requests sent", err, rec.n)
	}
	// A guarded base is kept as it is, not guarded twice.
	g := &netguard.Transport{Base: rec}
	if p, _ := newProber(ctx, repo, nil, []Option{WithHTTP(g, nil)}); p.base != g {
		t.Errorf("WithHTTP(guarded) = %T, want the same transport", p.base)
	}
}

// And the zero value works: Probe with no remote options and no Option
// probes a real registry on 127.0.0.1.
func TestProbeZeroValue(t *testing.T) {
	t.Setenv("DOCKER_CONFIG", t.TempDir())
	reg := testregistry.Start(t, testregistry.Options{DeleteEnabled: true})
	repo, err := name.NewRepository(reg.Host + "/addons/zero")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Probe(context.Background(), repo, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c, ok := rep.Get(CheckMount); !ok || !c.OK {
		t.Errorf("mount check without Connect: %+v", c)
	}
}
