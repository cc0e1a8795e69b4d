package gitinfo_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/addonpkg/addonpkg/internal/gitinfo"
	"github.com/addonpkg/addonpkg/pkg/folder"
	"github.com/addonpkg/addonpkg/pkg/safetree"
)

// git runs the git CLI in dir with a fixed identity and dates, and
// returns its trimmed output.
func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	return gitAt(t, "2024-05-06T07:08:09+02:00", dir, args...)
}

// gitAt is git with the committer date given.
func gitAt(t *testing.T, date, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=a", "GIT_AUTHOR_EMAIL=a@example.com",
		"GIT_COMMITTER_NAME=c", "GIT_COMMITTER_EMAIL=c@example.com",
		"GIT_AUTHOR_DATE=2001-02-03T04:05:06+02:00",
		"GIT_COMMITTER_DATE="+date,
	)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

func needGit(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("git is not installed (hack/install-deps.sh installs it)")
		}
		t.Skip("git is not installed")
	}
}

// newRepo makes a repository with one commit holding addon/a.yaml, and
// returns its directory and HEAD.
func newRepo(t *testing.T) (string, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "repo")
	if err := os.MkdirAll(filepath.Join(dir, "addon"), 0o755); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "init", "-q", "-b", "main")
	if err := os.WriteFile(filepath.Join(dir, "addon", "a.yaml"), []byte("kind: ConfigMap\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "add", ".")
	git(t, dir, "commit", "-q", "-m", "one")
	return dir, git(t, dir, "rev-parse", "HEAD")
}

// read is gitinfo.Read of a folder, with the tree a build packages of it
// (folder.Open: the ignore rules applied), or of a file.
func read(t *testing.T, p string) (*gitinfo.Info, error) {
	t.Helper()
	st, err := os.Stat(p)
	if err != nil || !st.IsDir() {
		return gitinfo.Read(p, nil)
	}
	tree, err := folder.Open(p, safetree.Limits{})
	if errors.Is(err, folder.ErrEmpty) {
		return gitinfo.Read(p, fstest.MapFS{})
	}
	if err != nil {
		t.Fatal(err)
	}
	defer tree.Close()
	return gitinfo.Read(p, tree)
}

// The committer time of the fixture's commits, in UTC.
var committed = time.Date(2024, 5, 6, 5, 8, 9, 0, time.UTC)

func TestRead(t *testing.T) {
	needGit(t)
	for _, c := range []struct {
		name   string
		origin string // "" for no origin remote
		want   string // Info.URL
	}{
		{"no origin", "", ""},
		{"https origin", "https://git.example.com/org/addons.git", "https://git.example.com/org/addons.git"},
		{"credentials removed", "https://alice:s3cret@git.example.com/org/addons.git", "https://git.example.com/org/addons.git"},
		{"token user removed", "https://x-access-token:ghp_abc@git.example.com/org/addons", "https://git.example.com/org/addons"},
		{"ssh URL user removed", "ssh://git@git.example.com/org/addons.git", "ssh://git.example.com/org/addons.git"},
		{"scp-like kept as written", "git@git.example.com:org/addons.git", "git@git.example.com:org/addons.git"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir, head := newRepo(t)
			git(t, dir, "remote", "add", "upstream", "https://other.example.com/fork.git")
			if c.origin != "" {
				git(t, dir, "remote", "add", "origin", c.origin)
			}
			// From the root, and from a folder below it.
			for _, p := range []string{dir, filepath.Join(dir, "addon")} {
				got, err := read(t, p)
				if err != nil {
					t.Fatal(err)
				}
				want := gitinfo.Info{URL: c.want, Commit: head, Time: committed}
				if got == nil || *got != want {
					t.Errorf("Read(%s) = %+v, want %+v", p, got, want)
				}
			}
		})
	}
}

// HEAD as the work tree has it: a later commit, a detached HEAD, a
// linked work tree; and nothing outside a repository or before a commit.
func TestReadHead(t *testing.T) {
	needGit(t)
	t.Run("later commit", func(t *testing.T) {
		dir, first := newRepo(t)
		if err := os.WriteFile(filepath.Join(dir, "addon", "b.yaml"), []byte("kind: Secret\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		git(t, dir, "add", ".")
		gitAt(t, "2025-01-01T00:00:00Z", dir, "commit", "-q", "-m", "two")
		head := git(t, dir, "rev-parse", "HEAD")
		if head == first {
			t.Fatal("no new commit")
		}
		got, err := read(t, dir)
		if err != nil || got == nil || got.Commit != head || !got.Time.Equal(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)) {
			t.Errorf("got %+v, %v; want %s at 2025-01-01", got, err, head)
		}
	})
	t.Run("detached HEAD", func(t *testing.T) {
		dir, first := newRepo(t)
		git(t, dir, "commit", "-q", "--allow-empty", "-m", "two")
		git(t, dir, "checkout", "-q", "--detach", first)
		got, err := read(t, dir)
		if err != nil || got == nil || got.Commit != first {
			t.Errorf("got %+v, %v; want %s", got, err, first)
		}
	})
	t.Run("linked work tree", func(t *testing.T) {
		dir, first := newRepo(t)
		git(t, dir, "remote", "add", "origin", "https://git.example.com/org/addons.git")
		git(t, dir, "commit", "-q", "--allow-empty", "-m", "two on main")
		wt := filepath.Join(t.TempDir(), "wt")
		git(t, dir, "worktree", "add", "-q", "--detach", wt, first)
		got, err := read(t, filepath.Join(wt, "addon"))
		want := gitinfo.Info{URL: "https://git.example.com/org/addons.git", Commit: first, Time: committed}
		if err != nil || got == nil || *got != want {
			t.Errorf("got %+v, %v; want %+v", got, err, want)
		}
	})
	t.Run("not a repository", func(t *testing.T) {
		got, err := read(t, t.TempDir())
		if err != nil || got != nil {
			t.Errorf("got %+v, %v; want nil, nil", got, err)
		}
	})
	t.Run("no commit yet", func(t *testing.T) {
		dir := t.TempDir()
		git(t, dir, "init", "-q")
		got, err := read(t, dir)
		if err != nil || got != nil {
			t.Errorf("got %+v, %v; want nil, nil", got, err)
		}
	})
	t.Run("HEAD names a missing commit", func(t *testing.T) {
		dir, _ := newRepo(t)
		head := filepath.Join(dir, ".git", "refs", "heads", "main")
		if err := os.WriteFile(head, []byte(strings.Repeat("ab", 20)+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if got, err := read(t, dir); err == nil {
			t.Errorf("got %+v, nil; want an error", got)
		}
	})
}

// issue 25: a folder is stamped with the last commit that changed it, and
// only when it is what that commit holds; otherwise with nothing, so that
// its build is the same whatever else the repository does.
func TestReadOnlyTheFolder(t *testing.T) {
	needGit(t)
	write := func(t *testing.T, p, s string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want := func(t *testing.T, p, commit string) {
		t.Helper()
		got, err := read(t, p)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case commit == "" && got != nil:
			t.Errorf("Read(%s) = %+v, want no stamp", p, got)
		case commit != "" && (got == nil || got.Commit != commit || !got.Time.Equal(committed)):
			t.Errorf("Read(%s) = %+v, want %s at %v", p, got, commit, committed)
		}
	}
	t.Run("commits elsewhere keep the stamp", func(t *testing.T) {
		dir, first := newRepo(t)
		write(t, filepath.Join(dir, "other", "x.txt"), "x\n")
		git(t, dir, "add", ".")
		gitAt(t, "2025-01-01T00:00:00Z", dir, "commit", "-q", "-m", "elsewhere")
		gitAt(t, "2025-02-01T00:00:00Z", dir, "commit", "-q", "--allow-empty", "-m", "empty")
		want(t, filepath.Join(dir, "addon"), first)
		want(t, filepath.Join(dir, "addon", "a.yaml"), first)
	})
	t.Run("an untracked folder of another repository", func(t *testing.T) {
		dir, _ := newRepo(t)
		write(t, filepath.Join(dir, "mine", "a.yaml"), "kind: ConfigMap\n")
		want(t, filepath.Join(dir, "mine"), "")
		want(t, filepath.Join(dir, "mine", "a.yaml"), "")
	})
	t.Run("an untracked file", func(t *testing.T) {
		dir, _ := newRepo(t)
		write(t, filepath.Join(dir, "addon", "new.yaml"), "kind: Secret\n")
		want(t, filepath.Join(dir, "addon"), "")
	})
	t.Run("an untracked empty directory", func(t *testing.T) {
		dir, _ := newRepo(t)
		if err := os.Mkdir(filepath.Join(dir, "addon", "empty"), 0o755); err != nil {
			t.Fatal(err)
		}
		want(t, filepath.Join(dir, "addon"), "")
	})
	t.Run("a modified file", func(t *testing.T) {
		dir, _ := newRepo(t)
		write(t, filepath.Join(dir, "addon", "a.yaml"), "kind: Secret\n")
		want(t, filepath.Join(dir, "addon"), "")
		want(t, filepath.Join(dir, "addon", "a.yaml"), "")
	})
	t.Run("a staged change", func(t *testing.T) {
		dir, _ := newRepo(t)
		write(t, filepath.Join(dir, "addon", "a.yaml"), "kind: Secret\n")
		git(t, dir, "add", ".")
		want(t, filepath.Join(dir, "addon"), "")
	})
	t.Run("a mode change", func(t *testing.T) {
		dir, _ := newRepo(t)
		if err := os.Chmod(filepath.Join(dir, "addon", "a.yaml"), 0o755); err != nil {
			t.Fatal(err)
		}
		want(t, filepath.Join(dir, "addon"), "")
	})
	t.Run("a deleted file", func(t *testing.T) {
		dir, _ := newRepo(t)
		write(t, filepath.Join(dir, "addon", "b.yaml"), "kind: Secret\n")
		git(t, dir, "add", ".")
		git(t, dir, "commit", "-q", "-m", "two")
		if err := os.Remove(filepath.Join(dir, "addon", "b.yaml")); err != nil {
			t.Fatal(err)
		}
		want(t, filepath.Join(dir, "addon"), "")
	})
	t.Run("files the ignore rules leave out do not count", func(t *testing.T) {
		dir, first := newRepo(t)
		write(t, filepath.Join(dir, "addon", ".a.yaml.swp"), "editor state")
		want(t, filepath.Join(dir, "addon"), first)
	})
	t.Run("a change and its revert", func(t *testing.T) {
		dir, _ := newRepo(t)
		write(t, filepath.Join(dir, "addon", "a.yaml"), "kind: Secret\n")
		git(t, dir, "commit", "-q", "-am", "change")
		write(t, filepath.Join(dir, "addon", "a.yaml"), "kind: ConfigMap\n")
		git(t, dir, "commit", "-q", "-am", "revert")
		want(t, filepath.Join(dir, "addon"), git(t, dir, "rev-parse", "HEAD"))
	})
}
