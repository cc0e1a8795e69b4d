package e2e

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/addonpkg/addonpkg/internal/testing/testregistry"
)

// orasPushAddon pushes dir (relative to work) as an add-on artifact with
// oras, exactly as spec/addon-v1.md ("Making an add-on artifact with other
// tools") tells a third party to, with cfg as the config document.
func orasPushAddon(t *testing.T, oras, work, ref, cfg, dir string) {
	t.Helper()
	cfgFile := filepath.Join(writeTree(t, t.TempDir(), map[string]string{"cfg.json": cfg}), "cfg.json")
	newCLI(t).tool(work, oras, "push", "--plain-http", ref,
		"--artifact-type", "application/vnd.cncf.addon.config.v1+json",
		"--config", cfgFile+":application/vnd.cncf.addon.config.v1+json",
		dir+":application/vnd.cncf.addon.content.v1.tar+gzip")
}

// TestOrasPushedAddonMinimalConfig: an add-on artifact made with oras and
// a minimal config ({"name","version"}) reads like one addonpkg built: the
// same tree, the same identity, the inventory rendered; a config that
// states something wrong is refused.
func TestOrasPushedAddonMinimalConfig(t *testing.T) {
	oras := needTool(t, "oras")
	t.Parallel()
	r := startRegistry(t, testregistry.Plain)
	c := newCLI(t)
	dir := example(t, "coredns")
	built := c.build(dir, "-t", "built:1", "--format", "artifact").config(t)

	for _, tc := range []struct {
		name string
		dir  string // what oras pushes, relative to the parent of the example
	}{
		// oras tars a directory under its own name (title "coredns").
		{"dir", "coredns/"},
		// pushed from inside the directory: title ".", as addonpkg does.
		{"dot", "."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			work := filepath.Dir(dir)
			if tc.dir == "." {
				work = dir
			}
			ref := r.Host + "/third-party/coredns-" + tc.name + ":1.11.3"
			orasPushAddon(t, oras, work, ref, `{"name":"coredns","version":"1.11.3"}`, tc.dir)
			cc := c.on(t)

			out := filepath.Join(t.TempDir(), "out")
			cc.ok("unpack", ref, "-o", out)
			assertSameTree(t, out, dir)

			var u unpackOutput
			cc.okJSON(&u, "unpack", ref, "--json")
			if u.Form != "artifact" || u.Config.Name != "coredns" || u.Config.SpecVersion != "v1" || u.Config.Kind != "manifests" {
				t.Errorf("unpack --json: form %q, config %+v; want artifact, coredns, v1, manifests", u.Form, u.Config)
			}
			if u.Identity != built.Identity || u.Config.Identity != built.Identity {
				t.Errorf("identity %s (config %s), want %s as addonpkg build computes", u.Identity, u.Config.Identity, built.Identity)
			}
			if len(u.Config.Inventory.Objects) != len(built.Inventory.Objects) {
				t.Errorf("derived inventory has %d objects, want %d", len(u.Config.Inventory.Objects), len(built.Inventory.Objects))
			}
			for i, o := range u.Config.Inventory.Objects {
				if i < len(built.Inventory.Objects) && o != built.Inventory.Objects[i] {
					t.Errorf("inventory object %d: %+v, build has %+v", i, o, built.Inventory.Objects[i])
				}
			}
			stream := cc.ok(append([]string{"unpack", ref}, corednsValues...)...)
			if want := cc.ok(append([]string{"unpack", "built:1"}, corednsValues...)...); stream != want {
				t.Errorf("the rendered stream differs from the one of addonpkg's own build")
			}
			var in inspectOutput
			cc.okJSON(&in, "inspect", ref, "--json")
			if in.Form != "artifact" || in.Config == nil || in.Config.Name != "coredns" {
				t.Errorf("inspect --json: form %q, config %+v; want artifact, coredns", in.Form, in.Config)
			}
		})
	}

	// Present and wrong is refused, naming what is wrong.
	for _, tc := range []struct {
		name, cfg, want string
	}{
		{"spec version", `{"specVersion":"v2","name":"coredns"}`, `unsupported specVersion "v2"`},
		{"identity", `{"name":"coredns","identity":"sha256:` + strings.Repeat("0", 64) + `"}`, "identity"},
		{"kind", `{"name":"coredns","kind":"kustomize"}`, "kustomize"},
		{"no name", `{"version":"1"}`, "missing name"},
		// A config with nothing in it says so, not that a name is missing.
		{"empty object", `{}`, "config is empty: it holds no add-on metadata"},
		{"empty file", ``, "config is empty: it holds no add-on metadata"},
		{"null", `null`, "config is empty: it holds no add-on metadata"},
	} {
		t.Run("refused/"+tc.name, func(t *testing.T) {
			ref := r.Host + "/third-party/bad:" + strings.ReplaceAll(tc.name, " ", "-")
			orasPushAddon(t, oras, filepath.Dir(dir), ref, tc.cfg, "coredns/")
			line := mustFailOneLine(t, c.on(t).run("unpack", ref))
			if !strings.Contains(line, tc.want) || !strings.Contains(line, ref) {
				t.Errorf("error %q does not name %q and %s", line, tc.want, ref)
			}
			if tc.cfg != `{"version":"1"}` && strings.Contains(line, "missing name") {
				t.Errorf("error %q says a name is missing from a config that holds nothing", line)
			}
		})
	}
}

// TestOrasAttachedReferrerIsNotTheAddon: `oras attach` puts an SBOM (or
// any file) beside an add-on, as a manifest whose layer is titled like an
// ORAS artifact's and whose subject is the add-on. Pulled by its digest
// as if it were the add-on, it unpacked as an ORAS artifact holding
// sbom.spdx.json (-o wrote it; the render failed on "missing Resource
// metadata"). It is a referrer (spec/addon-v1.md 10, rule 8): refused in
// one line naming the add-on it refers to, nothing written; inspect
// names it for what it is; the add-on itself still reads.
func TestOrasAttachedReferrerIsNotTheAddon(t *testing.T) {
	oras := needTool(t, "oras")
	t.Parallel()
	r := startRegistry(t, testregistry.Plain)
	c := newCLI(t)
	dir := example(t, "coredns")
	ref := r.Host + "/third-party/coredns:1.11.3"
	orasPushAddon(t, oras, filepath.Dir(dir), ref, `{"name":"coredns","version":"1.11.3"}`, "coredns/")
	addon := strings.TrimSpace(c.tool("", oras, "resolve", "--plain-http", ref).stdout)

	work := writeTree(t, t.TempDir(), map[string]string{"sbom.spdx.json": `{"spdxVersion":"SPDX-2.3","name":"coredns"}`})
	c.tool(work, oras, "attach", "--plain-http", "--artifact-type", "application/spdx+json", ref, "sbom.spdx.json")
	var found struct {
		Referrers []struct {
			Digest string `json:"digest"`
		} `json:"referrers"`
	}
	if err := json.Unmarshal([]byte(c.tool("", oras, "discover", "--plain-http", "--format", "json", ref).stdout), &found); err != nil || len(found.Referrers) != 1 {
		t.Fatalf("oras discover: %+v, %v; want the one referrer attached", found, err)
	}
	referrer := r.Host + "/third-party/coredns@" + found.Referrers[0].Digest

	out := filepath.Join(t.TempDir(), "out")
	line := mustFailOneLine(t, c.run("unpack", referrer, "-o", out))
	for _, want := range []string{"referrer", "application/spdx+json", addon} {
		if !strings.Contains(line, want) {
			t.Errorf("unpack of the referrer: %q does not say %q", line, want)
		}
	}
	if _, err := os.Lstat(out); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused unpack left %s: %v", out, err)
	}
	mustFailOneLine(t, c.run("unpack", referrer))
	var in inspectOutput
	c.okJSON(&in, "inspect", referrer, "--json")
	if in.Form != "referrer" {
		t.Errorf("inspect --json of the referrer: form %q, want referrer", in.Form)
	}
	got := filepath.Join(t.TempDir(), "addon")
	c.ok("unpack", ref, "-o", got)
	assertSameTree(t, got, dir)
}

// TestOrasPushedAddonWithoutContentType: spec/addon-v1.md 5.1 pushes the
// tree as coredns/:application/vnd.cncf.addon.content.v1.tar+gzip. With
// the media type left off, oras gives the directory its own
// (application/vnd.oci.image.layer.v1.tar+gzip), and the artifactType
// still says add-on: refused in one line naming the layer and its type
// ("layer 1 of a artifact artifact has..." before).
func TestOrasPushedAddonWithoutContentType(t *testing.T) {
	oras := needTool(t, "oras")
	t.Parallel()
	r := startRegistry(t, testregistry.Plain)
	c := newCLI(t)
	dir := example(t, "coredns")
	cfg := filepath.Join(writeTree(t, t.TempDir(), map[string]string{"cfg.json": `{"name":"coredns"}`}), "cfg.json")
	ref := r.Host + "/third-party/coredns:untyped"
	c.tool(filepath.Dir(dir), oras, "push", "--plain-http", ref,
		"--artifact-type", "application/vnd.cncf.addon.config.v1+json",
		"--config", cfg+":application/vnd.cncf.addon.config.v1+json", "coredns/")
	line := mustFailOneLine(t, c.run("unpack", ref))
	if want := `layer 1 of an add-on artifact has media type "application/vnd.oci.image.layer.v1.tar+gzip"`; !strings.Contains(line, want) {
		t.Errorf("unpack: %q, want it to say %s", line, want)
	}
}
