package source_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/addonpkg/addonpkg/pkg/build"
	"github.com/addonpkg/addonpkg/pkg/errdef"
	"github.com/addonpkg/addonpkg/pkg/layout"
	"github.com/addonpkg/addonpkg/pkg/reference"
	"github.com/addonpkg/addonpkg/pkg/registry"
	"github.com/addonpkg/addonpkg/pkg/source"
	"github.com/addonpkg/addonpkg/pkg/unpack"
)

// countingTransport fails every request and counts them: a short name
// must not cause any.
type countingTransport struct{ n atomic.Int32 }

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return nil, errors.New("test: no request may leave for " + r.URL.Host)
}

func TestShortNameStaysLocal(t *testing.T) {
	st, err := layout.Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	res := buildExample(t, build.Options{Name: "coredns", Version: "1"})
	if _, err := st.WriteImage(context.Background(), res.Image, nil, "coredns:1.11", "coredns:1.12", "registry.example.com/addons/coredns:2", "metrics-server:1"); err != nil {
		t.Fatal(err)
	}
	rt := &countingTransport{}
	opts := source.Options{Store: st, Registry: registry.Options{Transport: rt}, StoreFirst: true}

	for _, tc := range []struct {
		src     string
		pull    string
		closest []string // nil: found
		wantErr error
	}{
		{src: "coredns:1.11"},
		{src: "coredns:1.11", pull: source.PullNever},
		{src: "coredns:1", closest: []string{"coredns:1.11", "coredns:1.12", "registry.example.com/addons/coredns:2"}, wantErr: source.ErrNotInStore},
		{src: "mss:1", closest: []string{}, wantErr: source.ErrNotInStore},
		{src: "metrics-sever:1", closest: []string{"metrics-server:1"}, wantErr: source.ErrNotInStore},
		{src: "library/coredns", closest: []string{"coredns:1.11", "coredns:1.12", "registry.example.com/addons/coredns:2"}, wantErr: source.ErrNotInStore},
		{src: "coredns:1.11", pull: source.PullAlways, wantErr: source.ErrShortName},
	} {
		t.Run(tc.src+"/"+tc.pull, func(t *testing.T) {
			ref, err := source.Parse(tc.src)
			if err != nil {
				t.Fatal(err)
			}
			if ref.Kind != source.KindStore {
				t.Fatalf("%s parses as %s, want a store name", tc.src, ref.Kind)
			}
			o := opts
			o.Pull = tc.pull
			a, err := source.Open(context.Background(), ref, o)
			if tc.wantErr == nil {
				if err != nil {
					t.Fatalf("Open: %v", err)
				}
				a.Close()
				return
			}
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("Open: %v, want %v", err, tc.wantErr)
			}
			msg := err.Error()
			if strings.Contains(msg, "\n") || !strings.Contains(msg, tc.src) || !strings.Contains(msg, "docker.io/") {
				t.Errorf("error %q: want one line naming %s and the docker.io/ spelling", msg, tc.src)
			}
			var nis *source.NotInStoreError
			if tc.wantErr == source.ErrNotInStore {
				if !errors.As(err, &nis) || !errors.Is(err, errdef.ErrNotFound) {
					t.Fatalf("error %v is not a *NotInStoreError matching errdef.ErrNotFound", err)
				}
				if !slices.Equal(nis.Closest, tc.closest) && (len(nis.Closest) > 0 || len(tc.closest) > 0) {
					t.Errorf("closest %q, want %q", nis.Closest, tc.closest)
				}
				for _, c := range tc.closest {
					if !strings.Contains(msg, c) {
						t.Errorf("error %q does not suggest %s", msg, c)
					}
				}
			}
		})
	}
	if n := rt.n.Load(); n != 0 {
		t.Errorf("%d registry requests for short names, want none", n)
	}
}

func TestDockerHubName(t *testing.T) {
	for in, want := range map[string]string{
		"coredns":          "docker.io/library/coredns",
		"coredns:1.11":     "docker.io/library/coredns:1.11",
		"org/coredns:1":    "docker.io/org/coredns:1",
		"coredns@sha256:0": "docker.io/library/coredns@sha256:0",
	} {
		if got := reference.DockerHub(in); got != want {
			t.Errorf("DockerHubName(%q) = %q, want %q", in, got, want)
		}
	}
}

// A registry reference the store does not hold, read with the pull
// policy never, is told apart with errors.Is as a short name is
// (ErrNotInStore, errdef.ErrNotFound), not by its text, and reaches no
// registry.
func TestPullNeverNotInStore(t *testing.T) {
	st, err := layout.Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	rt := &countingTransport{}
	opts := source.Options{Store: st, Registry: registry.Options{Transport: rt}, StoreFirst: true, Pull: source.PullNever}
	_, err = source.Resolve(context.Background(), "registry.example.com/addons/coredns:9", opts, unpack.Options{})
	var nis *source.NotInStoreError
	if !errors.Is(err, source.ErrNotInStore) || !errors.Is(err, errdef.ErrNotFound) || !errors.As(err, &nis) || !nis.PullNever {
		t.Fatalf("Resolve: %v (%T), want a *NotInStoreError with PullNever, matching ErrNotInStore and errdef.ErrNotFound", err, err)
	}
	if want := "registry.example.com/addons/coredns:9: not in the local store (and the pull policy is never)"; err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
	if n := rt.n.Load(); n != 0 {
		t.Errorf("%d registry requests with the pull policy never, want none", n)
	}
}

// A pull policy that is not one of the three ("Always", as an image's
// imagePullPolicy spells it) is refused before anything is read, not
// taken for the default, which reads the registry.
func TestUnknownPullPolicyRefused(t *testing.T) {
	st, err := layout.Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	rt := &countingTransport{}
	opts := source.Options{Store: st, Registry: registry.Options{Transport: rt}, StoreFirst: true, Pull: "Never"}
	_, err = source.Resolve(context.Background(), "registry.example.com/addons/coredns:9", opts, unpack.Options{})
	if !errors.Is(err, source.ErrBadOptions) {
		t.Fatalf("Resolve with Pull %q: %v, want ErrBadOptions", opts.Pull, err)
	}
	if n := rt.n.Load(); n != 0 {
		t.Errorf("%d registry requests with an unknown pull policy, want none", n)
	}
}
