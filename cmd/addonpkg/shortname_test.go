package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A short name is a local name: when the store does not hold it, every
// reader says so (suggesting the closest local names and the explicit
// docker.io/ spelling), and push and pull refuse it rather than reach
// Docker Hub.
func TestCLIShortNamesStayLocal(t *testing.T) {
	t.Parallel()
	cliNewHome(t)
	cliMust(t, "build", cliExampleDir("coredns"), "-t", "coredns:1.11")
	for _, tc := range []struct {
		args  []string
		wants []string
	}{
		{[]string{"unpack", "mss:1"}, []string{"mss:1: not in the local store", "docker.io/library/mss:1"}},
		{[]string{"unpack", "coredns:1"}, []string{"coredns:1: not in the local store", "did you mean coredns:1.11?"}},
		{[]string{"unpack", "coredns:1", "--pull", "always"}, []string{"coredns:1 is a local name", "docker.io/library/coredns:1"}},
		{[]string{"inspect", "coredns:1.1"}, []string{"not in the local store", "did you mean coredns:1.11?"}},
		{[]string{"diff", "coredns:1.11", "coredns"}, []string{"coredns:latest: not in the local store", "did you mean coredns:1.11?"}},
		{[]string{"push", "coredns:1.11"}, []string{"a local name needs a destination", "addonpkg push coredns:1.11 REGISTRY/REPO[:TAG]", "docker.io/library/coredns:1.11"}},
		{[]string{"push", "coredns:1.11", "coredns:2"}, []string{"coredns:2", "local name", "docker.io/library/coredns:2"}},
		{[]string{"pull", "coredns:1.11"}, []string{"coredns:1.11", "local name", "docker.io/library/coredns:1.11"}},
		// A name with a registry host that the store does not hold: no
		// Docker Hub hint (it was docker.io/127.0.0.1:5000/...).
		{[]string{"push", "127.0.0.1:5000/addons/coredns:1.11"}, []string{"127.0.0.1:5000/addons/coredns:1.11: not in the local store"}},
	} {
		t.Run(tc.args[0]+" "+tc.args[1], func(t *testing.T) {
			r := cliRun(t, tc.args...)
			if tc.args[0] == "diff" && r.code == 2 {
				r.code = 1 // diff exits 1 for "different", 2 for trouble
			}
			cliCheckError(t, r, tc.wants...)
			if strings.HasPrefix(tc.args[1], "127.") && strings.Contains(r.stderr, "docker.io") {
				t.Errorf("a registry name's error points at Docker Hub: %q", r.stderr)
			}
		})
	}
}

// A SOURCE that reads as a name is a name, even when a folder or file of
// that path is here; but the message says how to name the path: "unpack
// site" beside a folder site said only "site:latest: not in the local
// store" and pointed at Docker Hub.
func TestCLIShortNameThatIsAFolder(t *testing.T) {
	cliNewHome(t)
	t.Chdir(t.TempDir())
	cm := []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: site\n")
	for _, f := range []string{"site/cm.yaml", "deploy/base/cm.yaml", "tagged:1/cm.yaml", "stream"} {
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, cm, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		source, want string
	}{
		{"site", "site:latest: not in the local store (a name without a registry host is a local name; for Docker Hub write docker.io/library/site:latest); for the folder site write ./site"},
		{"deploy/base", "; for the folder deploy/base write ./deploy/base"},
		{"tagged:1", "; for the folder tagged:1 write ./tagged:1"},
		{"stream", "; for the file stream write ./stream"},
	} {
		r := cliRun(t, "unpack", tc.source)
		cliCheckError(t, r, tc.want)
		cliMust(t, "unpack", "./"+tc.source)
	}
	cliCheckError(t, cliRun(t, "unpack", "elsewhere"), "elsewhere:latest: not in the local store")
	if r := cliRun(t, "unpack", "elsewhere"); strings.Contains(r.stderr, "write ./") {
		t.Errorf("a name with no path here: %q", r.stderr)
	}
}
