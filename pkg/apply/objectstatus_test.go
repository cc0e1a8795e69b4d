package apply_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/addonpkg/addonpkg/pkg/apply"
)

const unreadyAddon = `
apiVersion: v1
kind: Namespace
metadata: {name: NS}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: NS}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: never, namespace: NS}
spec:
  replicas: 1
  selector: {matchLabels: {app: never}}
  template:
    metadata: {labels: {app: never}}
    spec:
      containers: [{name: never, image: 127.0.0.1/never:1}]
`

// statusOf is the one ObjectStatus of sts for kind/name, failing the
// test when there is not exactly one.
func statusOf(t *testing.T, sts []apply.ObjectStatus, kind, name string) apply.ObjectStatus {
	t.Helper()
	var found []apply.ObjectStatus
	for _, s := range sts {
		if s.Kind == kind && s.Name == name {
			found = append(found, s)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%s %s: %d statuses in %#v, want 1", kind, name, len(found), sts)
	}
	return found[0]
}

// installedStatus is the one add-on Status reports of name; its lines
// (Unready) say its UnreadyObjects, one each, in their order.
func (k *cluster) installedStatus(t *testing.T, name string) apply.Installed {
	t.Helper()
	st, err := k.admin.Status(k.ctx, name)
	if err != nil || len(st) != 1 {
		t.Fatalf("status %s: %+v, %v", name, st, err)
	}
	i := st[0]
	if len(i.Unready) != len(i.UnreadyObjects) || i.Ready+len(i.UnreadyObjects) != i.Objects {
		t.Fatalf("status %s: %d ready of %d, %d lines for %d objects not ready: %+v", name, i.Ready, i.Objects, len(i.Unready), len(i.UnreadyObjects), i)
	}
	for n, s := range i.UnreadyObjects {
		if i.Unready[n] != s.String() {
			t.Errorf("Unready[%d] = %q, UnreadyObjects[%d] says %q", n, i.Unready[n], n, s)
		}
	}
	return i
}

// A Deployment that never becomes available (no kubelet runs here) is
// InProgress, in Status and in the WaitError of a wait that timed out,
// with its identity field by field; an object deleted by hand is
// NotFound. The caller tells them apart by the struct.
func TestObjectStatusInProgressAndNotFound(t *testing.T) {
	k := newCluster(t)
	a := k.addon(t, k.prefix, "1", unreadyAddon)
	k.mustApply(t, a, apply.Options{})

	want := apply.ObjectStatus{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: k.prefix, Name: "never", Status: apply.InProgress}
	i := k.installedStatus(t, a.Name)
	got := statusOf(t, i.UnreadyObjects, "Deployment", "never")
	if got.Message == "" {
		t.Errorf("status of the Deployment has no message: %#v", got)
	}
	got.Message = ""
	if got != want || len(i.UnreadyObjects) != 1 {
		t.Errorf("status: %#v, want only %#v", i.UnreadyObjects, want)
	}

	_, err := k.admin.Apply(k.ctx, a, apply.Options{Wait: true, Timeout: 2 * time.Second})
	var we *apply.WaitError
	if !errors.Is(err, apply.ErrTimeout) || !errors.As(err, &we) {
		t.Fatalf("apply with wait: %v, want a WaitError timeout", err)
	}
	if len(we.Statuses) != 1 || len(we.Objects) != 1 || we.Objects[0] != we.Statuses[0].String() {
		t.Fatalf("wait error: statuses %#v, objects %q: want one each, the line saying the status", we.Statuses, we.Objects)
	}
	if got := we.Statuses[0]; got.Message == "" || got.Kind != want.Kind || got.Group != want.Group || got.Namespace != want.Namespace || got.Name != want.Name || got.Status != apply.InProgress {
		t.Errorf("wait error status: %#v, want %#v with a message", got, want)
	}

	if err := k.typed.CoreV1().ConfigMaps(k.prefix).Delete(k.ctx, "settings", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	i = k.installedStatus(t, a.Name)
	if got, want := statusOf(t, i.UnreadyObjects, "ConfigMap", "settings"), (apply.ObjectStatus{Version: "v1", Kind: "ConfigMap", Namespace: k.prefix, Name: "settings", Status: apply.NotFound}); got != want {
		t.Errorf("status of the deleted ConfigMap: %#v, want %#v", got, want)
	}
}

// An object another add-on adopted with Force is OwnedByOther, naming
// that add-on; one whose owner label was taken off by hand is NotOwned,
// naming the label.
func TestObjectStatusOfObjectsNoLongerOwned(t *testing.T) {
	k := newCluster(t)
	first := k.addon(t, k.prefix+"-a", "1", upgradeV1)
	k.mustApply(t, first, apply.Options{})
	second := k.addon(t, k.prefix+"-b", "1", upgradeV2)
	k.mustApply(t, second, apply.Options{Force: true})
	_, err := k.typed.CoreV1().ConfigMaps(k.prefix).Patch(k.ctx, "dropped", types.MergePatchType,
		fmt.Appendf(nil, `{"metadata":{"labels":{%q:null}}}`, apply.LabelAddon), metav1.PatchOptions{})
	if err != nil {
		t.Fatal(err)
	}

	i := k.installedStatus(t, first.Name)
	if got, want := statusOf(t, i.UnreadyObjects, "ConfigMap", "stays"), (apply.ObjectStatus{Version: "v1", Kind: "ConfigMap", Namespace: k.prefix, Name: "stays", Status: apply.OwnedByOther, Owner: second.Name}); got != want {
		t.Errorf("status of the adopted ConfigMap: %#v, want %#v", got, want)
	}
	if got, want := statusOf(t, i.UnreadyObjects, "ConfigMap", "dropped"), (apply.ObjectStatus{Version: "v1", Kind: "ConfigMap", Namespace: k.prefix, Name: "dropped", Status: apply.NotOwned, Message: "no " + apply.LabelAddon + " label"}); got != want {
		t.Errorf("status of the ConfigMap without owner label: %#v, want %#v", got, want)
	}
	if got := statusOf(t, i.UnreadyObjects, "Namespace", k.prefix); got.Status != apply.OwnedByOther || got.Owner != second.Name || got.Namespace != "" {
		t.Errorf("status of the adopted Namespace: %#v", got)
	}

	// status --json's shape: the structured list beside the lines, the
	// objects still counted in "objects".
	raw, err := json.Marshal(i)
	if err != nil {
		t.Fatal(err)
	}
	var shape map[string]any
	if err := json.Unmarshal(raw, &shape); err != nil {
		t.Fatal(err)
	}
	if _, ok := shape["unready"].([]any); !ok || shape["objects"] != float64(i.Objects) {
		t.Errorf("JSON %s: want unready lines and objects counted", raw)
	}
	list, _ := shape["unreadyObjects"].([]any)
	if len(list) != len(i.UnreadyObjects) {
		t.Fatalf("JSON %s: want %d unreadyObjects", raw, len(i.UnreadyObjects))
	}
	var back apply.Installed
	if err := json.Unmarshal(raw, &back); err != nil || statusOf(t, back.UnreadyObjects, "ConfigMap", "stays") != statusOf(t, i.UnreadyObjects, "ConfigMap", "stays") {
		t.Errorf("JSON %s does not read back: %v", raw, err)
	}
}
