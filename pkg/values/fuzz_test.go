package values_test

import (
	"testing"

	"github.com/addonpkg/addonpkg/pkg/values"
)

// FuzzParse: a declaration comes with the add-on, so it is untrusted:
// Parse never panics, and what it accepts has valid, unique names.
func FuzzParse(f *testing.F) {
	f.Add([]byte(decl))
	f.Add([]byte("apiVersion: addon.cncf.io/v1alpha1\nkind: AddonValues\nvalues: &a [*a]\n"))
	f.Add([]byte("apiVersion: addon.cncf.io/v1alpha1\nkind: AddonValues\nvalues:\n- name: A\n  default: null\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := values.Parse(b)
		if err != nil {
			return
		}
		seen := map[string]bool{}
		for _, n := range d.Names() {
			if values.CheckName(n) != nil || seen[n] {
				t.Fatalf("accepted name %q", n)
			}
			seen[n] = true
		}
	})
}

// FuzzExpand: documents are untrusted text; Expand never panics.
func FuzzExpand(f *testing.F) {
	for _, s := range []string{"a: ${A}", "${A:=x}", "$${A}", "${A", "${A/#b/c}", "${#A}", "${A:0:1}", "${${A}}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		_, _ = values.Expand("f.yaml", []byte(s), map[string]string{"A": "value"})
	})
}
