package apply

import (
	"slices"
	"strconv"
	"strings"

	"github.com/fluxcd/pkg/ssa"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/value"
)

// takenOver is what an apply of obj removes from the live object by
// taking over the fields of other managers (Options.TakeOver): the
// fields that a matched manager wrote (kubectl label, kubectl scale, a
// hand edit), that obj does not set and that no other manager holds.
// The apply renames the matched managers' entries to FieldManager's
// before it applies (ssa's Cleanup.FieldManagers), so those fields are
// dropped as fields addonpkg no longer applies; a server-side dry-run
// cannot rename first, so it does not show them, and Diff adds them.
// managers are the matched managers that wrote them.
func takenOver(managed []metav1.ManagedFieldsEntry, obj *unstructured.Unstructured, takeOver []string) (paths []fieldpath.Path, managers []string) {
	taken, kept := &fieldpath.Set{}, &fieldpath.Set{}
	for _, e := range managed {
		if e.FieldsV1 == nil || e.Subresource != "" {
			continue // ssa renames none of a subresource's (status)
		}
		s, err := ssa.FieldsToSet(*e.FieldsV1)
		if err != nil {
			continue
		}
		switch {
		case matchesTakeOver(e, takeOver):
			taken = taken.Union(&s)
			if !slices.Contains(managers, e.Manager) {
				managers = append(managers, e.Manager)
			}
		case e.Manager != FieldManager || e.Operation != metav1.ManagedFieldsOperationApply:
			kept = kept.Union(&s)
		}
	}
	if taken.Empty() {
		return nil, nil
	}
	held := withStringData(obj)
	taken.Leaves().Iterate(func(p fieldpath.Path) {
		if !holds(held.Object, p) && !covers(kept, p) {
			paths = append(paths, p.Copy())
		}
	})
	return paths, managers
}

// withStringData is obj, or, for a Secret with stringData, a copy that
// holds each of its keys in data too, as the API server writes them: a
// key kubectl wrote in data that the add-on sets in stringData is
// changed, not removed (a diff does not show the Secret losing it).
func withStringData(obj *unstructured.Unstructured) *unstructured.Unstructured {
	sd, ok := obj.Object["stringData"].(map[string]any)
	if !ok || len(sd) == 0 || obj.GetKind() != "Secret" || obj.GetAPIVersion() != "v1" {
		return obj
	}
	out := obj.DeepCopy()
	data, _ := out.Object["data"].(map[string]any)
	if data == nil {
		data = map[string]any{}
	}
	for k, v := range sd {
		if _, ok := data[k]; !ok {
			data[k] = v
		}
	}
	out.Object["data"] = data
	return out
}

// matchesTakeOver is ssa's match of a Cleanup.FieldManagers entry, as
// applyOptions builds them: a name prefix, an apply or an update.
func matchesTakeOver(e metav1.ManagedFieldsEntry, takeOver []string) bool {
	for _, name := range takeOver {
		if strings.HasPrefix(e.Manager, name) {
			return e.Operation == metav1.ManagedFieldsOperationApply || e.Operation == metav1.ManagedFieldsOperationUpdate
		}
	}
	return false
}

// covers reports whether s (other managers' fields) keeps p: s holds p,
// a list above it (an atomic list: its items belong to whoever sets it),
// or a field below it. A map above it
// does not: maps are granular, each key its own field.
func covers(s *fieldpath.Set, p fieldpath.Path) bool {
	if s.Has(p) {
		return true
	}
	for i := len(p) - 1; i > 0; i-- {
		if p[i].FieldName == nil && s.Has(p[:i]) {
			return true
		}
	}
	below := s
	for _, pe := range p {
		if below = below.WithPrefix(pe); below.Empty() {
			return false
		}
	}
	return true
}

// withoutPaths is obj without the fields of paths that are map keys all
// the way down (a label, an annotation, spec.replicas); a path through a
// list item is left in obj, and said in the change's reason only.
func withoutPaths(obj *unstructured.Unstructured, paths []fieldpath.Path) *unstructured.Unstructured {
	out := obj.DeepCopy()
	for _, p := range paths {
		if names := mapKeys(p); len(names) > 0 {
			unstructured.RemoveNestedField(out.Object, names...)
		}
	}
	return out
}

// mapKeys is p's field names when every element of p is one (a label,
// spec.replicas), else nil (a path through a list item).
func mapKeys(p fieldpath.Path) []string {
	var names []string
	for _, pe := range p {
		if pe.FieldName == nil {
			return nil
		}
		names = append(names, *pe.FieldName)
	}
	return names
}

// holds reports whether obj sets p, walked as the server's schema walks
// it: a keyed list item (a container by its name) is found by its key,
// so a field that a hand edit added inside an item obj sets (an env var
// of a container) is not held, as the apply removes it. (The deduced
// type of obj makes every list atomic and hid such fields.) A key field
// obj leaves out (a port's protocol, defaulted by the server) matches.
func holds(obj any, p fieldpath.Path) bool {
	_, _, ok := lookup(obj, p)
	return ok
}

// lookup is the value at p in obj, walked as holds walks it, and where
// it is as the segments of a JSON pointer (a list item by its index).
func lookup(obj any, p fieldpath.Path) (v any, pointer []string, ok bool) {
	v = obj
	for _, pe := range p {
		switch {
		case pe.FieldName != nil:
			m, ok := v.(map[string]any)
			if !ok {
				return nil, nil, false
			}
			if v, ok = m[*pe.FieldName]; !ok {
				return nil, nil, false
			}
			pointer = append(pointer, *pe.FieldName)
		case pe.Index != nil:
			l, ok := v.([]any)
			if !ok || *pe.Index < 0 || *pe.Index >= len(l) {
				return nil, nil, false
			}
			v = l[*pe.Index]
			pointer = append(pointer, strconv.Itoa(*pe.Index))
		default:
			l, ok := v.([]any)
			if !ok {
				return nil, nil, false
			}
			found := false
			for i, item := range l {
				if itemMatches(item, pe) {
					v, found = item, true
					pointer = append(pointer, strconv.Itoa(i))
					break
				}
			}
			if !found {
				return nil, nil, false
			}
		}
	}
	return v, pointer, true
}

// itemMatches reports whether a list item is the one pe names, by value
// or by key.
func itemMatches(item any, pe fieldpath.PathElement) bool {
	if pe.Value != nil {
		return value.Equals(value.NewValueInterface(item), *pe.Value)
	}
	m, ok := item.(map[string]any)
	if !ok || pe.Key == nil {
		return false
	}
	for _, f := range *pe.Key {
		got, ok := m[f.Name]
		if ok && !value.Equals(value.NewValueInterface(got), f.Value) {
			return false
		}
	}
	return true
}
