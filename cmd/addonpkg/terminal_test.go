package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/spf13/cobra"
	"k8s.io/klog/v2"

	"github.com/addonpkg/addonpkg/internal/testing/testregistry"
	"github.com/addonpkg/addonpkg/pkg/layout"
	"github.com/addonpkg/addonpkg/pkg/output"
)

// The person at the terminal: each mistake a newcomer makes gets one
// line in addonpkg's words (plus the usage line for a command-line
// mistake) and the right exit code. These tests run the CLI in-process
// (execute, as run does) against real registries on 127.0.0.1.

// termRun runs the CLI with stdin, after setup may adjust the shared
// options (a transport that resolves no host name).
func termRun(t *testing.T, ctx context.Context, stdin string, setup func(*app), args ...string) cliOutcome {
	t.Helper()
	var stdout, stderr bytes.Buffer
	root, a := newRoot(strings.NewReader(stdin), &stdout, &stderr)
	a.storeDir = cliHomeOf(t)
	if setup != nil {
		setup(a)
	}
	code := execute(ctx, root, a, args)
	return cliOutcome{code, stdout.String(), stderr.String()}
}

// noDNS is a transport whose resolver asks a DNS server on a closed
// 127.0.0.1 port: every host name fails to resolve, and no query leaves
// the machine.
func noDNS(a *app) {
	d := &net.Dialer{}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = nil
	tr.DialContext = (&net.Dialer{Resolver: &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return d.DialContext(ctx, "tcp", "127.0.0.1:1")
	}}}).DialContext
	a.reg.Transport = tr
}

// closedAddr is a 127.0.0.1 address nothing listens on.
func closedAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// termHome is a fresh store and docker config.
func termHome(t *testing.T) {
	t.Helper()
	cliNewHome(t)
	t.Setenv("DOCKER_CONFIG", t.TempDir())
	for _, k := range []string{"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY", "all_proxy"} {
		t.Setenv(k, "")
	}
}

func TestTerminalMistakes(t *testing.T) {
	termHome(t)
	plain := testregistry.Start(t, testregistry.Options{})
	auth := testregistry.Start(t, testregistry.Options{Mode: testregistry.BasicAuth})
	cliMust(t, "build", cliExampleDir("coredns"), "-t", "coredns:1.11", "-t", "gone:1")
	repo := plain.Host + "/addons/coredns"
	cliMust(t, "push", "coredns:1.11", repo+":1.11")
	cliMust(t, "push", "coredns:1.11", repo+":1.10")
	down := closedAddr(t)
	canceled, cancel := context.WithCancel(context.Background())
	cancel()

	for _, tc := range []struct {
		name   string
		ctx    context.Context
		setup  func(*app)
		args   []string
		code   int
		stderr string // exact
		stdout string // prefix
	}{
		{name: "wrong tag", args: []string{"pull", repo + ":1.12"}, code: 1,
			stderr: "addonpkg: " + repo + ":1.12: tag 1.12 not found in " + repo + "; tags there: 1.11, 1.10\n"},
		{name: "wrong repository", args: []string{"pull", plain.Host + "/addons/nosuch:1"}, code: 1,
			stderr: "addonpkg: " + plain.Host + "/addons/nosuch:1: repository " + plain.Host + "/addons/nosuch not found; check the registry and repository name\n"},
		{name: "wrong host", setup: noDNS, args: []string{"pull", "registry.nosuch.example/addons/coredns:1.11", "--retries", "-1"}, code: 1,
			stderr: "addonpkg: registry.nosuch.example/addons/coredns:1.11: cannot resolve host registry.nosuch.example; check the registry's host name\n"},
		{name: "unreachable port", args: []string{"pull", down + "/addons/coredns:1.11", "--retries", "-1"}, code: 1,
			stderr: "addonpkg: " + down + "/addons/coredns:1.11: cannot connect to " + down + " (connection refused); check the host and port, and that the registry is running\n"},
		{name: "401", args: []string{"pull", auth.Host + "/addons/coredns:1.11"}, code: 1,
			stderr: "addonpkg: " + auth.Host + "/addons/coredns:1.11: authentication required; run 'addonpkg login " + auth.Host + "'\n"},
		{name: "401 on ls", args: []string{"ls", auth.Host + "/addons/coredns"}, code: 1,
			stderr: "addonpkg: " + auth.Host + "/addons/coredns: authentication required; run 'addonpkg login " + auth.Host + "'\n"},
		{name: "missing argument", args: []string{"pull"}, code: 1,
			stderr: "addonpkg: pull: missing argument REF\nUsage: addonpkg pull REF [flags]\n"},
		{name: "missing arguments", args: []string{"tag"}, code: 1,
			stderr: "addonpkg: tag: missing arguments SRC DST\nUsage: addonpkg tag SRC DST [flags]\n"},
		{name: "extra argument", args: []string{"inspect", "a:1", "b:1"}, code: 1,
			stderr: "addonpkg: inspect: unexpected argument \"b:1\" (inspect takes SOURCE)\nUsage: addonpkg inspect SOURCE [flags]\n"},
		{name: "unknown flag", args: []string{"images", "--nosuchflag"}, code: 1,
			stderr: "addonpkg: images: unknown flag: --nosuchflag\nUsage: addonpkg images [flags]\n"},
		{name: "unknown command", args: []string{"biuld"}, code: 1,
			stderr: "addonpkg: unknown command \"biuld\"\nDid you mean this?\n    addonpkg build\nRun 'addonpkg --help' for the commands.\n"},
		{name: "tag on ls", args: []string{"ls", repo + ":1.11"}, code: 1,
			stderr: "addonpkg: ls: \"" + repo + ":1.11\" names a tag or digest; drop \":1.11\" to list the tags of " + repo + "\nUsage: addonpkg ls REGISTRY/REPO [flags]\n"},
		{name: "ls", args: []string{"ls", repo}, code: 0, stdout: "1.10\n1.11\n"},
		{name: "build without -t", args: []string{"build", cliExampleDir("coredns")}, code: 0,
			stderr: "tagged coredns:latest in the local store (no -t given; name it with -t NAME:TAG)\n", stdout: "sha256:"},
		{name: "build with -t", args: []string{"build", cliExampleDir("coredns"), "-t", "coredns:x"}, code: 0, stdout: "sha256:"},
		{name: "rm", args: []string{"rm", "gone:1"}, code: 0,
			stderr: "removed gone:1 (its blobs go with 'addonpkg gc')\n"},
		{name: "diff missing argument", args: []string{"diff", "coredns:1.11"}, code: 2,
			stderr: "addonpkg: diff: missing argument B (or --cluster, to compare A with the cluster)\nUsage: addonpkg diff A [B] [flags]\n"},
		{name: "diff error", args: []string{"diff", "coredns:1.11", "nosuch:1", "--pull", "never"}, code: 2},
		{name: "interrupt", ctx: canceled, args: []string{"pull", repo + ":1.11"}, code: 130,
			stderr: "addonpkg: interrupted\n"},
		{name: "interrupted diff", ctx: canceled, args: []string{"diff", repo + ":1.11", repo + ":1.10", "--pull", "always"}, code: 130,
			stderr: "addonpkg: interrupted\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := tc.ctx
			if ctx == nil {
				ctx = context.Background()
			}
			r := termRun(t, ctx, "", tc.setup, tc.args...)
			if r.code != tc.code {
				t.Errorf("exit %d, want %d", r.code, tc.code)
			}
			if tc.stderr != "" && r.stderr != tc.stderr {
				t.Errorf("stderr:\n%s\nwant:\n%s", r.stderr, tc.stderr)
			}
			if tc.code != 0 && tc.stderr == "" && (!strings.HasPrefix(r.stderr, "addonpkg: ") || strings.Count(r.stderr, "\n") != 1) {
				t.Errorf("stderr is not one 'addonpkg: ' line: %q", r.stderr)
			}
			if !strings.HasPrefix(r.stdout, tc.stdout) || (tc.stdout == "" && r.stdout != "") {
				t.Errorf("stdout %q, want %q...", r.stdout, tc.stdout)
			}
		})
	}
	// What build without -t tagged is there.
	names := map[string]bool{}
	for _, row := range cliImagesJSON(t) {
		names[row.Name] = true
	}
	if !names["coredns:latest"] || names["gone:1"] {
		t.Errorf("store holds %v: want coredns:latest and no gone:1", names)
	}
}

// --verbose logs every request and response line, never a credential,
// and adds the registry's own words to an error.
func TestTerminalVerbose(t *testing.T) {
	termHome(t)
	r := testregistry.Start(t, testregistry.Options{Mode: testregistry.BasicAuth})
	if out := termRun(t, context.Background(), r.Password+"\n", nil, "login", r.Host, "-u", r.Username, "--password-stdin"); out.code != 0 {
		t.Fatalf("login: %+v", out)
	}
	cliMust(t, "build", cliExampleDir("coredns"), "-t", "coredns:1.11")
	ref := r.Host + "/addons/coredns:1.11"
	cliMust(t, "push", "coredns:1.11", ref)

	ok := termRun(t, context.Background(), "", nil, "--verbose", "pull", ref)
	if ok.code != 0 {
		t.Fatalf("pull: %+v", ok)
	}
	for _, w := range []string{
		"addonpkg: > GET http://" + r.Host + "/v2/\n",
		"addonpkg: < 401 Unauthorized GET http://" + r.Host + "/v2/",
		"addonpkg: > HEAD http://" + r.Host + "/v2/addons/coredns/manifests/1.11\n",
		"addonpkg: < 200 OK HEAD http://" + r.Host + "/v2/addons/coredns/manifests/1.11",
		"addonpkg: > GET http://" + r.Host + "/v2/addons/coredns/blobs/sha256:",
	} {
		if !strings.Contains(ok.stderr, w) {
			t.Errorf("-v pull: stderr does not contain %q:\n%s", w, ok.stderr)
		}
	}
	basic := base64.StdEncoding.EncodeToString([]byte(r.Username + ":" + r.Password))
	for _, secret := range []string{r.Password, basic, "Authorization"} {
		if strings.Contains(ok.stderr+ok.stdout, secret) {
			t.Errorf("-v pull shows %q:\n%s", secret, ok.stderr)
		}
	}

	// -v is --verbose; the raw answer comes after the message.
	bad := termRun(t, context.Background(), "", nil, "-v", "pull", r.Host+"/addons/coredns:9")
	lines := strings.Split(strings.TrimSuffix(bad.stderr, "\n"), "\n")
	if bad.code != 1 || len(lines) < 2 {
		t.Fatalf("-v pull of a missing tag: %+v", bad)
	}
	if want := "addonpkg: " + r.Host + "/addons/coredns:9: tag 9 not found in " + r.Host + "/addons/coredns; tags there: 1.11"; lines[len(lines)-2] != want {
		t.Errorf("message %q, want %q", lines[len(lines)-2], want)
	}
	if l := lines[len(lines)-1]; !strings.HasPrefix(l, "addonpkg: detail: HEAD http://"+r.Host+"/v2/addons/coredns/manifests/9: unexpected status code 404") {
		t.Errorf("last line %q, want the registry's own answer", l)
	}
	// Without -v, neither requests nor the raw answer.
	quiet := termRun(t, context.Background(), "", nil, "pull", r.Host+"/addons/coredns:9")
	if strings.Count(quiet.stderr, "\n") != 1 {
		t.Errorf("pull without -v: %q", quiet.stderr)
	}
}

func TestTerminalVersion(t *testing.T) {
	t.Parallel()
	cliNewHome(t)
	info := readBuildInfo()
	want := fmt.Sprintf("addonpkg %s (commit %s, %s, %s/%s)\n", info.Version, info.Commit, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	if got := cliMust(t, "--version"); got != want {
		t.Errorf("--version: %q, want %q", got, want)
	}
	var got buildInfo
	if err := json.Unmarshal([]byte(cliMust(t, "version", "--json")), &got); err != nil {
		t.Fatal(err)
	}
	if got != info || got.GoVersion != runtime.Version() || got.Platform != runtime.GOOS+"/"+runtime.GOARCH || got.Version == "" || got.Commit == "" {
		t.Errorf("version --json: %+v, want %+v", got, info)
	}
	text := cliMust(t, "version")
	for _, w := range []string{"version:  " + info.Version + "\n", "commit:   " + info.Commit + "\n", "go:       " + runtime.Version() + "\n"} {
		if !strings.Contains(text, w) {
			t.Errorf("version: %q does not contain %q", text, w)
		}
	}
}

// A binary built with make build's flags reports what they stamp. The
// link leaves out the symbol table and DWARF (-s -w, as make image
// links): the stamp does not live there, and writing them made the link
// of the 110 MB binary about a third slower.
func TestTerminalVersionStamped(t *testing.T) {
	t.Parallel()
	bin := filepath.Join(t.TempDir(), "addonpkg")
	cmd := exec.Command("go", "build", "-ldflags", "-s -w -X main.version=v9.8.7 -X main.commit=0123456789abcdef", "-o", bin, ".")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "version", "--json").Output()
	if err != nil {
		t.Fatal(err)
	}
	var got buildInfo
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	if got.Version != "v9.8.7" || got.Commit != "0123456789abcdef" {
		t.Errorf("stamped binary says %+v", got)
	}
}

// A crash in a command is one line and exit 1 (2 for a command whose
// errors exit 2, as diff's do), after the command's deferred clean-up
// ran: no Go trace, no temp directory.
func TestTerminalCrash(t *testing.T) {
	cliNewHome(t)
	out := filepath.Join(t.TempDir(), "out")
	for _, tc := range []struct {
		name string
		code int
	}{{"boom", 1}, {"boom2", exitDiffError}} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			root, a := newRoot(strings.NewReader(""), &stdout, &stderr)
			c := &cobra.Command{Use: tc.name, RunE: func(*cobra.Command, []string) error {
				w, err := output.NewWriter(out)
				if err != nil {
					return err
				}
				defer w.Abort()
				var m map[string]int
				//lint:ignore SA5000 a nil map: the kind of bug a crash is
				m["crash"]++
				return nil
			}}
			if tc.code != exitError {
				a.exitOnError(c, tc.code)
			}
			root.AddCommand(c)
			code := execute(context.Background(), root, a, []string{tc.name})
			if code != tc.code {
				t.Errorf("exit %d, want %d", code, tc.code)
			}
			want := "addonpkg: internal error: assignment to entry in nil map (this is a bug in addonpkg: please report it with the command line; --verbose prints where it happened)\n"
			if stderr.String() != want {
				t.Errorf("stderr %q\nwant %q", stderr.String(), want)
			}
			entries, err := os.ReadDir(filepath.Dir(out))
			if err != nil || len(entries) != 0 {
				t.Errorf("left behind: %v %v", entries, err)
			}
		})
	}
	// --verbose adds where it happened: the stack, sanitized.
	var stderr bytes.Buffer
	root, a := newRoot(strings.NewReader(""), io.Discard, &stderr)
	root.AddCommand(&cobra.Command{Use: "boom", RunE: func(*cobra.Command, []string) error { panic("bad\x1b[2Jvalue") }})
	if code := execute(context.Background(), root, a, []string{"boom", "-v"}); code != 1 {
		t.Errorf("exit %d", code)
	}
	lines := strings.Split(stderr.String(), "\n")
	if lines[0] != "addonpkg: internal error: bad?[2Jvalue (this is a bug in addonpkg: please report it with the command line)" || !strings.Contains(stderr.String(), "TestTerminalCrash") || strings.Contains(stderr.String(), "\x1b") {
		t.Errorf("-v: %q", stderr.String())
	}
}

// Control characters from a registry, a file name or image metadata never
// reach the terminal raw; JSON escapes them.
func TestTerminalEscapes(t *testing.T) {
	termHome(t)
	const evil = "\x1b]0;pwned\x07\x1b[2J\u009b31m"
	hasControl := func(s string) bool {
		for _, r := range s {
			if (r < 0x20 && r != '\n' && r != '\t') || (r >= 0x7f && r <= 0x9f) {
				return true
			}
		}
		return false
	}

	t.Run("registry error", func(t *testing.T) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			msg, _ := json.Marshal("bad" + evil)
			fmt.Fprintf(w, `{"errors":[{"code":"WEIRD","message":%s}]}`, msg)
		}))
		defer srv.Close()
		host := strings.TrimPrefix(srv.URL, "http://")
		r := termRun(t, context.Background(), "", nil, "pull", host+"/x:1", "--retries", "-1")
		if r.code != 1 || hasControl(r.stderr) || !strings.Contains(r.stderr, "bad?]0;pwned") {
			t.Errorf("exit %d, stderr %q", r.code, r.stderr)
		}
	})

	t.Run("--list file names", func(t *testing.T) {
		layer := hostileCLIOne(t, hostileCLIFile("addon/cm"+evil+".yaml", configMapYAML("x")))
		dir := hostileCLIWrite(t, filepath.Join(t.TempDir(), "layout"), hostileCLIImage(t, layer))
		r := termRun(t, context.Background(), "", nil, "unpack", "oci:"+dir+":t", "--list")
		if hasControl(r.stdout) || hasControl(r.stderr) {
			t.Errorf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
		}
		if r.code == 0 && !strings.Contains(r.stdout, "cm?]0;pwned??[2J?31m.yaml") {
			t.Errorf("--list: %q", r.stdout)
		}
		j := termRun(t, context.Background(), "", nil, "unpack", "oci:"+dir+":t", "--json")
		if hasControl(j.stdout) || (j.code == 0 && !strings.Contains(j.stdout, `\u001b]0;pwned\u0007`)) {
			t.Errorf("--json: exit %d, stdout %q", j.code, j.stdout)
		}
	})

	t.Run("inspect platforms", func(t *testing.T) {
		img := hostileCLIImage(t, hostileCLIOne(t, hostileCLIFile("addon/cm.yaml", configMapYAML("x"))))
		idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
		idx = mutate.AppendManifests(idx,
			mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: runtime.GOOS, Architecture: runtime.GOARCH}}},
			mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux" + evil, Architecture: "arm64"}}},
		)
		st, err := layout.Init(filepath.Join(t.TempDir(), "layout"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.WriteIndex(context.Background(), idx, nil, "t"); err != nil {
			t.Fatal(err)
		}
		r := termRun(t, context.Background(), "", nil, "inspect", "oci:"+st.Dir()+":t")
		if r.code != 0 || hasControl(r.stdout) || !strings.Contains(r.stdout, "linux?]0;pwned") {
			t.Errorf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
		}
		j := termRun(t, context.Background(), "", nil, "inspect", "oci:"+st.Dir()+":t", "--json")
		if j.code != 0 || hasControl(j.stdout) || !strings.Contains(j.stdout, `linux\u001b]0;pwned\u0007`) {
			t.Errorf("--json: exit %d, stdout %q", j.code, j.stdout)
		}
	})
}

func configMapYAML(name string) string {
	return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name + "\ndata:\n  k: v\n"
}

// Ctrl-C: a real SIGINT to a real process stuck on a registry that never
// answers. It exits 130 after removing what it had started to write.
func TestTerminalInterrupt(t *testing.T) {
	bin := binary(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	home := t.TempDir()
	parent := t.TempDir()
	out := filepath.Join(parent, "out")
	cmd := exec.Command(bin, "unpack", l.Addr().String()+"/addons/x:1", "-o", out)
	cmd.Env = append(os.Environ(), "ADDONPKG_HOME="+filepath.Join(home, "store"), "DOCKER_CONFIG="+home, "NO_PROXY=127.0.0.1", "no_proxy=127.0.0.1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	accepted := make(chan net.Conn, 1)
	go func() {
		if c, err := l.Accept(); err == nil {
			accepted <- c
		}
	}()
	select {
	case c := <-accepted: // the request is on its way: interrupt it
		defer c.Close()
		if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
			t.Fatal(err)
		}
		err = <-exited
	case err = <-exited:
		t.Fatalf("exited before connecting: %v\n%s", err, stderr.String())
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Errorf("exit: %v, want 130", err)
	}
	if stderr.String() != "addonpkg: interrupted\n" || stdout.Len() != 0 {
		t.Errorf("stdout %q, stderr %q", stdout.String(), stderr.String())
	}
	if entries, err := os.ReadDir(parent); err != nil || len(entries) != 0 {
		t.Errorf("left behind in %s: %v %v", parent, entries, err)
	}
}

// client-go's klog lines ("Unexpected error when reading response body"
// when a request is cancelled) reach stderr only with -v; without it the
// command's own one line is all there is.
func TestKlogOnlyWithVerbose(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := os.Stderr
	os.Stderr = w
	t.Cleanup(func() { os.Stderr = stderr })

	quiet := termRun(t, context.Background(), "", nil, "version")
	klog.ErrorS(errors.New("context canceled"), "Unexpected error when reading response body")
	klog.Flush()
	verbose := termRun(t, context.Background(), "", nil, "version", "-v")
	root, a := newRoot(strings.NewReader(""), &bytes.Buffer{}, &bytes.Buffer{})
	var verboseErr bytes.Buffer
	a.stderr = &verboseErr
	if code := execute(context.Background(), root, a, []string{"version", "-v"}); code != 0 {
		t.Fatalf("version -v: exit %d", code)
	}
	klog.ErrorS(errors.New("context canceled"), "Unexpected error when reading response body")
	klog.Flush()
	os.Stderr = stderr
	w.Close()
	leaked, _ := io.ReadAll(r)

	if quiet.stderr != "" || verbose.code != 0 || len(leaked) != 0 {
		t.Errorf("without -v klog wrote %q to the process's stderr and %q to the command's", leaked, quiet.stderr)
	}
	if !strings.Contains(verboseErr.String(), "Unexpected error when reading response body") {
		t.Errorf("with -v the command's stderr has no klog line: %q", verboseErr.String())
	}
}
