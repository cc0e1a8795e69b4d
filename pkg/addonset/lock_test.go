package addonset_test

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-containerregistry/pkg/name"
	ggcrregistry "github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/addonpkg/addonpkg/pkg/addonset"
	"github.com/addonpkg/addonpkg/pkg/build"
	"github.com/addonpkg/addonpkg/pkg/pack"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// memRegistry is go-containerregistry's in-memory registry on 127.0.0.1.
func memRegistry(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(ggcrregistry.New(ggcrregistry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

// push builds a one-ConfigMap add-on whose data is value and pushes it
// to ref; it returns the manifest digest.
func push(t *testing.T, ref, value string) string {
	t.Helper()
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  value: " + value + "\n"
	res, err := build.Build(context.Background(), fstest.MapFS{"cm.yaml": {Data: []byte(cm), Mode: 0o644}}, build.Options{Name: "cm", Format: pack.FormatArtifact})
	if err != nil {
		t.Fatal(err)
	}
	r, err := name.ParseReference(ref)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(r, res.Image); err != nil {
		t.Fatal(err)
	}
	return res.Digest.String()
}

func writeDecl(t *testing.T, dir, body string) *addonset.Set {
	t.Helper()
	file := filepath.Join(dir, "addons.yaml")
	if err := os.WriteFile(file, []byte(header+body), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := addonset.Load(context.Background(), file)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func stream(t *testing.T, res *addonset.Result) string {
	t.Helper()
	var b bytes.Buffer
	if _, err := res.WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestLockRangeAndRender(t *testing.T) {
	ctx := context.Background()
	reg := memRegistry(t)
	repo := reg + "/addons/cm"
	for _, tag := range []string{"1.10.0", "1.11.0", "v1.11.2", "1.12.0", "1.11.9-rc.1", "latest", "not-semver"} {
		push(t, repo+":"+tag, tag)
	}
	dir := declDir(t)
	s := writeDecl(t, dir, "- name: cm\n  source: "+repo+"\n  version: ~1.11\n  dependsOn: [one]\n- name: one\n  source: ./one\n")

	l, err := addonset.Lock(ctx, s, addonset.LockOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm, _ := l.Member("cm")
	if cm.Tag != "v1.11.2" || !strings.HasPrefix(cm.Pinned, repo+"@sha256:") || cm.Digest == "" {
		t.Fatalf("cm locked at tag %q pinned %q digest %q; want v1.11.2 by digest", cm.Tag, cm.Pinned, cm.Digest)
	}
	if l.Addons[0].Name != "cm" || l.Addons[1].Name != "one" || l.Addons[1].Pinned != "./one" {
		t.Fatalf("lock members %+v", l.Addons)
	}

	res, err := addonset.Render(ctx, s, addonset.RenderOptions{Lock: l})
	if err != nil {
		t.Fatal(err)
	}
	first := stream(t, res)
	want := addonset.MemberMarker + "one\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: one\n---\n" +
		addonset.MemberMarker + "cm\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  value: v1.11.2\n"
	if first != want {
		t.Fatalf("stream:\n%s\nwant:\n%s", first, want)
	}

	// A new tag inside the range: the lock keeps the old one until asked.
	push(t, repo+":1.11.5", "1.11.5")
	if again := stream(t, must(addonset.Render(ctx, s, addonset.RenderOptions{Lock: l}))); again != first {
		t.Errorf("render changed after a new tag was pushed:\n%s", again)
	}
	kept, err := addonset.Lock(ctx, s, addonset.LockOptions{Previous: l})
	if err != nil {
		t.Fatal(err)
	}
	if m, _ := kept.Member("cm"); m != cm {
		t.Errorf("lock without --update moved cm to %+v", m)
	}
	updated, err := addonset.Lock(ctx, s, addonset.LockOptions{Previous: l, Update: []string{"cm"}})
	if err != nil {
		t.Fatal(err)
	}
	if m, _ := updated.Member("cm"); m.Tag != "1.11.5" {
		t.Errorf("lock --update cm: tag %q, want 1.11.5", m.Tag)
	}
	if _, err := addonset.Lock(ctx, s, addonset.LockOptions{Previous: l, Update: []string{"nope"}}); !errors.Is(err, addonset.ErrUnknownMember) {
		t.Errorf("update of an unknown member: %v", err)
	}
	if err := addonset.Check(ctx, s, l, addonset.Options{}); err != nil {
		t.Errorf("check of a true lock: %v", err)
	}

	// A different add-on re-pushed under the locked tag.
	moved := push(t, repo+":v1.11.2", "changed")
	_, err = addonset.Render(ctx, s, addonset.RenderOptions{Lock: l})
	var me *addonset.MismatchError
	if !errors.As(err, &me) || me.Member != "cm" || me.Locked != cm.Digest || me.Got != moved {
		t.Fatalf("render after the tag moved: %v", err)
	}
	for _, part := range []string{`member "cm"`, cm.Digest, moved} {
		if !strings.Contains(err.Error(), part) {
			t.Errorf("error %q does not name %s", err, part)
		}
	}
	if err := addonset.Check(ctx, s, l, addonset.Options{}); !errors.Is(err, addonset.ErrLockMismatch) {
		t.Errorf("check after the tag moved: %v", err)
	}

	// No matching tag.
	s2 := writeDecl(t, t.TempDir(), "- name: cm\n  source: "+repo+"\n  version: '>=3'\n")
	if _, err := addonset.Lock(ctx, s2, addonset.LockOptions{}); !errors.Is(err, addonset.ErrNoVersion) {
		t.Errorf("range with no tag: %v", err)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func TestLockStale(t *testing.T) {
	ctx := context.Background()
	dir := declDir(t)
	s := writeDecl(t, dir, "- name: one\n  source: ./one\n- name: two\n  source: ./two\n")
	l, err := addonset.Lock(ctx, s, addonset.LockOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, body, member, reason string }{
		{"added", "- name: one\n  source: ./one\n- name: two\n  source: ./two\n- name: three\n  source: ./two\n", "three", "not in the lock"},
		{"changed", "- name: one\n  source: ./one\n- name: two\n  source: ./one\n", "two", "changed"},
		{"removed", "- name: one\n  source: ./one\n", "two", "no longer declared"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s2 := writeDecl(t, dir, c.body)
			_, err := addonset.Render(ctx, s2, addonset.RenderOptions{Lock: l})
			var se *addonset.StaleError
			if !errors.As(err, &se) || se.Member != c.member || !strings.Contains(se.Reason, c.reason) {
				t.Errorf("render with a stale lock: %v", err)
			}
			if err := addonset.Check(ctx, s2, l, addonset.Options{}); !errors.Is(err, addonset.ErrLockStale) {
				t.Errorf("check: %v", err)
			}
		})
	}
	t.Run("folder changed", func(t *testing.T) {
		if err := os.WriteFile(filepath.Join(dir, "two", "more.yaml"), []byte("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		defer os.Remove(filepath.Join(dir, "two", "more.yaml"))
		_, err := addonset.Render(ctx, s, addonset.RenderOptions{Lock: l})
		var me *addonset.MismatchError
		two, _ := l.Member("two")
		if !errors.As(err, &me) || me.Member != "two" || me.Locked != two.Identity || me.Got == two.Identity {
			t.Errorf("render of a changed folder: %v", err)
		}
	})
}

// TestLockGolden pins the lock file's bytes: members sorted by name, no
// times, the same bytes from any declaration order. Regenerate with
// go test ./pkg/addonset -run TestLockGolden -update.
func TestLockGolden(t *testing.T) {
	ctx := context.Background()
	s, err := addonset.Load(ctx, filepath.Join("testdata", "golden", "addons.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	l, err := addonset.Lock(ctx, s, addonset.LockOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := l.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "golden", "addons.lock")
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("lock bytes differ from %s:\n%s", golden, got)
	}
	// Reversed members give the same bytes; the bytes parse back.
	for i, j := 0, len(l.Addons)-1; i < j; i, j = i+1, j-1 {
		l.Addons[i], l.Addons[j] = l.Addons[j], l.Addons[i]
	}
	if again, _ := l.Marshal(); !bytes.Equal(again, want) {
		t.Errorf("member order changes the bytes:\n%s", again)
	}
	back, err := addonset.ParseLock(want, golden)
	if err != nil {
		t.Fatal(err)
	}
	if round, _ := back.Marshal(); !bytes.Equal(round, want) {
		t.Errorf("parse and marshal changes the bytes:\n%s", round)
	}
	if err := addonset.Check(ctx, s, back, addonset.Options{}); err != nil {
		t.Errorf("check: %v", err)
	}
}

func TestParseLockErrors(t *testing.T) {
	d := "sha256:" + strings.Repeat("0", 64)
	head := "apiVersion: addon.cncf.io/v1alpha1\nkind: AddonSetLock\naddons:\n"
	for _, c := range []struct{ name, text, want string }{
		{"unknown field", head + "- name: a\n  entry: " + d + "\n  source: ./a\n  pinned: ./a\n  identity: " + d + "\n  when: now\n", `unknown field "when"`},
		{"bad identity", head + "- name: a\n  entry: " + d + "\n  source: ./a\n  pinned: ./a\n  identity: md5:x\n", "identity"},
		{"duplicate", head + "- name: a\n  entry: " + d + "\n  source: ./a\n  pinned: ./a\n  identity: " + d + "\n- name: a\n  entry: " + d + "\n  source: ./a\n  pinned: ./a\n  identity: " + d + "\n", "duplicate name"},
		{"kind", "apiVersion: addon.cncf.io/v1alpha1\nkind: AddonSet\naddons: []\n", "AddonSetLock"},
		{"no pin", head + "- name: a\n  entry: " + d + "\n  source: ./a\n  identity: " + d + "\n", "no pinned source"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := addonset.ParseLock([]byte(c.text), "addons.lock")
			if !errors.Is(err, addonset.ErrInvalid) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v: want ErrInvalid containing %q", err, c.want)
			}
		})
	}
}

// TestLockPinsElsewhere checks that a lock edited to fetch a member from
// another repository than the declared one is refused as stale.
func TestLockPinsElsewhere(t *testing.T) {
	ctx := context.Background()
	reg := memRegistry(t)
	good := push(t, reg+"/good/cm:1.0.0", "good")
	evil := push(t, reg+"/evil/cm:1.0.0", "evil")
	s := writeDecl(t, t.TempDir(), "- name: cm\n  source: "+reg+"/good/cm:1.0.0\n")
	l, err := addonset.Lock(ctx, s, addonset.LockOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if l.Addons[0].Digest != good {
		t.Fatalf("locked %s, want %s", l.Addons[0].Digest, good)
	}
	// Point the pin at the other repository, with a matching digest and
	// identity so that only the place differs.
	ad := must(addonset.Lock(ctx, writeDecl(t, t.TempDir(), "- name: cm\n  source: "+reg+"/evil/cm:1.0.0\n"), addonset.LockOptions{}))
	l.Addons[0].Pinned, l.Addons[0].Digest, l.Addons[0].Identity = reg+"/evil/cm@"+evil, evil, ad.Addons[0].Identity
	l.Addons[0].Tag = ""
	_, err = addonset.Render(ctx, s, addonset.RenderOptions{Lock: l})
	var se *addonset.StaleError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "not the declared source") {
		t.Errorf("render of a lock that pins another repository: %v", err)
	}
	// lock does not keep such a pin: it resolves the member again.
	fixed, err := addonset.Lock(ctx, s, addonset.LockOptions{Previous: l})
	if err != nil {
		t.Fatal(err)
	}
	if fixed.Addons[0].Digest != good || !strings.Contains(fixed.Addons[0].Pinned, "/good/") {
		t.Errorf("lock kept the redirected pin: %+v", fixed.Addons[0])
	}
}

// TestLockFormatGolden pins the bytes of a lock holding every kind of
// pin and every field (tags, digests, URLs with queries): the encoding of
// each field is part of the format. Regenerate with
// go test ./pkg/addonset -run TestLockFormatGolden -update.
func TestLockFormatGolden(t *testing.T) {
	d := func(c string) string { return "sha256:" + strings.Repeat(c, 64) }
	l := &addonset.LockFile{Addons: []addonset.Locked{
		{Name: "policies", Entry: d("1"), Source: "./policies", Pinned: "./policies", Identity: d("2")},
		{Name: "cni", Entry: d("3"), Source: "registry.example.com/addons/cni", Tag: "v1.11.3", Pinned: "registry.example.com/addons/cni@" + d("4"), Digest: d("4"), Identity: d("5")},
		{Name: "dns", Entry: d("6"), Source: "git+https://git.example.com/org/addons.git//dns?ref=v1.2", Pinned: "git+https://git.example.com/org/addons.git//dns?ref=" + strings.Repeat("a", 40), Identity: d("7")},
		{Name: "metrics", Entry: d("8"), Source: "https://example.com/ms.tar.gz//manifests?a=1&checksum=" + d("9"), Pinned: "https://example.com/ms.tar.gz//manifests?a=1&checksum=" + d("9"), Digest: d("9"), Identity: d("a")},
		{Name: "crds", Entry: d("b"), Source: "oci-archive:../bundle.tar:crds", Pinned: "oci-archive:../bundle.tar@" + d("c"), Digest: d("c"), Identity: d("d")},
		{Name: "yes", Entry: d("e"), Source: "registry.example.com/addons/yes:1.0", Tag: "1.0", Pinned: "registry.example.com/addons/yes@" + d("f"), Digest: d("f"), Identity: d("0")},
	}}
	got, err := l.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "golden", "format.lock")
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("lock bytes differ from %s:\n%s", golden, got)
	}
	back, err := addonset.ParseLock(want, golden)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range l.Addons {
		if b, _ := back.Member(m.Name); b != m {
			t.Errorf("%s reads back as %+v, want %+v", m.Name, b, m)
		}
	}
}

func TestDiff(t *testing.T) {
	d := func(c string) string { return "sha256:" + strings.Repeat(c, 64) }
	a := addonset.Locked{Name: "a", Entry: d("1"), Source: "r.example.com/a", Tag: "1.0.0", Pinned: "r.example.com/a@" + d("2"), Digest: d("2"), Identity: d("3")}
	a2 := a
	a2.Tag, a2.Pinned, a2.Digest, a2.Identity = "1.1.0", "r.example.com/a@"+d("4"), d("4"), d("5")
	b := addonset.Locked{Name: "b", Entry: d("6"), Source: "./b", Pinned: "./b", Identity: d("7")}
	b2 := b
	b2.Entry = d("8")
	c := addonset.Locked{Name: "c", Entry: d("9"), Source: "./c", Pinned: "./c", Identity: d("a")}
	prev := &addonset.LockFile{Addons: []addonset.Locked{a, b, c}}
	next := &addonset.LockFile{Addons: []addonset.Locked{b2, a2, {Name: "d", Pinned: "./d"}}}
	var got []string
	for _, ch := range addonset.Diff(prev, next) {
		got = append(got, ch.String())
	}
	want := []string{
		"changed a: 1.0.0 (r.example.com/a@" + d("2") + ") -> 1.1.0 (r.example.com/a@" + d("4") + ")",
		"changed b: its declaration entry",
		"removed c",
		"added d: ./d",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("diff:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if n := len(addonset.Diff(prev, prev)); n != 0 {
		t.Errorf("a lock differs from itself in %d members", n)
	}
	if n := len(addonset.Diff(nil, prev)); n != 3 {
		t.Errorf("from no lock: %d changes, want 3 added", n)
	}
}
