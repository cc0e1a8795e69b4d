package e2e

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/addonpkg/addonpkg/internal/testing/testregistry"
)

// TestTLSRegistry pushes to an HTTPS registry whose certificate comes from
// a private CA: trusting the CA works, skipping verification works, and
// neither fails with a message that says what to do.
func TestTLSRegistry(t *testing.T) {
	t.Parallel()
	r := startRegistry(t, testregistry.TLS)
	for _, tc := range []struct {
		name  string
		flags []string
	}{
		{"ca-file", []string{"--ca-file", r.CAFile}},
		{"insecure-skip-tls-verify", []string{"--insecure-skip-tls-verify"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newCLI(t)
			b := c.build(smallAddon(t, "x"), "-t", "x:1")
			repo := "addons/" + tc.name
			out := c.ok(append([]string{"push", "x:1", r.Host + "/" + repo + ":1"}, tc.flags...)...)
			if want := r.Host + "/" + repo + "@" + b.Digest + "\n"; out != want {
				t.Errorf("push stdout = %q, want %q", out, want)
			}
			raw, _ := registryManifest(t, r, repo, "1")
			if got := sha256Digest(raw); got != b.Digest {
				t.Errorf("registry holds %s, want %s", got, b.Digest)
			}
			// Reading back needs the same trust.
			dir := filepath.Join(t.TempDir(), "out")
			newCLI(t).ok(append([]string{"unpack", r.Host + "/" + repo + ":1", "-o", dir}, tc.flags...)...)
		})
	}
	t.Run("untrusted", func(t *testing.T) {
		c := newCLI(t)
		c.build(smallAddon(t, "x"), "-t", "x:1")
		for _, args := range [][]string{
			{"push", "x:1", r.Host + "/addons/untrusted:1"},
			{"unpack", r.Host + "/addons/ca-file:1"},
			{"ls", r.Host + "/addons/ca-file"},
			{"login", r.Host, "-u", "user", "--password-stdin"},
		} {
			res := c.run(args...)
			if args[0] == "login" {
				res = c.runStdin("pw\n", args...)
			}
			line := mustFailOneLine(t, res)
			if !strings.Contains(line, "certificate") && !strings.Contains(line, "x509") {
				t.Errorf("%s: message %q does not say the certificate is the problem", res.cmd, line)
			}
			if !strings.Contains(line, "--ca-file") {
				t.Errorf("%s: message %q does not suggest --ca-file", res.cmd, line)
			}
		}
	})
}

// dockerAuths reads the "auths" of DOCKER_CONFIG/config.json; a missing
// file has none.
func dockerAuths(t *testing.T, c *cli) map[string]json.RawMessage {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(c.dockerConfig, "config.json"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var cf struct {
		Auths map[string]json.RawMessage `json:"auths"`
	}
	if err := json.Unmarshal(b, &cf); err != nil {
		t.Fatalf("config.json: %v\n%s", err, b)
	}
	return cf.Auths
}

// TestBasicAuth walks through login, push and logout against a registry
// that requires htpasswd credentials.
func TestBasicAuth(t *testing.T) {
	for _, mode := range []testregistry.Mode{testregistry.BasicAuth, testregistry.TLSBasicAuth} {
		t.Run(mode.String(), func(t *testing.T) {
			t.Parallel()
			r := startRegistry(t, mode)
			var tlsFlags []string
			if r.CAFile != "" {
				tlsFlags = []string{"--ca-file", r.CAFile}
			}
			with := func(args ...string) []string { return append(args, tlsFlags...) }
			c := newCLI(t)
			b := c.build(smallAddon(t, "x"), "-t", "x:1")
			ref := r.Host + "/addons/x:1"

			// Without credentials: refused, with a hint to log in.
			line := mustFailOneLine(t, c.run(with("push", "x:1", ref)...))
			if !strings.Contains(line, "addonpkg login "+r.Host) {
				t.Errorf("push without login: message %q does not suggest 'addonpkg login %s'", line, r.Host)
			}

			// A wrong password: refused, clearly, and nothing saved.
			res := c.runStdin("wrong-"+r.Password+"\n", with("login", r.Host, "-u", r.Username, "--password-stdin")...)
			line = mustFailOneLine(t, res)
			lower := strings.ToLower(line)
			if !strings.Contains(lower, "password") && !strings.Contains(lower, "credential") && !strings.Contains(lower, "unauthorized") {
				t.Errorf("login with a wrong password: message %q does not say the credentials were refused", line)
			}
			if strings.Contains(res.stdout+res.stderr, r.Password) {
				t.Errorf("login printed the password:\n%s", res)
			}
			if _, ok := dockerAuths(t, c)[r.Host]; ok {
				t.Errorf("login with a wrong password saved credentials for %s", r.Host)
			}

			// The right password: saved, and push works.
			res = c.runStdin(r.Password+"\n", with("login", r.Host, "-u", r.Username, "--password-stdin")...)
			if res.code != 0 {
				t.Fatalf("login failed:\n%s", res)
			}
			if strings.Contains(res.stdout+res.stderr, r.Password) {
				t.Errorf("login printed the password:\n%s", res)
			}
			entry, ok := dockerAuths(t, c)[r.Host]
			if !ok {
				t.Fatalf("after login, %s/config.json has no entry for %s: %v", c.dockerConfig, r.Host, dockerAuths(t, c))
			}
			// Saved the way docker saves them, so that every peer reads them.
			var auth struct {
				Auth string `json:"auth"`
			}
			if err := json.Unmarshal(entry, &auth); err != nil {
				t.Fatal(err)
			}
			if dec, err := base64.StdEncoding.DecodeString(auth.Auth); err != nil || string(dec) != r.Username+":"+r.Password {
				t.Errorf("config.json auths[%q].auth does not decode to USER:PASSWORD (err %v)", r.Host, err)
			}
			out := c.ok(with("push", "x:1", ref)...)
			if want := r.Host + "/addons/x@" + b.Digest + "\n"; out != want {
				t.Errorf("push after login: stdout %q, want %q", out, want)
			}
			raw, _ := registryManifest(t, r, "addons/x", "1")
			if got := sha256Digest(raw); got != b.Digest {
				t.Errorf("registry holds %s, want %s", got, b.Digest)
			}
			// The same credentials serve reads.
			var uj unpackOutput
			c.okJSON(&uj, with("unpack", ref, "--json")...)
			if uj.Digest != b.Digest {
				t.Errorf("unpack after login: digest %s, want %s", uj.Digest, b.Digest)
			}

			// Peers use what addonpkg saved.
			t.Run("crane reads the saved credentials", func(t *testing.T) {
				crane := needTool(t, "crane")
				// crane has no CA flag; --insecure (plain HTTP, or any
				// certificate) is enough to test the credentials.
				res := c.on(t).tool("", crane, "digest", "--insecure", ref)
				if got := strings.TrimSpace(res.stdout); got != b.Digest {
					t.Errorf("crane digest %s = %s, want %s", ref, got, b.Digest)
				}
			})

			// Logout removes them; the registry refuses us again.
			c.ok("logout", r.Host)
			if _, ok := dockerAuths(t, c)[r.Host]; ok {
				t.Errorf("after logout, config.json still has an entry for %s", r.Host)
			}
			line = mustFailOneLine(t, c.run(with("unpack", ref)...))
			if !strings.Contains(line, "addonpkg login "+r.Host) {
				t.Errorf("unpack after logout: message %q does not suggest 'addonpkg login %s'", line, r.Host)
			}
			// Logging out twice is harmless: success, or one line.
			if res := c.run("logout", r.Host); res.code != 0 {
				mustFailOneLine(t, res)
			}
		})
	}
}

// TestPeerLoginCredentials: credentials saved by crane and oras logins
// (in the docker config) are used by addonpkg.
func TestPeerLoginCredentials(t *testing.T) {
	t.Parallel()
	r := startRegistry(t, testregistry.BasicAuth)
	for _, peer := range []string{"crane", "oras"} {
		t.Run(peer, func(t *testing.T) {
			bin := needTool(t, peer)
			c := newCLI(t)
			b := c.build(smallAddon(t, "x"), "-t", "x:1")
			ref := r.Host + "/" + peer + "/x:1"
			mustFailOneLine(t, c.run("push", "x:1", ref))
			var res result
			switch peer {
			case "crane":
				res = c.exec("", "", bin, "auth", "login", r.Host, "-u", r.Username, "-p", r.Password)
			case "oras":
				res = c.exec("", r.Password+"\n", bin, "login", "--plain-http", r.Host, "-u", r.Username, "--password-stdin")
			}
			if res.code != 0 {
				t.Fatalf("%s login failed:\n%s", peer, res)
			}
			out := c.ok("push", "x:1", ref)
			if want := r.Host + "/" + peer + "/x@" + b.Digest + "\n"; out != want {
				t.Errorf("push after %s login: stdout %q, want %q", peer, out, want)
			}
		})
	}
}
