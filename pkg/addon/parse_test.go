package addon_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/addonpkg/addonpkg/pkg/addon"
)

const (
	testIdentity  = "sha256:77ad0000000000000000000000000000000000000000000000000000000000aa"
	otherIdentity = "sha256:1234000000000000000000000000000000000000000000000000000000000000"
)

// A reader accepts a config that omits what it can derive, and refuses
// only what is present and wrong (spec 6.5).
func TestParseAndComplete(t *testing.T) {
	for _, tc := range []struct {
		name        string
		config      string
		parseErr    string // substring of Parse's error
		completeErr error
		want        addon.Config
		inventory   bool // HasInventory
	}{
		{
			name:   "minimal",
			config: `{"name":"coredns","version":"1.11.3"}`,
			want:   addon.Config{SpecVersion: "v1", Name: "coredns", Version: "1.11.3", Kind: "manifests", ContentRoot: "/", Identity: testIdentity},
		},
		{
			name:      "complete and consistent",
			config:    `{"specVersion":"v1","name":"x","kind":"manifests","contentRoot":"/","identity":"` + testIdentity + `","inventory":{"objects":[]}}`,
			want:      addon.Config{SpecVersion: "v1", Name: "x", Kind: "manifests", ContentRoot: "/", Identity: testIdentity, Inventory: addon.Inventory{Objects: []addon.Object{}}},
			inventory: true,
		},
		{
			name:   "inventory null is none",
			config: `{"name":"x","inventory":{"objects":null}}`,
			want:   addon.Config{SpecVersion: "v1", Name: "x", Kind: "manifests", ContentRoot: "/", Identity: testIdentity},
		},
		{name: "another spec version", config: `{"specVersion":"v2","name":"x"}`, parseErr: `unsupported specVersion "v2"`},
		{name: "no name", config: `{"version":"1"}`, parseErr: "missing name"},
		{name: "empty object", config: " {\n} ", parseErr: "add-on config is empty: it holds no add-on metadata"},
		{name: "no bytes", config: "", parseErr: "add-on config is empty: it holds no add-on metadata"},
		{name: "only space", config: " \n", parseErr: "add-on config is empty: it holds no add-on metadata"},
		{name: "null", config: "null", parseErr: "add-on config is empty: it holds no add-on metadata"},
		{name: "an unknown member only", config: `{"title":"x"}`, parseErr: "missing name"},
		{name: "unknown kind", config: `{"name":"x","kind":"helm"}`, parseErr: `unknown add-on kind "helm"`},
		{name: "not an object", config: `[]`, parseErr: "decode add-on config"},
		{name: "wrong identity", config: `{"name":"x","identity":"` + otherIdentity + `"}`, completeErr: addon.ErrIdentityMismatch},
		{name: "wrong kind", config: `{"name":"x","kind":"kustomize"}`, completeErr: addon.ErrKindMismatch},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := addon.Parse([]byte(tc.config))
			if tc.parseErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.parseErr) {
					t.Fatalf("Parse: %v, want an error containing %q", err, tc.parseErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if got := c.HasInventory(); got != tc.inventory {
				t.Errorf("HasInventory %v, want %v", got, tc.inventory)
			}
			err = c.Complete(addon.KindManifests, testIdentity, "/")
			if tc.completeErr != nil {
				if !errors.Is(err, tc.completeErr) {
					t.Fatalf("Complete: %v, want %v", err, tc.completeErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Complete: %v", err)
			}
			if fmt.Sprintf("%+v", *c) != fmt.Sprintf("%+v", tc.want) {
				t.Errorf("config\n got %+v\nwant %+v", *c, tc.want)
			}
		})
	}
}

func ExampleParse() {
	// What `oras push --config cfg.json:application/vnd.cncf.addon.config.v1+json`
	// can carry: the rest is derived from the content.
	c, err := addon.Parse([]byte(`{"name":"coredns","version":"1.11.3"}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(c.SpecVersion, c.Name, c.Version, c.HasInventory())
	if err := c.Complete(addon.KindManifests, "sha256:77ad0000000000000000000000000000000000000000000000000000000000aa", "/"); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(c.Kind, c.Identity)
	// Output:
	// v1 coredns 1.11.3 false
	// manifests sha256:77ad0000000000000000000000000000000000000000000000000000000000aa
}

// An empty config is recognised by its value, and a missing name is not
// taken for one.
func TestParseEmptyConfig(t *testing.T) {
	for _, b := range []string{"", "{}", "null", " { } "} {
		if _, err := addon.Parse([]byte(b)); !errors.Is(err, addon.ErrEmptyConfig) {
			t.Errorf("Parse(%q): %v, want ErrEmptyConfig", b, err)
		}
	}
	for _, b := range []string{`{"version":"1"}`, `{"name":""}`, "[]", "{"} {
		if _, err := addon.Parse([]byte(b)); err == nil || errors.Is(err, addon.ErrEmptyConfig) {
			t.Errorf("Parse(%q): %v, want an error that is not ErrEmptyConfig", b, err)
		}
	}
}
