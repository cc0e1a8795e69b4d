package apply_test

import (
	"bytes"
	"context"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/addonpkg/addonpkg/pkg/apply"
)

// fault breaks a request that goes through the proxy: it answers w itself
// and returns true, or returns false to let the request through.
type fault func(w http.ResponseWriter, r *http.Request) bool

// faultyClient is a client of the shared API server through a TLS proxy
// that lets fault break the requests it picks, as a load balancer, a
// half-broken aggregated API or a corporate proxy in front of a real API
// server does.
func (k *cluster) faultyClient(t *testing.T, f fault) *apply.Client {
	t.Helper()
	upstream, err := url.Parse(k.env.Admin.Host)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := rest.TransportFor(k.env.Admin) // the admin's TLS and token
	if err != nil {
		t.Fatal(err)
	}
	proxy := &httputil.ReverseProxy{
		Rewrite:       func(r *httputil.ProxyRequest) { r.SetURL(upstream) },
		Transport:     tr,
		FlushInterval: -1, // watches stream
	}
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !f(w, r) {
			proxy.ServeHTTP(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	c, err := apply.New(&rest.Config{Host: srv.URL, TLSClientConfig: rest.TLSClientConfig{CAData: ca}},
		apply.ClientOptions{PollInterval: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// oneLine fails t unless err is one line naming every one of want.
func oneLine(t *testing.T, err error, want ...string) {
	t.Helper()
	if err == nil {
		t.Fatal("no error")
	}
	msg := err.Error()
	if strings.ContainsAny(msg, "\n\r") || len(msg) > 1000 {
		t.Errorf("error is not one short line (%d bytes): %q", len(msg), msg)
	}
	for _, w := range want {
		if !strings.Contains(msg, w) {
			t.Errorf("error %q does not name %q", msg, w)
		}
	}
}

// htmlPage is what a proxy or load balancer answers in the API server's
// place: many lines, no Kubernetes Status.
const htmlPage = "<html>\n<head><title>502 Bad Gateway</title></head>\n<body>\n<center><h1>502 Bad Gateway</h1></center>\n" +
	"<hr><center>nginx</center>\n</body>\n</html>\n"

// errorPage answers as a proxy does when the API server behind it fails.
func errorPage(w http.ResponseWriter, r *http.Request) bool {
	w.Header().Set("Content-Type", "text/html")
	w.WriteHeader(http.StatusBadGateway)
	w.Write([]byte(htmlPage))
	return true
}

// An API server that fails in the middle of an upgrade (a 502 page from
// a proxy, a stalled answer, a dropped connection) gives a one-line
// error naming what failed, and leaves the cluster as the inventory
// describes it: pending, listing the old objects and the new (or, when
// it failed at a dry-run, before any change, the previous record). The next
// apply through a healthy server finishes the upgrade and prunes what
// the failed one left.
func TestMisbehavingAPIServerMidApply(t *testing.T) {
	if testing.Short() {
		t.Skip("needs a real API server")
	}
	for _, tc := range []struct {
		name  string
		fault fault
		want  []string
		is    error
		// atDryRun breaks c's dry-run instead of its patch: nothing has
		// changed yet, so the apply takes its pending inventory back.
		atDryRun bool
	}{
		{"proxy error page", errorPage, []string{"ConfigMap", "/c", "502 Bad Gateway"}, apply.ErrServer, false},
		{"stalled answer", nil, []string{"ConfigMap", "/c", "deadline exceeded"}, context.DeadlineExceeded, false},
		{"dropped connection", func(w http.ResponseWriter, r *http.Request) bool {
			conn, _, err := http.NewResponseController(w).Hijack()
			if err == nil {
				conn.Close()
			}
			return true
		}, []string{"ConfigMap", "EOF"}, apply.ErrUnreachable, false},
		{"proxy error page at the dry-run", errorPage, []string{"ConfigMap", "/c", "502 Bad Gateway"}, apply.ErrServer, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := newCluster(t)
			v1 := k.addon(t, k.prefix, "1", killV1)
			v2 := k.addon(t, k.prefix, "2", killV2)
			k.mustApply(t, v1, apply.Options{})

			// The new ConfigMap c is where the upgrade breaks: a, which
			// both versions hold, may or may not have been applied.
			// A stalled answer stalls until the apply has given up.
			released := make(chan struct{})
			broken := k.faultyClient(t, func(w http.ResponseWriter, r *http.Request) bool {
				if r.Method != http.MethodPatch || !strings.HasSuffix(r.URL.Path, "/configmaps/c") || r.URL.Query().Has("dryRun") != tc.atDryRun {
					return false
				}
				if tc.fault == nil {
					<-released
					return true
				}
				return tc.fault(w, r)
			})
			ctx, cancel := context.WithTimeout(k.ctx, 5*time.Second)
			defer cancel()
			_, err := broken.Apply(ctx, v2, apply.Options{})
			close(released)
			oneLine(t, err, tc.want...)
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("error %v does not match %v", err, tc.is)
			}

			inv := k.inventory(t, k.prefix)
			want, phase := []string{"_" + k.prefix + "__Namespace", k.prefix + "_a__ConfigMap", k.prefix + "_b__ConfigMap", k.prefix + "_c__ConfigMap"}, apply.PhasePending
			if tc.atDryRun {
				want, phase = want[:3], apply.PhaseApplied
			}
			if got := ids(inv); inv.Phase != phase || !slices.Equal(got, want) {
				t.Fatalf("after the failed upgrade the inventory is %s %v, want %s %v", inv.Phase, got, phase, want)
			}
			if !k.exists(t, gvrConfigMap, k.prefix, "b") {
				t.Error("the failed upgrade pruned b before its new objects were in")
			}

			cs := k.mustApply(t, v2, apply.Options{})
			inv = k.inventory(t, k.prefix)
			want = []string{"_" + k.prefix + "__Namespace", k.prefix + "_a__ConfigMap", k.prefix + "_c__ConfigMap"}
			if got := ids(inv); inv.Phase != apply.PhaseApplied || !slices.Equal(got, want) || k.exists(t, gvrConfigMap, k.prefix, "b") {
				t.Errorf("the next apply left the inventory %s %v, want applied %v and b pruned:\n%s", inv.Phase, got, want, cs)
			}
		})
	}
}

// An endpoint that is not an API server (a login page answering 200, a
// proxy's error page) is refused in one line naming the server, before
// anything is written.
func TestNotAnAPIServer(t *testing.T) {
	if testing.Short() {
		t.Skip("needs a real API server")
	}
	k := newCluster(t)
	a := k.addon(t, k.prefix, "1", killV1)
	for _, tc := range []struct {
		name   string
		status int
		want   []string
		is     error
	}{
		{"login page", http.StatusOK, []string{"not a Kubernetes API server", "<html>"}, apply.ErrUnreachable},
		{"proxy error page", http.StatusServiceUnavailable, []string{"unable to handle the request"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := k.faultyClient(t, func(w http.ResponseWriter, r *http.Request) bool {
				w.Header().Set("Content-Type", "text/html")
				w.WriteHeader(tc.status)
				w.Write([]byte(htmlPage))
				return true
			})
			err := c.Ping(k.ctx)
			oneLine(t, err, append([]string{c.Host()}, tc.want...)...)
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("ping: %v does not match %v", err, tc.is)
			}
			_, err = c.Apply(k.ctx, a, apply.Options{})
			oneLine(t, err, a.Name)
			if k.inventorySecret(t, a.Name) != nil {
				t.Error("an apply to something that is not an API server wrote an inventory")
			}
		})
	}
}

// An uninstall whose API server fails on one deletion is one line naming
// the object, and leaves the inventory pending with every object it
// listed; the next uninstall through a healthy server finishes it.
func TestMisbehavingAPIServerMidUninstall(t *testing.T) {
	k, a, broken := installedWithFaultyDelete(t, func(_ *cluster, w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusBadGateway)
		w.Write([]byte(htmlPage))
	})
	_, err := broken.Uninstall(k.ctx, a.Name, apply.UninstallOptions{Timeout: 30 * time.Second})
	oneLine(t, err, "ConfigMap", "/b", "502 Bad Gateway")
	if !errors.Is(err, apply.ErrServer) {
		t.Errorf("error %q does not match ErrServer", err)
	}
	inv := k.inventory(t, a.Name)
	want := []string{"_" + k.prefix + "__Namespace", k.prefix + "_a__ConfigMap", k.prefix + "_b__ConfigMap"}
	if inv == nil || inv.Phase != apply.PhasePending || !slices.Equal(ids(inv), want) {
		t.Fatalf("after the failed uninstall the inventory is %+v, want pending %v", inv, want)
	}
	if !k.exists(t, gvrConfigMap, k.prefix, "b") {
		t.Fatal("b is gone though its deletion failed")
	}
	if _, err := k.admin.Uninstall(k.ctx, a.Name, apply.UninstallOptions{Timeout: 30 * time.Second}); err != nil {
		t.Fatalf("the next uninstall: %v", err)
	}
	if k.inventorySecret(t, a.Name) != nil || k.exists(t, gvrConfigMap, k.prefix, "b") {
		t.Error("the next uninstall left the inventory or b")
	}
}

// TestApplyThatChangedNoRecordNoticesAnother: an apply with no inventory
// to write (the add-on as its record says) that ran while another apply
// of the add-on upgraded it, and so patched the upgrade's object back,
// fails with ErrConflict instead of reporting success under a record
// that now says the other version.
func TestApplyThatChangedNoRecordNoticesAnother(t *testing.T) {
	k := newCluster(t)
	v1 := k.addon(t, k.prefix, "1", killV1)
	v2 := k.addon(t, k.prefix, "2", killV2)
	k.mustApply(t, v1, apply.Options{})

	// The re-apply of v1 is held at its dry-run of a until v2 is in.
	reached, upgraded := make(chan struct{}), make(chan struct{})
	var once sync.Once
	slow := k.faultyClient(t, func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method == http.MethodPatch && strings.HasSuffix(r.URL.Path, "/configmaps/a") && r.URL.Query().Has("dryRun") {
			once.Do(func() {
				close(reached)
				<-upgraded
			})
		}
		return false
	})
	done := make(chan error)
	go func() {
		_, err := slow.Apply(k.ctx, v1, apply.Options{})
		done <- err
	}()
	go func() {
		<-reached
		if _, err := k.admin.Apply(k.ctx, v2, apply.Options{}); err != nil {
			t.Errorf("the upgrade: %v", err)
		}
		close(upgraded)
	}()
	err := <-done
	if !errors.Is(err, apply.ErrConflict) {
		t.Fatalf("the re-apply that ran across an upgrade = %v, want ErrConflict", err)
	}
	oneLine(t, err, "another apply")
	if inv := k.inventory(t, k.prefix); inv.Version != "2" || inv.Phase != apply.PhaseApplied {
		t.Errorf("the inventory records %s %s, want the upgrade's", inv.Version, inv.Phase)
	}
}

// An object deleted by someone else between the read and the delete of
// an uninstall (a Namespace that finishes terminating, say) answers the
// delete with 404: it is gone, which is what the uninstall wanted, not a
// failure (ssa's DeleteAll failed the uninstall).
func TestUninstallObjectGoneBeforeItsDelete(t *testing.T) {
	k, a, racing := installedWithFaultyDelete(t, func(k *cluster, w http.ResponseWriter, r *http.Request) {
		// Someone else deletes it first; this delete finds it gone.
		if err := k.typed.CoreV1().ConfigMaps(k.prefix).Delete(r.Context(), "b", metav1.DeleteOptions{}); err != nil {
			t.Errorf("delete b behind the uninstall's back: %v", err)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprintf(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"configmaps \"b\" not found","reason":"NotFound","details":{"name":"b","kind":"configmaps"},"code":404}`)
	})
	cs, err := racing.Uninstall(k.ctx, a.Name, apply.UninstallOptions{Timeout: 30 * time.Second})
	if err != nil {
		t.Fatalf("uninstall with b gone before its delete: %v", err)
	}
	if k.inventorySecret(t, a.Name) != nil || k.exists(t, gvrConfigMap, k.prefix, "a") {
		t.Errorf("the uninstall left its inventory or a:\n%s", cs)
	}
}

// installedWithFaultyDelete installs killV1 and gives a client whose API
// server answers the DELETE of its ConfigMap b with answer, and every
// other request as the real one does.
func installedWithFaultyDelete(t *testing.T, answer func(k *cluster, w http.ResponseWriter, r *http.Request)) (*cluster, apply.Addon, *apply.Client) {
	t.Helper()
	if testing.Short() {
		t.Skip("needs a real API server")
	}
	k := newCluster(t)
	a := k.addon(t, k.prefix, "1", killV1)
	k.mustApply(t, a, apply.Options{})
	c := k.faultyClient(t, func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method != http.MethodDelete || !strings.HasSuffix(r.URL.Path, "/configmaps/b") {
			return false
		}
		answer(k, w, r)
		return true
	})
	return k, a, c
}

// The pre-flight asks again by name where a verb is refused on a
// resource: for an add-on of many objects, hundreds of reviews. They are
// asked side by side, not one after another: an API server that takes
// 20ms to answer each is asked several at a time.
func TestPreflightAsksNamesConcurrently(t *testing.T) {
	k := newCluster(t)
	var (
		mu               sync.Mutex
		inFlight, most   int
		asked, nameAsked int
	)
	c := k.faultyClient(t, func(w http.ResponseWriter, r *http.Request) bool {
		if !strings.HasSuffix(r.URL.Path, "/selfsubjectaccessreviews") {
			return false
		}
		mu.Lock()
		inFlight++
		most = max(most, inFlight)
		asked++
		mu.Unlock()
		time.Sleep(20 * time.Millisecond)
		body, _ := io.ReadAll(r.Body) // JSON or protobuf: the name is in it as it is
		if bytes.Contains(body, []byte("cm-")) {
			mu.Lock()
			nameAsked++
			mu.Unlock()
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		_, _ = io.WriteString(w, `{"apiVersion":"authorization.k8s.io/v1","kind":"SelfSubjectAccessReview","status":{"allowed":false}}`)
		mu.Lock()
		inFlight--
		mu.Unlock()
		return true
	})
	var perms []apply.Permission
	for i := range 40 {
		perms = append(perms, apply.Permission{Verb: "patch", Resource: "configmaps", Namespace: "ns", Name: fmt.Sprintf("cm-%d", i)})
	}
	err := c.Preflight(k.ctx, perms)
	var pe *apply.PreflightError
	if !errors.As(err, &pe) || len(pe.Missing) != 1 || pe.Missing[0] != (apply.Permission{Verb: "patch", Resource: "configmaps", Namespace: "ns"}) {
		t.Fatalf("Preflight: %v, want patch configmaps in ns missing, once", err)
	}
	if asked != 41 || nameAsked != 40 {
		t.Errorf("asked %d reviews (%d by name), want 41 (40)", asked, nameAsked)
	}
	if most < 4 {
		t.Errorf("at most %d reviews were asked at a time, want several", most)
	}
}

// laggingDiscovery is a fault that answers discovery (GET /api, /apis and
// a group's or version's document) as the API server did before the CRD
// named crd was last written, for lag after that write, as a loaded API
// server does: it remakes its discovery documents after a CRD changes,
// asynchronously. Other requests, and discovery outside the lag, go to
// the API server; each discovery answer is kept for the next lag.
func (k *cluster) laggingDiscovery(t *testing.T, crd string, lag time.Duration) fault {
	t.Helper()
	forward := k.forwarder(t)
	type answer struct {
		status int
		header http.Header
		body   []byte
	}
	var (
		mu           sync.Mutex
		last, frozen map[string]answer // by path and Accept
		until        time.Time
	)
	last = map[string]answer{}
	return func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method != http.MethodGet && r.URL.Query().Get("dryRun") == "" && r.URL.Path == "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/"+crd {
			mu.Lock()
			frozen, until = maps.Clone(last), time.Now().Add(lag)
			mu.Unlock()
			return false
		}
		if !isDiscovery(r) {
			return false
		}
		key := r.URL.Path + " " + r.Header.Get("Accept")
		mu.Lock()
		a, stale := frozen[key]
		stale = stale && time.Now().Before(until)
		mu.Unlock()
		if !stale {
			resp, body, err := forward(r)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadGateway)
				return true
			}
			a = answer{resp.StatusCode, resp.Header, body}
			if a.status == http.StatusOK {
				mu.Lock()
				last[key] = a
				mu.Unlock()
			}
		}
		for _, h := range []string{"Content-Type", "Content-Encoding"} {
			if v := a.header.Get(h); v != "" {
				w.Header().Set(h, v)
			}
		}
		w.WriteHeader(a.status)
		w.Write(a.body)
		return true
	}
}

// isDiscovery says whether r asks for a discovery document: /api,
// /api/VERSION, /apis, /apis/GROUP or /apis/GROUP/VERSION.
func isDiscovery(r *http.Request) bool {
	if r.Method != http.MethodGet {
		return false
	}
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	switch parts[0] {
	case "api":
		return len(parts) <= 2
	case "apis":
		return len(parts) <= 3
	}
	return false
}
