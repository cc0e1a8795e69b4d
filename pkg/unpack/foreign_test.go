package unpack_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/addonpkg/addonpkg/pkg/addon"
	"github.com/addonpkg/addonpkg/pkg/mediatypes"
	"github.com/addonpkg/addonpkg/pkg/render"
	"github.com/addonpkg/addonpkg/pkg/unpack"
)

// Images addonpkg did not build: the name comes from the labels, else the
// repository's last segment (spec 4.3); the inventory is rendered on
// demand; labels whose identity does not match the content are stale.
func TestForeignImageMetadata(t *testing.T) {
	zero := "sha256:" + fmt.Sprintf("%064d", 0)
	layer := func() *testLayer {
		return ociLayer(dirE("addon/"), file("addon/cm.yaml", cmYAML))
	}
	for _, tc := range []struct {
		name     string
		labels   map[string]string
		repo     string
		wantName string
		stale    bool
	}{
		{name: "no labels, repository", repo: "registry.example/vendor/shop-addon", wantName: "shop-addon"},
		{name: "no labels, no repository", wantName: ""},
		{name: "title label wins", labels: map[string]string{mediatypes.AnnotationTitle: "titled"}, repo: "r.example/x/y", wantName: "titled"},
		{name: "stale identity label", labels: map[string]string{mediatypes.LabelIdentity: zero, mediatypes.LabelName: "base"}, repo: "r.example/x/y", wantName: "base", stale: true},
		{name: "stale config label", labels: map[string]string{mediatypes.LabelConfig: configLabel("base", "1", "manifests", "/addon", zero)}, repo: "r.example/x/derived", wantName: "derived", stale: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := unpack.Image(context.Background(), imageOf(t, imageOpts{labels: tc.labels}, layer()), unpack.Options{Repository: tc.repo})
			if err != nil {
				t.Fatal(err)
			}
			if !a.Derived || a.Stale != tc.stale || a.Config.Name != tc.wantName {
				t.Errorf("derived %v stale %v name %q; want derived, stale %v, name %q", a.Derived, a.Stale, a.Config.Name, tc.stale, tc.wantName)
			}
			if !a.NoInventory || len(a.Config.Inventory.Objects) != 0 {
				t.Fatalf("NoInventory %v, inventory %v before DeriveInventory", a.NoInventory, a.Config.Inventory.Objects)
			}
			res, err := render.Addon(context.Background(), a, render.Options{})
			if err != nil {
				t.Fatal(err)
			}
			a.SetInventory(res.Inventory())
			if a.NoInventory || len(a.Config.Inventory.Objects) != 1 || a.Config.Inventory.Objects[0].Kind != "ConfigMap" {
				t.Errorf("inventory after DeriveInventory: %+v", a.Config.Inventory)
			}
		})
	}
}

// A Helm chart (shaped as helm push makes it) unpacks to the chart's own
// files; rendering it is refused with addon.ErrHelmChart.
func TestHelmChartUnpacksButDoesNotRender(t *testing.T) {
	chartTar := tarBytes(
		file("webapp/Chart.yaml", "apiVersion: v2\nname: webapp\nversion: 0.3.1\n"),
		file("webapp/values.yaml", "replicas: 2\n"),
		file("webapp/templates/deployment.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ .Release.Name }}\n"),
	)
	layer := tarLayer(chartTar, mediatypes.Gzip, mediatypes.HelmChartContent)
	prov := rawLayer([]byte("-----BEGIN PGP SIGNED MESSAGE-----\n"), mediatypes.HelmProvenance)
	img := artifactOf(t, mediatypes.HelmConfig, "", []byte(`{"name":"webapp","version":"0.3.1","apiVersion":"v2"}`), nil, layer, prov)

	if h, err := unpack.ReadHeader(img); err != nil || h.Form != mediatypes.FormHelm {
		t.Fatalf("ReadHeader: %+v, %v; want the form %s", h, err, mediatypes.FormHelm)
	}
	a, err := unpack.Image(context.Background(), img, unpack.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if a.Form != mediatypes.FormHelm || a.Config.Name != "webapp" || a.Config.Version != "0.3.1" || a.ContentDir != "/webapp" {
		t.Errorf("form %s, config %+v, content %s", a.Form, a.Config, a.ContentDir)
	}
	want := tree{"Chart.yaml": F("apiVersion: v2\nname: webapp\nversion: 0.3.1\n"), "values.yaml": F("replicas: 2\n"), "templates": D, "templates/deployment.yaml": F("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ .Release.Name }}\n")}
	if got := treeOf(t, a.FS); !reflect.DeepEqual(got, want) {
		t.Errorf("tree %v, want %v", got, want)
	}
	if _, err := render.Addon(context.Background(), a, render.Options{}); !errors.Is(err, addon.ErrHelmChart) || !strings.Contains(err.Error(), "helm template") {
		t.Errorf("Render: %v, want addon.ErrHelmChart naming helm template", err)
	}
	if _, err := render.Addon(context.Background(), a, render.Options{Raw: true}); !errors.Is(err, addon.ErrHelmChart) {
		t.Errorf("Raw: %v, want addon.ErrHelmChart", err)
	}
}
