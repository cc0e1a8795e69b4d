package apply_test

import (
	"encoding/json"
	"errors"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/addonpkg/addonpkg/pkg/apply"
)

// No kubelet or Job controller runs here: the Jobs are deleted as the
// TTL controller would delete a finished one.
const jobsAddon = `
apiVersion: v1
kind: Namespace
metadata: {name: NS}
---
apiVersion: batch/v1
kind: Job
metadata: {name: once, namespace: NS}
spec:
  ttlSecondsAfterFinished: 0
  template:
    spec:
      restartPolicy: Never
      containers: [{name: c, image: registry.k8s.io/pause:3.10}]
---
apiVersion: batch/v1
kind: Job
metadata: {name: kept, namespace: NS}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: c, image: registry.k8s.io/pause:3.10}]
`

// A Job with ttlSecondsAfterFinished is recorded Transient: once the TTL
// controller has deleted it, Status counts it ready, not NotFound, while
// a Job without one, deleted, is NotFound. An inventory that marks
// another kind Transient (which would hide it once gone) is corrupt.
func TestJobsWithTTLGoneAreReady(t *testing.T) {
	k := newCluster(t)
	a := k.addon(t, k.prefix, "1", jobsAddon)
	k.mustApply(t, a, apply.Options{})
	transient := map[string]bool{}
	for _, e := range k.inventory(t, k.prefix).Objects {
		transient[e.ID] = e.Transient
	}
	if !transient[k.prefix+"_once_batch_Job"] || transient[k.prefix+"_kept_batch_Job"] || transient["_"+k.prefix+"__Namespace"] {
		t.Fatalf("inventory entries' Transient: %v, want only the Job with a TTL", transient)
	}
	background := metav1.DeletePropagationBackground
	for _, name := range []string{"once", "kept"} {
		if err := k.typed.BatchV1().Jobs(k.prefix).Delete(k.ctx, name, metav1.DeleteOptions{PropagationPolicy: &background}); err != nil {
			t.Fatal(err)
		}
	}
	i := k.installedStatus(t, a.Name)
	if got, want := statusOf(t, i.UnreadyObjects, "Job", "kept"), (apply.ObjectStatus{Group: "batch", Version: "v1", Kind: "Job", Namespace: k.prefix, Name: "kept", Status: apply.NotFound}); got != want || len(i.UnreadyObjects) != 1 || i.Ready != 2 {
		t.Errorf("status: %d ready, not ready %#v; want 2 ready (the Namespace, the Job its TTL removed) and only %#v", i.Ready, i.UnreadyObjects, want)
	}

	s := k.inventorySecret(t, k.prefix)
	inv := k.inventory(t, k.prefix)
	for n := range inv.Objects {
		inv.Objects[n].Transient = true
	}
	b, err := json.Marshal(inv)
	if err != nil {
		t.Fatal(err)
	}
	s.Data[apply.InventoryKey] = b
	if _, err := k.typed.CoreV1().Secrets(s.Namespace).Update(k.ctx, s, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := k.admin.Status(k.ctx, a.Name); !errors.Is(err, apply.ErrCorruptInventory) {
		t.Errorf("status of an inventory marking a Namespace transient: %v, want ErrCorruptInventory", err)
	}
}
