package apply_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/addonpkg/addonpkg/pkg/apply"
)

// forwarder sends a request the proxy took to the real API server and
// returns its answer, read whole (capped), for a fault to pass on
// changed: the server did what was asked, the client hears something
// else.
func (k *cluster) forwarder(t *testing.T) func(r *http.Request) (*http.Response, []byte, error) {
	t.Helper()
	upstream, err := url.Parse(k.env.Admin.Host)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := rest.TransportFor(k.env.Admin)
	if err != nil {
		t.Fatal(err)
	}
	return func(r *http.Request) (*http.Response, []byte, error) {
		req := r.Clone(r.Context())
		req.RequestURI, req.Host = "", ""
		req.URL.Scheme, req.URL.Host = upstream.Scheme, upstream.Host
		resp, err := tr.RoundTrip(req)
		if err != nil {
			return nil, nil, err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
		return resp, body, err
	}
}

// statusAnswer answers as the API server does when it refuses a request: a
// Kubernetes Status of code, reason and message.
func statusAnswer(code int, reason metav1.StatusReason, message string) fault {
	return func(w http.ResponseWriter, r *http.Request) bool {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		fmt.Fprintf(w, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":%q,"reason":%q,"code":%d}`, message, reason, code)
		return true
	}
}

// The API server (or what stands in front of it, or what it calls)
// answers the upgrade's patch of the new ConfigMap c with a failure. The
// error is one line naming c and what was answered, matches the
// sentinel a caller can act on, and the inventory stays pending with the
// old objects and the new, so the next apply through a healthy server
// finishes the upgrade. Cases (c) and (f) of the server-side apply's
// answer lost after the server did it: c is in the cluster and on
// record.
func TestMisbehavingAPIServerAnswers(t *testing.T) {
	if testing.Short() {
		t.Skip("needs a real API server")
	}
	webhook500 := "Internal error occurred: failed calling webhook \"validate.example.com\": failed to call webhook: Post \"https://hook.svc:443/validate?timeout=10s\": service \"hook\" not found"
	for _, tc := range []struct {
		name string
		// fault answers the patch; forwarded says the real server got
		// it first (body is its answer).
		fault   func(w http.ResponseWriter, r *http.Request, body []byte)
		forward bool
		want    []string
		is      error
	}{
		{"plain 500", func(w http.ResponseWriter, r *http.Request, _ []byte) {
			statusAnswer(http.StatusInternalServerError, metav1.StatusReasonInternalError, "Internal error occurred: etcdserver: request timed out")(w, r)
		}, false, []string{"ConfigMap", "/c", "etcdserver: request timed out"}, apply.ErrServer},
		{"admission webhook 500", func(w http.ResponseWriter, r *http.Request, _ []byte) {
			statusAnswer(http.StatusInternalServerError, metav1.StatusReasonInternalError, webhook500)(w, r)
		}, false, []string{"ConfigMap", "/c", "failed calling webhook"}, apply.ErrServer},
		{"proxy error page", func(w http.ResponseWriter, r *http.Request, _ []byte) { errorPage(w, r) },
			false, []string{"ConfigMap", "/c", "502 Bad Gateway"}, apply.ErrServer},
		{"409 conflict", func(w http.ResponseWriter, r *http.Request, _ []byte) {
			statusAnswer(http.StatusConflict, metav1.StatusReasonConflict, `Operation cannot be fulfilled on configmaps "c": the object has been modified; please apply your changes to the latest version and try again`)(w, r)
		}, false, []string{"ConfigMap", "/c", "the object has been modified"}, apply.ErrConflict},
		{"non-JSON answer after the patch", func(w http.ResponseWriter, _ *http.Request, _ []byte) {
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(http.StatusOK)
			w.Write([]byte(htmlPage))
		}, true, []string{"ConfigMap", "/c"}, apply.ErrServer},
		{"truncated JSON after the patch", func(w http.ResponseWriter, _ *http.Request, body []byte) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusOK)
			w.Write(body[:len(body)/2])
		}, true, []string{"ConfigMap", "/c"}, apply.ErrServer},
		{"connection dropped after the patch", func(w http.ResponseWriter, _ *http.Request, _ []byte) {
			if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
				conn.Close()
			}
		}, true, []string{"ConfigMap", "/c", "EOF"}, apply.ErrUnreachable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := newCluster(t)
			v1 := k.addon(t, k.prefix, "1", killV1)
			v2 := k.addon(t, k.prefix, "2", killV2)
			k.mustApply(t, v1, apply.Options{})
			forward := k.forwarder(t)
			broken := k.faultyClient(t, func(w http.ResponseWriter, r *http.Request) bool {
				if r.Method != http.MethodPatch || !strings.HasSuffix(r.URL.Path, "/configmaps/c") || r.URL.Query().Has("dryRun") {
					return false
				}
				var body []byte
				if tc.forward {
					resp, b, err := forward(r)
					if err != nil || resp.StatusCode != http.StatusCreated {
						t.Errorf("the patch the proxy passed on: %v %v", resp, err)
					}
					body = b
				}
				tc.fault(w, r, body)
				return true
			})
			ctx, cancel := context.WithTimeout(k.ctx, time.Minute)
			defer cancel()
			_, err := broken.Apply(ctx, v2, apply.Options{})
			oneLine(t, err, append([]string{v2.Name}, tc.want...)...)
			if !errors.Is(err, tc.is) {
				t.Errorf("error %q does not match %v", err, tc.is)
			}
			for _, not := range []error{apply.ErrServer, apply.ErrConflict, apply.ErrRejected, apply.ErrUnreachable} {
				if not != tc.is && errors.Is(err, not) {
					t.Errorf("error %q matches %v too", err, not)
				}
			}

			inv := k.inventory(t, k.prefix)
			want := []string{"_" + k.prefix + "__Namespace", k.prefix + "_a__ConfigMap", k.prefix + "_b__ConfigMap", k.prefix + "_c__ConfigMap"}
			if got := ids(inv); inv.Phase != apply.PhasePending || !slices.Equal(got, want) {
				t.Fatalf("after the failed upgrade the inventory is %s %v, want pending %v", inv.Phase, got, want)
			}
			if tc.forward && !k.exists(t, gvrConfigMap, k.prefix, "c") {
				t.Fatal("the proxy passed c's patch on, and c is not there")
			}
			k.mustApply(t, v2, apply.Options{})
			inv = k.inventory(t, k.prefix)
			want = []string{want[0], want[1], want[3]}
			if got := ids(inv); inv.Phase != apply.PhaseApplied || !slices.Equal(got, want) || k.exists(t, gvrConfigMap, k.prefix, "b") {
				t.Errorf("the next apply left the inventory %s %v, want applied %v and b pruned", inv.Phase, got, want)
			}
		})
	}
}

// A first install whose connection drops after the server created an
// object (the answer lost) keeps its pending inventory: the apply wrote,
// so what it may have made is on record, and an uninstall removes it.
// (An apply that wrote nothing takes its record back.)
func TestFirstInstallAnswerLostKeepsRecord(t *testing.T) {
	if testing.Short() {
		t.Skip("needs a real API server")
	}
	k := newCluster(t)
	a := k.addon(t, k.prefix, "1", killV1)
	forward := k.forwarder(t)
	broken := k.faultyClient(t, func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method != http.MethodPatch || !strings.HasSuffix(r.URL.Path, "/configmaps/b") || r.URL.Query().Has("dryRun") {
			return false
		}
		if _, _, err := forward(r); err != nil {
			t.Errorf("pass b's patch on: %v", err)
		}
		if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
			conn.Close()
		}
		return true
	})
	_, err := broken.Apply(k.ctx, a, apply.Options{})
	oneLine(t, err, a.Name, "ConfigMap", "/b")
	if !errors.Is(err, apply.ErrUnreachable) {
		t.Errorf("error %q of a dropped connection does not match ErrUnreachable", err)
	}
	if !k.exists(t, gvrConfigMap, k.prefix, "b") {
		t.Fatal("b's patch was passed on, and b is not there")
	}
	inv := k.inventory(t, a.Name)
	want := []string{"_" + k.prefix + "__Namespace", k.prefix + "_a__ConfigMap", k.prefix + "_b__ConfigMap"}
	if inv == nil || inv.Phase != apply.PhasePending || !slices.Equal(ids(inv), want) {
		t.Fatalf("after the install cut short the inventory is %+v, want pending %v", inv, want)
	}
	if _, err := k.admin.Uninstall(k.ctx, a.Name, apply.UninstallOptions{Timeout: time.Minute}); err != nil {
		t.Fatalf("uninstall: %v", err)
	}
	if k.exists(t, gvrConfigMap, k.prefix, "b") || k.inventorySecret(t, a.Name) != nil {
		t.Error("the uninstall left b or the inventory")
	}
}

// A real admission webhook that cannot be called (failurePolicy Fail,
// its Service gone) makes the API server answer 500 InternalError
// "failed calling webhook": the apply's error names the object and
// matches ErrServer (before, no sentinel at all: not ErrRejected, which
// a webhook's own refusal is, and which asks the caller to change the
// object).
func TestWebhookThatCannotBeCalled(t *testing.T) {
	if testing.Short() {
		t.Skip("needs a real API server")
	}
	k := newCluster(t)
	v1 := k.addon(t, k.prefix, "1", killV1)
	v2 := k.addon(t, k.prefix, "2", killV2)
	k.mustApply(t, v1, apply.Options{})
	fail, none := admissionregistrationv1.Fail, admissionregistrationv1.SideEffectClassNone
	hooks := k.typed.AdmissionregistrationV1().ValidatingWebhookConfigurations()
	_, err := hooks.Create(k.ctx, &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: k.prefix},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name:                    "validate." + k.prefix + ".example.com",
			AdmissionReviewVersions: []string{"v1"},
			SideEffects:             &none,
			FailurePolicy:           &fail,
			ClientConfig:            admissionregistrationv1.WebhookClientConfig{Service: &admissionregistrationv1.ServiceReference{Namespace: k.prefix, Name: "gone"}},
			NamespaceSelector:       &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": k.prefix}},
			Rules: []admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
				Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}},
			}},
		}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = hooks.Delete(context.Background(), k.prefix, metav1.DeleteOptions{}) })

	// The API server learns of a new webhook through its informer: apply
	// until it is called.
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err = k.admin.Apply(k.ctx, v2, apply.Options{})
		if err != nil || time.Now().After(deadline) {
			break
		}
		// Not called yet: c was made. Back to v1 and again.
		k.mustApply(t, v1, apply.Options{})
		time.Sleep(200 * time.Millisecond)
	}
	oneLine(t, err, v2.Name, "ConfigMap", "/c", "failed calling webhook")
	if !errors.Is(err, apply.ErrServer) || errors.Is(err, apply.ErrRejected) {
		t.Errorf("error %q: want ErrServer, not ErrRejected", err)
	}
	if k.exists(t, gvrConfigMap, k.prefix, "c") {
		t.Error("c was made through a webhook that fails closed")
	}
	if inv := k.inventory(t, k.prefix); inv == nil || !slices.Contains(ids(inv), k.prefix+"_b__ConfigMap") {
		t.Errorf("the inventory %+v lost b, which is still there", inv)
	}
}

// An API server that answers each read of an object after the first
// with another uid (as when the object is deleted and made again under
// its name between two reads, again and again): an uninstall deletes
// only the uid it read and checked, so each delete is refused as a
// conflict. The uninstall fails in one line naming the object
// (ErrConflict), leaves it and the pending record listing it, and the
// next uninstall through a healthy server finishes.
func TestUninstallOfAnObjectWhoseUIDChanges(t *testing.T) {
	if testing.Short() {
		t.Skip("needs a real API server")
	}
	k := newCluster(t)
	a := k.addon(t, k.prefix, "1", killV1)
	k.mustApply(t, a, apply.Options{})
	forward := k.forwarder(t)
	var reads atomic.Int32
	lying := k.faultyClient(t, func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method != http.MethodGet || !strings.HasSuffix(r.URL.Path, "/configmaps/b") || reads.Add(1) == 1 {
			return false
		}
		resp, body, err := forward(r)
		if err != nil {
			t.Errorf("pass the read of b on: %v", err)
			return false
		}
		var obj map[string]any
		if err := json.Unmarshal(body, &obj); err == nil && resp.StatusCode == http.StatusOK {
			obj["metadata"].(map[string]any)["uid"] = fmt.Sprintf("00000000-0000-0000-0000-%012d", reads.Load())
			body, _ = json.Marshal(obj)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(resp.StatusCode)
		w.Write(body)
		return true
	})
	_, err := lying.Uninstall(k.ctx, a.Name, apply.UninstallOptions{Timeout: 30 * time.Second})
	oneLine(t, err, a.Name, "ConfigMap", "/b")
	if !errors.Is(err, apply.ErrConflict) {
		t.Errorf("error %q does not match ErrConflict", err)
	}
	if reads.Load() < 2 {
		t.Fatalf("b was read %d times, want the uninstall to read it again before its delete", reads.Load())
	}
	if !k.exists(t, gvrConfigMap, k.prefix, "b") {
		t.Fatal("b was deleted though each read said another uid")
	}
	inv := k.inventory(t, a.Name)
	if inv == nil || inv.Phase != apply.PhasePending || !slices.Contains(ids(inv), k.prefix+"_b__ConfigMap") {
		t.Fatalf("after the failed uninstall the inventory is %+v, want pending with b", inv)
	}
	if _, err := k.admin.Uninstall(k.ctx, a.Name, apply.UninstallOptions{Timeout: 30 * time.Second}); err != nil {
		t.Fatalf("the next uninstall: %v", err)
	}
	if k.exists(t, gvrConfigMap, k.prefix, "b") || k.inventorySecret(t, a.Name) != nil {
		t.Error("the next uninstall left b or the inventory")
	}
}
