package apply_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/addonpkg/addonpkg/pkg/apply"
)

// A proxy or load balancer in front of the API server that answers 503
// (a maintenance page) or 429 with a Retry-After of an hour: client-go
// retries such an answer ten times, each after the Retry-After the
// server asked for, so one request of an upgrade waited ten hours, the
// command silent, its inventory pending. The retries are bounded in time
// too: the upgrade fails in seconds, naming the object, and leaves the
// inventory pending with every object it may hold.
//
// Parallel: each case waits out client-go's ten retries (20 s of sleep,
// no work), on objects of its own (newCluster's prefix), so the cases
// wait together instead of adding 40 s to the package.
func TestRetryAfterIsBounded(t *testing.T) {
	t.Parallel()
	for _, code := range []int{http.StatusServiceUnavailable, http.StatusTooManyRequests} {
		t.Run(http.StatusText(code), func(t *testing.T) {
			t.Parallel()
			k := newCluster(t)
			v1 := k.addon(t, k.prefix, "1", killV1)
			v2 := k.addon(t, k.prefix, "2", killV2)
			k.mustApply(t, v1, apply.Options{})
			broken := k.faultyClient(t, func(w http.ResponseWriter, r *http.Request) bool {
				if r.Method != http.MethodPatch || !strings.HasSuffix(r.URL.Path, "/configmaps/c") || r.URL.Query().Has("dryRun") {
					return false
				}
				w.Header().Set("Retry-After", "3600")
				w.Header().Set("Content-Type", "text/html")
				w.WriteHeader(code)
				w.Write([]byte(htmlPage))
				return true
			})
			ctx, cancel := context.WithTimeout(k.ctx, 90*time.Second)
			defer cancel()
			start := time.Now()
			_, err := broken.Apply(ctx, v2, apply.Options{})
			if took := time.Since(start); took > 45*time.Second {
				t.Errorf("the upgrade took %s to fail on an answer asking to retry in an hour", took.Round(time.Second))
			}
			oneLine(t, err, "ConfigMap", "/c")
			if !errors.Is(err, apply.ErrServer) {
				t.Errorf("error %q does not match ErrServer", err)
			}
			if errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("the error %q says the request timed out, not what the server answered", err)
			}
			inv := k.inventory(t, k.prefix)
			want := []string{"_" + k.prefix + "__Namespace", k.prefix + "_a__ConfigMap", k.prefix + "_b__ConfigMap", k.prefix + "_c__ConfigMap"}
			if got := ids(inv); inv.Phase != apply.PhasePending || !slices.Equal(got, want) {
				t.Errorf("after the failed upgrade the inventory is %s %v, want pending %v", inv.Phase, got, want)
			}
		})
	}
}

// An API server that fails the delete of a pruned object (a proxy's
// error page) in the middle of an upgrade leaves the inventory pending
// with the old objects and the new, so the next apply prunes what this
// one could not; the error is one line naming the object.
func TestMisbehavingAPIServerMidPrune(t *testing.T) {
	k := newCluster(t)
	v1 := k.addon(t, k.prefix, "1", killV1)
	v2 := k.addon(t, k.prefix, "2", killV2)
	k.mustApply(t, v1, apply.Options{})
	broken := k.faultyClient(t, func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method != http.MethodDelete || !strings.HasSuffix(r.URL.Path, "/configmaps/b") {
			return false
		}
		return errorPage(w, r)
	})
	_, err := broken.Apply(k.ctx, v2, apply.Options{Timeout: 30 * time.Second})
	oneLine(t, err, "ConfigMap", "/b", "502 Bad Gateway")
	if !errors.Is(err, apply.ErrServer) {
		t.Errorf("error %q does not match ErrServer", err)
	}
	inv := k.inventory(t, k.prefix)
	want := []string{"_" + k.prefix + "__Namespace", k.prefix + "_a__ConfigMap", k.prefix + "_b__ConfigMap", k.prefix + "_c__ConfigMap"}
	if got := ids(inv); inv.Phase != apply.PhasePending || !slices.Equal(got, want) {
		t.Fatalf("after the failed prune the inventory is %s %v, want pending %v", inv.Phase, got, want)
	}
	if !k.exists(t, gvrConfigMap, k.prefix, "b") {
		t.Fatal("b is gone though its delete failed")
	}
	k.mustApply(t, v2, apply.Options{Timeout: 30 * time.Second})
	inv = k.inventory(t, k.prefix)
	if got := ids(inv); inv.Phase != apply.PhaseApplied || !slices.Equal(got, []string{want[0], want[1], want[3]}) || k.exists(t, gvrConfigMap, k.prefix, "b") {
		t.Errorf("the next apply left %s %v, b there: %v", inv.Phase, got, k.exists(t, gvrConfigMap, k.prefix, "b"))
	}
}
