package source_test

import (
	"bytes"
	"encoding/pem"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/addonpkg/addonpkg/pkg/registry"
	"github.com/addonpkg/addonpkg/pkg/source"
)

// gitFixture is a work repository with branches, tags and nested add-ons,
// bare copies of it served by git http-backend on 127.0.0.1 (over TLS and
// plain HTTP; private.git behind basic auth), and local repositories.
type gitFixture struct {
	work, root, home string
	https, plain     *httptest.Server
	caFile           string
	// c1 is tagged v1 and light, c2 is an untagged commit in between, c3
	// is main's tip, feat is the feature branch's.
	c1, c2, c3, feat string
}

const (
	gitUser = "alice"
	gitPass = "s3cret"
)

// requireGit finds git and git-http-backend: missing, the test fails
// under CI and is skipped elsewhere.
func requireGit(t testing.TB) string {
	t.Helper()
	fail := func(msg string) {
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	if _, err := exec.LookPath("git"); err != nil {
		fail("git is not installed")
	}
	out, err := exec.Command("git", "--exec-path").Output()
	if err != nil {
		fail("git --exec-path: " + err.Error())
	}
	backend := filepath.Join(strings.TrimSpace(string(out)), "git-http-backend")
	if _, err := os.Stat(backend); err != nil {
		fail("git-http-backend is not installed: " + err.Error())
	}
	return backend
}

// git runs the git CLI in dir with a fixed identity and date.
func (f *gitFixture) git(t testing.TB, dir, date string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"HOME="+f.home, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+filepath.Join(f.home, ".gitconfig"), "LC_ALL=C",
		"GIT_AUTHOR_NAME=Test", "GIT_AUTHOR_EMAIL=test@example.com", "GIT_AUTHOR_DATE="+date,
		"GIT_COMMITTER_NAME=Test", "GIT_COMMITTER_EMAIL=test@example.com", "GIT_COMMITTER_DATE="+date,
	)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, stderr.String())
	}
	return strings.TrimSpace(string(out))
}

func copyDir(t testing.TB, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func writeFile(t testing.TB, p, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

const (
	date1 = "2024-01-02T03:04:05Z"
	date2 = "2024-02-03T04:05:06Z"
	date3 = "2024-03-04T05:06:07Z"
	date4 = "2024-04-05T06:07:08Z"
)

func newGitFixture(t *testing.T) *gitFixture {
	t.Helper()
	backend := requireGit(t)
	tmp := t.TempDir()
	f := &gitFixture{work: filepath.Join(tmp, "work"), root: filepath.Join(tmp, "srv"), home: filepath.Join(tmp, "home")}
	for _, d := range []string{f.work, f.root, f.home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	f.git(t, f.work, date1, "init", "-q", "-b", "main")
	copyDir(t, exampleDir(t, "coredns"), filepath.Join(f.work, "addons", "coredns"))
	copyDir(t, exampleDir(t, "metrics-server"), filepath.Join(f.work, "deploy", "nested", "metrics-server"))
	writeFile(t, filepath.Join(f.work, "README.md"), "# add-ons\n")
	f.git(t, f.work, date1, "add", "-A")
	f.git(t, f.work, date1, "commit", "-q", "-m", "one")
	f.git(t, f.work, date1, "tag", "-a", "v1", "-m", "version 1")
	f.git(t, f.work, date1, "tag", "light")
	f.c1 = f.git(t, f.work, date1, "rev-parse", "HEAD")
	writeFile(t, filepath.Join(f.work, "notes", "two.txt"), "two\n")
	f.git(t, f.work, date2, "add", "-A")
	f.git(t, f.work, date2, "commit", "-q", "-m", "two")
	f.c2 = f.git(t, f.work, date2, "rev-parse", "HEAD")
	writeFile(t, filepath.Join(f.work, "README.md"), "# add-ons, three\n")
	f.git(t, f.work, date3, "commit", "-q", "-am", "three")
	f.c3 = f.git(t, f.work, date3, "rev-parse", "HEAD")
	f.git(t, f.work, date4, "checkout", "-q", "-b", "feature")
	writeFile(t, filepath.Join(f.work, "addons", "coredns", "extra.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: extra\n  namespace: kube-system\n")
	f.git(t, f.work, date4, "add", "-A")
	f.git(t, f.work, date4, "commit", "-q", "-m", "feature")
	f.feat = f.git(t, f.work, date4, "rev-parse", "HEAD")
	f.git(t, f.work, date4, "checkout", "-q", "main")

	for _, name := range []string{"public.git", "private.git"} {
		f.git(t, f.root, date1, "clone", "-q", "--bare", f.work, name)
	}
	// The private server hands out any reachable commit (as GitHub does),
	// the public one only what its refs point at.
	f.git(t, filepath.Join(f.root, "private.git"), date1, "config", "uploadpack.allowReachableSHA1InWant", "true")

	h := &cgi.Handler{Path: backend, Env: []string{
		"GIT_PROJECT_ROOT=" + f.root, "GIT_HTTP_EXPORT_ALL=1", "HOME=" + f.home, "GIT_CONFIG_NOSYSTEM=1",
	}, Stderr: io.Discard}
	mux := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/private.git/") {
			if u, p, ok := r.BasicAuth(); !ok || u != gitUser || p != gitPass {
				w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
				http.Error(w, "unauthorized", http.StatusUnauthorized)
				return
			}
		}
		h.ServeHTTP(w, r)
	})
	f.https = httptest.NewTLSServer(mux)
	t.Cleanup(f.https.Close)
	f.plain = httptest.NewServer(mux)
	t.Cleanup(f.plain.Close)
	f.caFile = filepath.Join(tmp, "ca.pem")
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: f.https.Certificate().Raw})
	if err := os.WriteFile(f.caFile, ca, 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

// httpsURL is the git+https SOURCE of a repository on the TLS server.
func (f *gitFixture) httpsURL(repo string) string {
	return "git+" + f.https.URL + "/" + repo
}

// opts trust the fixture's certificate and read no real netrc or token.
func (f *gitFixture) opts(t testing.TB) source.Options {
	return source.Options{
		Registry: registry.Options{CAFile: f.caFile},
		Timeout:  60 * time.Second,
		Netrc:    filepath.Join(f.home, "no-netrc"),
	}
}

func TestGitSources(t *testing.T) {
	t.Setenv(source.EnvGitToken, "")
	t.Setenv(source.EnvGitUser, "")
	f := newGitFixture(t)
	opts := f.opts(t)
	coredns := resolve(t, exampleDir(t, "coredns"), source.Options{})
	ms := resolve(t, exampleDir(t, "metrics-server"), source.Options{})
	public := f.httpsURL("public.git")

	t.Run("refs", func(t *testing.T) {
		for _, c := range []struct {
			ref, commit, date string
		}{
			{"", f.c3, date3},
			{"main", f.c3, date3},
			{"refs/heads/main", f.c3, date3},
			{"v1", f.c1, date1},
			{"light", f.c1, date1},
			{"feature", f.feat, date4},
			{f.c3, f.c3, date3},
			{f.c1, f.c1, date1},
			{f.c2, f.c2, date2},      // not at any ref: the server lacks allow-reachable-sha1-in-want
			{f.c2[:10], f.c2, date2}, // abbreviated
		} {
			for _, base := range []string{public, "git+file://" + f.work, "git+file://" + filepath.Join(f.root, "public.git")} {
				src := base + "//addons/coredns"
				if c.ref != "" {
					src += "?ref=" + c.ref
				}
				ad := resolve(t, src, opts)
				if ad.Config.Revision != c.commit {
					t.Errorf("%s: revision %s, want %s", src, ad.Config.Revision, c.commit)
				}
				if want := base + "//addons/coredns?ref=" + c.commit; ad.Pinned != want {
					t.Errorf("%s: pinned %q, want %q", src, ad.Pinned, want)
				}
				if ad.Config.Created != c.date {
					t.Errorf("%s: created %q, want the commit time %s", src, ad.Config.Created, c.date)
				}
				if ad.Config.Source != strings.TrimPrefix(base, "git+") || ad.Config.Name != "coredns" {
					t.Errorf("%s: source %q name %q", src, ad.Config.Source, ad.Config.Name)
				}
				if c.commit == f.feat {
					if _, err := ad.FS.Stat("extra.yaml"); err != nil || ad.Identity == coredns.Identity {
						t.Errorf("%s: the feature branch's extra.yaml is missing", src)
					}
				} else {
					sameAsFolder(t, src, ad, coredns)
				}
			}
		}
	})
	t.Run("nested", func(t *testing.T) {
		for _, src := range []string{
			public + "//deploy/nested/metrics-server?ref=v1",
			"git+" + f.plain.URL + "/public.git//deploy/nested/metrics-server/",
			"git+file://" + f.work + "//deploy/nested/metrics-server?ref=" + f.c2,
		} {
			sameAsFolder(t, src, resolve(t, src, opts), ms)
		}
		ad := resolve(t, public+"//deploy/nested/metrics-server/overlays/release", opts)
		if ad.Config.Name != "release" || ad.ContentDir != "/deploy/nested/metrics-server/overlays/release" {
			t.Errorf("name %q content dir %q", ad.Config.Name, ad.ContentDir)
		}
	})
	t.Run("whole repository", func(t *testing.T) {
		ad := resolve(t, public+"?ref=v1", opts)
		if ad.Config.Name != "public" {
			t.Errorf("name %q, want public", ad.Config.Name)
		}
		for _, p := range []string{"README.md", "addons/coredns/coredns.yaml", "deploy/nested/metrics-server/base/deployment.yaml"} {
			if _, err := ad.FS.Stat(p); err != nil {
				t.Errorf("%s missing: %v", p, err)
			}
		}
	})
	t.Run("private", func(t *testing.T) {
		private := f.httpsURL("private.git") + "//addons/coredns"
		err := resolveErr(t, private, opts)
		checkOneLine(t, err, f.https.URL+"/private.git", "authentication required", source.EnvGitToken)

		netrc := filepath.Join(t.TempDir(), "netrc")
		writeFile(t, netrc, "machine 127.0.0.1 login "+gitUser+" password "+gitPass+"\n")
		withNetrc := opts
		withNetrc.Netrc = netrc
		ad := resolve(t, private, withNetrc)
		sameAsFolder(t, "netrc", ad, coredns)
		// A commit no ref points at, fetched by hash (the server allows it).
		sameAsFolder(t, "by hash", resolve(t, private+"?ref="+f.c2, withNetrc), coredns)

		t.Setenv(source.EnvGitToken, gitPass)
		t.Setenv(source.EnvGitUser, gitUser)
		sameAsFolder(t, "token", resolve(t, private+"?ref=v1", opts), coredns)
		t.Setenv(source.EnvGitUser, "")
		checkOneLine(t, resolveErr(t, private, opts), f.https.URL+"/private.git", "authentication required")
		t.Setenv(source.EnvGitToken, "")

		withUser := strings.Replace(private, "https://", "https://"+gitUser+":"+gitPass+"@", 1)
		ad = resolve(t, withUser, opts)
		if strings.Contains(ad.Pinned, gitPass) || strings.Contains(ad.Config.Source, gitPass) {
			t.Errorf("credentials leak: pinned %q source %q", ad.Pinned, ad.Config.Source)
		}
		// Plain http gets no credentials from netrc or the environment.
		plainPrivate := "git+" + f.plain.URL + "/private.git"
		checkOneLine(t, resolveErr(t, plainPrivate, withNetrc), f.plain.URL+"/private.git", "authentication required", "https only")
	})
	t.Run("bad inputs", func(t *testing.T) {
		for _, c := range []struct {
			src   string
			wants []string
		}{
			{public + "?ref=nope", []string{`unknown ref "nope"`}},
			{public + "?ref=" + strings.Repeat("0", 40), []string{"unknown ref"}},
			{"git+file://" + f.work + "?ref=nope", []string{`unknown ref "nope"`}},
			{public + "//no/such/dir", []string{"no directory no/such/dir in commit " + f.c3[:12]}},
			{public + "//README.md", []string{"README.md in commit " + f.c3[:12] + " is not a directory"}},
			{f.httpsURL("missing.git"), []string{"repository not found"}},
			{"git+https://" + closedPort(t) + "/x.git", []string{"connection refused"}},
			{"git+file://" + filepath.Join(f.root, "nothing"), []string{"no repository at"}},
			{"git+file://" + f.home, []string{"is not a git repository"}},
			{"git+http://198.51.100.7/x.git", []string{"plain http:// to 198.51.100.7 is refused"}},
		} {
			err := resolveErr(t, c.src, opts)
			checkOneLine(t, err, repoOf(c.src), c.wants...)
		}
	})
	t.Run("timeout", func(t *testing.T) {
		// The handler takes the connection and never answers: one that
		// returned when its request context ended (net/http may end it early
		// on a busy machine) would send an empty 200 instead of stalling.
		stop := make(chan struct{})
		stall := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			conn, _, err := w.(http.Hijacker).Hijack()
			if err != nil {
				return
			}
			defer conn.Close()
			select {
			case <-stop:
			case <-time.After(30 * time.Second):
			}
		}))
		defer stall.Close()
		defer close(stop)
		quick := opts
		quick.Timeout = time.Second
		src := "git+" + stall.URL + "/x.git"
		start := time.Now()
		checkOneLine(t, resolveErr(t, src, quick), stall.URL, "timed out after 1s")
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("a 1s timeout took %v", d)
		}
	})
}

// repoOf is the repository URL of a remote SOURCE: no //SUBDIR, no query.
func repoOf(src string) string {
	src, _, _ = strings.Cut(src, "?")
	i := strings.Index(src, "://") + 3
	if j := strings.Index(src[i:], "//"); j >= 0 {
		src = src[:i+j]
	}
	return src
}

// TestGitTreeSafety: links inside the tree become their targets' content
// (as for a folder); links that leave it, and submodules, are refused.
func TestGitTreeSafety(t *testing.T) {
	requireGit(t)
	tmp := t.TempDir()
	f := &gitFixture{home: filepath.Join(tmp, "home")}
	os.MkdirAll(f.home, 0o755)
	repo := filepath.Join(tmp, "repo")
	f.git(t, tmp, date1, "init", "-q", "-b", "main", repo)
	// The target is no manifest (a .txt), so that the link's copy is the
	// only Namespace x: two would be refused as duplicates.
	writeFile(t, filepath.Join(repo, "ok", "real.txt"), "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: x\n")
	os.Symlink("real.txt", filepath.Join(repo, "ok", "link.yaml"))
	os.MkdirAll(filepath.Join(repo, "escape"), 0o755)
	writeFile(t, filepath.Join(repo, "escape", "a.yaml"), "a: b\n")
	os.Symlink("../ok/real.txt", filepath.Join(repo, "escape", "link.yaml"))
	writeFile(t, filepath.Join(repo, "ignored", "a.yaml"), "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: y\n")
	writeFile(t, filepath.Join(repo, "ignored", "b.yaml.swp"), "junk")
	writeFile(t, filepath.Join(repo, "ignored", "drafts", "c.yaml"), "junk")
	writeFile(t, filepath.Join(repo, "ignored", ".addonignore"), "drafts/\n")
	f.git(t, repo, date1, "add", "-A")
	f.git(t, repo, date1, "update-index", "--add", "--cacheinfo", "160000,"+strings.Repeat("1", 40)+",mod/sub")
	writeFile(t, filepath.Join(repo, "mod", "a.yaml"), "a: b\n")
	f.git(t, repo, date1, "add", "mod/a.yaml")
	f.git(t, repo, date1, "commit", "-q", "-m", "one")

	base := "git+file://" + repo
	ad := resolve(t, base+"//ok", source.Options{})
	info, err := ad.FS.Lstat("link.yaml")
	if err != nil || !info.Mode().IsRegular() {
		t.Fatalf("link.yaml is not stored as a file: %v %v", info, err)
	}
	folder := resolve(t, filepath.Join(repo, "ok"), source.Options{})
	sameAsFolder(t, "links", ad, folder)

	ign := resolve(t, base+"//ignored", source.Options{})
	sameAsFolder(t, "ignore rules", ign, resolve(t, filepath.Join(repo, "ignored"), source.Options{}))
	if got := fileList(ign); len(got) != 1 || got[0] != "a.yaml" {
		t.Errorf("ignore rules not applied: %v", got)
	}

	err = resolveErr(t, base+"//escape", source.Options{})
	checkOneLine(t, err, repo, "leads out of the tree")
	err = resolveErr(t, base+"//mod", source.Options{})
	checkOneLine(t, err, repo, "mod/sub is a submodule")
	var se *source.Error
	if !errors.As(err, &se) {
		t.Errorf("not a *source.Error: %T", err)
	}
}
