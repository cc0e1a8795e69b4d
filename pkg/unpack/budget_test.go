package unpack_test

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"testing"

	"github.com/addonpkg/addonpkg/pkg/filetree"
	"github.com/addonpkg/addonpkg/pkg/safetree"
	"github.com/addonpkg/addonpkg/pkg/unpack"
)

// budgetImage has three layers of small files: an upper layer that
// replaces, deletes and hides lower files, the same path twice in one
// layer, a hard link and a symlink to files that will be spilled.
func budgetImage(t testing.TB) (unpackImage func(opts unpack.Options) (*unpack.Addon, error)) {
	body := func(i int) string { return fmt.Sprintf("file %d\n%s", i, strings.Repeat("x", 1000)) }
	var bottom, middle, top []ent
	bottom = append(bottom, dirE("addon/"), dirE("addon/gone/"))
	for i := range 20 {
		bottom = append(bottom, file(fmt.Sprintf("addon/low%02d", i), body(i)))
	}
	bottom = append(bottom, file("addon/gone/a", body(100)), file("addon/replaced", body(101)))
	middle = append(middle, dirE("addon/mid/"))
	for i := range 20 {
		middle = append(middle, file(fmt.Sprintf("addon/mid/f%02d", i), body(200+i)))
	}
	middle = append(middle,
		file("addon/twice", body(300)), file("addon/twice", body(301)), // the later wins
		ent{name: "addon/hard", typ: tar.TypeLink, link: "addon/mid/f00"},
		symlink("addon/soft", "mid/f01"),
	)
	top = append(top, whiteout("addon/", "gone"), file("addon/replaced", body(400)), file("addon/low00", body(401)))
	img := layers(bottom, middle, top)(t)
	return func(opts unpack.Options) (*unpack.Addon, error) {
		return unpack.Image(context.Background(), img, opts)
	}
}

// With a memory budget, files past it go to the spill directory: the tree
// is the same as an unpack held in memory, and holds at most the budget in
// memory.
func TestMemoryBudgetSpillsPastTheBudget(t *testing.T) {
	run := budgetImage(t)
	want, err := run(unpack.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, budget := range []int64{1, 5 << 10, 30 << 10, 1 << 30} {
		t.Run(fmt.Sprint(budget), func(t *testing.T) {
			spill := t.TempDir()
			got, err := run(unpack.Options{SpillDir: spill, MemoryBudget: budget})
			if err != nil {
				t.Fatal(err)
			}
			defer got.FS.Close()
			if d := diffTrees(treeOf(t, want.FS), treeOf(t, got.FS)); d != "" {
				t.Fatalf("tree differs from the in-memory unpack:\n%s", d)
			}
			if got.Identity != want.Identity {
				t.Errorf("identity %s, want %s", got.Identity, want.Identity)
			}
			if b, err := fs.ReadFile(got.FS, "soft"); err != nil || !strings.HasPrefix(string(b), "file 201\n") {
				t.Errorf("soft -> mid/f01: %.8q, %v", b, err)
			}
			held, err := os.ReadDir(spill)
			if err != nil {
				t.Fatal(err)
			}
			// The hard link shares its target's bytes but counts them
			// again: it may take the count past the budget by one file.
			switch mem := got.FS.InMemory(); {
			case mem > budget+1007:
				t.Errorf("%d bytes in memory, over the budget of %d", mem, budget)
			case budget < want.FS.InMemory() && len(held) == 0:
				t.Errorf("%d bytes in memory and nothing spilled, for a budget of %d", mem, budget)
			case budget >= want.FS.InMemory() && (mem != want.FS.InMemory() || len(held) != 0):
				t.Errorf("%d bytes in memory and %d files spilled, for a budget over the tree's %d", mem, len(held), want.FS.InMemory())
			}
		})
	}
}

// Without a spill directory the budget does nothing.
func TestMemoryBudgetNeedsSpillDir(t *testing.T) {
	got, err := budgetImage(t)(unpack.Options{MemoryBudget: 1})
	if err != nil {
		t.Fatal(err)
	}
	if b, err := fs.ReadFile(got.FS, "twice"); err != nil || !strings.HasPrefix(string(b), "file 301\n") {
		t.Errorf("twice: %.8q, %v", b, err)
	}
	if got.FS.InMemory() != got.FS.Size() {
		t.Errorf("%d bytes in memory, want the whole tree's %d", got.FS.InMemory(), got.FS.Size())
	}
}

// A spill directory that cannot be written is a disk failure named as
// such (filetree.ErrSpill), not an unsafe entry of the image.
func TestMemoryBudgetSpillFailure(t *testing.T) {
	run := budgetImage(t)
	missing := t.TempDir() + "/gone"
	_, err := run(unpack.Options{SpillDir: missing, MemoryBudget: 1})
	if !errors.Is(err, filetree.ErrSpill) {
		t.Fatalf("err = %v, want filetree.ErrSpill", err)
	}
	if errors.Is(err, safetree.ErrUnsafe) {
		t.Fatalf("a disk failure reported as an unsafe entry: %v", err)
	}
}
