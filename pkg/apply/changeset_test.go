package apply_test

import (
	"encoding/json"
	"testing"

	"github.com/addonpkg/addonpkg/pkg/addon"
	"github.com/addonpkg/addonpkg/pkg/apply"
)

// A change set without changes (an uninstall whose objects were gone
// already) is "changes": [] in JSON, not null, by pointer or by value,
// alone or in a list: a reader's `.changes | length` works on every one.
func TestChangeSetJSONChangesNeverNull(t *testing.T) {
	cs := &apply.ChangeSet{Addon: "gone", DryRun: true}
	for _, v := range []any{cs, *cs, []*apply.ChangeSet{cs}} {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		want := `{"addon":"gone","dryRun":true,"changes":[]}`
		if _, ok := v.([]*apply.ChangeSet); ok {
			want = "[" + want + "]"
		}
		if string(b) != want {
			t.Errorf("%T: %s, want %s", v, b, want)
		}
	}
	b, err := json.Marshal(&apply.ChangeSet{Addon: "a", Changes: []apply.Change{{Object: "ConfigMap/default/x", ID: "default_x__ConfigMap", Version: "v1", Action: apply.Created}}})
	if want := `{"addon":"a","changes":[{"object":"ConfigMap/default/x","id":"default_x__ConfigMap","version":"v1","action":"created"}]}`; err != nil || string(b) != want {
		t.Errorf("%s, %v; want %s", b, err, want)
	}
}

// ObjectChange names an object as apply's own changes do: its subject,
// and the inventory ID with the names exact (a name the subject
// sanitizes is kept in the ID).
func TestObjectChange(t *testing.T) {
	ch := apply.ObjectChange(addon.Object{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "kube-system", Name: "core\x1bdns"}, apply.Created)
	want := apply.Change{Object: "Deployment/kube-system/core?dns", ID: "kube-system_core\x1bdns_apps_Deployment", Version: "apps/v1", Action: apply.Created}
	if ch != want {
		t.Errorf("ObjectChange = %+v, want %+v", ch, want)
	}
	cm := apply.ObjectChange(addon.Object{APIVersion: "v1", Kind: "Namespace", Name: "x"}, apply.Deleted)
	if cm.ID != "_x__Namespace" || cm.Object != "Namespace/x" {
		t.Errorf("a cluster-scoped core object: %+v", cm)
	}
}
