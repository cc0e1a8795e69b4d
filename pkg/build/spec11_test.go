package build_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/addonpkg/addonpkg/pkg/addon"
)

// specSection returns the text of a "## N." section of spec/addon-v1.md.
func specSection(t *testing.T, heading string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "spec", "addon-v1.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(b), "\n"+heading)
	if !ok {
		t.Fatalf("spec/addon-v1.md has no heading %q", heading)
	}
	sec, _, _ = strings.Cut(sec, "\n## ")
	return sec
}

// Section 11 of the spec lists every annotation and label addonpkg
// writes, in both forms, on manifests, layers and image configs: build
// both forms and look each key up there.
func TestSpecSection11ListsEveryKeyWritten(t *testing.T) {
	sec := specSection(t, "## 11. Annotations and labels")
	listed := map[string]bool{}
	for _, m := range regexp.MustCompile("`([a-z0-9.-]+\\.[a-z0-9.-]+)`").FindAllStringSubmatch(sec, -1) {
		listed[m[1]] = true
	}
	for _, f := range formats {
		res := buildDir(t, exampleDir("coredns"), "coredns", f)
		m, err := res.Image.Manifest()
		if err != nil {
			t.Fatal(err)
		}
		keys := map[string]string{}
		for k := range m.Annotations {
			keys[k] = "manifest annotation"
		}
		for _, l := range m.Layers {
			for k := range l.Annotations {
				keys[k] = "layer annotation"
			}
		}
		if m.Config.MediaType == "application/vnd.oci.image.config.v1+json" {
			raw, err := res.Image.RawConfigFile()
			if err != nil {
				t.Fatal(err)
			}
			var cf v1.ConfigFile
			if err := json.Unmarshal(raw, &cf); err != nil {
				t.Fatal(err)
			}
			for k := range cf.Config.Labels {
				keys[k] = "label"
			}
		}
		if len(keys) == 0 {
			t.Fatalf("%s: no keys written", f)
		}
		for k, where := range keys {
			if !listed[k] {
				t.Errorf("%s form: %s %s is not listed in section 11 of spec/addon-v1.md", f, where, k)
			}
		}
	}
}

// Section 6.2 makes readers treat a null array of the inventory as empty;
// the schema accepts null there, and the reader's parser takes it.
func TestSpecNullInventoryArrays(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "spec", "config.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	var schema struct {
		Defs struct {
			Inventory struct {
				Properties map[string]struct {
					Type any `json:"type"`
				} `json:"properties"`
			} `json:"inventory"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(b, &schema); err != nil {
		t.Fatal(err)
	}
	for _, field := range []string{"objects", "crds", "images"} {
		types, _ := schema.Defs.Inventory.Properties[field].Type.([]any)
		var array, null bool
		for _, ty := range types {
			array = array || ty == "array"
			null = null || ty == "null"
		}
		if !array || !null {
			t.Errorf("schema: inventory.%s type %v, want [array null]", field, schema.Defs.Inventory.Properties[field].Type)
		}
	}
	doc := `{"specVersion":"v1","name":"x","kind":"manifests","contentRoot":"/","identity":"sha256:` +
		strings.Repeat("0", 64) + `","inventory":{"objects":null,"crds":null,"images":null}}`
	c, err := addon.Parse([]byte(doc))
	if err != nil {
		t.Fatalf("a config with null inventory arrays: %v", err)
	}
	if len(c.Inventory.Objects)+len(c.Inventory.CRDs)+len(c.Inventory.Images) != 0 {
		t.Errorf("null arrays parsed as %+v, want empty", c.Inventory)
	}
}
