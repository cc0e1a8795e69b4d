package apply_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/addonpkg/addonpkg/pkg/apply"
)

// FuzzDecodeObjects: any stream decodes to objects that each have an
// apiVersion, a kind and a name, or fails with ErrInvalid in one line;
// it never panics.
func FuzzDecodeObjects(f *testing.F) {
	for _, s := range []string{
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n",
		"apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: a}}\n",
		"---\n# c\n---\n{\"apiVersion\": \"v1\", \"kind\": \"Secret\", \"metadata\": {\"name\": \"c\"}}\n",
		"a: &a [*a, *a]\n",
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, resourceVersion: \"1\"}\n",
		"apiVersion: v1\nkind: List\nitems: 3\n",
		"apiVersion: v1\nkind: ConfigMap\nmetadata: 7\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		objs, err := apply.DecodeObjects(b)
		if err != nil {
			if !errors.Is(err, apply.ErrInvalid) || strings.ContainsAny(err.Error(), "\n\r") {
				t.Fatalf("error %q: want ErrInvalid on one line", err)
			}
			return
		}
		for _, o := range objs {
			if o.GetAPIVersion() == "" || o.GetKind() == "" || o.GetName() == "" {
				t.Fatalf("decoded an object without apiVersion, kind or name: %v", o.Object)
			}
		}
	})
}
