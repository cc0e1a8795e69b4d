package apply_test

import (
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/addonpkg/addonpkg/pkg/apply"
)

const raceNS = `
apiVersion: v1
kind: Namespace
metadata: {name: NS}
`

const raceV1 = `
apiVersion: v1
kind: ConfigMap
metadata: {name: a, namespace: NS}
data: {v: "1"}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: b, namespace: NS}
`

const raceV2 = `
apiVersion: v1
kind: ConfigMap
metadata: {name: a, namespace: NS}
data: {v: "2"}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: c, namespace: NS}
`

// An uninstall that runs while an apply of the same add-on is under way
// (two pipelines, or an operator's uninstall during a deploy) deletes
// the objects and the inventory; the apply then made its objects again,
// found its inventory gone, and failed: the objects it made carried the
// add-on's labels and were recorded nowhere, so no uninstall or prune
// would ever find them. The apply that loses must fail with ErrConflict
// and leave every object it may have made in a record.
func TestApplyAcrossAnUninstallLeavesNoOrphans(t *testing.T) {
	for _, tc := range []struct{ name, version, objects string }{
		{"re-apply", "1", raceV1}, // no pending record to write
		{"upgrade", "2", raceV2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := newCluster(t)
			k.mustApply(t, k.addon(t, k.prefix+"-ns", "1", raceNS), apply.Options{})
			k.mustApply(t, k.addon(t, k.prefix, "1", raceV1), apply.Options{})
			var once sync.Once
			t.Cleanup(func() { apply.SetTestHook(nil) })
			apply.SetTestHook(func(stage string) {
				if stage != "pending" {
					return
				}
				once.Do(func() {
					if _, err := k.admin.Uninstall(k.ctx, k.prefix, apply.UninstallOptions{Timeout: 30 * time.Second}); err != nil {
						t.Errorf("the uninstall: %v", err)
					}
				})
			})
			_, err := k.admin.Apply(k.ctx, k.addon(t, k.prefix, tc.version, tc.objects), apply.Options{})
			apply.SetTestHook(nil)
			if !errors.Is(err, apply.ErrConflict) {
				t.Fatalf("the apply across an uninstall = %v, want ErrConflict", err)
			}
			oneLine(t, err, "uninstall")
			inv := k.inventory(t, k.prefix)
			listed := map[string]bool{}
			if inv == nil {
				inv = &apply.Inventory{}
			}
			for _, id := range ids(inv) {
				listed[id] = true
			}
			l, err := k.dyn.Resource(gvrConfigMap).Namespace(k.prefix).List(k.ctx, metav1.ListOptions{LabelSelector: apply.LabelAddon + "=" + k.prefix})
			if err != nil {
				t.Fatal(err)
			}
			for _, o := range l.Items {
				if !listed[k.prefix+"_"+o.GetName()+"__ConfigMap"] {
					t.Errorf("ConfigMap %s carries the add-on's label and no inventory lists it (%v)", o.GetName(), ids(inv))
				}
			}
			if len(l.Items) > 0 && inv.Phase != apply.PhasePending {
				t.Errorf("the inventory of what the losing apply made is %s, want pending", inv.Phase)
			}
			// The next uninstall finds them all.
			if _, err := k.admin.Uninstall(k.ctx, k.prefix, apply.UninstallOptions{Timeout: 30 * time.Second}); err != nil && len(l.Items) > 0 {
				t.Fatal(err)
			}
			if l, err := k.dyn.Resource(gvrConfigMap).Namespace(k.prefix).List(k.ctx, metav1.ListOptions{LabelSelector: apply.LabelAddon + "=" + k.prefix}); err != nil || len(l.Items) > 0 {
				t.Errorf("after the next uninstall: %v, %d of the add-on's ConfigMaps left", err, len(l.Items))
			}
		})
	}
}

// The same race, with an apply that then fails half-way (here the API
// server fails its patch of c; in a real cluster, the uninstall's
// Namespace being terminated refuses the apply's next objects): it made
// a again after the uninstall deleted it and its record, then returned
// its error without writing any inventory, so a was recorded nowhere.
func TestFailedApplyAcrossAnUninstallLeavesNoOrphans(t *testing.T) {
	k := newCluster(t)
	k.mustApply(t, k.addon(t, k.prefix+"-ns", "1", raceNS), apply.Options{})
	k.mustApply(t, k.addon(t, k.prefix, "1", raceV1), apply.Options{})
	broken := k.faultyClient(t, func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method != http.MethodPatch || !strings.HasSuffix(r.URL.Path, "/configmaps/c") || r.URL.Query().Has("dryRun") {
			return false
		}
		return errorPage(w, r)
	})
	var once sync.Once
	t.Cleanup(func() { apply.SetTestHook(nil) })
	apply.SetTestHook(func(stage string) {
		if stage == "pending" {
			once.Do(func() {
				if _, err := k.admin.Uninstall(k.ctx, k.prefix, apply.UninstallOptions{Timeout: 30 * time.Second}); err != nil {
					t.Errorf("the uninstall: %v", err)
				}
			})
		}
	})
	_, err := broken.Apply(k.ctx, k.addon(t, k.prefix, "2", raceV2), apply.Options{})
	apply.SetTestHook(nil)
	oneLine(t, err, "ConfigMap", "/c", "502 Bad Gateway")
	inv := k.inventory(t, k.prefix)
	if inv == nil {
		inv = &apply.Inventory{}
	}
	listed := map[string]bool{}
	for _, id := range ids(inv) {
		listed[id] = true
	}
	l, err := k.dyn.Resource(gvrConfigMap).Namespace(k.prefix).List(k.ctx, metav1.ListOptions{LabelSelector: apply.LabelAddon + "=" + k.prefix})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Items) == 0 {
		t.Fatal("the apply made nothing after the uninstall: the race did not happen")
	}
	for _, o := range l.Items {
		if !listed[k.prefix+"_"+o.GetName()+"__ConfigMap"] {
			t.Errorf("ConfigMap %s carries the add-on's label and no inventory lists it (%v)", o.GetName(), ids(inv))
		}
	}
	if inv.Phase != apply.PhasePending {
		t.Errorf("the inventory of what the failed apply made is %q, want pending", inv.Phase)
	}
}
