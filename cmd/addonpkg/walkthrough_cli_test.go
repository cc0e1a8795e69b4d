package main

import (
	"strings"
	"testing"
)

// A SOURCE or DST with a URL scheme addonpkg does not take is refused in
// one line naming it, before any request: s3://bucket/x was a registry
// reference to the host "s3", looked up in DNS ("cannot resolve host s3;
// check the registry's host name").
func TestUnknownSchemeRefused(t *testing.T) {
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
