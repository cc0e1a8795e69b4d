package apply

import (
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/fluxcd/cli-utils/pkg/object"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/addonpkg/addonpkg/pkg/addon"
)

// Action is what Apply did (or, dry-run, would do) to one object.
type Action string

// The actions, as kubectl and Flux name them.
const (
	Created    Action = "created"
	Configured Action = "configured"
	// Recreated: deleted and created again, because the server refused
	// the change as immutable and Options.Recreate (or AnnotationRecreate)
	// allowed it.
	Recreated Action = "recreated"
	Unchanged Action = "unchanged"
	Deleted   Action = "deleted"
	// Skipped: left alone; Change.Reason says why (a keep annotation, a
	// Namespace or CRD that still holds objects, an object without this
	// add-on's owner label, an AnnotationApply=ApplyIfNotPresent object
	// that exists, an ignored one: AnnotationApply=ApplyIgnore).
	Skipped Action = "skipped"
	// Unvalidated (dry-run and Diff only): the server could not check the
	// object because its CRD or Namespace is part of this add-on and not
	// in the cluster yet; it would be created.
	Unvalidated Action = "unvalidated"
)

// Change is one object's entry in a ChangeSet.
type Change struct {
	// Object is Kind/namespace/name (Kind/name when cluster-scoped).
	Object string `json:"object"`
	// ID is the object's inventory entry ("<namespace>_<name>_<group>_<kind>").
	ID string `json:"id"`
	// Version is its API version (v1, apps/v1, ...).
	Version string `json:"version"`
	Action  Action `json:"action"`
	// Reason says why for Skipped, Unvalidated and Recreated.
	Reason string `json:"reason,omitempty"`
	// Diff is a unified diff of the object in the cluster and as it would
	// be applied (dry-run and Diff only; Secret data masked).
	Diff string `json:"diff,omitempty"`
}

// ObjectChange is the Change act of the object o, named as Apply names
// its objects: Object is its subject, ID its inventory entry's (the names
// exact). A program that compares add-ons itself (as diff A B does) lists
// its findings in apply's words with it.
func ObjectChange(o addon.Object, act Action) Change {
	gv, _ := schema.ParseGroupVersion(o.APIVersion) // a bad one has no group
	m := object.ObjMetadata{Namespace: o.Namespace, Name: o.Name, GroupKind: schema.GroupKind{Group: gv.Group, Kind: o.Kind}}
	return Change{Object: o.Subject(), ID: entryFor(m).ID, Version: o.APIVersion, Action: act}
}

// ChangeSet is the result of Apply, Diff or Uninstall: one Change per
// object, in the order they were applied (deletions in reverse order).
type ChangeSet struct {
	Addon   string   `json:"addon"`
	DryRun  bool     `json:"dryRun,omitempty"`
	Changes []Change `json:"changes"`
}

// MarshalJSON writes a ChangeSet with no changes (an uninstall whose
// objects were already gone) as "changes": [], never null, so that its
// shape does not depend on how many there are.
func (cs ChangeSet) MarshalJSON() ([]byte, error) {
	type plain ChangeSet // without this method
	p := plain(cs)
	if p.Changes == nil {
		p.Changes = []Change{}
	}
	return json.Marshal(p)
}

// Count is how many changes have action a.
func (cs *ChangeSet) Count(a Action) int {
	n := 0
	for _, c := range cs.Changes {
		if c.Action == a {
			n++
		}
	}
	return n
}

// Changed reports whether anything was (or would be) created, configured,
// recreated or deleted: `kubectl diff`'s exit code 1.
func (cs *ChangeSet) Changed() bool {
	for _, c := range cs.Changes {
		switch c.Action {
		case Created, Configured, Recreated, Deleted, Unvalidated:
			return true
		}
	}
	return false
}

// String is a table: ACTION, OBJECT, and the reason where there is one.
func (cs *ChangeSet) String() string {
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "ACTION\tOBJECT\tREASON")
	for _, c := range cs.Changes {
		fmt.Fprintf(w, "%s\t%s\t%s\n", c.Action, c.Object, c.Reason)
	}
	_ = w.Flush()
	return b.String()
}
