package apply_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/addonpkg/addonpkg/pkg/apply"
)

// pruneLater's version 1 holds a CRD and a custom resource of it that a
// finalizer holds once deleted; version 2 holds neither.
var pruneLater = crdYAML("Widget", crdVersion{"v1", true, true}) + `---
apiVersion: GROUP/v1
kind: Widget
metadata: {name: held, namespace: default, finalizers: [example.com/test]}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: NS-settings, namespace: default}
`

// An apply without Wait does not wait for what it prunes, as kubectl
// apply --prune without --wait and Flux's kustomize-controller do: it
// waited for a custom resource a finalizer held until the timeout, and
// failed. The version that holds them again, applied while the CRD and
// its custom resource are still being deleted, waits for them to be
// gone before its first change (a typed timeout with nothing changed
// when they are not), then makes them anew: it patched the terminating
// CRD and waited for it to be established until the timeout, an apply
// half made.
func TestApplyNoWaitPrunesWithoutWaiting(t *testing.T) {
	k := newCluster(t)
	v1 := k.addon(t, k.prefix, "1", pruneLater)
	v2 := k.addon(t, k.prefix, "2", `
apiVersion: v1
kind: ConfigMap
metadata: {name: NS-settings, namespace: default}
`)
	k.mustApply(t, v1, apply.Options{})
	widgets := k.dyn.Resource(k.gvrWidget()).Namespace("default")
	release := func() {
		if _, err := widgets.Patch(k.ctx, "held", types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("remove the finalizer: %v", err)
		}
	}
	t.Cleanup(func() {
		release()
		_ = k.dyn.Resource(gvrCRD).Delete(context.Background(), "widgets."+k.prefix+".example.com", metav1.DeleteOptions{})
	})

	start := time.Now()
	cs, err := k.admin.Apply(k.ctx, v2, apply.Options{Timeout: 20 * time.Second})
	if err != nil {
		t.Fatalf("apply of version 2 without waiting: %v", err)
	}
	if d := time.Since(start); d > 15*time.Second {
		t.Errorf("apply without waiting took %s: it waited for what it pruned", d)
	}
	if n := cs.Count(apply.Deleted); n != 2 {
		t.Errorf("deleted %d, want the CRD and its custom resource:\n%s", n, cs)
	}
	w, err := widgets.Get(k.ctx, "held", metav1.GetOptions{})
	if err != nil || w.GetDeletionTimestamp() == nil {
		t.Fatalf("the custom resource: %v, want it terminating", err)
	}

	// Still being deleted: a timeout, nothing changed, the record that of
	// version 2.
	// The wait is reported, as a prune's is: "terminating" before it, with
	// what it waits for, and no "gone" when it times out.
	var stages []apply.Stage
	progress := func(st apply.Stage) { stages = append(stages, st) }
	_, err = k.admin.Apply(k.ctx, v1, apply.Options{Timeout: 2 * time.Second, Progress: progress})
	var we *apply.WaitError
	if !errors.Is(err, apply.ErrTimeout) || !errors.As(err, &we) || we.Op != "deletion" {
		t.Fatalf("apply of version 1 while its objects terminate = %v, want a deletion timeout", err)
	}
	// The CRD waits for its custom resource, which the timeout names, and
	// for no finalizer of a missing controller: the API server removes
	// its own once the custom resources are gone.
	wantCRD := "held by finalizer customresourcecleanup.apiextensions.k8s.io, which the API server removes once the CRD's custom resources are gone; still there: Widget/default/held (held by finalizers example.com/test)"
	if i := slices.IndexFunc(we.Statuses, func(s apply.ObjectStatus) bool { return s.Kind == "CustomResourceDefinition" }); i < 0 || we.Statuses[i].Message != wantCRD {
		t.Errorf("the timeout's statuses: %+v, want the CRD's saying %q", we.Statuses, wantCRD)
	}
	if len(stages) != 1 || stages[0].Name != "terminating" || len(stages[0].Changes) != 2 ||
		!slices.ContainsFunc(stages[0].Changes, func(c apply.Change) bool { return c.Object == "Widget/default/held" && c.Action == apply.Deleted }) {
		t.Errorf("stages reported while waiting for the objects being deleted: %+v, want terminating, with the CRD and its custom resource", stages)
	}
	if inv := k.inventory(t, v1.Name); inv.Version != "2" || inv.Phase != apply.PhaseApplied || len(inv.Objects) != 1 {
		t.Errorf("after the refused apply the inventory is %+v, want version 2's", inv.Record)
	}
	if w, err := widgets.Get(k.ctx, "held", metav1.GetOptions{}); err != nil || w.GetUID() == "" || len(w.GetFinalizers()) != 1 {
		t.Errorf("the refused apply changed the custom resource: %v %v", w, err)
	}

	// Gone once the finalizer is off: made anew, and on record.
	release()
	k.mustApply(t, v1, apply.Options{Timeout: 30 * time.Second})
	crd, err := k.dyn.Resource(gvrCRD).Get(k.ctx, "widgets."+k.prefix+".example.com", metav1.GetOptions{})
	if err != nil || crd.GetDeletionTimestamp() != nil {
		t.Fatalf("the CRD after the apply: %v, want it there and not terminating", err)
	}
	w2, err := widgets.Get(k.ctx, "held", metav1.GetOptions{})
	if err != nil || w2.GetDeletionTimestamp() != nil || w2.GetUID() == w.GetUID() {
		t.Fatalf("the custom resource after the apply: %v, want a new one, not terminating", err)
	}
	if inv := k.inventory(t, v1.Name); inv.Version != "1" || inv.Phase != apply.PhaseApplied || len(inv.Objects) != 3 {
		t.Errorf("inventory %+v %v, want version 1's three objects, applied", inv.Record, ids(inv))
	}
}
