package addon_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/addonpkg/addonpkg/pkg/addon"
)

// FuzzParse: Parse never panics; what it accepts has a name and a known
// kind, and survives Marshal then Parse unchanged. The corpus in
// testdata/fuzz/FuzzParse holds a valid config, a huge number and deeply
// nested arrays; the ones below are added in code.
func FuzzParse(f *testing.F) {
	valid, err := os.ReadFile(filepath.Join("..", "..", "spec", "examples", "artifact", "config.json"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(valid)
	f.Add([]byte(""))
	f.Add([]byte("{}"))
	f.Add([]byte(`{"name":"coredns","version":"1.11.3"}`))
	f.Add([]byte(`{"specVersion":"v1","name":"x","kind":"kustomize","inventory":{"objects":[]}}`))
	f.Add([]byte(`{"specVersion":"v1","name":"x","kind":"manifests","inventory":{"objects":null,"crds":[],"images":[]}}`))
	f.Add([]byte(`{"specVersion":"v1","name":"x","kind":"manifests","version":1e999999}`))
	f.Add([]byte(`{"specVersion":"v1","name":"x","kind":"manifests","inventory":` + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + `}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := addon.Parse(b)
		if err != nil {
			if c != nil {
				t.Fatalf("Parse returned a config and an error: %+v, %v", c, err)
			}
			return
		}
		if c.Name == "" {
			t.Fatalf("accepted a config without a name: %q", b)
		}
		// An omitted kind is derived from the content later (Complete).
		if c.Kind != addon.KindManifests && c.Kind != addon.KindKustomize && c.Kind != "" {
			t.Fatalf("accepted kind %q: %q", c.Kind, b)
		}
		if c.SpecVersion != "v1" {
			t.Fatalf("accepted specVersion %q: %q", c.SpecVersion, b)
		}
		out, err := c.Marshal()
		if err != nil {
			t.Fatalf("Marshal of a parsed config: %v", err)
		}
		again, err := addon.Parse(out)
		if err != nil {
			t.Fatalf("Parse of Marshal's output %q: %v", out, err)
		}
		// inventory.crds and .images are omitempty: an empty list in the
		// input parses to an empty slice, is left out by Marshal and
		// comes back nil. Both mean "none"; compare them as equal.
		for _, x := range []*addon.Config{c, again} {
			if len(x.Inventory.CRDs) == 0 {
				x.Inventory.CRDs = nil
			}
			if len(x.Inventory.Images) == 0 {
				x.Inventory.Images = nil
			}
		}
		if out2, err := again.Marshal(); err != nil || string(out2) != string(out) {
			t.Fatalf("Marshal is not stable: %q, then %q (%v)", out, out2, err)
		}
		if !reflect.DeepEqual(c, again) {
			t.Fatalf("Marshal then Parse changed the config:\ninput  %q\nparsed %#v\nmarshal %q\nparsed %#v", b, c, out, again)
		}
	})
}
