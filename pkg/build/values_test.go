package build_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/addonpkg/addonpkg/pkg/build"
	"github.com/addonpkg/addonpkg/pkg/filetree"
)

// A build refuses what an installer would only find out when it
// installs: a broken values declaration, a reference to an undeclared
// value. A tree that declares its values builds, its inventory taken
// from the template.
func TestBuildChecksValues(t *testing.T) {
	const decl = "apiVersion: addon.cncf.io/v1alpha1\nkind: AddonValues\nvalues:\n- name: NS\n"
	for name, tc := range map[string]struct{ decl, doc, err string }{
		"declared":   {decl, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: \"${NS}\"}\n", ""},
		"undeclared": {decl, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: \"${NX}\"}\n", "${NX} is not a declared value"},
		"bad decl":   {"kind: AddonValues\n", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n", "invalid values"},
		"no decl":    {"", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {sh: \"${HOME}\"}\n", ""},
	} {
		src := filetree.NewBuilder()
		_ = src.WriteFile("cm.yaml", []byte(tc.doc), 0o644)
		if tc.decl != "" {
			_ = src.WriteFile(".addonvalues", []byte(tc.decl), 0o644)
		}
		res, err := build.Build(context.Background(), src.FS(), build.Options{Name: "v"})
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%s: %v", name, err)
		case tc.err != "" && (!errors.Is(err, build.ErrValidation) || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s: err = %v, want a validation error with %q", name, err, tc.err)
		case name == "declared" && res.Config.Inventory.Objects[0].Namespace != "${NS}":
			t.Errorf("inventory %+v: want the template's namespace", res.Config.Inventory.Objects)
		}
	}
}

// Two required values that name two objects of one kind build: the
// check fills each required value with a stand-in of its own, so the
// objects stay two (one stand-in for all made them one object, refused
// as a duplicate).
func TestBuildValuesStandInsDistinct(t *testing.T) {
	src := filetree.NewBuilder()
	_ = src.WriteFile(".addonvalues", []byte("apiVersion: addon.cncf.io/v1alpha1\nkind: AddonValues\nvalues:\n- name: TLS_SECRET\n- name: CA_SECRET\n"), 0o644)
	_ = src.WriteFile("secrets.yaml", []byte("apiVersion: v1\nkind: Secret\nmetadata:\n  name: ${TLS_SECRET}\n---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: ${CA_SECRET}\n"), 0o644)
	res, err := build.Build(context.Background(), src.FS(), build.Options{Name: "v"})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(res.Config.Inventory.Objects); n != 2 {
		t.Errorf("inventory %+v: want the two secrets", res.Config.Inventory.Objects)
	}
}
