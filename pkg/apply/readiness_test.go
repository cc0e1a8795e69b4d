package apply_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/fluxcd/cli-utils/pkg/kstatus/status"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/addonpkg/addonpkg/pkg/apply"
)

// An APIService is ready when the aggregator reports it Available, and
// not before: kstatus alone calls it Current as soon as it exists.
// Other kinds keep kstatus's status.
func TestReadyStatusOfAnAPIService(t *testing.T) {
	apiService := func(conds ...map[string]any) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
			"metadata": map[string]any{"name": "v1beta1.metrics.k8s.io"},
		}}
		if conds != nil {
			list := make([]any, len(conds))
			for i, c := range conds {
				list[i] = c
			}
			u.Object["status"] = map[string]any{"conditions": list}
		}
		return u
	}
	for _, tc := range []struct {
		name string
		obj  *unstructured.Unstructured
		want status.Status
		msg  string
	}{
		{"available", apiService(map[string]any{"type": "Available", "status": "True", "reason": "Passed"}), status.CurrentStatus, ""},
		{"unavailable", apiService(map[string]any{"type": "Available", "status": "False", "reason": "MissingEndpoints",
			"message": `endpoints for service/metrics-server in "kube-system" have no addresses`}),
			status.InProgressStatus, `not Available (MissingEndpoints): endpoints for service/metrics-server in "kube-system" have no addresses`},
		{"not yet reported", apiService(), status.InProgressStatus, "no Available condition yet"},
		{"a ConfigMap", &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "c"}}}, status.CurrentStatus, ""},
	} {
		res, err := apply.ReadyStatus(tc.obj)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if res.Status != tc.want || (tc.msg != "" && res.Message != tc.msg) {
			t.Errorf("%s: %s %q, want %s %q", tc.name, res.Status, res.Message, tc.want, tc.msg)
		}
	}
}

// A wait on an add-on whose APIService has no backend times out naming
// the APIService and the aggregator's reason, as `kubectl wait
// --for=condition=Available` would: the real aggregator, in the API
// server, reports it.
func TestWaitForAnAPIServiceToBeAvailable(t *testing.T) {
	if testing.Short() {
		t.Skip("needs a real API server")
	}
	k := newCluster(t)
	a := k.addon(t, k.prefix, "1", `
apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata: {name: v1.GROUP}
spec:
  group: GROUP
  version: v1
  groupPriorityMinimum: 100
  versionPriority: 10
  insecureSkipTLSVerify: true
  service: {name: nobody, namespace: default, port: 443}
`)
	t.Cleanup(func() {
		if _, err := k.admin.Uninstall(k.ctx, a.Name, apply.UninstallOptions{}); err != nil {
			t.Errorf("uninstall: %v", err)
		}
	})
	_, err := k.admin.Apply(k.ctx, a, apply.Options{Wait: true, Timeout: 5 * time.Second})
	var we *apply.WaitError
	if !errors.As(err, &we) || !errors.Is(err, apply.ErrTimeout) {
		t.Fatalf("apply of an APIService without a backend: %v, want a WaitError timeout", err)
	}
	want := "APIService/v1." + k.prefix + ".example.com: InProgress: not Available (ServiceNotFound)"
	if len(we.Objects) != 1 || !strings.HasPrefix(we.Objects[0], want) {
		t.Errorf("wait error names %q, want one line starting %q", we.Objects, want)
	}
}
