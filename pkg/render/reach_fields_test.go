package render

import (
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/api/types"
)

// Every field of types.Kustomization is one the walk of the kustomization
// graph knows (kustomizationFields): a field a newer kustomize adds is
// named here, to be followed or said to read no file.
func TestKustomizationFieldsKnown(t *testing.T) {
	var names func(tp reflect.Type) []string
	names = func(tp reflect.Type) []string {
		var out []string
		for i := range tp.NumField() {
			f := tp.Field(i)
			name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
			if f.Anonymous && strings.Contains(opts, "inline") {
				out = append(out, names(f.Type)...)
				continue
			}
			out = append(out, name)
		}
		return out
	}
	for _, n := range names(reflect.TypeFor[types.Kustomization]()) {
		if _, ok := kustomizationFields[n]; !ok {
			t.Errorf("types.Kustomization's field %q is not in kustomizationFields: say whether kustomize reads files from it", n)
		}
	}
}
