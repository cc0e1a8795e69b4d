package safetree_test

import (
	"errors"
	"testing"

	"github.com/addonpkg/addonpkg/pkg/safetree"
)

// FuzzCheckLinks builds small trees of directories, files and links and
// checks CheckLinks and CheckWalkableLinks against the kernel: a tree
// either accepts, written to disk, has no link that resolves outside it,
// nor, for CheckWalkableLinks, to a folder that holds it. It also checks
// that every refusal is typed.
func FuzzCheckLinks(f *testing.F) {
	for _, s := range []string{
		chainAttack,
		loopFreeChain,
		"f base/k.yaml\nl base/loop ..",
		"d h\nl h/up ..\nl x h/up/h/up/..",
		"f a/x.yaml\nl b a\nl c b/x.yaml",
		"l a b\nl b a",
		"d a/b\nl a/b/l ../../..\nl c a/b/l",
		"d a\nl a/s .\nl t a/s/s/s/../..",
		"l x missing/../../etc",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		fsys, ok := tree(t, spec)
		if !ok {
			return
		}
		if err := safetree.CheckLinks(fsys); err != nil {
			if !errors.Is(err, safetree.ErrLinkEscape) {
				t.Fatalf("untyped refusal: %v", err)
			}
		} else {
			checkAgainstKernel(t, fsys, false)
		}
		if err := safetree.CheckWalkableLinks(fsys); err != nil {
			if !errors.Is(err, safetree.ErrLinkEscape) && !errors.Is(err, safetree.ErrLinkLoop) {
				t.Fatalf("untyped refusal: %v", err)
			}
			return
		}
		checkAgainstKernel(t, fsys, true)
	})
}

// FuzzCleanName: a name CleanName accepts is relative, clean and never
// climbs.
func FuzzCleanName(f *testing.F) {
	for _, s := range []string{"a/b", "../x", "/abs", "a/./b//", "a/..", "..", ".", "a\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		p, err := safetree.CleanName(name)
		if err != nil {
			if !errors.Is(err, safetree.ErrPathEscape) {
				t.Fatalf("untyped refusal: %v", err)
			}
			return
		}
		if p == ".." || len(p) > 0 && p[0] == '/' || len(p) >= 3 && p[:3] == "../" {
			t.Fatalf("CleanName(%q) = %q climbs", name, p)
		}
	})
}
