package apply_test

import (
	"errors"
	"testing"
	"time"

	"github.com/addonpkg/addonpkg/pkg/apply"
)

// A caller of ApplyAll that reports per add-on (a controller setting a
// condition on each member of a set) learns which add-on failed from the
// error, with errors.As, whether the failed one changed something (its
// change set is the last returned) or nothing (it has none): the change
// sets alone cannot tell the two apart.
func TestApplyAllNamesTheFailedAddon(t *testing.T) {
	k := newCluster(t)
	cm := func(name string) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: " + name + ", namespace: default}\n"
	}
	owner := k.addon(t, k.prefix+"-owner", "1", cm(k.prefix+"-taken"))
	k.mustApply(t, owner, apply.Options{})
	first := k.addon(t, k.prefix+"-first", "1", cm(k.prefix+"-first"))
	// Refused before its first change: another add-on owns its object.
	refused := k.addon(t, k.prefix+"-refused", "1", cm(k.prefix+"-taken"))
	last := k.addon(t, k.prefix+"-last", "1", cm(k.prefix+"-last"))

	sets, err := k.admin.ApplyAll(k.ctx, []apply.Addon{first, refused, last}, apply.Options{})
	var ae *apply.AddonError
	var oe *apply.OwnershipError
	if !errors.As(err, &ae) || ae.Addon != refused.Name || ae.Index != 1 || !errors.As(err, &oe) || !errors.Is(err, apply.ErrConflict) {
		t.Fatalf("ApplyAll: %v (%+v), want an *AddonError naming %s, index 1, over an *OwnershipError", err, ae, refused.Name)
	}
	if len(sets) != 1 || sets[0].Addon != first.Name {
		t.Errorf("ApplyAll returned %d change sets, want the first add-on's alone", len(sets))
	}

	// A wait that times out fails after its changes: its change set is
	// returned, and the error names it all the same.
	slow := k.addon(t, k.prefix+"-slow", "1", k.stream(`apiVersion: apps/v1
kind: Deployment
metadata: {name: NS-slow, namespace: default}
spec:
  selector: {matchLabels: {app: NS-slow}}
  template:
    metadata: {labels: {app: NS-slow}}
    spec: {containers: [{name: c, image: registry.k8s.io/pause:3.10}]}
`))
	sets, err = k.admin.ApplyAll(k.ctx, []apply.Addon{first, slow, last}, apply.Options{Timeout: time.Second})
	if !errors.As(err, &ae) || ae.Addon != slow.Name || ae.Index != 1 || !errors.Is(err, apply.ErrTimeout) {
		t.Fatalf("ApplyAll: %v (%+v), want an *AddonError naming %s, index 1, matching ErrTimeout", err, ae, slow.Name)
	}
	if len(sets) != 2 || sets[1].Addon != slow.Name {
		t.Errorf("ApplyAll returned %d change sets, want the first's and the slow one's", len(sets))
	}

	// UninstallAll names each add-on that was not installed.
	_, err = k.admin.UninstallAll(k.ctx, []string{first.Name, k.prefix + "-none", slow.Name, owner.Name}, apply.UninstallOptions{Timeout: 30 * time.Second})
	var named []string
	var joined interface{ Unwrap() []error }
	if errors.As(err, &joined) {
		for _, e := range joined.Unwrap() {
			if errors.As(e, &ae) && errors.Is(e, apply.ErrNotInstalled) {
				named = append(named, ae.Addon)
			}
		}
	}
	if len(named) != 1 || named[0] != k.prefix+"-none" {
		t.Errorf("UninstallAll: %v, want one *AddonError naming %s-none, not installed; got %v", err, k.prefix, named)
	}
}
