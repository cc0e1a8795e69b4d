package addonset_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/addonpkg/addonpkg/pkg/addonset"
	"github.com/addonpkg/addonpkg/pkg/build"
	"github.com/addonpkg/addonpkg/pkg/layout"
	"github.com/addonpkg/addonpkg/pkg/pack"
	"github.com/addonpkg/addonpkg/pkg/source"
	sourcegit "github.com/addonpkg/addonpkg/pkg/source/git"
)

// withGit are set options that read git sources too, as the command
// line's do (source.Options.Locations).
var withGit = addonset.Options{Source: source.Options{Locations: []source.Location{sourcegit.Location{}}}}

// gitRepo makes a repository with one commit per value, each holding a
// ConfigMap with that value; it returns the commits in order.
func gitRepo(t *testing.T, dir string, values ...string) []string {
	t.Helper()
	repo, err := git.PlainInit(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	wt, err := repo.Worktree()
	if err != nil {
		t.Fatal(err)
	}
	var commits []string
	for i, v := range values {
		cm := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  value: " + v + "\n"
		if err := os.WriteFile(filepath.Join(dir, "cm.yaml"), []byte(cm), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := wt.Add("cm.yaml"); err != nil {
			t.Fatal(err)
		}
		sig := &object.Signature{Name: "t", Email: "t@example.com", When: time.Unix(int64(1700000000+i), 0)}
		h, err := wt.Commit("value "+v, &git.CommitOptions{Author: sig, Committer: sig})
		if err != nil {
			t.Fatal(err)
		}
		commits = append(commits, h.String())
	}
	return commits
}

// layoutOf writes one add-on per value into an OCI layout; it returns the
// manifest digests in order.
func layoutOf(t *testing.T, dir string, values ...string) []string {
	t.Helper()
	st, err := layout.Init(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, v := range values {
		cm := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  value: " + v + "\n"
		res, err := build.Build(context.Background(), fstest.MapFS{"cm.yaml": {Data: []byte(cm), Mode: 0o644}}, build.Options{Name: "cm", Format: pack.FormatArtifact})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.WriteImage(context.Background(), res.Image, nil, v); err != nil {
			t.Fatal(err)
		}
		out = append(out, res.Digest.String())
	}
	return out
}

// TestLockCannotRedirectMember is issue 25's high finding: a member
// declared by digest, tag, version range, git commit or layout digest,
// whose lock entry is replaced by another set's entry for the same place
// (other content) with the declaration's entry digest kept. Check, render
// and mirror must refuse it, and lock must resolve the member again
// (spec/addon-set-v1.md 4.4.2).
func TestLockCannotRedirectMember(t *testing.T) {
	ctx := context.Background()
	reg := memRegistry(t)
	a1 := push(t, reg+"/set/a:1", "one")
	a2 := push(t, reg+"/set/a:2", "two")
	push(t, reg+"/set/a:1.0.0", "one")
	push(t, reg+"/set/a:2.0.0", "two")
	gitDir := t.TempDir()
	commits := gitRepo(t, gitDir, "one", "two")
	layoutDir := t.TempDir()
	ld := layoutOf(t, layoutDir, "one", "two")

	for _, tc := range []struct {
		name          string
		declared, alt string // member entries: the set reviewed, the other set
	}{
		{"registry digest", "source: " + reg + "/set/a@" + a1, "source: " + reg + "/set/a@" + a2},
		{"registry tag", "source: " + reg + "/set/a:1", "source: " + reg + "/set/a:2"},
		{"version range", "source: " + reg + "/set/a\n  version: \"~1\"", "source: " + reg + "/set/a\n  version: \"~2\""},
		{"git commit", "source: git+file://" + gitDir + "?ref=" + commits[0], "source: git+file://" + gitDir + "?ref=" + commits[1]},
		{"layout digest", "source: oci:" + layoutDir + "@" + ld[0], "source: oci:" + layoutDir + "@" + ld[1]},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := writeDecl(t, t.TempDir(), "- name: a\n  "+tc.declared+"\n")
			good := must(addonset.Lock(ctx, s, addonset.LockOptions{Options: withGit}))
			if err := addonset.Check(ctx, s, good, withGit); err != nil {
				t.Fatalf("check of the right lock: %v", err)
			}
			other := must(addonset.Lock(ctx, writeDecl(t, t.TempDir(), "- name: a\n  "+tc.alt+"\n"), addonset.LockOptions{Options: withGit}))
			if other.Addons[0].Identity == good.Addons[0].Identity {
				t.Fatal("the other set's member has the same content: the test proves nothing")
			}
			bad := *other
			bad.Addons = []addonset.Locked{other.Addons[0]}
			bad.Addons[0].Entry = good.Addons[0].Entry
			bad.Addons[0].Source = good.Addons[0].Source

			err := addonset.Check(ctx, s, &bad, withGit)
			if !errors.Is(err, addonset.ErrLockRedirected) || !errors.Is(err, addonset.ErrLockStale) {
				t.Errorf("check of the redirected lock: %v, want addonset.ErrLockRedirected, which matches ErrLockStale", err)
			}
			if _, err := addonset.Render(ctx, s, addonset.RenderOptions{Options: withGit, Lock: &bad}); !errors.Is(err, addonset.ErrLockStale) {
				t.Errorf("render of the redirected lock: %v, want addonset.ErrLockStale", err)
			}
			_, err = addonset.Mirror(ctx, s, addonset.MirrorOptions{Options: withGit, Lock: &bad, To: "oci-archive:" + filepath.Join(t.TempDir(), "m.tar")})
			if !errors.Is(err, addonset.ErrLockStale) {
				t.Errorf("mirror of the redirected lock: %v, want addonset.ErrLockStale", err)
			}
			// lock keeps no such pin: it resolves the member again.
			fixed := must(addonset.Lock(ctx, s, addonset.LockOptions{Options: withGit, Previous: &bad}))
			if fixed.Addons[0].Identity != good.Addons[0].Identity || fixed.Addons[0].Pinned != good.Addons[0].Pinned {
				t.Errorf("lock kept the redirected pin: %+v, want %+v", fixed.Addons[0], good.Addons[0])
			}
		})
	}
}

// TestLockPinsTheDeclaredLayoutTag: a member declared by a tag in an OCI
// layout or archive (oci:DIR:TAG, oci-archive:FILE:NAME, what mirror
// --to oci-archive: writes) is pinned by digest in the lock, which
// records no tag. A lock entry edited to pin another manifest of the same
// layout (an older version beside it, another member of the archive),
// its identity with it, read from the declared place and passed every
// check: check, render and mirror must refuse it as they refuse a
// registry tag that now points elsewhere (spec/addon-set-v1.md 4.4.3).
func TestLockPinsTheDeclaredLayoutTag(t *testing.T) {
	ctx := context.Background()
	layoutDir := t.TempDir()
	layoutOf(t, layoutDir, "one", "two")
	archive := filepath.Join(t.TempDir(), "addons.tar")
	if err := layout.WriteArchive(layoutDir, archive); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, declared, alt string }{
		{"layout tag", "oci:" + layoutDir + ":one", "oci:" + layoutDir + ":two"},
		{"archive tag", "oci-archive:" + archive + ":one", "oci-archive:" + archive + ":two"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := writeDecl(t, t.TempDir(), "- name: a\n  source: "+tc.declared+"\n")
			good := must(addonset.Lock(ctx, s, addonset.LockOptions{}))
			if err := addonset.Check(ctx, s, good, addonset.Options{}); err != nil {
				t.Fatalf("check of the right lock: %v", err)
			}
			other := must(addonset.Lock(ctx, writeDecl(t, t.TempDir(), "- name: a\n  source: "+tc.alt+"\n"), addonset.LockOptions{}))
			if other.Addons[0].Digest == good.Addons[0].Digest {
				t.Fatal("the other tag names the same manifest: the test proves nothing")
			}
			bad := *other
			bad.Addons = []addonset.Locked{other.Addons[0]}
			bad.Addons[0].Entry = good.Addons[0].Entry
			bad.Addons[0].Source = good.Addons[0].Source

			refusesMismatch(t, s, &bad, addonset.Options{}, "")
		})
	}
}

// TestLockPinsTheDeclaredGitRef: a git member declared by a tag, a branch
// or none (the remote HEAD) is pinned to a commit in the lock. A lock
// entry edited to pin another commit of the same repository (an older
// one), its identity with it, passed every check; and a tag moved since
// the lock went unseen. Check, render and mirror must refuse both, as
// they refuse a registry tag that now points elsewhere
// (spec/addon-set-v1.md 4.4.3).
func TestLockPinsTheDeclaredGitRef(t *testing.T) {
	ctx := context.Background()
	gitDir := t.TempDir()
	commits := gitRepo(t, gitDir, "one", "two")
	repo, err := git.PlainOpen(gitDir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := repo.CreateTag("v1", plumbing.NewHash(commits[1]), nil); err != nil {
		t.Fatal(err)
	}
	head, err := repo.Head()
	if err != nil {
		t.Fatal(err)
	}
	branch := head.Name().Short()
	for _, tc := range []struct{ name, ref string }{
		{"tag", "?ref=v1"}, {"branch", "?ref=" + branch}, {"remote HEAD", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := writeDecl(t, t.TempDir(), "- name: a\n  source: git+file://"+gitDir+tc.ref+"\n")
			good := must(addonset.Lock(ctx, s, addonset.LockOptions{Options: withGit}))
			if err := addonset.Check(ctx, s, good, withGit); err != nil {
				t.Fatalf("check of the right lock: %v", err)
			}
			older := must(addonset.Lock(ctx, writeDecl(t, t.TempDir(), "- name: a\n  source: git+file://"+gitDir+"?ref="+commits[0]+"\n"), addonset.LockOptions{Options: withGit}))
			if older.Addons[0].Identity == good.Addons[0].Identity {
				t.Fatal("the older commit has the same content: the test proves nothing")
			}
			bad := *older
			bad.Addons = []addonset.Locked{older.Addons[0]}
			bad.Addons[0].Entry = good.Addons[0].Entry
			bad.Addons[0].Source = good.Addons[0].Source
			refusesMismatch(t, s, &bad, withGit, "now points to")
		})
	}

	// The tag moved (to the older commit) since the lock was made.
	s := writeDecl(t, t.TempDir(), "- name: a\n  source: git+file://"+gitDir+"?ref=v1\n")
	l := must(addonset.Lock(ctx, s, addonset.LockOptions{Options: withGit}))
	if err := repo.DeleteTag("v1"); err != nil {
		t.Fatal(err)
	}
	if _, err := repo.CreateTag("v1", plumbing.NewHash(commits[0]), nil); err != nil {
		t.Fatal(err)
	}
	refusesMismatch(t, s, l, withGit, "now points to")
}

// refusesMismatch fails t unless check, render and mirror of s with the
// lock l all refuse it with addonset.ErrLockMismatch, check's error
// saying why.
func refusesMismatch(t *testing.T, s *addonset.Set, l *addonset.LockFile, opts addonset.Options, why string) {
	t.Helper()
	ctx := context.Background()
	if err := addonset.Check(ctx, s, l, opts); !errors.Is(err, addonset.ErrLockMismatch) || !strings.Contains(err.Error(), why) {
		t.Errorf("check: %v, want addonset.ErrLockMismatch: %s", err, why)
	}
	if _, err := addonset.Render(ctx, s, addonset.RenderOptions{Options: opts, Lock: l}); !errors.Is(err, addonset.ErrLockMismatch) {
		t.Errorf("render: %v, want addonset.ErrLockMismatch", err)
	}
	_, err := addonset.Mirror(ctx, s, addonset.MirrorOptions{Options: opts, Lock: l, To: "oci-archive:" + filepath.Join(t.TempDir(), "m.tar")})
	if !errors.Is(err, addonset.ErrLockMismatch) {
		t.Errorf("mirror: %v, want addonset.ErrLockMismatch", err)
	}
}
