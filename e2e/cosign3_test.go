package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// requirePeer is the path of a peer tool in ./bin or $PATH; a missing one
// fails the test (hack/install-deps.sh installs it), never skips it.
func requirePeer(t *testing.T, name string) string {
	t.Helper()
	local := filepath.Join(repoRoot, "bin", name)
	if st, err := os.Stat(local); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
		return local
	}
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	t.Fatalf("%s not found in %s or $PATH: %s", name, filepath.Join(repoRoot, "bin"), installHint)
	return ""
}

// cosign3Sign signs ref as cosign 3 does by default with a key, offline:
// a Sigstore bundle pushed as a referrer of the image, no log entry.
func cosign3Sign(t *testing.T, c *cli, cosign3 string, env []string, key, ref string) {
	t.Helper()
	r := c.withEnv("", env, cosign3, "sign", "--key", key, "--tlog-upload=false", "--use-signing-config=false",
		"--trusted-root", cosignTrustedRoot(t), "--allow-http-registry", "--yes", ref)
	if r.code != 0 {
		t.Fatalf("cosign3 sign:\n%s", r)
	}
}

// TestCosign3Interop: signatures cross between addonpkg and cosign 3 both
// ways, on a registry without the referrers API (the Distribution
// registry: the sha256-HEX fallback index) and one with it. cosign 3
// sign writes a Sigstore bundle referring to the add-on, not the
// sha256-HEX.sig tag: addonpkg verify found no signature on it. addonpkg
// sign keeps the legacy tag, which cosign 3 verify still reads.
func TestCosign3Interop(t *testing.T) {
	cosign3 := requirePeer(t, "cosign3")
	for _, kind := range signatureRegistryKinds {
		t.Run(kind.name, func(t *testing.T) {
			c := newCLI(t)
			env := cosignEnv(t)
			key, pub := cosignKeys(t, c, cosign3, env)
			_, otherPub := cosignKeys(t, c, cosign3, env)
			r := kind.start(t)
			push := func(name string) string {
				c.build(smallAddon(t, name), "-t", name+":1")
				var pushed transferOutput
				c.okJSON(&pushed, "push", name+":1", r.host+"/addons/"+name+":1", "--json")
				return r.host + "/addons/" + name + "@" + pushed.Digest
			}

			// cosign 3 signs, addonpkg verifies (and refuses another key).
			ref := push("by-cosign3")
			cosign3Sign(t, c, cosign3, env, key, ref)
			var v struct {
				Digest   string `json:"digest"`
				Key      string `json:"key"`
				Referrer string `json:"referrer"`
			}
			c.okJSON(&v, "verify", "--key", otherPub, "--key", pub, ref, "--json")
			if !strings.HasSuffix(ref, "@"+v.Digest) || v.Key != pub || !strings.HasPrefix(v.Referrer, "sha256:") {
				t.Errorf("addonpkg verify of cosign 3's signature: %+v, want %s by %s from a bundle referrer", v, ref, pub)
			}
			// inspect names the bundle a signature; it said "referrer".
			var in struct {
				Form string `json:"form"`
			}
			if c.okJSON(&in, "inspect", r.host+"/addons/by-cosign3@"+v.Referrer, "--json"); in.Form != "signature" {
				t.Errorf("inspect of cosign 3's bundle %s: form %q, want signature", v.Referrer, in.Form)
			}
			if res := c.run("verify", "--key", otherPub, ref); res.code == 0 {
				t.Errorf("addonpkg verify accepted cosign 3's signature with another key:\n%s", res)
			}
			// The bundle travels with a copy, and verifies there.
			archive := "oci-archive:" + filepath.Join(t.TempDir(), "signed.tar")
			c.ok("copy", ref, archive)
			c.ok("verify", "--key", pub, archive)

			// addonpkg signs, cosign 3 verifies (the legacy tag).
			ref = push("by-addonpkg")
			if res := c.withEnv("", env, addonpkgBin, "sign", "--key", key, ref); res.code != 0 {
				t.Fatalf("addonpkg sign:\n%s", res)
			}
			if res := cosignVerify(t, c, cosign3, env, pub, ref); res.code != 0 {
				t.Errorf("cosign 3 verify refused addonpkg's signature:\n%s", res)
			}
			if res := cosignVerify(t, c, cosign3, env, otherPub, ref); res.code == 0 {
				t.Errorf("cosign 3 verify accepted addonpkg's signature with another key:\n%s", res)
			}
		})
	}
}

// TestCosign3BothFormsAndLegacy: cosign 3 signs an add-on of each form
// (image, artifact) both ways it can, with a key and offline: a Sigstore
// bundle referring to it (its default) and, with --new-bundle-format=false,
// cosign 2's legacy sha256-HEX.sig tag. addonpkg verify accepts each with
// the key (and says which form it read), refuses each with another key,
// and unpack --verify-key of the store's copy finds the signature at the
// registry. addonpkg sign's legacy tag on
// either form verifies with cosign 3. TestCosign3Interop covered the image
// form's bundle alone.
func TestCosign3BothFormsAndLegacy(t *testing.T) {
	cosign3 := requirePeer(t, "cosign3")
	for _, kind := range signatureRegistryKinds {
		t.Run(kind.name, func(t *testing.T) {
			c := newCLI(t)
			env := cosignEnv(t)
			key, pub := cosignKeys(t, c, cosign3, env)
			_, otherPub := cosignKeys(t, c, cosign3, env)
			r := kind.start(t)
			for _, form := range []string{"image", "artifact"} {
				for _, how := range []string{"bundle", "legacy", "addonpkg"} {
					t.Run(form+"/"+how, func(t *testing.T) {
						cc := c.on(t)
						name := form + "-" + how
						built := cc.build(smallAddon(t, name), "-t", name+":1", "--format", form)
						if built.Format != form {
							t.Fatalf("build --format %s: made %q", form, built.Format)
						}
						cc.ok("push", name+":1", r.host+"/addons/"+name+":1")
						ref := r.host + "/addons/" + name + "@" + built.Digest
						switch how {
						case "bundle":
							cosign3Sign(t, cc, cosign3, env, key, ref)
						case "legacy":
							res := cc.withEnv("", env, cosign3, "sign", "--key", key, "--new-bundle-format=false", "--tlog-upload=false", "--use-signing-config=false",
								"--trusted-root", cosignTrustedRoot(t), "--allow-http-registry", "--yes", ref)
							if res.code != 0 {
								t.Fatalf("cosign3 sign --new-bundle-format=false:\n%s", res)
							}
						case "addonpkg":
							if res := cc.withEnv("", env, addonpkgBin, "sign", "--key", key, ref); res.code != 0 {
								t.Fatalf("addonpkg sign:\n%s", res)
							}
							if res := cosignVerify(t, cc, cosign3, env, pub, ref); res.code != 0 {
								t.Errorf("cosign 3 verify refused addonpkg's signature on the %s form:\n%s", form, res)
							}
						}
						var v struct {
							Digest, Key, Tag, Referrer string
						}
						cc.okJSON(&v, "verify", "--key", otherPub, "--key", pub, ref, "--json")
						wantTag := cosignTag(built.Digest) + ".sig"
						if how == "bundle" {
							wantTag = ""
						}
						if v.Digest != built.Digest || v.Key != pub || v.Tag != wantTag || (how == "bundle") != strings.HasPrefix(v.Referrer, "sha256:") {
							t.Errorf("addonpkg verify: %+v, want %s by %s, tag %q, a referrer only for a bundle", v, built.Digest, pub, wantTag)
						}
						if line := mustFailOneLine(t, cc.run("verify", "--key", otherPub, ref)); !strings.Contains(line, "not made by") {
							t.Errorf("addonpkg verify with another key: %q, want \"not made by\"", line)
						}
						// The store holds the add-on (it was built here) and
						// reads it from there; the signature is at the
						// registry. It was refused: "no signature".
						cc.ok("unpack", "--verify-key", pub, ref, "-o", filepath.Join(t.TempDir(), "out"))
						if res := cc.run("unpack", "--pull", "never", "--verify-key", pub, ref, "-o", filepath.Join(t.TempDir(), "out")); res.code == 0 {
							t.Errorf("unpack --pull never read the registry's signature:\n%s", res)
						}
					})
				}
			}
		})
	}
}
