package unpack_test

import (
	"archive/tar"
	"context"
	"errors"
	"io/fs"
	"os"
	"strings"
	"testing"

	"github.com/addonpkg/addonpkg/pkg/archive"
	"github.com/addonpkg/addonpkg/pkg/filetree"
	"github.com/addonpkg/addonpkg/pkg/safetree"
	"github.com/addonpkg/addonpkg/pkg/unpack"
)

// modeFile is a regular file of an expected tree, with its mode.
type modeFile struct {
	body string
	mode fs.FileMode
}

// treeWithModes builds the in-memory tree of files (and the directories
// their paths imply), to compute the identity an unpack must give.
func treeWithModes(t *testing.T, files map[string]modeFile) *filetree.FS {
	t.Helper()
	b := filetree.NewBuilder()
	for p, f := range files {
		if err := b.WriteFile(p, []byte(f.body), f.mode); err != nil {
			t.Fatal(err)
		}
	}
	return b.FS()
}

// The three places where spec/addon-v1.md and addonpkg used to disagree
// (issue 13 item 10), decided as OCI's changeset rules and umoci do: a
// hard link has its target's mode (spec 4.4(8), 7.2), the later of two
// entries at one path in one layer wins (4.4(3)), and nothing at or below
// a .wh. name is part of the tree (4.4(4), 4.4(7)).
func TestSpecBoundaryDecisions(t *testing.T) {
	exe := func(name, body string) ent { return ent{name: name, typ: tar.TypeReg, body: body, mode: 0o755} }
	linkMode := func(name, target string, mode int64) ent {
		return ent{name: name, typ: tar.TypeLink, link: target, mode: mode}
	}
	for _, c := range []struct {
		name   string
		layers [][]ent
		want   map[string]modeFile
		absent []string
	}{
		{
			name:   "hard link to an executable file, link header 0644",
			layers: [][]ent{es(dirE("addon/"), exe("addon/run.sh", "#!/bin/sh\n"), linkMode("addon/run2.sh", "addon/run.sh", 0o644))},
			want:   map[string]modeFile{"run.sh": {"#!/bin/sh\n", 0o755}, "run2.sh": {"#!/bin/sh\n", 0o755}},
		},
		{
			name:   "hard link to a 0644 file, link header 0755",
			layers: [][]ent{es(dirE("addon/"), file("addon/a.yaml", "a: 1\n"), linkMode("addon/b.yaml", "addon/a.yaml", 0o755))},
			want:   map[string]modeFile{"a.yaml": {"a: 1\n", 0o644}, "b.yaml": {"a: 1\n", 0o644}},
		},
		{
			name: "hard link to an executable file an upper layer replaced",
			layers: [][]ent{
				es(dirE("addon/"), exe("addon/run.sh", "old"), linkMode("addon/keep.sh", "addon/run.sh", 0o644)),
				es(file("addon/run.sh", "new")),
			},
			want: map[string]modeFile{"run.sh": {"new", 0o644}, "keep.sh": {"old", 0o755}},
		},
		{
			name:   "same file twice in one layer: the later wins",
			layers: [][]ent{es(dirE("addon/"), file("addon/a", "one"), exe("addon/a", "two"))},
			want:   map[string]modeFile{"a": {"two", 0o755}},
		},
		{
			name: "same file twice in an upper layer over a lower one",
			layers: [][]ent{
				es(dirE("addon/"), file("addon/a", "base")),
				es(file("addon/a", "one"), file("addon/a", "two")),
			},
			want: map[string]modeFile{"a": {"two", 0o644}},
		},
		{
			name:   "a file, then a directory at its path",
			layers: [][]ent{es(dirE("addon/"), file("addon/d", "f"), dirE("addon/d/"), file("addon/d/x", "x"))},
			want:   map[string]modeFile{"d/x": {"x", 0o644}},
		},
		{
			name:   "a directory with contents, then a file at its path",
			layers: [][]ent{es(dirE("addon/"), dirE("addon/d/"), file("addon/d/x", "x"), file("addon/d", "f"))},
			want:   map[string]modeFile{"d": {"f", 0o644}},
			absent: []string{"d/x"},
		},
		{
			name:   "a symlink, then a file at its path",
			layers: [][]ent{es(dirE("addon/"), file("addon/a", "a"), symlink("addon/l", "a"), file("addon/l", "file"))},
			want:   map[string]modeFile{"a": {"a", 0o644}, "l": {"file", 0o644}},
		},
		{
			name:   "a directory twice keeps its contents",
			layers: [][]ent{es(dirE("addon/"), dirE("addon/d/"), file("addon/d/x", "x"), dirE("addon/d/"))},
			want:   map[string]modeFile{"d/x": {"x", 0o644}},
		},
		{
			name: "a directory named .wh.x is a whiteout of x; what is below it is not kept",
			layers: [][]ent{
				es(dirE("addon/"), file("addon/x/a", "lower"), file("addon/keep", "k")),
				es(dirE("addon/.wh.x/"), file("addon/.wh.x/inner", "i"), dirE("addon/.wh.x/sub/"), file("addon/.wh.x/sub/deep", "d")),
			},
			want:   map[string]modeFile{"keep": {"k", 0o644}},
			absent: []string{"x", ".wh.x", ".wh.x/inner", "x/a"},
		},
		{
			name:   "files below .wh. names in the layer that holds them are not kept",
			layers: [][]ent{es(dirE("addon/"), file("addon/.wh.d/f", "f"), file("addon/.wh..wh..opq/g", "g"), file("addon/keep", "k"))},
			want:   map[string]modeFile{"keep": {"k", 0o644}},
			absent: []string{".wh.d", "d", ".wh..wh..opq"},
		},
		{
			name: "AUFS .wh..wh.plnk and what it holds are ignored",
			layers: [][]ent{es(dirE("addon/"), dirE("addon/.wh..wh.plnk/"), file("addon/.wh..wh.plnk/12.34", "aufs"),
				file("addon/keep", "k"))},
			want:   map[string]modeFile{"keep": {"k", 0o644}},
			absent: []string{".wh..wh.plnk", ".wh.plnk"},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			a, err := unpack.Image(context.Background(), layers(c.layers...)(t), unpack.Options{})
			if err != nil {
				t.Fatalf("unpack: %v", err)
			}
			for p, f := range c.want {
				st, err := fs.Stat(a.FS, p)
				if err != nil {
					t.Errorf("%s: %v", p, err)
					continue
				}
				b, err := fs.ReadFile(a.FS, p)
				if err != nil || string(b) != f.body || st.Mode() != f.mode {
					t.Errorf("%s = %q, mode %v, err %v; want %q, mode %v", p, b, st.Mode(), err, f.body, f.mode)
				}
			}
			for _, p := range c.absent {
				if _, err := fs.Lstat(a.FS, p); !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("%s: Lstat err %v, want it absent", p, err)
				}
			}
			want, err := archive.Identity(treeWithModes(t, c.want))
			if err != nil {
				t.Fatal(err)
			}
			if a.Identity != want.String() {
				t.Errorf("identity %s, want %s (that of the expected tree)", a.Identity, want)
			}
		})
	}
}

// What the later-entry rule cannot decide is refused: an upper layer wrote
// below a path that a lower layer ends as a file, replacing its own
// directory within the layer (a sequential extraction would write through
// that file).
func TestSameLayerReplacementUnderUpperContent(t *testing.T) {
	im := layers(
		es(dirE("addon/"), dirE("addon/d/"), file("addon/d", "f")),
		es(file("addon/d/x", "x")),
	)(t)
	_, err := unpack.Image(context.Background(), im, unpack.Options{})
	var ee *unpack.EntryError
	if !errors.Is(err, safetree.ErrUnsafe) || !errors.As(err, &ee) {
		t.Fatalf("err %v: want an *unpack.EntryError wrapping safetree.ErrUnsafe", err)
	}
}

// discardSink takes files and throws them away.
type discardSink struct{ files int }

func (s *discardSink) File(string, []byte, fs.FileMode) { s.files++ }
func (s *discardSink) Copy(string, string, fs.FileMode) { s.files++ }

// A sink cannot take back a file it was given: with one, a later entry
// that replaces an earlier file of its layer is refused as unsupported
// rather than written out wrong; without one, the later entry wins.
func TestSameLayerReplacementWithSink(t *testing.T) {
	for _, c := range []struct {
		name    string
		entries []ent
		refused bool
	}{
		{"file over file", es(dirE("addon/"), file("addon/a", "one"), file("addon/a", "two")), true},
		{"file over a directory holding a file", es(dirE("addon/"), file("addon/d/x", "x"), file("addon/d", "f")), true},
		{"file over an empty directory", es(dirE("addon/"), dirE("addon/d/"), file("addon/d", "f")), false},
		{"file over a symlink", es(dirE("addon/"), symlink("addon/l", "x"), file("addon/l", "f")), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, err := unpack.Image(context.Background(), layers(c.entries)(t), unpack.Options{Sink: &discardSink{}})
			if c.refused != errors.Is(err, unpack.ErrUnsupported) {
				t.Fatalf("err %v; want ErrUnsupported: %v", err, c.refused)
			}
			if !c.refused && err != nil {
				t.Fatal(err)
			}
		})
	}
}

// The boundary decisions hold for files over SpillThreshold, which the
// unpacker streams to Options.SpillDir instead of memory: the later of
// two big files at one path wins, and a hard link to a big executable
// file is executable.
func TestSpecBoundaryDecisionsSpilled(t *testing.T) {
	big := func(c string) string { return strings.Repeat(c, unpack.SpillThreshold+1) }
	im := layers(es(dirE("addon/"),
		file("addon/big", big("1")), file("addon/big", big("2")),
		ent{name: "addon/run", typ: tar.TypeReg, body: big("x"), mode: 0o755},
		ent{name: "addon/run2", typ: tar.TypeLink, link: "addon/run", mode: 0o644},
	))(t)
	spill := t.TempDir()
	a, err := unpack.Image(context.Background(), im, unpack.Options{SpillDir: spill})
	if err != nil {
		t.Fatal(err)
	}
	if held, err := os.ReadDir(spill); err != nil || len(held) == 0 {
		t.Fatalf("nothing was spilled (%v): the test does not test spilling", err)
	}
	want := map[string]modeFile{"big": {big("2"), 0o644}, "run": {big("x"), 0o755}, "run2": {big("x"), 0o755}}
	for p, f := range want {
		st, err := fs.Stat(a.FS, p)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		b, err := fs.ReadFile(a.FS, p)
		if err != nil || string(b) != f.body || st.Mode() != f.mode {
			t.Errorf("%s: %d bytes starting %q, mode %v, err %v; want %d bytes of %q, mode %v", p, len(b), b[:min(len(b), 1)], st.Mode(), err, len(f.body), f.body[:1], f.mode)
		}
	}
	id, err := archive.Identity(treeWithModes(t, want))
	if err != nil {
		t.Fatal(err)
	}
	if a.Identity != id.String() {
		t.Errorf("identity %s, want %s", a.Identity, id)
	}
}
