package safetree_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/addonpkg/addonpkg/pkg/filetree"
	"github.com/addonpkg/addonpkg/pkg/safetree"
)

func TestCleanName(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		err      error
	}{
		{in: "a/b", want: "a/b"},
		{in: "./a//b/", want: "a/b"},
		{in: "./", want: "."},
		{in: "a/..b", want: "a/..b"},
		{in: "/etc/passwd", err: safetree.ErrPathEscape},
		{in: "../x", err: safetree.ErrPathEscape},
		{in: "a/../../x", err: safetree.ErrPathEscape},
		{in: "a/../b", err: safetree.ErrPathEscape},
		{in: "a\x00b", err: safetree.ErrPathEscape},
	} {
		got, err := safetree.CleanName(tc.in)
		if tc.err != nil {
			if !errors.Is(err, tc.err) || !errors.Is(err, safetree.ErrUnsafe) {
				t.Errorf("CleanName(%q) = %q, %v; want %v", tc.in, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("CleanName(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

func TestCheckLinkText(t *testing.T) {
	for _, tc := range []struct {
		name, target string
		ok           bool
	}{
		{"a/l", "b", true},
		{"a/l", "../b", true},
		{"a/l", "../../b", false},
		{"l", "..", false},
		{"l", "/etc", false},
		{"l", "", false},
		{"l", "a\x00", false},
	} {
		err := safetree.CheckLinkText(tc.name, tc.target)
		if (err == nil) != tc.ok || (err != nil && !errors.Is(err, safetree.ErrLinkEscape)) {
			t.Errorf("CheckLinkText(%q, %q) = %v, want ok=%v", tc.name, tc.target, err, tc.ok)
		}
	}
}

// tree builds a filetree tree from lines "d NAME", "f NAME" and "l NAME TARGET".
func tree(t testing.TB, spec string) (*filetree.FS, bool) {
	b := filetree.NewBuilder()
	for _, line := range strings.Split(spec, "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		name, err := safetree.CleanName(f[1])
		if err != nil || name == "." || !fs.ValidPath(name) {
			return nil, false
		}
		switch {
		case f[0] == "d":
			err = b.Mkdir(name, 0o755)
		case f[0] == "f":
			err = b.WriteFile(name, []byte(name), 0o644)
		case f[0] == "l" && len(f) == 3:
			err = b.Symlink(f[2], name)
		default:
			return nil, false
		}
		if err != nil {
			return nil, false
		}
	}
	return b.FS(), true
}

// The chain of the review: every link's text stays inside, but followed
// together they reach /etc/passwd.
const chainAttack = `
d a/b/c/d
l a/b/c/d/up ../..
l passwd.yaml a/b/c/d/up/../../../../etc/passwd
`

// loopFreeChain leaves the tree as chainAttack does, through a link to
// no folder that holds it.
const loopFreeChain = `
d a/b/c/d
d z
l a/b/c/d/s ../../../../z
l passwd.yaml a/b/c/d/s/../../../../etc/passwd
`

// CheckLinks refuses what leaves the tree; CheckWalkableLinks that too,
// and a link to a folder that holds it, which an add-on may hold (spec
// 9.4) but which a walk following links never ends in.
func TestCheckLinks(t *testing.T) {
	loop := safetree.ErrLinkLoop
	for _, tc := range []struct {
		name, spec      string
		links, walkable error // nil: accepted
	}{
		{"inside", "f a/x.yaml\nl b a/x.yaml\nl c b", nil, nil},
		{"dir link", "f a/x.yaml\nl b a\nl c b/x.yaml", nil, nil},
		{"dangling inside", "l x missing/file", nil, nil},
		{"lexical escape", "l x ../etc", safetree.ErrLinkEscape, safetree.ErrLinkEscape},
		// The walkable check meets the chain's link to a parent first.
		{"chain attack", chainAttack, safetree.ErrLinkEscape, loop},
		{"loop-free chain attack", loopFreeChain, safetree.ErrLinkEscape, safetree.ErrLinkEscape},
		{"up twice", "d h\nl h/up ..\nl x h/up/h/up/..", safetree.ErrLinkEscape, loop},
		{"dangling escape", "l x missing/../../etc", safetree.ErrLinkEscape, safetree.ErrLinkEscape},
		{"loop", "l a b\nl b a", safetree.ErrLinkEscape, safetree.ErrLinkEscape},
		{"self", "l a a/x", safetree.ErrLinkEscape, safetree.ErrLinkEscape},
		{"absolute in chain", "f y\nl a y\nl y2 a", nil, nil},
		{"to its parent", "f base/k.yaml\nl base/loop ..", nil, loop},
		{"to its own folder", "f base/k.yaml\nl base/loop .", nil, loop},
		{"to the root, deep", "f a/b/c/k.yaml\nl a/b/c/up ../../..", nil, loop},
		{"to its parent by name", "f base/k.yaml\nl base/loop ../base", nil, loop},
		{"to its parent through another link", "f base/k.yaml\nl dot .\nl base/loop ../dot", nil, loop},
		{"to a sibling folder", "f a/k.yaml\nf b/k.yaml\nl a/b ../b", nil, nil},
		{"to a child folder", "f a/sub/k.yaml\nl a/s sub", nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fsys, ok := tree(t, tc.spec)
			if !ok {
				t.Fatal("bad spec")
			}
			for _, c := range []struct {
				name  string
				check func(fs.ReadLinkFS) error
				want  error
				loops bool
			}{{"CheckLinks", safetree.CheckLinks, tc.links, false}, {"CheckWalkableLinks", safetree.CheckWalkableLinks, tc.walkable, true}} {
				err := c.check(fsys)
				if (err == nil) != (c.want == nil) || err != nil && (!errors.Is(err, c.want) || !errors.Is(err, safetree.ErrUnsafe)) {
					t.Fatalf("%s = %v, want %v", c.name, err, c.want)
				}
				if c.want == nil {
					checkAgainstKernel(t, fsys, c.loops)
				}
			}
		})
	}
}

// The in-memory tree reads a link exactly as the check judged it: the
// chain attack cannot be read through filetree either.
func TestResolveIsTheReadersRule(t *testing.T) {
	fsys, _ := tree(t, chainAttack+"f a/etc/passwd\n")
	if _, err := fsys.ReadFile("passwd.yaml"); err == nil {
		t.Fatal("filetree read passwd.yaml through a chain that leaves the tree")
	}
	fsys, _ = tree(t, "d a/b\nf a/x.yaml\nl a/b/up ..\nl y a/b/up/x.yaml")
	got, err := safetree.Resolve(fsys, "y")
	if err != nil || got != "a/x.yaml" {
		t.Fatalf("Resolve(y) = %q, %v; want a/x.yaml", got, err)
	}
	if b, err := fsys.ReadFile("y"); err != nil || string(b) != "a/x.yaml" {
		t.Fatalf("ReadFile(y) = %q, %v", b, err)
	}
}

func TestCheckCase(t *testing.T) {
	for _, tc := range []struct {
		name, spec string
		ok         bool
	}{
		{"distinct", "f a.yaml\nf b.yaml", true},
		{"same name other dirs", "f a/x.yaml\nf b/X.yaml", true},
		{"case", "f CoreDNS.yaml\nf coredns.yaml", false},
		{"dirs", "f A/x\nf a/y", false},
		{"unicode normalization", "f caf\u00e9\nf cafe\u0301", false},
		{"folding beyond ASCII", "f stra\u00dfe\nf STRASSE", false},
		// x/text's Fold swaps Cherokee's cases instead of folding them.
		{"cherokee", "f \u13a0.yaml\nf \uab70.yaml", false},
		{"cherokee in a longer name", "f a\u13f0b\nf A\u13f8B", false},
		{"greek, full folding and normalization", "f \u0390\nf \u03aa\u0301", false},
		// Folded after composing, Ś became ś while ſ + acute became s + acute.
		{"fold then normalize", "f S\u0301.yaml\nf \u017f\u0301.yaml", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fsys, ok := tree(t, tc.spec)
			if !ok {
				t.Fatal("bad spec")
			}
			err := safetree.CheckCase(fsys)
			if (err == nil) != tc.ok {
				t.Fatalf("CheckCase = %v, want ok=%v", err, tc.ok)
			}
			if err != nil && !errors.Is(err, safetree.ErrCaseCollision) {
				t.Fatalf("CheckCase = %v, want ErrCaseCollision", err)
			}
		})
	}
}

func TestLimits(t *testing.T) {
	l := safetree.Limits{MaxPathLength: 8, MaxDepth: 2, MaxEntries: 3, MaxFileBytes: 10, MaxAddonBytes: 15, MaxLayers: 2}.WithDefaults()
	for _, tc := range []struct {
		name string
		err  error
		flag safetree.LimitID
	}{
		{"path", l.CheckPath("abcdefghi"), safetree.LimitPathLength},
		{"depth", l.CheckPath("a/b/c"), safetree.LimitDepth},
		{"entries", l.CheckEntries(4), safetree.LimitEntries},
		{"file", l.CheckFile("f", 11, 0), safetree.LimitFileBytes},
		{"tree", l.CheckFile("f", 10, 6), safetree.LimitAddonBytes},
		{"layers", l.CheckLayers(3), safetree.LimitLayers},
	} {
		var le *safetree.LimitError
		if !errors.As(tc.err, &le) || le.Which != tc.flag || !errors.Is(tc.err, safetree.ErrLimit) {
			t.Errorf("%s: %v, want a LimitError for %s", tc.name, tc.err, tc.flag)
		}
	}
	for _, err := range []error{l.CheckPath("a/b"), l.CheckEntries(3), l.CheckFile("f", 10, 5), l.CheckLayers(2)} {
		if err != nil {
			t.Errorf("within the limits: %v", err)
		}
	}
	if d := (safetree.Limits{}).WithDefaults(); d.MaxLayers != safetree.DefaultMaxLayers || d.MaxAddonBytes != safetree.DefaultMaxAddonBytes {
		t.Errorf("defaults: %+v", d)
	}
}

// checkAgainstKernel writes fsys to disk and has the kernel resolve every
// link: none that CheckLinks let pass may resolve outside the tree, nor,
// with loops, to a folder that holds it (CheckWalkableLinks).
func checkAgainstKernel(t testing.TB, fsys *filetree.FS, loops bool) {
	dir := t.TempDir()
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	var links []string
	err = fs.WalkDir(fsys, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || name == "." {
			return err
		}
		switch {
		case d.IsDir():
			return root.Mkdir(name, 0o755)
		case d.Type()&fs.ModeSymlink != 0:
			target, err := fsys.ReadLink(name)
			if err != nil {
				return err
			}
			links = append(links, name)
			return root.Symlink(target, name)
		default:
			return root.WriteFile(name, []byte("x"), 0o644)
		}
	})
	if err != nil {
		t.Skipf("tree not writable here: %v", err)
	}
	base, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range links {
		got, err := filepath.EvalSymlinks(filepath.Join(dir, l))
		if err != nil {
			continue // the kernel cannot resolve it either
		}
		if got != base && !strings.HasPrefix(got, base+string(filepath.Separator)) {
			t.Fatalf("CheckLinks passed %s, which the kernel resolves to %s, outside %s", l, got, base)
		}
		parent, err := filepath.EvalSymlinks(filepath.Dir(filepath.Join(dir, l)))
		if loops && err == nil && (parent == got || strings.HasPrefix(parent, got+string(filepath.Separator))) {
			t.Fatalf("CheckLinks passed %s, which the kernel resolves to %s, a folder that holds it", l, got)
		}
	}
}
