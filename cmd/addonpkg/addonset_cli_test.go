package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const cliSet = "../../examples/addon-set/addons.yaml"

// TestSetCommands runs lock, render and mirror in-process on
// examples/addon-set (its lock written elsewhere with -o, so the checked-in
// one is untouched) and checks what they print and refuse.
func TestSetCommands(t *testing.T) {
	t.Parallel()
	cliNewHome(t)
	tmp := t.TempDir()
	lockFile := filepath.Join(tmp, "set.lock")

	var l struct {
		Kind   string `json:"kind"`
		Addons []struct {
			Name, Pinned, Identity string
		} `json:"addons"`
	}
	if err := json.Unmarshal([]byte(cliMust(t, "lock", "-f", cliSet, "-o", lockFile, "--json")), &l); err != nil {
		t.Fatal(err)
	}
	if l.Kind != "AddonSetLock" || len(l.Addons) != 3 || l.Addons[0].Name != "coredns" || l.Addons[0].Pinned != "../coredns" {
		t.Fatalf("lock --json: %+v", l)
	}
	want, err := os.ReadFile(strings.TrimSuffix(cliSet, ".yaml") + ".lock")
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(lockFile); string(got) != string(want) {
		t.Errorf("lock -o wrote\n%s\nnot the checked-in lock", got)
	}
	cliMust(t, "lock", "-f", cliSet, "-o", lockFile, "--check")

	// A bad flag before or after --check is trouble too: 2, with the
	// usage line. Without --check (-o takes "--check" as the file), 1.
	for _, c := range []struct {
		args []string
		want string
		code int
	}{
		{[]string{"--check", "--bogus"}, "unknown flag: --bogus", 2},
		{[]string{"--bogus", "--check"}, "unknown flag: --bogus", 2},
		{[]string{"--concurrency=x", "--check"}, `invalid argument "x" for "--concurrency"`, 2},
		{[]string{"--check=yes", "--bogus"}, `invalid argument "yes" for "--check"`, 2},
		{[]string{"--bogus", "--check", "--check=false"}, "unknown flag: --bogus", 1},
		{[]string{"--bogus", "-o", "--check"}, "unknown flag: --bogus", 1},
		// Flags that disagree, member names without --update, likewise.
		{[]string{"--check", "--update"}, "--check and --update exclude each other", 2},
		{[]string{"coredns"}, `member names are for --update (got ["coredns"])`, 1},
	} {
		args := append([]string{"lock", "-f", cliSet}, c.args...)
		if r := cliRun(t, args...); r.code != c.code || !strings.HasPrefix(r.stderr, "addonpkg: lock: "+c.want) || !strings.Contains(r.stderr, "\nUsage: ") {
			t.Errorf("%q: exit %d, stderr %q; want %d and the usage", args, r.code, r.stderr, c.code)
		}
	}
	// A stale lock exits 1, as a lock that does not exist does; trouble
	// (below: a missing declaration, flags that disagree) exits 2.
	stale := filepath.Join(tmp, "stale.lock")
	if err := os.WriteFile(stale, []byte(strings.Replace(string(want), "entry: sha256:413e", "entry: sha256:513e", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := cliRun(t, "lock", "-f", cliSet, "-o", stale, "--check"); r.code != 1 || r.stdout != "" {
		t.Errorf("lock --check of a stale lock: exit %d, stdout %q, stderr %q; want exit 1", r.code, r.stdout, r.stderr)
	}

	stream := cliMust(t, "render", "-f", cliSet, "--lock", lockFile)
	if n := strings.Count(stream, "# addonpkg-set-member: "); n != 3 {
		t.Errorf("render printed %d member markers, want 3", n)
	}
	var rows []struct {
		Name      string `json:"name"`
		Documents int    `json:"documents"`
		File      string `json:"file"`
	}
	out := filepath.Join(tmp, "out")
	if err := json.Unmarshal([]byte(cliMust(t, "render", "-f", cliSet, "-o", out, "--json")), &rows); err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 || rows[0].File != "01-coredns.yaml" || rows[0].Documents != 6 || rows[2].Name != "metrics-server" {
		t.Errorf("render -o --json: %+v", rows)
	}
	if b, err := os.ReadFile(filepath.Join(out, "01-coredns.yaml")); err != nil || !strings.Contains(stream, string(b)) {
		t.Errorf("render -o: 01-coredns.yaml (%v) is not coredns's part of the stream", err)
	}

	for _, c := range []struct {
		name string
		args []string
		want string
		code int
	}{
		{"update unknown", []string{"lock", "-f", cliSet, "-o", lockFile, "--update", "nope"}, `unknown member "nope"`, 1},
		{"check without lock", []string{"lock", "-f", cliSet, "-o", filepath.Join(tmp, "none.lock"), "--check"}, "no lock file: run 'addonpkg lock -f " + cliSet + " -o " + filepath.Join(tmp, "none.lock") + "'", 1},
		{"check of a missing declaration", []string{"lock", "-f", filepath.Join(tmp, "nope.yaml"), "--check"}, "nope.yaml", 2},
		{"missing declaration", []string{"render", "-f", filepath.Join(tmp, "nope.yaml")}, "nope.yaml", 1},
		{"missing --lock", []string{"render", "-f", cliSet, "--lock", filepath.Join(tmp, "none.lock")}, "no such file", 1},
		{"render into a full dir", []string{"render", "-f", cliSet, "-o", out}, "not empty", 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := cliRun(t, c.args...)
			if r.code != c.code || r.stdout != "" || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, c.want) {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit %d and one line with %q", r.code, r.stdout, r.stderr, c.code, c.want)
			}
		})
	}
}
