package e2e

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	ggcrregistry "github.com/google/go-containerregistry/pkg/registry"

	"github.com/addonpkg/addonpkg/internal/testing/testregistry"
)

// Signatures and referrers travel with an add-on: signed by addonpkg (and
// by cosign), copied registry to registry, to an oci-archive and from it to
// a third registry, and verified at every stop by addonpkg and by the real
// cosign CLI; an SBOM attached by oras is listed by oras discover at every
// registry. Run against the Distribution registry (no referrers API: the
// sha256-HEX fallback tags) and go-containerregistry's registry with the
// referrers API.

const (
	cosignPassword = "e2e-cosign-password"
	sbomType       = "application/spdx+json"
)

// sigRegistry is a registry host on 127.0.0.1 and how to PUT a manifest
// to it straight, for tampering.
type sigRegistry struct {
	host string
	url  string
}

type registryKind struct {
	name  string
	start func(t *testing.T) sigRegistry
}

var signatureRegistryKinds = []registryKind{
	{"distribution", func(t *testing.T) sigRegistry {
		r := startRegistry(t, testregistry.Plain)
		return sigRegistry{host: r.Host, url: r.URL}
	}},
	{"referrers-api", func(t *testing.T) sigRegistry {
		srv := httptest.NewServer(ggcrregistry.New(
			ggcrregistry.Logger(log.New(io.Discard, "", 0)),
			ggcrregistry.WithReferrersSupport(true),
		))
		t.Cleanup(srv.Close)
		return sigRegistry{host: strings.TrimPrefix(srv.URL, "http://"), url: srv.URL}
	}},
}

// withEnv runs bin in dir with extra environment variables.
func (c *cli) withEnv(dir string, extra []string, bin string, args ...string) result {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.Env = append(c.env(), extra...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	r := result{cmd: filepath.Base(bin) + " " + strings.Join(args, " "), stdout: stdout.String(), stderr: stderr.String(), dur: time.Since(start)}
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		c.t.Fatalf("%s: timed out after %v\n%s", r.cmd, commandTimeout, r)
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	case err != nil:
		c.t.Fatalf("%s: %v", r.cmd, err)
	}
	return r
}

// cosignEnv keeps cosign inside the test: its key password, its home and
// TUF cache in a temp dir, and a proxy where nothing listens for anything
// not on 127.0.0.1.
func cosignEnv(t *testing.T) []string {
	home := t.TempDir()
	const deadProxy = "http://127.0.0.1:9"
	return []string{
		"COSIGN_PASSWORD=" + cosignPassword,
		"HOME=" + home,
		"TUF_ROOT=" + filepath.Join(home, "tuf"),
		"HTTPS_PROXY=" + deadProxy, "https_proxy=" + deadProxy,
		"HTTP_PROXY=" + deadProxy, "http_proxy=" + deadProxy,
	}
}

// cosignTrustedRoot is an empty sigstore trusted root: with --trusted-root
// naming it, cosign does not look for the public one (a TUF download).
// Keys and --insecure-ignore-tlog need nothing from it.
func cosignTrustedRoot(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "trusted_root.json")
	if err := os.WriteFile(p, []byte(`{"mediaType":"application/vnd.dev.sigstore.trustedroot+json;version=0.1"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// cosignKeys generates a cosign key pair in a new directory and returns
// the paths of cosign.key and cosign.pub.
func cosignKeys(t *testing.T, c *cli, cosign string, env []string) (string, string) {
	t.Helper()
	dir := t.TempDir()
	if r := c.withEnv(dir, env, cosign, "generate-key-pair"); r.code != 0 {
		t.Fatalf("cosign generate-key-pair:\n%s", r)
	}
	return filepath.Join(dir, "cosign.key"), filepath.Join(dir, "cosign.pub")
}

func cosignVerify(t *testing.T, c *cli, cosign string, env []string, pub, ref string) result {
	t.Helper()
	r := c.withEnv("", env, cosign, "verify", "--key", pub, "--insecure-ignore-tlog", "--trusted-root", cosignTrustedRoot(t), "--allow-http-registry", "--output", "json", ref)
	if strings.Contains(r.stderr, "TUF") {
		t.Errorf("cosign looked for a TUF repository (the test must stay on 127.0.0.1):\n%s", r)
	}
	return r
}

// orasReferrers lists the artifact types oras discover finds for ref.
func orasReferrers(t *testing.T, c *cli, oras, ref string) string {
	t.Helper()
	return c.tool("", oras, "discover", "--plain-http", "--format", "json", ref).stdout
}

// putManifest PUTs a manifest straight to the registry.
func putManifest(t *testing.T, r sigRegistry, repo, ref string, body []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPut, r.url+"/v2/"+repo+"/manifests/"+ref, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", mtOCIManifest)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("PUT %s:%s: %s: %s", repo, ref, resp.Status, b)
	}
}

func getManifest(t *testing.T, r sigRegistry, repo, ref string) []byte {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, r.url+"/v2/"+repo+"/manifests/"+ref, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", mtOCIManifest)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s:%s: %s %v: %s", repo, ref, resp.Status, err, b)
	}
	return b
}

func cosignTag(digest string) string { return strings.Replace(digest, ":", "-", 1) }

func TestSignaturesTravel(t *testing.T) {
	cosign := needTool(t, "cosign")
	oras := needTool(t, "oras")
	crane := needTool(t, "crane")
	for _, kind := range signatureRegistryKinds {
		t.Run(kind.name, func(t *testing.T) {
			c := newCLI(t)
			env := cosignEnv(t)
			key, pub := cosignKeys(t, c, cosign, env)
			otherKey, otherPub := cosignKeys(t, c, cosign, env)
			a, b, third := kind.start(t), kind.start(t), kind.start(t)

			// An add-on pushed to A, signed by addonpkg, with an SBOM
			// attached by oras.
			c.build(smallAddon(t, "signed"), "-t", "signed:1")
			var pushed transferOutput
			c.okJSON(&pushed, "push", "signed:1", a.host+"/addons/signed:1", "--json")
			srcRef := a.host + "/addons/signed@" + pushed.Digest
			if r := c.withEnv("", env, addonpkgBin, "sign", "--key", key, a.host+"/addons/signed:1"); r.code != 0 {
				t.Fatalf("sign:\n%s", r)
			}
			sbomDir := t.TempDir()
			if err := os.WriteFile(filepath.Join(sbomDir, "sbom.spdx.json"), []byte(`{"spdxVersion":"SPDX-2.3"}`), 0o644); err != nil {
				t.Fatal(err)
			}
			var sbom struct {
				Digest string `json:"digest"`
			}
			attached := c.tool(sbomDir, oras, "attach", "--plain-http", "--format", "json", "--artifact-type", sbomType, srcRef, "sbom.spdx.json:application/json").stdout
			if err := json.Unmarshal([]byte(attached), &sbom); err != nil || !strings.HasPrefix(sbom.Digest, "sha256:") {
				t.Fatalf("oras attach --format json: %v\n%s", err, attached)
			}

			// Verified at every stop, by addonpkg and by cosign; oras
			// discover lists the SBOM.
			check := func(t *testing.T, where, ref string) {
				t.Helper()
				cc := c.on(t)
				var v struct {
					Digest string `json:"digest"`
					Key    string `json:"key"`
				}
				cc.okJSON(&v, "verify", "--key", otherPub, "--key", pub, ref, "--json")
				if v.Digest != pushed.Digest || v.Key != pub {
					t.Errorf("%s: addonpkg verify: %+v, want digest %s by %s", where, v, pushed.Digest, pub)
				}
				if !strings.Contains(ref, "oci-archive:") {
					if r := cosignVerify(t, cc, cosign, env, pub, ref); r.code != 0 {
						t.Errorf("%s: cosign verify refused addonpkg's signature:\n%s", where, r)
					}
					// go-containerregistry's registry lists a referrer's config
					// media type as its artifactType: look for the digest.
					if out := orasReferrers(t, cc, oras, ref); !strings.Contains(out, sbom.Digest) {
						t.Errorf("%s: oras discover does not list the SBOM %s:\n%s", where, sbom.Digest, out)
					} else if kind.name == "distribution" && !strings.Contains(out, sbomType) {
						t.Errorf("%s: oras discover lists the SBOM without its artifact type %s:\n%s", where, sbomType, out)
					}
				}
			}
			check(t, "A", srcRef)

			// A to B, verified before copying.
			var toB struct {
				transferOutput
				Referrers int `json:"referrers"`
			}
			c.okJSON(&toB, "copy", "--verify-key", pub, a.host+"/addons/signed:1", b.host+"/mirror/signed:1", "--json")
			if toB.Digest != pushed.Digest || toB.Referrers != 2 {
				t.Errorf("copy to B: %+v, want digest %s and 2 referrers (the signature, the SBOM)", toB, pushed.Digest)
			}
			check(t, "B", b.host+"/mirror/signed@"+pushed.Digest)

			// Pulled into the store with its signature: verified there too,
			// with the registry out of the way.
			c.ok("pull", "--verify-key", pub, b.host+"/mirror/signed:1")
			c.ok("unpack", "--pull", "never", "--verify-key", pub, b.host+"/mirror/signed:1")

			// A to an oci-archive, and from it to a third registry.
			archive := filepath.Join(t.TempDir(), "signed.tar")
			r := c.run("copy", "--verify-key", pub, a.host+"/addons/signed:1", "oci-archive:"+archive+":1")
			if r.code != 0 || !strings.Contains(r.stderr, "copied 2 referrers") {
				t.Fatalf("copy to the archive: want success and \"copied 2 referrers\" on stderr:\n%s", r)
			}
			check(t, "archive", "oci-archive:"+archive+":1")
			c.ok("copy", "--verify-key", pub, "oci-archive:"+archive+":1", third.host+"/air/signed:1")
			check(t, "C", third.host+"/air/signed@"+pushed.Digest)

			// --no-referrers copies the add-on only.
			var bare struct {
				Referrers int `json:"referrers"`
			}
			c.okJSON(&bare, "copy", "--no-referrers", a.host+"/addons/signed:1", b.host+"/bare/signed:1", "--json")
			if bare.Referrers != 0 {
				t.Errorf("--no-referrers copied %d referrers", bare.Referrers)
			}
			if r := c.run("verify", "--key", pub, b.host+"/bare/signed:1"); r.code == 0 {
				t.Errorf("--no-referrers: the signature was copied:\n%s", r)
			}

			// cosign's own signature verifies with addonpkg.
			c.build(smallAddon(t, "cosigned"), "-t", "cosigned:1")
			var cos transferOutput
			c.okJSON(&cos, "push", "cosigned:1", a.host+"/addons/cosigned:1", "--json")
			if r := c.withEnv("", env, cosign, "sign", "--key", key, "--tlog-upload=false", "--trusted-root", cosignTrustedRoot(t), "--allow-http-registry", "--yes", a.host+"/addons/cosigned@"+cos.Digest); r.code != 0 {
				t.Fatalf("cosign sign:\n%s", r)
			}
			c.ok("verify", "--key", pub, a.host+"/addons/cosigned:1")
			out := t.TempDir()
			c.ok("unpack", "--verify-key", pub, a.host+"/addons/cosigned:1", "-o", filepath.Join(out, "cosigned"))

			// Refused, with one line and nothing written: no signature, a
			// signature by another key, a tampered manifest.
			c.build(smallAddon(t, "unsigned"), "-t", "unsigned:1")
			c.ok("push", "unsigned:1", a.host+"/addons/unsigned:1")
			c.build(smallAddon(t, "other"), "-t", "other:1")
			c.ok("push", "other:1", a.host+"/addons/other:1")
			if r := c.withEnv("", env, addonpkgBin, "sign", "--key", otherKey, a.host+"/addons/other:1"); r.code != 0 {
				t.Fatalf("sign with the other key:\n%s", r)
			}
			c.build(smallAddon(t, "tampered"), "-t", "tampered:1")
			var tp transferOutput
			c.okJSON(&tp, "push", "tampered:1", a.host+"/addons/tampered:1", "--json")
			if r := c.withEnv("", env, addonpkgBin, "sign", "--key", key, a.host+"/addons/tampered:1"); r.code != 0 {
				t.Fatalf("sign:\n%s", r)
			}
			// The manifest changes after signing (an annotation added), and
			// the signature is copied to the new digest's tag.
			var m map[string]any
			if err := json.Unmarshal(getManifest(t, a, "addons/tampered", "1"), &m); err != nil {
				t.Fatal(err)
			}
			m["annotations"] = map[string]string{"injected": "yes"}
			changed, err := json.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			putManifest(t, a, "addons/tampered", "1", changed)
			c.tool("", crane, "tag", a.host+"/addons/tampered:"+cosignTag(tp.Digest)+".sig", cosignTag(sha256Digest(changed))+".sig")
			if r := cosignVerify(t, c, cosign, env, pub, a.host+"/addons/tampered@"+sha256Digest(changed)); r.code == 0 {
				t.Errorf("cosign accepts the tampered manifest: the test does not tamper:\n%s", r)
			}

			for _, tc := range []struct{ name, ref, want string }{
				{"missing", a.host + "/addons/unsigned:1", "no signature"},
				{"another key", a.host + "/addons/other:1", "not made by"},
				{"tampered", a.host + "/addons/tampered:1", "signs another manifest"},
			} {
				t.Run(tc.name, func(t *testing.T) {
					cc := c.on(t)
					dir := t.TempDir()
					for _, args := range [][]string{
						{"verify", "--key", pub, tc.ref},
						{"unpack", "--verify-key", pub, tc.ref, "-o", filepath.Join(dir, "out")},
						{"unpack", "--verify-key", pub, tc.ref},
						{"copy", "--verify-key", pub, tc.ref, "oci-archive:" + filepath.Join(dir, "out.tar")},
						{"copy", "--verify-key", pub, tc.ref, b.host + "/refused/x:1"},
						{"pull", "--verify-key", pub, tc.ref},
					} {
						r := cc.run(args...)
						line := mustFailOneLine(t, r)
						if !strings.Contains(line, tc.want) {
							t.Errorf("%s: want %q in the error, got %q", r.cmd, tc.want, line)
						}
						if r.stdout != "" {
							t.Errorf("%s: wrote to stdout:\n%s", r.cmd, r.stdout)
						}
					}
					if entries, err := os.ReadDir(dir); err != nil || len(entries) != 0 {
						t.Errorf("refused, yet written: %v %v", entries, err)
					}
					if s := getStatus(t, b.url+"/v2/refused/x/manifests/1"); s != http.StatusNotFound {
						t.Errorf("refused, yet pushed to B: status %d", s)
					}
					var rows []imagesRow
					cc.okJSON(&rows, "images", "--all", "--json")
					for _, row := range rows {
						if strings.Contains(row.Name, tc.ref[strings.LastIndex(tc.ref, "/"):]) && strings.HasPrefix(row.Name, a.host) {
							t.Errorf("refused, yet pulled: %+v", row)
						}
					}
				})
			}
		})
	}
}

func getStatus(t *testing.T, url string) int {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// A P-384 key (a common KMS and HSM curve), imported into cosign: cosign
// signs with it over SHA-384 and addonpkg verifies that; addonpkg signs
// over SHA-256 and cosign verify, with its default digest, accepts that.
func TestCosignP384Keys(t *testing.T) {
	cosign := needTool(t, "cosign")
	c := newCLI(t)
	env := cosignEnv(t)
	r := startRegistry(t, testregistry.Plain)
	dir := t.TempDir()
	priv, err := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "p384.pem"), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if res := c.withEnv(dir, env, cosign, "import-key-pair", "--key", "p384.pem", "--output-key-prefix", "p384"); res.code != 0 {
		t.Fatalf("cosign import-key-pair:\n%s", res)
	}
	key, pub := filepath.Join(dir, "p384.key"), filepath.Join(dir, "p384.pub")

	for _, name := range []string{"by-cosign", "by-addonpkg"} {
		c.build(smallAddon(t, name), "-t", name+":1")
		var pushed transferOutput
		c.okJSON(&pushed, "push", name+":1", r.Host+"/addons/"+name+":1", "--json")
		ref := r.Host + "/addons/" + name + "@" + pushed.Digest
		if name == "by-cosign" {
			if res := c.withEnv("", env, cosign, "sign", "--key", key, "--tlog-upload=false", "--trusted-root", cosignTrustedRoot(t), "--allow-http-registry", "--yes", ref); res.code != 0 {
				t.Fatalf("cosign sign:\n%s", res)
			}
			c.ok("verify", "--key", pub, ref)
			continue
		}
		if res := c.withEnv("", env, addonpkgBin, "sign", "--key", key, ref); res.code != 0 {
			t.Fatalf("addonpkg sign with cosign's imported P-384 key:\n%s", res)
		}
		if res := cosignVerify(t, c, cosign, env, pub, ref); res.code != 0 {
			t.Errorf("cosign verify refused addonpkg's P-384 signature:\n%s", res)
		}
	}
}

// TestCosignSBOMTagNamesTheAddon: `cosign attach sbom` puts an SBOM at the
// tag sha256-HEX.sbom beside the add-on, a manifest of no form (its layer
// is text/spdx+json). Unpacked by that tag, as if it were the add-on, it
// was refused as "not an add-on (config ..., artifactType \"\")" alone;
// the refusal now names the manifest the tag hangs on, to unpack instead.
func TestCosignSBOMTagNamesTheAddon(t *testing.T) {
	cosign := needTool(t, "cosign")
	t.Parallel()
	r := startRegistry(t, testregistry.Plain)
	c := newCLI(t)
	ref := r.Host + "/addons/coredns:1"
	built := c.build(example(t, "coredns"), "-t", "coredns:1")
	c.ok("push", "coredns:1", ref)
	sbom := filepath.Join(writeTree(t, t.TempDir(), map[string]string{"sbom.spdx.json": `{"spdxVersion":"SPDX-2.3","name":"coredns"}`}), "sbom.spdx.json")
	if res := c.withEnv("", cosignEnv(t), cosign, "attach", "sbom", "--allow-http-registry", "--sbom", sbom, "--type", "spdx", r.Host+"/addons/coredns@"+built.Digest); res.code != 0 {
		t.Fatalf("cosign attach sbom:\n%s", res)
	}
	tag := r.Host + "/addons/coredns:sha256-" + strings.TrimPrefix(built.Digest, "sha256:") + ".sbom"
	line := mustFailOneLine(t, c.run("unpack", tag))
	if !strings.Contains(line, "the manifest "+built.Digest) {
		t.Errorf("unpack of the SBOM's tag: %q does not name the add-on %s", line, built.Digest)
	}
	// inspect names it for what it is; it said form "unknown".
	var in struct {
		Form string `json:"form"`
	}
	if c.okJSON(&in, "inspect", tag, "--json"); in.Form != "sbom" {
		t.Errorf("inspect %s: form %q, want sbom", tag, in.Form)
	}
}
