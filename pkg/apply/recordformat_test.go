package apply_test

import (
	"bytes"
	"encoding/json"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/addonpkg/addonpkg/pkg/apply"
)

// The inventory record is compact JSON: a Secret holds 1 MiB, and the
// indentation it was written with took 10-30% of it. A record written
// indented, as addonpkg wrote it before, still reads: Status, a re-apply
// and an uninstall read it as they read a compact one.
func TestInventoryRecordCompactAndIndentedReads(t *testing.T) {
	k := newCluster(t)
	a := k.addon(t, k.prefix, "1", `
apiVersion: v1
kind: ConfigMap
metadata: {name: NS-record, namespace: default}
`)
	k.mustApply(t, a, apply.Options{})
	s := k.inventorySecret(t, a.Name)
	data := s.Data[apply.InventoryKey]
	var compact bytes.Buffer
	if err := json.Compact(&compact, data); err != nil || !bytes.Equal(compact.Bytes(), data) {
		t.Fatalf("the inventory record is not compact JSON (%v):\n%s", err, data)
	}

	// As an older addonpkg wrote it.
	var indented bytes.Buffer
	if err := json.Indent(&indented, data, "", "  "); err != nil {
		t.Fatal(err)
	}
	s.Data[apply.InventoryKey] = indented.Bytes()
	if _, err := k.typed.CoreV1().Secrets(s.Namespace).Update(k.ctx, s, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	list, err := k.admin.Status(k.ctx, a.Name)
	if err != nil || len(list) != 1 || list[0].Version != "1" || list[0].Phase != apply.PhaseApplied || list[0].Objects != 1 || list[0].Ready != 1 {
		t.Fatalf("status of an indented record = %+v, %v; want version 1, applied, its one object ready", list, err)
	}
	if cs := k.mustApply(t, a, apply.Options{}); cs.Count(apply.Unchanged) != 1 {
		t.Errorf("re-apply over an indented record:\n%s\nwant the object unchanged", cs)
	}
	if _, err := k.typed.CoreV1().ConfigMaps("default").Get(k.ctx, k.prefix+"-record", metav1.GetOptions{}); err != nil {
		t.Fatalf("the object before the uninstall: %v", err)
	}
	if _, err := k.admin.Uninstall(k.ctx, a.Name, apply.UninstallOptions{}); err != nil {
		t.Fatalf("uninstall of an indented record: %v", err)
	}
	if _, err := k.typed.CoreV1().ConfigMaps("default").Get(k.ctx, k.prefix+"-record", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the object after the uninstall: %v, want it gone", err)
	}
}
