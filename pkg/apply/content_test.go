package apply_test

import (
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/addonpkg/addonpkg/pkg/apply"
)

// A re-apply of the same objects by a caller that names no content (no
// digest, no identity: a rendered stream alone) sends the API server no
// more dry-runs than one that does, one per object (ssa's): the record
// names the objects' content (Record.Content), so the dry-run for
// immutable changes runs only when they changed
// (TestImmutableRefusedUnderTheSameVersion). Before, every such no-op
// re-apply dry-ran every object once more.
func TestNoOpReapplyWithoutIdentityDryRunsOnce(t *testing.T) {
	k := newCluster(t)
	a := k.addon(t, k.prefix, "1", `
apiVersion: v1
kind: Namespace
metadata: {name: NS}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: a, namespace: NS}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: s, namespace: NS}
`)
	a.Source, a.Digest, a.Identity = "", "", ""
	var dryRuns atomic.Int64
	cfg := rest.CopyConfig(k.env.Admin)
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if r.Method == http.MethodPatch && r.URL.Query().Get("dryRun") != "" {
				dryRuns.Add(1)
			}
			return rt.RoundTrip(r)
		})
	}
	c, err := apply.New(cfg, apply.ClientOptions{PollInterval: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = k.admin.Uninstall(k.ctx, a.Name, apply.UninstallOptions{Timeout: 20 * time.Second}) })
	k.mustApply(t, a, apply.Options{Timeout: 20 * time.Second})
	dryRuns.Store(0)
	cs, err := c.Apply(k.ctx, a, apply.Options{Timeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if n := dryRuns.Load(); n != int64(len(a.Objects)) {
		t.Errorf("a no-op re-apply of %d objects sent %d dry-runs, want %d (ssa's alone):\n%s", len(a.Objects), n, len(a.Objects), cs)
	}
	if cs.Count(apply.Unchanged) != len(a.Objects) {
		t.Errorf("the re-apply changed something:\n%s", cs)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
