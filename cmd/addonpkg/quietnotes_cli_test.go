package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/addonpkg/addonpkg/internal/testing/testregistry"
)

// Every command that says more on stderr than its errors takes -q, which
// leaves out those notes (and nothing on stdout): gc, rm, doctor, login
// and logout had none.
func TestQuietSilencesStoreAndLoginNotes(t *testing.T) {
	cliNewHome(t)
	t.Setenv("DOCKER_CONFIG", t.TempDir())
	reg := testregistry.Start(t, testregistry.Options{Mode: testregistry.BasicAuth})
	cliMust(t, "build", cliExampleDir("coredns"), "-t", "coredns:1")
	cliMust(t, "tag", "coredns:1", "other:1")
	login := func(extra ...string) cliOutcome {
		var stdout, stderr bytes.Buffer
		args := append([]string{"login", reg.Host, "-u", reg.Username, "--password-stdin"}, extra...)
		code := cliExec(t, args, strings.NewReader(reg.Password+"\n"), &stdout, &stderr)
		return cliOutcome{code, stdout.String(), stderr.String()}
	}
	for _, c := range []struct {
		name string
		run  func(quiet ...string) cliOutcome
	}{
		{"login", login},
		{"logout", func(q ...string) cliOutcome { return cliRun(t, append([]string{"logout", reg.Host}, q...)...) }},
		{"rm", func(q ...string) cliOutcome { return cliRun(t, append([]string{"rm", "other:1"}, q...)...) }},
		{"gc", func(q ...string) cliOutcome { return cliRun(t, append([]string{"gc"}, q...)...) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			if r := c.run(); r.code != 0 || r.stderr == "" {
				t.Fatalf("%s: exit %d, stderr %q; want 0 and a note", c.name, r.code, r.stderr)
			}
			if c.name == "rm" {
				cliMust(t, "tag", "coredns:1", "other:1")
			}
			if c.name == "logout" {
				login()
			}
			if r := c.run("-q"); r.code != 0 || r.stderr != "" || r.stdout != "" {
				t.Errorf("%s -q: exit %d, stdout %q, stderr %q; want 0 and nothing", c.name, r.code, r.stdout, r.stderr)
			}
		})
	}
	// doctor's one note is a warning when its report cannot be cached;
	// the flag is there as on every other command.
	if r := cliRun(t, "doctor", "-q", "--help"); r.code != 0 || !strings.Contains(r.stdout, "--quiet") {
		t.Errorf("doctor -q --help: exit %d, stdout %q", r.code, r.stdout)
	}
}

// Logging out of a registry with no saved credentials is a note and exit
// 0, as docker logout does: no credentials is what was asked for. It
// exited 1.
func TestLogoutNotLoggedIn(t *testing.T) {
	t.Setenv("DOCKER_CONFIG", t.TempDir())
	r := cliRun(t, "logout", "127.0.0.1:1")
	if r.code != 0 || r.stdout != "" || r.stderr != "not logged in to 127.0.0.1:1\n" {
		t.Errorf("logout: exit %d, stdout %q, stderr %q; want 0 and a note", r.code, r.stdout, r.stderr)
	}
	if r := cliRun(t, "logout", "127.0.0.1:1", "-q"); r.code != 0 || r.stderr != "" {
		t.Errorf("logout -q: exit %d, stderr %q", r.code, r.stderr)
	}
}

// rm --json prints the names it removed, with their default tag, so a
// script learns what went (rm had no --json).
func TestRmJSON(t *testing.T) {
	t.Parallel()
	cliNewHome(t)
	cliMust(t, "build", cliExampleDir("coredns"), "-t", "coredns:1")
	cliMust(t, "tag", "coredns:1", "other")
	var got struct{ Removed []string }
	if err := json.Unmarshal([]byte(cliMust(t, "rm", "coredns:1", "other", "--json")), &got); err != nil {
		t.Fatal(err)
	}
	if strings.Join(got.Removed, " ") != "coredns:1 other:latest" {
		t.Errorf("rm --json removed %q, want coredns:1 other:latest", got.Removed)
	}
}

// push, pull and copy -q hide the notes of referrers copied as well as
// the progress; the help said "no progress output" alone.
func TestQuietHelpSaysItHidesNotes(t *testing.T) {
	t.Parallel()
	for _, c := range []string{"push", "pull", "copy"} {
		r := cliRun(t, c, "--help")
		if r.code != 0 || !strings.Contains(r.stdout, "progress output nor notes (referrers copied") {
			t.Errorf("%s --help: exit %d; its -q help does not say it hides the referrer notes:\n%s", c, r.code, r.stdout)
		}
	}
}

// A key file that cannot be read names the flag that gave it: "--key
// nokey: no such file or directory" (it said "unusable key: open nokey"
// alone, which flag left to guess).
func TestUnusableKeyNamesTheFlag(t *testing.T) {
	t.Parallel()
	cliNewHome(t)
	dir := t.TempDir()
	missing := dir + "/nokey"
	for _, c := range []struct {
		args []string
		flag string
	}{
		{[]string{"sign", "--key", missing, "x:1"}, "--key"},
		{[]string{"verify", "--key", missing, "x:1"}, "--key"},
		{[]string{"unpack", "--verify-key", missing, "x:1"}, "--verify-key"},
	} {
		r := cliRun(t, c.args...)
		want := "addonpkg: " + c.flag + " " + missing + ": no such file or directory\n"
		if r.code != 1 || r.stderr != want {
			t.Errorf("addonpkg %q: exit %d, stderr %q; want 1 and %q", c.args, r.code, r.stderr, want)
		}
	}
}

// tag --json prints the name given, the name it came from and the
// digest, as rm --json prints what it removed (tag had no --json).
func TestTagJSON(t *testing.T) {
	t.Parallel()
	cliNewHome(t)
	digest := strings.TrimSpace(cliMust(t, "build", cliExampleDir("coredns"), "-t", "coredns:1"))
	var got struct{ Source, Name, Digest string }
	if err := json.Unmarshal([]byte(cliMust(t, "tag", "coredns:1", "other", "--json")), &got); err != nil {
		t.Fatal(err)
	}
	if got.Source != "coredns:1" || got.Name != "other:latest" || got.Digest != digest {
		t.Errorf("tag --json: %+v, want source coredns:1, name other:latest, digest %s", got, digest)
	}
}

// login and logout --json print what they did, as every other command
// that reports data does (they had no --json): the registry, the user
// saved, whether credentials are saved now, and for logout whether there
// were any to remove. Their notes stay on stderr.
func TestLoginLogoutJSON(t *testing.T) {
	t.Setenv("DOCKER_CONFIG", t.TempDir())
	reg := testregistry.Start(t, testregistry.Options{Mode: testregistry.BasicAuth})
	var stdout, stderr bytes.Buffer
	code := cliExec(t, []string{"login", reg.Host, "-u", reg.Username, "--password-stdin", "--json"}, strings.NewReader(reg.Password+"\n"), &stdout, &stderr)
	want := `{"registry":"` + reg.Host + `","username":"` + reg.Username + `","loggedIn":true}`
	if got := compactJSON(t, stdout.String()); code != 0 || got != want {
		t.Errorf("login --json: exit %d, stdout %q (stderr %q); want %s", code, stdout.String(), stderr.String(), want)
	}
	for _, removed := range []string{"true", "false"} {
		r := cliRun(t, "logout", reg.Host, "--json")
		want := `{"registry":"` + reg.Host + `","loggedIn":false,"removed":` + removed + `}`
		if got := compactJSON(t, r.stdout); r.code != 0 || got != want || r.stderr == "" {
			t.Errorf("logout --json: exit %d, stdout %q, stderr %q; want %s and a note", r.code, r.stdout, r.stderr, want)
		}
	}
}

// compactJSON is s, one JSON value, without its spaces.
func compactJSON(t *testing.T, s string) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(s)); err != nil {
		t.Errorf("not JSON: %q: %v", s, err)
	}
	return b.String()
}

// push, pull and copy print the same pinned reference, REPO@DIGEST, as
// crane push does, in text and in --json's reference: pull printed
// REPO:TAG@DIGEST (the tag of a pinned reference is ignored, and the
// name then differed from push's). What pull prints names the add-on in
// the store and in the registry both.
func TestPushPullPrintOneReference(t *testing.T) {
	cliNewHome(t)
	reg := testregistry.Start(t, testregistry.Options{})
	digest := strings.TrimSpace(cliMust(t, "build", cliExampleDir("coredns"), "-t", "coredns:1"))
	repo := reg.Host + "/addons/coredns"
	want := repo + "@" + digest
	push := strings.TrimSpace(cliMust(t, "push", "-q", "coredns:1", repo+":1"))
	cliMust(t, "rm", "coredns:1")
	pull := strings.TrimSpace(cliMust(t, "pull", "-q", repo+":1"))
	var res struct{ Reference string }
	if err := json.Unmarshal([]byte(cliMust(t, "pull", "-q", "--json", repo+":1")), &res); err != nil {
		t.Fatal(err)
	}
	copied := strings.TrimSpace(cliMust(t, "copy", "-q", repo+":1", "other:2"))
	if push != want || pull != want || res.Reference != want || copied != "other@"+digest {
		t.Errorf("push printed %q, pull %q, pull --json %q, copy to the store %q; want %q (and other@%s)", push, pull, res.Reference, copied, want, digest)
	}
	for _, ref := range []string{pull, copied} {
		if r := cliRun(t, "inspect", "--pull", "never", ref); r.code != 0 {
			t.Errorf("inspect %s from the store: exit %d, %q", ref, r.code, r.stderr)
		}
	}
}
