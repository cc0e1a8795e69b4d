package addonset_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/addonpkg/addonpkg/pkg/addonset"
)

// schemaProps returns the property names and required names of the
// object at path (a $defs name, or "" for the root) in a JSON schema.
func schemaProps(t *testing.T, file, def string) (props, required []string, pattern map[string]string) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	type obj struct {
		Properties           map[string]struct{ Pattern string } `json:"properties"`
		Required             []string                            `json:"required"`
		AdditionalProperties *bool                               `json:"additionalProperties"`
	}
	var s struct {
		obj
		Defs map[string]obj `json:"$defs"`
	}
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	o := s.obj
	if def != "" {
		o = s.Defs[def]
	}
	if o.AdditionalProperties == nil || *o.AdditionalProperties {
		t.Errorf("%s %s: additionalProperties must be false (unknown fields are errors)", file, def)
	}
	pattern = map[string]string{}
	for k, v := range o.Properties {
		props = append(props, k)
		pattern[k] = v.Pattern
	}
	sort.Strings(props)
	sort.Strings(o.Required)
	return props, o.Required, pattern
}

// yamlFields returns the YAML field names of a struct and those without
// omitempty (which the format requires).
func yamlFields(v any) (fields, required []string) {
	rt := reflect.TypeOf(v)
	for i := 0; i < rt.NumField(); i++ {
		tag := rt.Field(i).Tag.Get("yaml")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "" || name == "-" {
			continue
		}
		fields = append(fields, name)
		if !strings.Contains(opts, "omitempty") {
			required = append(required, name)
		}
	}
	sort.Strings(fields)
	sort.Strings(required)
	return fields, required
}

// TestSchemasMatchTypes keeps spec/addon-set*.schema.json and the Go
// types in agreement: the same fields, the same required ones, the same
// name pattern.
func TestSchemasMatchTypes(t *testing.T) {
	nameRE := regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$`)
	for _, c := range []struct {
		file, def string
		v         any
	}{
		{"../../spec/addon-set.schema.json", "", addonset.Set{}},
		{"../../spec/addon-set.schema.json", "addon", addonset.Addon{}},
		{"../../spec/addon-set-lock.schema.json", "", addonset.LockFile{}},
		{"../../spec/addon-set-lock.schema.json", "locked", addonset.Locked{}},
	} {
		props, req, pat := schemaProps(t, c.file, c.def)
		fields, goReq := yamlFields(c.v)
		if !reflect.DeepEqual(props, fields) {
			t.Errorf("%s %s: properties %v, Go fields %v", c.file, c.def, props, fields)
		}
		if !reflect.DeepEqual(req, goReq) {
			t.Errorf("%s %s: required %v, Go fields without omitempty %v", c.file, c.def, req, goReq)
		}
		if p, ok := pat["name"]; ok && p != nameRE.String() {
			t.Errorf("%s %s: name pattern %q, want %q", c.file, c.def, p, nameRE)
		}
	}
	// Names the pattern accepts are those Parse accepts.
	for _, n := range []string{"a", "a-b", "0", strings.Repeat("a", 63), strings.Repeat("a", 64), "-a", "a-", "A", "a_b", "a.b"} {
		_, err := addonset.Parse([]byte(header+"- name: "+n+"\n  source: registry.example.com/x\n"), "addons.yaml", "")
		if (err == nil) != nameRE.MatchString(n) {
			t.Errorf("name %q: schema says %v, Parse says %v", n, nameRE.MatchString(n), err)
		}
	}
}

// TestEntryDigestAsSpecified recomputes the entry digest the way
// spec/addon-set-v1.md section 4.2 describes it.
func TestEntryDigestAsSpecified(t *testing.T) {
	for _, c := range []struct {
		a    addonset.Addon
		json string
	}{
		{addonset.Addon{Name: "a", Source: "./one"}, `{"name":"a","source":"./one"}`},
		{addonset.Addon{Name: "a", Source: "r.example.com/a", Version: ">=1.2 <2 || &x"}, `{"name":"a","source":"r.example.com/a","version":">=1.2 <2 || &x"}`},
		{addonset.Addon{Name: "cni", Source: "r.example.com/cni", Version: "~1.11", DependsOn: []string{"x", "y"}, ContentDir: "/addon", Platform: "linux/arm64"},
			`{"name":"cni","source":"r.example.com/cni","version":"~1.11","dependsOn":["x","y"],"contentDir":"/addon","platform":"linux/arm64"}`},
	} {
		h := sha256.Sum256([]byte(c.json))
		if want := "sha256:" + hex.EncodeToString(h[:]); c.a.EntryDigest() != want {
			t.Errorf("%s: entry digest %s, the spec gives %s", c.json, c.a.EntryDigest(), want)
		}
	}
}
