package apply_test

import (
	"encoding/json"
	"testing"

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
