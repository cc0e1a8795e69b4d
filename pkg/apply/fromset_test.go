package apply_test

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/addonpkg/addonpkg/pkg/addonset"
	"github.com/addonpkg/addonpkg/pkg/apply"
)

// FromSet keeps the set's order, names each add-on as the set does,
// records the pinned source (a folder's absolute path, not the one
// relative to the declaration, which means nothing read back elsewhere)
// and the values it was rendered with.
func TestFromSet(t *testing.T) {
	res, err := addonset.RenderLocked(context.Background(), "../../examples/addon-set/addons.yaml", addonset.RenderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	addons, err := apply.FromSet(res.Members)
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		Name, Source string
		Objects      int
	}
	var got []row
	for _, a := range addons {
		got = append(got, row{a.Name, a.Source, len(a.Objects)})
	}
	examples, err := filepath.Abs("../../examples")
	if err != nil {
		t.Fatal(err)
	}
	want := []row{
		{"coredns", filepath.Join(examples, "coredns"), 6},
		{"gateway-api-crds", filepath.Join(examples, "gateway-api-crds"), 3},
		{"metrics-server", filepath.Join(examples, "metrics-server"), 9},
	}
	if !slices.Equal(got, want) {
		t.Errorf("FromSet gave %+v, want %+v", got, want)
	}
	// A member's name is the set's, never a claim of its config.
	for _, a := range addons {
		if a.NameFromConfig {
			t.Errorf("member %s is marked NameFromConfig", a.Name)
		}
	}
	if v := addons[0].Values["DNS_SERVER_IP"]; v != "10.96.0.10" {
		t.Errorf("coredns was recorded with DNS_SERVER_IP %q, want the set's 10.96.0.10", v)
	}
}
