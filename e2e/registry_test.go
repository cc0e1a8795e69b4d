package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/addonpkg/addonpkg/internal/testing/testregistry"
)

// form is one way an example is packaged.
type form struct {
	name      string // subtest name and --format value
	example   string // directory under examples/
	kind      string // expected add-on kind
	layerType string // expected media type of the one layer
}

var (
	imageForm    = form{name: "image", example: "coredns", kind: "manifests", layerType: "application/vnd.oci.image.layer.v1.tar+gzip"}
	artifactForm = form{name: "artifact", example: "metrics-server", kind: "kustomize", layerType: mtAddonContent}
	forms        = []form{imageForm, artifactForm}
)

// buildForm builds the example of f into c's store as EXAMPLE:1.
func buildForm(t *testing.T, c *cli, f form) (dir string, b buildOutput, cfg addonConfig) {
	t.Helper()
	dir = example(t, f.example)
	b = c.build(dir, "--format", f.name, "-t", f.example+":1")
	cfg = b.config(t)
	if cfg.Name != f.example || cfg.Kind != f.kind || !strings.HasPrefix(cfg.Identity, "sha256:") {
		t.Fatalf("build config: name %q kind %q identity %q; want %q, %q, sha256:...", cfg.Name, cfg.Kind, cfg.Identity, f.example, f.kind)
	}
	return dir, b, cfg
}

// humanFields parses the "Key: value" lines of `addonpkg inspect`.
func humanFields(out string) map[string]string {
	m := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		if line == "" || line[0] == ' ' {
			continue
		}
		k, v, ok := strings.Cut(line, ":")
		if ok {
			m[k] = strings.TrimSpace(v)
		}
	}
	return m
}

// TestRegistryRoundTrip pushes each form to a plain-HTTP registry and
// reads it back with every command that talks to registries.
func TestRegistryRoundTrip(t *testing.T) {
	for _, f := range forms {
		t.Run(f.name, func(t *testing.T) {
			t.Parallel()
			r := startRegistry(t, testregistry.Plain)
			c := newCLI(t)
			dir, b, cfg := buildForm(t, c, f)
			repo := "addons/" + f.example
			ref := r.Host + "/" + repo + ":1"
			wantRef := r.Host + "/" + repo + "@" + b.Digest

			// push prints REGISTRY/REPO@DIGEST, one line, nothing else.
			res := c.run("push", f.example+":1", ref)
			if res.code != 0 {
				t.Fatalf("push failed:\n%s", res)
			}
			if res.stdout != wantRef+"\n" {
				t.Errorf("push stdout = %q, want %q", res.stdout, wantRef+"\n")
			}

			// The registry holds exactly the built manifest.
			raw, ctype := registryManifest(t, r, repo, "1")
			if got := sha256Digest(raw); got != b.Digest {
				t.Errorf("registry manifest digest %s, built %s", got, b.Digest)
			}
			if ctype != mtOCIManifest {
				t.Errorf("registry manifest Content-Type %q, want %q", ctype, mtOCIManifest)
			}
			var m struct {
				ArtifactType string `json:"artifactType"`
				Config       struct {
					MediaType string `json:"mediaType"`
				} `json:"config"`
			}
			if err := json.Unmarshal(raw, &m); err != nil {
				t.Fatal(err)
			}
			if f.name == "artifact" && (m.ArtifactType != mtAddonConfig || m.Config.MediaType != mtAddonConfig) {
				t.Errorf("artifact form manifest: artifactType %q, config %q; want both %q", m.ArtifactType, m.Config.MediaType, mtAddonConfig)
			}

			// push --json.
			var pj transferOutput
			c.okJSON(&pj, "push", f.example+":1", r.Host+"/"+repo+":2", "--json")
			want := transferOutput{Reference: wantRef, Digest: b.Digest, Size: int64(len(raw)), MediaType: mtOCIManifest}
			if pj != want {
				t.Errorf("push --json = %+v, want %+v", pj, want)
			}

			// inspect, from a fresh store: the registry answers.
			ci := newCLI(t)
			h := humanFields(ci.ok("inspect", ref))
			for k, v := range map[string]string{
				"Source": ref, "Digest": b.Digest, "Form": f.name, "Name": f.example,
				"Kind": f.kind, "Identity": cfg.Identity,
			} {
				if h[k] != v {
					t.Errorf("inspect %s: %s = %q, want %q", ref, k, h[k], v)
				}
			}
			var ij inspectOutput
			ci.okJSON(&ij, "inspect", ref, "--json")
			if ij.Form != f.name || ij.Digest != b.Digest || ij.MediaType != mtOCIManifest || ij.Source != ref {
				t.Errorf("inspect --json: form %q digest %q mediaType %q source %q; want %q %q %q %q",
					ij.Form, ij.Digest, ij.MediaType, ij.Source, f.name, b.Digest, mtOCIManifest, ref)
			}
			if ij.Config == nil {
				t.Errorf("inspect --json: no config")
			} else if ij.Config.Name != f.example || ij.Config.Kind != f.kind || ij.Config.Identity != cfg.Identity {
				t.Errorf("inspect --json config: name %q kind %q identity %q; want %q %q %q",
					ij.Config.Name, ij.Config.Kind, ij.Config.Identity, f.example, f.kind, cfg.Identity)
			}
			if len(ij.Layers) != 1 || ij.Layers[0].MediaType != f.layerType {
				t.Errorf("inspect --json layers = %+v, want one %s layer", ij.Layers, f.layerType)
			}
			var rows []imagesRow
			ci.okJSON(&rows, "images", "--json")
			if len(rows) != 0 {
				t.Errorf("inspect of a registry reference wrote to the store: images = %+v", rows)
			}

			// pull into a fresh store; images lists it with the same digest.
			cp := newCLI(t)
			var pl transferOutput
			cp.okJSON(&pl, "pull", ref, "--json")
			if pl.Digest != b.Digest || pl.MediaType != mtOCIManifest {
				t.Errorf("pull --json = %+v, want digest %s", pl, b.Digest)
			}
			cp.okJSON(&rows, "images", "--json")
			wantRows := []imagesRow{{Name: ref, Digest: b.Digest, MediaType: mtOCIManifest, Form: f.name}}
			if !reflect.DeepEqual(rows, wantRows) {
				t.Errorf("images after pull = %+v, want %+v", rows, wantRows)
			}

			// unpack -o from the registry gives the example tree.
			cu := newCLI(t)
			out := filepath.Join(t.TempDir(), "out")
			var uj unpackOutput
			cu.okJSON(&uj, "unpack", ref, "-o", out, "--json")
			assertSameTree(t, out, dir)
			if uj.Form != f.name || uj.Digest != b.Digest || uj.Identity != cfg.Identity || uj.Config.Identity != cfg.Identity {
				t.Errorf("unpack --json: form %q digest %q identity %q config identity %q; want %q %q %q",
					uj.Form, uj.Digest, uj.Identity, uj.Config.Identity, f.name, b.Digest, cfg.Identity)
			}
		})
	}
}

// TestUnpackStdoutCoreDNS renders the image-form coredns from a registry
// to stdout: the objects are those of examples/coredns/coredns.yaml, in
// apply order (spec 6.4: the Service moves before the Deployment).
func TestUnpackStdoutCoreDNS(t *testing.T) {
	t.Parallel()
	r := startRegistry(t, testregistry.Plain)
	c := newCLI(t)
	dir := example(t, "coredns")
	c.build(dir, "-t", "coredns:1")
	ref := r.Host + "/addons/coredns:1"
	c.ok("push", "coredns:1", ref)

	got := yamlDocs(t, []byte(newCLI(t).ok(append([]string{"unpack", ref}, corednsValues...)...)))
	src, err := os.ReadFile(filepath.Join(dir, "coredns.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	want := yamlDocs(t, filledCoreDNS(src))
	if len(want) != 6 {
		t.Fatalf("examples/coredns/coredns.yaml has %d documents, the test expects 6", len(want))
	}
	if len(got) != len(want) {
		t.Fatalf("unpack %s printed %d objects, want %d", ref, len(got), len(want))
	}
	byKind := map[any]any{}
	for _, w := range want {
		byKind[w.(map[string]any)["kind"]] = w
	}
	order := []string{"ServiceAccount", "ClusterRole", "ClusterRoleBinding", "ConfigMap", "Service", "Deployment"}
	for i, kind := range order {
		if !reflect.DeepEqual(got[i], byKind[kind]) {
			t.Errorf("object %d differs:\ngot  %v\nwant the %s %v", i, got[i], kind, byKind[kind])
		}
	}
}

// TestLsSemverOrder checks that ls sorts tags by semantic version, with
// pre-releases before their release and non-versions last.
func TestLsSemverOrder(t *testing.T) {
	t.Parallel()
	r := startRegistry(t, testregistry.Plain)
	c := newCLI(t)
	c.build(smallAddon(t, "x"), "-t", "x:1")
	repo := r.Host + "/addons/x"
	for _, tag := range []string{"1.10.0", "1.9.0", "1.11.0-rc.1", "latest", "1.10.0-rc.1"} {
		c.ok("push", "x:1", repo+":"+tag)
	}
	want := []string{"1.9.0", "1.10.0-rc.1", "1.10.0", "1.11.0-rc.1", "latest"}
	if got := strings.Fields(c.ok("ls", repo)); !reflect.DeepEqual(got, want) {
		t.Errorf("ls %s = %q, want %q", repo, got, want)
	}
	var got []string
	c.okJSON(&got, "ls", repo, "--json")
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ls --json %s = %q, want %q", repo, got, want)
	}
}

// TestCopyArchiveAcrossRegistries is the air-gap path: registry 1 ->
// oci-archive file -> registry 2, with a fresh store on each side. The
// digest never changes and the tree comes out intact.
func TestCopyArchiveAcrossRegistries(t *testing.T) {
	for _, f := range forms {
		t.Run(f.name, func(t *testing.T) {
			t.Parallel()
			r1 := startRegistry(t, testregistry.Plain)
			r2 := startRegistry(t, testregistry.Plain)
			c := newCLI(t)
			dir, b, _ := buildForm(t, c, f)
			repo := "addons/" + f.example
			src := r1.Host + "/" + repo + ":1"
			dst := r2.Host + "/mirror/" + repo + ":1"
			archive := filepath.Join(t.TempDir(), f.example+".tar")

			var step transferOutput
			c.okJSON(&step, "push", f.example+":1", src, "--json")
			checkStep(t, "push", step, b.Digest, r1.Host+"/"+repo+"@"+b.Digest)

			connected := newCLI(t)
			connected.okJSON(&step, "copy", src, "oci-archive:"+archive, "--json")
			checkStep(t, "copy to archive", step, b.Digest, "oci-archive:"+archive+"@"+b.Digest)
			if _, err := os.Stat(archive); err != nil {
				t.Fatalf("archive not written: %v", err)
			}

			inside := newCLI(t)
			inside.okJSON(&step, "copy", "oci-archive:"+archive, dst, "--json")
			checkStep(t, "copy from archive", step, b.Digest, r2.Host+"/mirror/"+repo+"@"+b.Digest)
			raw, _ := registryManifest(t, r2, "mirror/"+repo, "1")
			if got := sha256Digest(raw); got != b.Digest {
				t.Errorf("registry 2 holds %s, want %s", got, b.Digest)
			}

			out := filepath.Join(t.TempDir(), "out")
			var uj unpackOutput
			newCLI(t).okJSON(&uj, "unpack", dst, "-o", out, "--json")
			if uj.Digest != b.Digest {
				t.Errorf("unpack from registry 2: digest %s, want %s", uj.Digest, b.Digest)
			}
			assertSameTree(t, out, dir)

			out2 := filepath.Join(t.TempDir(), "out2")
			newCLI(t).ok("unpack", "oci-archive:"+archive, "-o", out2)
			assertSameTree(t, out2, dir)

			// Registry to registry, and between repositories of one
			// registry (where blobs can be mounted), directly.
			for _, to := range []string{r2.Host + "/direct/" + f.example + ":1", r1.Host + "/other/" + f.example + ":1"} {
				connected.okJSON(&step, "copy", src, to, "--json")
				host, path, _ := strings.Cut(strings.TrimSuffix(to, ":1"), "/")
				checkStep(t, "copy "+src+" "+to, step, b.Digest, host+"/"+path+"@"+b.Digest)
				out3 := filepath.Join(t.TempDir(), "out3")
				newCLI(t).ok("unpack", to, "-o", out3)
				assertSameTree(t, out3, dir)
			}
		})
	}
}

func checkStep(t *testing.T, step string, got transferOutput, digest, reference string) {
	t.Helper()
	if got.Digest != digest || got.Reference != reference || got.MediaType != mtOCIManifest || got.Size <= 0 {
		t.Errorf("%s --json = %+v; want digest %s, reference %s, media type %s", step, got, digest, reference, mtOCIManifest)
	}
}

// TestCopyLayoutSkopeo copies from a registry to an OCI layout, then lets
// skopeo copy that layout: skopeo reads what addonpkg wrote, and the
// digest survives.
func TestCopyLayoutSkopeo(t *testing.T) {
	skopeo := needTool(t, "skopeo")
	for _, f := range forms {
		t.Run(f.name, func(t *testing.T) {
			t.Parallel()
			r := startRegistry(t, testregistry.Plain)
			c := newCLI(t)
			dir, b, _ := buildForm(t, c, f)
			ref := r.Host + "/addons/" + f.example + ":1"
			c.ok("push", f.example+":1", ref)

			tmp := t.TempDir()
			lay1, lay2 := filepath.Join(tmp, "layout1"), filepath.Join(tmp, "layout2")
			var cp transferOutput
			newCLI(t).okJSON(&cp, "copy", ref, "oci:"+lay1+":t", "--json")
			checkStep(t, "copy to layout", cp, b.Digest, "oci:"+lay1+"@"+b.Digest)
			if got := layoutTag(t, lay1, "t"); got != b.Digest {
				t.Errorf("%s/index.json: tag t -> %s, want %s", lay1, got, b.Digest)
			}

			c.tool("", skopeo, "copy", "oci:"+lay1+":t", "oci:"+lay2+":t")
			if got := layoutTag(t, lay2, "t"); got != b.Digest {
				t.Errorf("after skopeo copy, %s/index.json: tag t -> %s, want %s", lay2, got, b.Digest)
			}
			raw := c.tool("", skopeo, "inspect", "--raw", "oci:"+lay2+":t").stdout
			if got := sha256Digest([]byte(raw)); got != b.Digest {
				t.Errorf("skopeo inspect --raw: manifest digest %s, want %s", got, b.Digest)
			}

			out := filepath.Join(tmp, "out")
			newCLI(t).ok("unpack", "oci:"+lay2+":t", "-o", out)
			assertSameTree(t, out, dir)
		})
	}
}

// layoutTag returns the digest that tag names in an OCI layout's index.json.
func layoutTag(t *testing.T, dir, tag string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "index.json"))
	if err != nil {
		t.Fatal(err)
	}
	var idx struct {
		Manifests []struct {
			Digest      string            `json:"digest"`
			Annotations map[string]string `json:"annotations"`
		} `json:"manifests"`
	}
	if err := json.Unmarshal(b, &idx); err != nil {
		t.Fatalf("%s/index.json: %v", dir, err)
	}
	for _, m := range idx.Manifests {
		if m.Annotations["org.opencontainers.image.ref.name"] == tag {
			return m.Digest
		}
	}
	t.Fatalf("%s/index.json has no manifest tagged %q:\n%s", dir, tag, b)
	return ""
}

// TestRegistryErrors checks that registry failures are one line on stderr
// with exit code 1, and come quickly.
func TestRegistryErrors(t *testing.T) {
	t.Run("missing tag", func(t *testing.T) {
		t.Parallel()
		r := startRegistry(t, testregistry.Plain)
		c := newCLI(t)
		c.build(smallAddon(t, "x"), "-t", "x:1")
		c.ok("push", "x:1", r.Host+"/addons/x:1")
		for _, ref := range []string{
			r.Host + "/addons/x:nope", // repository exists, tag does not
			r.Host + "/addons/none:1", // repository does not exist
			r.Host + "/addons/x@sha256:" + strings.Repeat("0", 64),
		} {
			res := newCLI(t).run("unpack", ref)
			line := mustFailOneLine(t, res)
			if !strings.Contains(line, ref) {
				t.Errorf("unpack %s: message %q does not name the reference", ref, line)
			}
			if res.stdout != "" {
				t.Errorf("unpack %s: stdout %q, want nothing", ref, res.stdout)
			}
		}
	})
	t.Run("ls missing repository", func(t *testing.T) {
		t.Parallel()
		r := startRegistry(t, testregistry.Plain)
		repo := r.Host + "/addons/none"
		line := mustFailOneLine(t, newCLI(t).run("ls", repo))
		if !strings.Contains(line, repo) {
			t.Errorf("ls %s: message %q does not name the repository", repo, line)
		}
	})
	t.Run("closed port", func(t *testing.T) {
		t.Parallel()
		c := newCLI(t)
		c.build(smallAddon(t, "x"), "-t", "x:1")
		const dst = "127.0.0.1:1/addons/x:1"
		res := c.run("push", "x:1", dst)
		line := mustFailOneLine(t, res)
		if !strings.Contains(line, "127.0.0.1:1") {
			t.Errorf("push to a closed port: message %q does not name the registry", line)
		}
		if res.dur > 10*time.Second {
			t.Errorf("push to a closed port took %v, want a quick failure", res.dur)
		}
	})
}

// TestUnpackPrefersStore: `addonpkg unpack --help` says "A name that
// exists in the local store wins over a registry (see --pull)", and the
// build and pull commands store add-ons under registry-qualified names
// (build -t REGISTRY/REPO:TAG, pull REGISTRY/REPO:TAG). So unpack and
// inspect of such a name must read the store, and --pull never must not
// go to the registry at all.
//
// FINDING (kept failing on purpose): source.Parse classifies every
// reference with a registry host as KindRegistry, and source.Open sends
// KindRegistry straight to the registry; the store and --pull are only
// consulted for host-less names (KindStore). A just-built, not yet pushed
// REGISTRY/REPO:TAG cannot be unpacked, a pulled one cannot be unpacked
// offline, and --pull never is ignored.
func TestUnpackPrefersStore(t *testing.T) {
	t.Parallel()
	r := startRegistry(t, testregistry.Plain)
	c := newCLI(t)
	dir := smallAddon(t, "local")
	name := r.Host + "/addons/local:1" // in the store only, never pushed
	b := c.build(dir, "-t", name)

	var rows []imagesRow
	c.okJSON(&rows, "images", "--json")
	if len(rows) != 1 || rows[0].Name != name || rows[0].Digest != b.Digest {
		t.Fatalf("images = %+v, want %s %s", rows, name, b.Digest)
	}
	for _, pull := range []string{"never", "missing"} {
		out := filepath.Join(t.TempDir(), "out")
		res := c.run("unpack", name, "--pull", pull, "-o", out)
		if res.code != 0 {
			t.Errorf("unpack %s --pull %s of a name in the local store went to the registry instead:\n%s", name, pull, res)
			continue
		}
		assertSameTree(t, out, dir)
	}
	res := c.run("inspect", name, "--pull", "never", "--json")
	if res.code != 0 {
		t.Errorf("inspect %s --pull never of a name in the local store went to the registry instead:\n%s", name, res)
	}
}
