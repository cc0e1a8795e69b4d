package unpack_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/addonpkg/addonpkg/pkg/mediatypes"
	"github.com/addonpkg/addonpkg/pkg/unpack"
)

// How the image form's labels steer unpacking (spec 4.3 to 4.5).

// configLabel is an add-on config document for the io.cncf.addon.config
// label.
func configLabel(name, version, kind, contentRoot, identity string) string {
	return fmt.Sprintf(`{"specVersion":"v1","name":%q,"version":%q,"kind":%q,"contentRoot":%q,"identity":%q,"inventory":{"objects":[{"apiVersion":"v1","kind":"ConfigMap","name":"demo"}]}}`,
		name, version, kind, contentRoot, identity)
}

// spec 4.3: "A reader determines the content directory from, in order:
// the io.cncf.addon.content label; the contentRoot of the
// io.cncf.addon.config label; /addon."
func TestLabelsContentRootFromConfigLabel(t *testing.T) {
	want := tree{"cm.yaml": F(cmYAML)}
	im := imageOf(t, imageOpts{labels: map[string]string{
		mediatypes.LabelConfig: configLabel("demo", "1.0.0", "manifests", "/custom", identityOf(t, want)),
	}}, ociLayer(dirE("custom/"), file("custom/cm.yaml", cmYAML), dirE("addon/"), file("addon/other.yaml", cmYAML+"# not the content\n")))
	a, err := unpack.Image(context.Background(), im, unpack.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if d := diffTrees(want, treeOf(t, a.FS)); d != "" || a.ContentDir != "/custom" {
		t.Errorf("content dir %s (want /custom), tree (- want, + got):\n%s", a.ContentDir, d)
	}
}

// An empty label is an absent label (spec 4.3), so an empty content label
// means /addon.
func TestLabelsEmptyContentLabel(t *testing.T) {
	im := imageOf(t, imageOpts{labels: map[string]string{mediatypes.LabelContent: ""}}, ociLayer(file("addon/a", "a")))
	a, err := unpack.Image(context.Background(), im, unpack.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if a.ContentDir != "/addon" {
		t.Errorf("content dir %s, want /addon", a.ContentDir)
	}
}

// spec 4.3: "When both the config label and an individual label give the
// name, version or description and they differ, readers MUST use the
// individual label, which is the one a Dockerfile LABEL line edits."
func TestLabelsIndividualLabelsWin(t *testing.T) {
	tr := tree{"cm.yaml": F(cmYAML)}
	im := imageOf(t, imageOpts{labels: map[string]string{
		mediatypes.LabelConfig:  configLabel("demo", "1.0.0", "manifests", "/addon", identityOf(t, tr)),
		mediatypes.LabelName:    "demo-fork",
		mediatypes.LabelVersion: "1.0.0-patch.1",
	}}, ociLayer(dirE("addon/"), file("addon/cm.yaml", cmYAML)))
	a, err := unpack.Image(context.Background(), im, unpack.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if a.Derived {
		t.Errorf("config derived; the config label matches the content and should be used")
	}
	if a.Config.Name != "demo-fork" || a.Config.Version != "1.0.0-patch.1" {
		t.Errorf("name %q version %q, want the individual labels demo-fork 1.0.0-patch.1", a.Config.Name, a.Config.Version)
	}
	if len(a.Config.Inventory.Objects) != 1 {
		t.Errorf("inventory %+v, want the config label's", a.Config.Inventory)
	}
}

// spec 4.5: a config label whose identity is not the content's is stale:
// kind and inventory come from the content.
func TestLabelsStaleConfigLabel(t *testing.T) {
	im := imageOf(t, imageOpts{labels: map[string]string{
		mediatypes.LabelConfig:  configLabel("demo", "1.0.0", "kustomize", "/addon", "sha256:"+fmt.Sprintf("%064d", 0)),
		mediatypes.LabelName:    "demo",
		mediatypes.LabelVersion: "1.0.1",
	}}, ociLayer(dirE("addon/"), file("addon/cm.yaml", cmYAML)))
	a, err := unpack.Image(context.Background(), im, unpack.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !a.Derived || a.Config.Kind != "manifests" || len(a.Config.Inventory.Objects) != 0 || a.Config.Identity != a.Identity {
		t.Errorf("derived %v, config %+v: want a config derived from the content", a.Derived, a.Config)
	}
	if a.Config.Name != "demo" || a.Config.Version != "1.0.1" {
		t.Errorf("name %q version %q, want the individual labels", a.Config.Name, a.Config.Version)
	}
}
