package e2e

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/addonpkg/addonpkg/internal/testing/testregistry"
)

// inspectForeign is the part of inspect --json this test reads.
type inspectForeign struct {
	Form        string       `json:"form"`
	Config      *addonConfig `json:"config"`
	Derived     bool         `json:"derived"`
	StaleLabels bool         `json:"staleLabels"`
}

// TestForeignImages: images addonpkg did not build, made with crane.
// inspect names them after the repository's last segment (spec 4.3),
// renders the inventory their config lacks, and warns about labels
// inherited from a base that no longer describe the tree (spec 4.5).
func TestForeignImages(t *testing.T) {
	crane := needTool(t, "crane")
	t.Parallel()
	r := startRegistry(t, testregistry.Plain)
	c := newCLI(t)
	dir := t.TempDir()

	// crane append of a layer holding addon/: no labels at all.
	layer := filepath.Join(dir, "layer.tar")
	writeTar(t, layer, []tarEntry{
		{"addon/", ""},
		{"addon/ns.yaml", "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: shop\n"},
		{"addon/cm.yaml", configMap("settings")},
	})
	foreign := r.Host + "/vendor/tools/shop-addon:1"
	c.tool("", crane, "append", "--insecure", "--oci-empty-base", "-f", layer, "-t", foreign)

	var in inspectForeign
	res := c.run("inspect", foreign, "--json")
	if res.code != 0 {
		t.Fatalf("inspect failed:\n%s", res)
	}
	mustJSON(t, res.stdout, &in)
	if in.Form != "image" || in.Config == nil || !in.Derived {
		t.Fatalf("inspect --json of a crane-made image: %+v", in)
	}
	if in.Config.Name != "shop-addon" {
		t.Errorf("name %q, want shop-addon (the repository's last segment)", in.Config.Name)
	}
	var kinds []string
	for _, o := range in.Config.Inventory.Objects {
		kinds = append(kinds, o.Kind+"/"+o.Name)
	}
	if strings.Join(kinds, ",") != "Namespace/shop,ConfigMap/settings" {
		t.Errorf("inventory %v, want the rendered Namespace/shop, ConfigMap/settings", kinds)
	}
	var u unpackOutput
	c.okJSON(&u, "unpack", foreign, "--json")
	if u.Config.Name != "shop-addon" || len(u.Config.Inventory.Objects) != 2 {
		t.Errorf("unpack --json: name %q, %d objects; want shop-addon, 2", u.Config.Name, len(u.Config.Inventory.Objects))
	}

	// A derived image: addonpkg's coredns, plus a layer crane appends.
	// Its labels still carry the base's identity and config.
	_, b, _ := buildForm(t, c, imageForm)
	base := r.Host + "/addons/coredns:1"
	c.ok("push", "coredns:1", base)
	extra := filepath.Join(dir, "extra.tar")
	writeTar(t, extra, []tarEntry{{"addon/extra.yaml", configMap("extra")}})
	derived := r.Host + "/site/coredns-site:1"
	c.tool("", crane, "append", "--insecure", "-b", base, "-f", extra, "-t", derived)

	res = c.run("inspect", derived, "--json")
	if res.code != 0 {
		t.Fatalf("inspect failed:\n%s", res)
	}
	in = inspectForeign{}
	mustJSON(t, res.stdout, &in)
	if !in.StaleLabels || !strings.Contains(res.stderr, "stale labels") {
		t.Errorf("inspect of a derived image: staleLabels %v, stderr %q; want a warning", in.StaleLabels, res.stderr)
	}
	if in.Config == nil || in.Config.Identity == b.config(t).Identity {
		t.Fatalf("inspect took the stale identity: %+v", in.Config)
	}
	found := false
	for _, o := range in.Config.Inventory.Objects {
		found = found || o.Name == "extra"
	}
	if !found || in.Config.Name != "coredns" {
		t.Errorf("derived image: name %q, inventory %+v; want coredns (its label) with the appended ConfigMap", in.Config.Name, in.Config.Inventory.Objects)
	}
	res = c.run(append([]string{"unpack", derived}, corednsValues...)...)
	if res.code != 0 || !strings.Contains(res.stderr, "stale labels") || !strings.Contains(res.stdout, "name: extra") {
		t.Errorf("unpack of a derived image: want the stream with the appended ConfigMap and a stale-labels warning:\n%s", res)
	}
}

func mustJSON(t *testing.T, s string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(s), v); err != nil {
		t.Fatalf("not the expected JSON: %v\n%s", err, s)
	}
}
