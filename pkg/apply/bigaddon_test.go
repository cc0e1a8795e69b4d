package apply_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/addonpkg/addonpkg/pkg/apply"
)

// An add-on with more objects than its inventory Secret can record (a
// Secret holds 1 MiB; thousands of objects with long names) is refused
// before any change, with an error that says so: the API server's own
// answer ("data: Too long") named neither the objects nor what to do.
func TestInventoryTooLargeChangesNothing(t *testing.T) {
	k := newCluster(t)
	k.mustApply(t, k.addon(t, k.prefix+"-ns", "1", raceNS), apply.Options{})
	var b strings.Builder
	for i := range 3400 {
		fmt.Fprintf(&b, "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s-%05d, namespace: NS}\n", strings.Repeat("x", 240), i)
	}
	_, err := k.admin.Apply(k.ctx, k.addon(t, k.prefix, "1", b.String()), apply.Options{})
	if !errors.Is(err, apply.ErrInvalid) {
		t.Fatalf("apply of an add-on too large to record = %v, want ErrInvalid", err)
	}
	oneLine(t, err, "3400 objects", "split the add-on")
	if k.inventorySecret(t, k.prefix) != nil {
		t.Error("the refused apply left an inventory")
	}
	l, err := k.dyn.Resource(gvrConfigMap).Namespace(k.prefix).List(k.ctx, metav1.ListOptions{LabelSelector: apply.LabelAddon + "=" + k.prefix})
	if err != nil || len(l.Items) > 0 {
		t.Errorf("the refused apply made objects: %v, %d", err, len(l.Items))
	}
}
