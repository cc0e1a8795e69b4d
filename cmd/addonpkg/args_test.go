package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// argSpec is what a command's Use line says about its arguments (the
// guard of TestArgsAgreeWithUse; the commands declare their own Args):
// "build PATH" takes one, "push NAME[:TAG] [DEST]" one or two, "rm
// NAME..." one or more.
type argSpec struct {
	required []string // names of the required arguments
	optional []string // names of the optional ones
	variadic bool     // the last one repeats
}

func parseUse(use string) argSpec {
	var s argSpec
	fields := strings.Fields(use)
	if len(fields) > 0 {
		fields = fields[1:]
	}
	depth := 0 // inside [...]: optional
	for i := 0; i < len(fields); i++ {
		f := fields[i]
		// Leading '[' open optional groups, unmatched trailing ']' close
		// them; brackets inside a name (NAME[:TAG]) are part of it.
		lead := len(f) - len(strings.TrimLeft(f, "["))
		f = f[lead:]
		optional := depth > 0 || lead > 0
		closing := strings.Count(f, "]") - strings.Count(f, "[")
		for ; closing > 0 && strings.HasSuffix(f, "]"); closing-- {
			f = f[:len(f)-1]
			depth--
		}
		depth += lead
		if strings.HasSuffix(f, "...") {
			s.variadic = true
			f = strings.TrimSuffix(f, "...")
		}
		switch {
		case f == "--" || f == "":
		case strings.HasPrefix(f, "-"):
			// A flag, not an argument; the word after it is its value
			// (--to REGISTRY), unless that opens a group or is a flag.
			if i+1 < len(fields) && !strings.HasPrefix(fields[i+1], "[") && !strings.HasPrefix(fields[i+1], "-") && !strings.HasSuffix(fields[i], "]") {
				i++
				next := fields[i]
				for closing := strings.Count(next, "]") - strings.Count(next, "["); closing > 0; closing-- {
					depth--
				}
			}
		case optional:
			s.optional = append(s.optional, f)
		default:
			s.required = append(s.required, f)
		}
	}
	return s
}

func TestParseUse(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		use                string
		required, optional []string
		variadic           bool
	}{
		{"images", nil, nil, false},
		{"build PATH", []string{"PATH"}, nil, false},
		{"push NAME[:TAG] [DEST]", []string{"NAME[:TAG]"}, []string{"DEST"}, false},
		{"rm NAME...", []string{"NAME"}, nil, true},
		{"diff A B", []string{"A", "B"}, nil, false},
		{"run [-- READER [ARG...]]", nil, []string{"READER", "ARG"}, true},
		{"mirror [-f addons.yaml] --to REGISTRY/PREFIX|oci-archive:FILE [-o FILE]", nil, nil, false},
		{"render [-f addons.yaml] [-o DIR]", nil, nil, false},
		{"lock [-f addons.yaml] [--update [NAME...]] [--check]", nil, []string{"NAME"}, true},
		{"x [--flag] ARG", []string{"ARG"}, nil, false},
	} {
		got := parseUse(tc.use)
		if !slices.Equal(got.required, tc.required) || !slices.Equal(got.optional, tc.optional) || got.variadic != tc.variadic {
			t.Errorf("parseUse(%q) = %+v", tc.use, got)
		}
	}
}

// Every command declares its Args, and they agree with its Use line:
// the counts it takes and the name of what is missing.
func TestArgsAgreeWithUse(t *testing.T) {
	t.Parallel()
	root, _ := newRoot(nil, &bytes.Buffer{}, &bytes.Buffer{})
	n := 0
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
			switch sub.Name() {
			case "help", "completion":
				continue
			}
			if !sub.Runnable() {
				continue
			}
			n++
			if sub.Args == nil {
				t.Errorf("%s: no Args: declare them (exactArgs, noArgs, cobra.ArbitraryArgs...)", sub.CommandPath())
				continue
			}
			s := parseUse(sub.Use)
			takes := len(s.required) + len(s.optional)
			for k := 0; k <= takes+2; k++ {
				args := make([]string, k)
				for i := range args {
					args[i] = "x"
				}
				err := sub.Args(sub, args)
				want := k >= len(s.required) && (s.variadic || k <= takes)
				if (err == nil) != want {
					t.Errorf("%s with %d arguments: Args says %v; Use %q says ok=%v", sub.CommandPath(), k, err, sub.Use, want)
					continue
				}
				if k < len(s.required) && err != nil && !strings.Contains(err.Error(), " "+s.required[k]) {
					t.Errorf("%s with %d arguments: %q does not name %s", sub.CommandPath(), k, err, s.required[k])
				}
			}
		}
	}
	walk(root)
	if n < 25 {
		t.Fatalf("checked only %d commands: the walk is broken", n)
	}
}

// An empty argument ("" from an unset shell variable) is a usage error
// naming the argument, not a message about nothing (":latest: not found
// in store", ": not logged in", "read source : no such file").
func TestEmptyArgumentNamed(t *testing.T) {
	cliNewHome(t)
	t.Setenv("DOCKER_CONFIG", t.TempDir())
	for _, c := range []struct {
		args []string
		code int
		name string
	}{
		{[]string{"tag", "", "x:1"}, 1, "SRC"},
		{[]string{"tag", "x:1", ""}, 1, "DST"},
		{[]string{"rm", "x:1", ""}, 1, "NAME"},
		{[]string{"push", "", "127.0.0.1:1/a:1"}, 1, "NAME[:TAG]"},
		{[]string{"push", "x:1", ""}, 1, "DEST"},
		{[]string{"login", "", "-u", "u", "--password-stdin"}, 1, "REGISTRY"},
		{[]string{"logout", ""}, 1, "REGISTRY"},
		{[]string{"build", ""}, 1, "PATH"},
		{[]string{"unpack", ""}, 1, "SOURCE"},
		{[]string{"diff", "x:1", ""}, 2, "B"},
		{[]string{"ls", ""}, 1, "REGISTRY/REPO"},
	} {
		r := cliRun(t, c.args...)
		want := fmt.Sprintf("addonpkg: %s: empty argument %s\n", c.args[0], c.name)
		if r.code != c.code || !strings.HasPrefix(r.stderr, want) || r.stdout != "" {
			t.Errorf("addonpkg %q: exit %d, stdout %q, stderr %q; want exit %d and %q", c.args, r.code, r.stdout, r.stderr, c.code, want)
		}
	}
}

// ls and doctor take REGISTRY/REPO as every command takes a registry
// reference: a name without a registry host is a local name, refused
// before any request (it went to Docker Hub), and a registry named alone
// is told apart from a name with a tag (127.0.0.1:5055 read as the tag
// 5055 of "127.0.0.1").
func TestRepositoryArgs(t *testing.T) {
	cliNewHome(t)
	t.Setenv("DOCKER_CONFIG", t.TempDir())
	for _, c := range []struct{ arg, want string }{
		{"coredns", "a name without a registry host is a local name (for Docker Hub write docker.io/library/coredns)"},
		{"team/coredns", "a name without a registry host is a local name (for Docker Hub write docker.io/team/coredns)"},
		{"127.0.0.1:5055", "127.0.0.1:5055 names a registry, not a repository: want REGISTRY/REPO (127.0.0.1:5055/NAME)"},
		{"registry.example.com", "names a registry, not a repository"},
	} {
		for _, cmd := range []string{"ls", "doctor"} {
			r := cliRun(t, cmd, c.arg)
			if r.code != 1 || !strings.Contains(r.stderr, c.want) || strings.Count(r.stderr, "\n") != 1 || r.stdout != "" {
				t.Errorf("addonpkg %s %s: exit %d, stdout %q, stderr %q; want exit 1 and one line with %q", cmd, c.arg, r.code, r.stdout, r.stderr, c.want)
			}
		}
	}
}

// completion and help refuse what they do not know, as kubectl's do
// (cobra's printed the help and exited 0: completion tcsh > file wrote
// the help where a script belongs), and still do their job.
func TestCompletionAndHelpStrict(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"completion", "tcsh"}, 1, `unsupported shell "tcsh": want one of bash, zsh, fish, powershell`},
		{[]string{"completion"}, 1, "no shell named"},
		{[]string{"help", "nosuch"}, 1, `unknown help topic "nosuch"`},
		{[]string{"completion", "bash"}, 0, "# bash completion"},
		{[]string{"help", "build"}, 0, "Build packages PATH"},
	} {
		r := cliRun(t, c.args...)
		got := r.stdout
		if c.code != 0 {
			got = r.stderr
			if r.stdout != "" {
				t.Errorf("addonpkg %q wrote stdout %q", c.args, r.stdout)
			}
		}
		if r.code != c.code || !strings.Contains(got, c.want) {
			t.Errorf("addonpkg %q: exit %d, stdout %.80q, stderr %q; want exit %d and %q", c.args, r.code, r.stdout, r.stderr, c.code, c.want)
		}
	}
}

// login to a registry that does not answer names that registry: a host
// alone read as a reference was Docker Hub's 127.0.0.1 with the tag PORT.
func TestLoginNamesItsHost(t *testing.T) {
	t.Setenv("DOCKER_CONFIG", t.TempDir())
	down := closedAddr(t)
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"login", down, "-u", "me", "--password-stdin"}, strings.NewReader("pw\n"), &stdout, &stderr)
	if code != 1 || !strings.Contains(stderr.String(), "cannot connect to "+down) || strings.Contains(stderr.String(), "docker.io") {
		t.Errorf("login %s: exit %d, stderr %q; want 1 and the host named", down, code, stderr.String())
	}
}

// unpack -o takes a directory, and only one output at a time: -o "" fell
// back to the stream, -o - made a folder named "-", and --list -o wrote
// the tree and listed nothing.
func TestUnpackOutputFlag(t *testing.T) {
	t.Parallel()
	cliNewHome(t)
	dir := t.TempDir()
	src := cliExampleDir("coredns")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"unpack", src, "-o", ""}, "want a directory"},
		{[]string{"unpack", src, "-o", "-"}, "without -o, unpack prints the rendered stream"},
		{[]string{"unpack", src, "--list", "-o", filepath.Join(dir, "a")}, "does not go with --list or --raw"},
		{[]string{"unpack", src, "--raw", "-o", filepath.Join(dir, "b")}, "does not go with --list or --raw"},
	} {
		r := cliRun(t, c.args...)
		if r.code == 0 || r.stdout != "" || !strings.Contains(r.stderr, c.want) {
			t.Errorf("addonpkg %q: exit %d, stdout %.60q, stderr %q; want an error with %q", c.args, r.code, r.stdout, r.stderr, c.want)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("refused unpacks wrote %v", entries)
	}
}

// A limit flag takes a positive number: 0 and negative ones were read as
// the default without a word.
func TestLimitFlagsPositive(t *testing.T) {
	t.Parallel()
	cliNewHome(t)
	for _, args := range [][]string{
		{"unpack", "./x", "--max-entries", "0"},
		{"unpack", "./x", "--max-file-bytes", "-1"},
		{"unpack", "./x", "--max-layers", "0"},
		{"build", "./x", "--max-mapping-keys", "-5"},
		{"unpack", "./x", "--max-download-bytes", "lots"},
	} {
		r := cliRun(t, args...)
		if r.code == 0 || !strings.Contains(r.stderr, "want a positive number") {
			t.Errorf("addonpkg %q: exit %d, stderr %q; want a refusal", args, r.code, r.stderr)
		}
	}
}

// apply's flags that did nothing without a word are refused before any
// request: --wait=false with -f (every member is waited for), --diff
// without --dry-run=server (nothing printed a diff), and a wait timeout
// that is not positive (0 and -5s waited five minutes).
func TestApplyFlagsThatDidNothing(t *testing.T) {
	cliNewHome(t)
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"apply", "-f", filepath.Join("..", "..", "examples", "addon-set", "addons.yaml"), "--wait=false"}, "drop --wait=false"},
		{[]string{"apply", "./x", "--diff"}, "add --dry-run=server"},
		{[]string{"apply", "./x", "--wait-timeout", "0"}, "want a positive duration"},
		{[]string{"uninstall", "x", "--wait-timeout", "-5s"}, "want a positive duration"},
	} {
		r := cliRun(t, c.args...)
		if r.code == 0 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("addonpkg %q: exit %d, stderr %q; want a refusal with %q", c.args, r.code, r.stderr, c.want)
		}
	}
}

// uninstall --dry-run takes kubectl delete's words as well as a bool:
// --dry-run=server, written as for apply, reaches the cluster (here, the
// missing kubeconfig), not strconv's "invalid syntax". apply takes
// --dry-run alone, written as for uninstall.
func TestUninstallDryRunWords(t *testing.T) {
	cliNewHome(t)
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
	for _, v := range []string{"--dry-run", "--dry-run=server", "--dry-run=client", "--dry-run=none", "--dry-run=true"} {
		if r := cliRun(t, "uninstall", "x", v); r.code != 1 || !strings.Contains(r.stderr, "kubeconfig") || strings.Contains(r.stderr, "--dry-run") {
			t.Errorf("uninstall x %s: exit %d, stderr %q; want the flag taken and the missing kubeconfig named", v, r.code, r.stderr)
		}
	}
	// apply takes --dry-run alone too, as uninstall, kubectl, flux and
	// timoni do: it means the one dry run apply has, server.
	for _, v := range []string{"--dry-run", "--dry-run=server"} {
		if r := cliRun(t, "apply", "./x", v); r.code != 1 || strings.Contains(r.stderr, "--dry-run") || strings.Contains(r.stderr, "Usage") {
			t.Errorf("apply ./x %s: exit %d, stderr %q; want the flag taken and the missing folder named", v, r.code, r.stderr)
		}
	}
	// A value after a space is an argument, as in kubectl: the error says
	// how to write it.
	if r := cliRun(t, "apply", "./x", "--dry-run", "server"); r.code != 1 || !strings.Contains(r.stderr, `unexpected argument "server"`) || !strings.Contains(r.stderr, "--dry-run=server") {
		t.Errorf("apply ./x --dry-run server: exit %d, stderr %q; want 1 and --dry-run=server named", r.code, r.stderr)
	}
	if r := cliRun(t, "uninstall", "x", "--dry-run=maybe"); r.code != 1 || !strings.Contains(r.stderr, "want true, false, none, server or client") {
		t.Errorf("uninstall --dry-run=maybe: exit %d, stderr %q", r.code, r.stderr)
	}
}

// A word flag's value it does not take (apply --dry-run=client, a
// kubectl habit; --pull=sometimes) is refused as a bad flag is, as the
// flag is parsed: one line naming the command, the flag and the words,
// then the usage line, exit 1 (diff: 2), and no request made. It was a
// bare "--dry-run "client": want none or server", without the command
// or the usage line every other bad flag has.
func TestWordFlagsRefusedAsBadFlags(t *testing.T) {
	cliNewHome(t)
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"apply", "./x", "--dry-run=client"}, 1, `addonpkg: apply: invalid argument "client" for "--dry-run" flag: want none or server: apply has no client dry-run ('addonpkg unpack SOURCE' prints the objects it would send, without a cluster)`},
		{[]string{"apply", "./x", "--pull=sometimes"}, 1, `addonpkg: apply: invalid argument "sometimes" for "--pull" flag: want missing, always or never`},
		{[]string{"diff", "./x", "./y", "--pull", "sometimes"}, 2, `addonpkg: diff: invalid argument "sometimes" for "--pull" flag: want missing, always or never`},
		{[]string{"unpack", "x:1", "--pull", "sometimes"}, 1, `addonpkg: unpack: invalid argument "sometimes" for "--pull" flag: want missing, always or never`},
	} {
		r := cliRun(t, c.args...)
		lines := strings.Split(strings.TrimRight(r.stderr, "\n"), "\n")
		if r.code != c.code || r.stdout != "" || len(lines) != 2 || lines[0] != c.want || !strings.HasPrefix(lines[1], "Usage: addonpkg "+c.args[0]) {
			t.Errorf("addonpkg %q: exit %d, stdout %q, stderr %q; want exit %d, %q and the usage line", c.args, r.code, r.stdout, r.stderr, c.code, c.want)
		}
	}
}

// Every flag value the command line can tell is wrong is refused as the
// flag is parsed, as --pull's and a duration's are: one line naming the
// command, the flag and what it wants, then the usage line, exit 1 (diff:
// 2). --set X, --label X, build --format and --compression, push --format,
// --platform and render --strategy were refused only when the command ran,
// as a bare line without the command or the usage line.
func TestFlagValuesRefusedAsParsed(t *testing.T) {
	t.Parallel()
	cliNewHome(t)
	const set = "want NAME=VALUE, NAME a letter or '_', then letters, digits or '_'"
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"unpack", "x:1", "--set", "DNS_SERVER_IP"}, 1, `addonpkg: unpack: invalid argument "DNS_SERVER_IP" for "--set" flag: ` + set},
		{[]string{"unpack", "x:1", "--set", "1X=a"}, 1, `addonpkg: unpack: invalid argument "1X=a" for "--set" flag: ` + set},
		{[]string{"apply", "./x", "--set", "X"}, 1, `addonpkg: apply: invalid argument "X" for "--set" flag: ` + set},
		{[]string{"diff", "./x", "./y", "--set", "X"}, 2, `addonpkg: diff: invalid argument "X" for "--set" flag: ` + set},
		{[]string{"build", "./x", "--label", "team"}, 1, `addonpkg: build: invalid argument "team" for "--label" flag: want KEY=VALUE`},
		{[]string{"build", "./x", "--annotation", "=v"}, 1, `addonpkg: build: invalid argument "=v" for "--annotation" flag: want KEY=VALUE`},
		{[]string{"build", "./x", "--format", "oci"}, 1, `addonpkg: build: invalid argument "oci" for "--format" flag: want image or artifact`},
		{[]string{"build", "./x", "--compression", "lz4"}, 1, `addonpkg: build: invalid argument "lz4" for "--compression" flag: want gzip, zstd or none`},
		{[]string{"push", "x:1", "localhost:5000/x:1", "--format", "image"}, 1, `addonpkg: push: invalid argument "image" for "--format" flag: want keep or auto`},
		{[]string{"unpack", "x:1", "--platform", "linux/arm/v7/x"}, 1, `addonpkg: unpack: invalid argument "linux/arm/v7/x" for "--platform" flag: want os/arch[/variant], such as linux/amd64 or linux/arm/v7`},
		{[]string{"render", "--strategy", "Always"}, 1, `addonpkg: render: invalid argument "Always" for "--strategy" flag: want ApplyOnce or Reconcile`},
	} {
		r := cliRun(t, c.args...)
		lines := strings.Split(strings.TrimRight(r.stderr, "\n"), "\n")
		if r.code != c.code || r.stdout != "" || len(lines) != 2 || lines[0] != c.want || !strings.HasPrefix(lines[1], "Usage: addonpkg "+c.args[0]) {
			t.Errorf("addonpkg %q: exit %d, stdout %q, stderr %q; want exit %d, %q and the usage line", c.args, r.code, r.stdout, r.stderr, c.code, c.want)
		}
	}
	// What the flags take still works.
	out := cliMust(t, "unpack", cliExampleDir("coredns"), "--set", "DNS_SERVER_IP=10.96.0.10", "--set", "DNS_DOMAIN=a=b,c", "--platform", "")
	if !strings.Contains(out, "10.96.0.10") || !strings.Contains(out, "a=b,c") {
		t.Errorf("unpack --set: the values are not in the stream:\n%s", out)
	}
	cliMust(t, "build", cliExampleDir("coredns"), "-t", "x:1", "--label", "a=b=c", "--label", "d=", "--annotation", "e=f", "--format", "artifact", "--compression", "zstd")
}

// unpack --list prints sizes right-aligned and names after them, left-
// aligned: a long name does not push the others to the right.
func TestUnpackListAlignsNamesLeft(t *testing.T) {
	t.Parallel()
	cliNewHome(t)
	dir := t.TempDir()
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n"
	must(t, os.WriteFile(filepath.Join(dir, "a.yaml"), []byte(cm), 0o644))
	must(t, os.MkdirAll(filepath.Join(dir, "sub"), 0o755))
	long := strings.Repeat("n", 120) + ".yaml"
	must(t, os.WriteFile(filepath.Join(dir, "sub", long), []byte(strings.Replace(cm, "x}", "y}", 1)), 0o644))
	out := cliMust(t, "unpack", dir+"/", "--list")
	want := fmt.Sprintf("%d a.yaml\n- sub/\n%d sub/%s\n", len(cm), len(cm), long)
	var got strings.Builder
	for _, l := range strings.SplitAfter(out, "\n") {
		got.WriteString(strings.TrimLeft(l, " "))
	}
	if got.String() != want || strings.Contains(out, " \n") {
		t.Errorf("--list printed\n%s\nwant (less the sizes' left padding)\n%s", out, want)
	}
}

// kubectl's, helm's and flux's -o json is --json here: a command that
// prints JSON says so when given -o json or --output json, which it does
// not know, and what to use for kubectl's -o yaml, -o wide, -o name and
// -o FORMAT=... (jsonpath, go-template, custom-columns: these had no
// hint), which it has no output for; any other -o, or a command that takes -o
// for its output, or prints no JSON, says nothing more. -o yaml said
// "prints JSON with --json, not -o json".
func TestOutputFlagNamesJSON(t *testing.T) {
	const (
		json = "(addonpkg prints JSON with --json, not -o json)"
		yaml = "(addonpkg prints no YAML: --json prints JSON, which a YAML reader reads as it is)"
		wide = "(addonpkg has no -o wide: its table is all it prints for people; --json prints everything)"
		name = "(addonpkg has no -o name: --json prints JSON, from which jq picks the names)"
		jp   = "(addonpkg has no -o jsonpath: --json prints JSON, from which jq picks what you need)"
		gt   = "(addonpkg has no -o go-template: --json prints JSON, from which jq picks what you need)"
		cc   = "(addonpkg has no -o custom-columns: --json prints JSON, from which jq picks what you need)"
	)
	for _, c := range []struct {
		args []string
		hint string
	}{
		{[]string{"status", "-o", "json"}, json},
		{[]string{"status", "--output=json"}, json},
		{[]string{"images", "-ojson"}, json},
		{[]string{"version", "--output", "json"}, json},
		{[]string{"status", "-o", "yaml"}, yaml},
		{[]string{"images", "-o=yaml"}, yaml},
		{[]string{"status", "-o", "wide"}, wide},
		{[]string{"images", "--output", "name"}, name},
		{[]string{"inspect", "x", "-o", "jsonpath={.digest}"}, jp},
		{[]string{"status", "-o=go-template={{.name}}"}, gt},
		{[]string{"images", "--output", "custom-columns=NAME:.name"}, cc},
		{[]string{"images", "-o", "jsonpath"}, ""},
		{[]string{"status", "-o", "jsn"}, ""},
		{[]string{"status", "-o"}, ""},
		{[]string{"build", ".", "-x"}, ""},
		{[]string{"unpack", "x", "-o"}, ""},
		{[]string{"logout", "-o", "json"}, json},
		{[]string{"conformance", "read", "-o", "json"}, ""},
		{[]string{"conformance", "read", "-o", "yaml"}, ""},
	} {
		r := cliRun(t, c.args...)
		first, _, _ := strings.Cut(r.stderr, "\n")
		hinted := slices.ContainsFunc([]string{json, yaml, wide, name, jp, gt, cc}, func(h string) bool { return strings.Contains(r.stderr, h) })
		if r.code != 1 || (c.hint != "" && !strings.HasSuffix(first, c.hint)) || (c.hint == "" && hinted) {
			t.Errorf("addonpkg %q: exit %d, stderr %q; want exit 1, hint %q", c.args, r.code, r.stderr, c.hint)
		}
	}
}

// helm's -n and -A (a release lives in a namespace) are unknown to status
// and uninstall, whose add-ons are named cluster-wide: the error says
// where the inventories are. apply and diff take -n (for the objects),
// and a command that talks to no cluster says nothing more.
func TestNamespaceFlagSaysWhereInventoriesAre(t *testing.T) {
	t.Parallel()
	const hint = "(an add-on is named cluster-wide, not in a namespace: its inventory is in --inventory-namespace, default kube-system)"
	for _, c := range []struct {
		args []string
		hint bool
	}{
		{[]string{"uninstall", "x", "-n", "monitoring"}, true},
		{[]string{"status", "-A"}, true},
		{[]string{"status", "--namespace=monitoring"}, true},
		{[]string{"status", "--all-namespaces"}, true},
		{[]string{"apply", "./x", "-A"}, false},
		{[]string{"lock", "-n", "x"}, false},
	} {
		r := cliRun(t, c.args...)
		first, _, _ := strings.Cut(r.stderr, "\n")
		if r.code != 1 || r.stdout != "" || strings.HasSuffix(first, hint) != c.hint || !strings.Contains(r.stderr, "Usage: addonpkg "+c.args[0]) {
			t.Errorf("addonpkg %q: exit %d, stderr %q; want exit 1, the usage line, hint %v", c.args, r.code, r.stderr, c.hint)
		}
	}
}

// ls alone, as a helm user lists releases, says it lists a registry
// repository's tags and which commands list the installed add-ons and
// the local store; ls with its REGISTRY/REPO says nothing more.
func TestLsAloneSaysWhichCommandLists(t *testing.T) {
	t.Parallel()
	cliNewHome(t)
	r := cliRun(t, "ls")
	lines := strings.Split(strings.TrimRight(r.stderr, "\n"), "\n")
	if r.code != 1 || r.stdout != "" || len(lines) != 3 || lines[0] != "addonpkg: ls: missing argument REGISTRY/REPO" ||
		!strings.Contains(lines[1], "addonpkg status") || !strings.Contains(lines[1], "addonpkg images") || !strings.HasPrefix(lines[2], "Usage: addonpkg ls") {
		t.Errorf("ls: exit %d, stdout %q, stderr %q; want exit 1, the missing argument, the other lists, the usage line", r.code, r.stdout, r.stderr)
	}
	if r := cliRun(t, "ls", "a", "b"); r.code != 1 || strings.Contains(r.stderr, "addonpkg status") {
		t.Errorf("ls a b: exit %d, stderr %q; want exit 1 without the other lists", r.code, r.stderr)
	}
}

// A command that groups others (conformance) answers an unknown one as
// the root does: an error with suggestions, exit 1. cobra printed its
// help and exited 0, so "addonpkg conformance raed" passed in a script.
func TestGroupCommandUnknownSubcommand(t *testing.T) {
	for _, c := range []struct {
		args         []string
		code         int
		stdout, want string
	}{
		{[]string{"conformance", "raed"}, 1, "", "addonpkg: conformance: unknown command \"raed\"\nDid you mean this?\n    addonpkg conformance read\nRun 'addonpkg conformance --help' for the commands.\nUsage: addonpkg conformance [flags]\n"},
		{[]string{"conformance", "nope"}, 1, "", "addonpkg: conformance: unknown command \"nope\"\nRun 'addonpkg conformance --help' for the commands.\nUsage: addonpkg conformance [flags]\n"},
		{[]string{"conformance"}, 0, "Available Commands:", ""},
	} {
		r := cliRun(t, c.args...)
		if r.code != c.code || r.stderr != c.want || !strings.Contains(r.stdout, c.stdout) {
			t.Errorf("addonpkg %q: exit %d, stdout %.60q, stderr %q; want exit %d, %q", c.args, r.code, r.stdout, r.stderr, c.code, c.want)
		}
	}
}
