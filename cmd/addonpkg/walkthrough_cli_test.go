package main

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// A SOURCE or DST with a URL scheme addonpkg does not take is refused in
// one line naming it, before any request: s3://bucket/x was a registry
// reference to the host "s3", looked up in DNS ("cannot resolve host s3;
// check the registry's host name").
func TestUnknownSchemeRefused(t *testing.T) {
	t.Parallel()
	cliNewHome(t)
	cliMust(t, "build", cliExampleDir("coredns"), "-t", "coredns:1")
	for _, args := range [][]string{
		{"inspect", "s3://bucket/addons/coredns"},
		{"unpack", "ftp://example.com/coredns.yaml"},
		{"copy", "coredns:1", "s3://bucket/addons/coredns:1"},
	} {
		r := cliRun(t, args...)
		want := `: no SOURCE has the scheme ` + strings.SplitN(args[len(args)-1], ":", 2)[0] + `:// (`
		if r.code != 1 || r.stdout != "" || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, want) || strings.Contains(r.stderr, "resolve") {
			t.Errorf("addonpkg %q: exit %d, stdout %q, stderr %q; want exit 1 and one line with %q", args, r.code, r.stdout, r.stderr, want)
		}
	}
}

// A tag or digest an OCI layout lacks is said so, with the tags it has,
// as a registry's missing tag is: it was "oci:DIR:9: 9: not found in
// store", naming a store the user never gave.
func TestLayoutMissingTagNamesItsTags(t *testing.T) {
	t.Parallel()
	cliNewHome(t)
	dir := filepath.Join(t.TempDir(), "layout")
	cliMust(t, "build", cliExampleDir("coredns"), "-t", "coredns:1", "--output", "oci:"+dir+":1.11")
	digest := "sha256:" + strings.Repeat("0", 64)
	for src, want := range map[string]string{
		"oci:" + dir + ":9":         "addonpkg: oci:" + dir + ":9: tag 9 not found in the layout; its tags: 1.11\n",
		"oci:" + dir + "@" + digest: "addonpkg: oci:" + dir + "@" + digest + ": digest " + digest + " not found in the layout; its tags: 1.11\n",
	} {
		if r := cliRun(t, "unpack", src); r.code != 1 || r.stderr != want {
			t.Errorf("unpack %s: exit %d, stderr %q; want 1 and %q", src, r.code, r.stderr, want)
		}
	}
}

// A flag a command cannot run without, and a count below 1, are usage
// errors as an unknown flag is: the command, the flag, what it wants,
// then the usage line, exit 1 (lock --check: 2). They were a bare line
// ("addonpkg: --key is required: ...", "--concurrency 0: want at least
// 1"), unlike every other mistake in a command line.
func TestRequiredFlagsAndCountsAreUsageErrors(t *testing.T) {
	cliNewHome(t)
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"sign", "x:1"}, 1, "addonpkg: sign: --key is required: a private key file (cosign generate-key-pair)"},
		{[]string{"verify", "x:1"}, 1, "addonpkg: verify: --key is required: a public key file (cosign.pub)"},
		{[]string{"mirror", "-f", "addons.yaml"}, 1, "addonpkg: mirror: --to is required: REGISTRY/PREFIX or oci-archive:FILE"},
		{[]string{"login", "localhost:5000", "--password-stdin"}, 1, "addonpkg: login: --username is required with --password-stdin"},
		{[]string{"render", "--concurrency", "0"}, 1, `addonpkg: render: invalid argument "0" for "--concurrency" flag: want a number, at least 1`},
		{[]string{"lock", "--concurrency", "-2", "--check"}, 2, `addonpkg: lock: invalid argument "-2" for "--concurrency" flag: want a number, at least 1`},
	} {
		r := cliRun(t, c.args...)
		lines := strings.Split(strings.TrimRight(r.stderr, "\n"), "\n")
		if r.code != c.code || r.stdout != "" || len(lines) != 2 || lines[0] != c.want || !strings.HasPrefix(lines[1], "Usage: addonpkg "+c.args[0]) {
			t.Errorf("addonpkg %q: exit %d, stdout %q, stderr %q; want exit %d, %q and the usage line", c.args, r.code, r.stdout, r.stderr, c.code, c.want)
		}
	}
}

// Completion offers the store's add-ons, not the tags named after a
// digest that hang on them (a signature, an SBOM), unless the word begins
// like one, as images lists them only with --all: unpack cor<TAB> offered
// coredns:1 and coredns:sha256-HEX.sig.
func TestCompletionLeavesOutAttachmentTags(t *testing.T) {
	t.Parallel()
	cliNewHome(t)
	cliMust(t, "build", cliExampleDir("coredns"), "-t", "coredns:1")
	sig := "coredns:sha256-" + strings.Repeat("a", 64) + ".sig"
	cliMust(t, "tag", "coredns:1", sig)
	for word, want := range map[string][]string{
		"cor":        {"coredns:1", ":0"},
		"coredns:":   {"coredns:1", ":0"},
		"coredns:s":  {"coredns:1", sig, ":0"},
		"coredns:sh": {"coredns:1", sig, ":0"},
	} {
		out := cliMust(t, "__complete", "unpack", word)
		if got := strings.Fields(out)[:len(want)]; !slices.Equal(got, want) || strings.Count(out, "sha256-") != strings.Count(strings.Join(want, " "), "sha256-") {
			t.Errorf("__complete unpack %q:\n%s\nwant %q", word, out, want)
		}
	}
}

// tag, rm and push of a name the store lacks say so as unpack does, with the
// closest names, and without unpack's word of Docker Hub (they read
// nothing but the store): it was "coredns:1.1: not found in store".
func TestTagAndRmOfAMissingNameSuggest(t *testing.T) {
	t.Parallel()
	cliNewHome(t)
	cliMust(t, "build", cliExampleDir("coredns"), "-t", "coredns:1.11")
	want := "addonpkg: coredns:1.1: not in the local store; did you mean coredns:1.11?\n"
	// push reads its source from the store alone, and so does --pull
	// never: Docker Hub's spelling would not be pulled either.
	for _, args := range [][]string{{"tag", "coredns:1.1", "x:1"}, {"rm", "coredns:1.1"}, {"push", "coredns:1.1", "127.0.0.1:1/x:1"}, {"unpack", "--pull", "never", "coredns:1.1"}} {
		if r := cliRun(t, args...); r.code != 1 || r.stdout != "" || r.stderr != want {
			t.Errorf("addonpkg %q: exit %d, stdout %q, stderr %q; want 1 and %q", args, r.code, r.stdout, r.stderr, want)
		}
	}
	if r := cliRun(t, "unpack", "coredns:1.1"); !strings.Contains(r.stderr, "for Docker Hub write docker.io/library/coredns:1.1") {
		t.Errorf("unpack coredns:1.1: %q; want the Docker Hub hint still", r.stderr)
	}
}
