// Package folder reads an add-on tree from the local file system (a
// directory, one file, or a stream) into memory, applying .addonignore,
// the default ignore rules and the tree rules of package safetree before
// anything is read. Building and every tree source read folders this way,
// so an add-on unpacks the same whether it was built or fetched. Open
// applies the same walk and rules to a directory but keeps only its
// listing, as a filetree.FS whose files are read from the folder (through
// an os.Root, this package's filetree.Opener) each time the tree reads
// them: a build of a large folder holds its shape, not its bytes.
package folder

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/addonpkg/addonpkg/internal/ignore"
	"github.com/addonpkg/addonpkg/pkg/filetree"
	"github.com/addonpkg/addonpkg/pkg/safetree"
)

// ErrSymlinkOutside marks a source symlink that leads out of the tree.
var ErrSymlinkOutside = errors.New("symlink leads out of the add-on tree")

// ErrBadName marks a source file name that cannot travel in a layer.
var ErrBadName = errors.New("unusable file name")

// ErrEmpty marks a source with nothing to package.
var ErrEmpty = errors.New("no files to package")

// maxLinkDepth bounds directory symlinks followed while loading, so that
// a cycle of links cannot loop.
const maxLinkDepth = 32

// LoadDir reads the add-on tree at dir into memory, applying .addonignore
// and the default ignore rules, within the default limits
// (safetree.Limits). Symlinks that stay inside dir are stored as their
// target's content; any that leads out, through other links too, is
// refused. The reads go through os.Root, so nothing outside dir is ever
// opened.
func LoadDir(dir string) (*filetree.FS, error) { return Load(dir, safetree.Limits{}) }

// Load is LoadDir within limits (zero fields take the defaults): every
// file's size, the tree's total, its entries, path lengths and depths are
// checked from the folder's listing (Open) before any file is read, so a
// folder (or one file) cannot make the reader allocate more than the
// limits allow.
func Load(dir string, limits safetree.Limits) (*filetree.FS, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, &fs.PathError{Op: "read source", Path: dir, Err: errors.Unwrap(err)}
	}
	if !st.IsDir() {
		return loadFile(dir, limits.WithDefaults())
	}
	t, err := Open(dir, limits)
	if err != nil {
		return nil, err
	}
	defer t.Close()
	return load(t)
}

// list walks the folder dir with every check of Load into a tree that
// reads its files from the folder when they are read: the folder's root
// stays open until the tree is closed.
func list(dir string, limits safetree.Limits) (*filetree.FS, error) {
	limits = limits.WithDefaults()
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("open source %s: %w", dir, err)
	}
	o := newOpener(dir, root)
	b := filetree.NewBuilder()
	if err := walkRoot(dir, limits, o, b); err != nil {
		o.Close()
		return nil, err
	}
	return b.FS(), nil
}

// walkRoot is list's walk of the folder open in o, into b.
func walkRoot(dir string, limits safetree.Limits, o *opener, b *filetree.Builder) error {
	root := o.root
	rules, err := root.ReadFile(ignore.FileName)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("read %s: %w", filepath.Join(dir, ignore.FileName), err)
	}
	m, err := ignore.Parse(rules)
	if err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	rootFS, ok := root.FS().(fs.ReadLinkFS)
	if !ok {
		return fmt.Errorf("open source %s: links cannot be read", dir)
	}
	l := &loader{dir: dir, root: root, rootFS: rootFS, ignore: m, limits: limits, o: o, b: b}
	if err := l.walk(".", ".", 0); err != nil {
		return err
	}
	if l.files == 0 {
		return fmt.Errorf("%s: %w (the directory is empty or every file is ignored)", dir, ErrEmpty)
	}
	return nil
}

// LoadFile makes a one-file tree from a single manifest file, within the
// default file size limit.
func LoadFile(file string) (*filetree.FS, error) {
	return loadFile(file, safetree.Limits{}.WithDefaults())
}

func loadFile(file string, limits safetree.Limits) (*filetree.FS, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, &fs.PathError{Op: "read source", Path: file, Err: errors.Unwrap(err)}
	}
	defer f.Close()
	name := filepath.Base(file)
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() && st.Size() > limits.MaxFileBytes {
		return nil, &safetree.LimitError{Name: "file size", Limit: limits.MaxFileBytes, Which: safetree.LimitFileBytes, Entry: name}
	}
	return loadCapped(name, f, limits.MaxFileBytes)
}

// LoadReader makes a one-file tree named name from r (a YAML stream on
// stdin), within the default file size limit.
func LoadReader(name string, r io.Reader) (*filetree.FS, error) {
	return loadCapped(name, r, safetree.DefaultMaxFileBytes)
}

// loadCapped reads at most max bytes of r, refusing more before it holds
// them.
func loadCapped(name string, r io.Reader, max int64) (*filetree.FS, error) {
	b, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	if int64(len(b)) > max {
		return nil, &safetree.LimitError{Name: "file size", Limit: max, Which: safetree.LimitFileBytes, Entry: name}
	}
	return LoadBytes(name, b)
}

// LoadBytes makes a one-file tree.
func LoadBytes(name string, b []byte) (*filetree.FS, error) {
	if len(b) == 0 {
		return nil, fmt.Errorf("%s: %w (the file is empty)", name, ErrEmpty)
	}
	mb := filetree.NewBuilder()
	if err := mb.WriteFile(name, b, 0o644); err != nil {
		return nil, err
	}
	return mb.FS(), nil
}

type loader struct {
	dir    string
	root   *os.Root
	rootFS fs.ReadLinkFS // root's view, for safetree.Resolve
	ignore *ignore.Matcher
	limits safetree.Limits
	o      *opener           // reads the listed files
	b      *filetree.Builder // the listing
	files  int
	held   int64 // bytes of files listed, not yet in b
}

// walk lists the source directory src into the tree at dst. They differ
// only below a symlinked directory.
func (l *loader) walk(src, dst string, depth int) error {
	dir, err := l.root.OpenRoot(src)
	if err != nil {
		return fmt.Errorf("read %s: %w", filepath.Join(l.dir, src), err)
	}
	defer dir.Close()
	f, err := dir.Open(".")
	if err != nil {
		return fmt.Errorf("read %s: %w", filepath.Join(l.dir, src), err)
	}
	entries, err := f.ReadDir(-1)
	f.Close()
	if err != nil {
		return fmt.Errorf("read %s: %w", filepath.Join(l.dir, src), err)
	}
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	var files []fileJob // added after the directories, then sorted
	for _, e := range entries {
		s, d := path.Join(src, e.Name()), path.Join(dst, e.Name())
		// A .wh. name would turn into a whiteout in a layer; a name that
		// is not UTF-8 reads differently on every tool.
		if strings.HasPrefix(e.Name(), ".wh.") {
			return fmt.Errorf("%s: %w: names starting with .wh. are whiteout markers in OCI layers", filepath.Join(l.dir, s), ErrBadName)
		}
		if !utf8.ValidString(e.Name()) {
			return fmt.Errorf("%q: %w: not valid UTF-8", filepath.Join(l.dir, s), ErrBadName)
		}
		mode := e.Type()
		var (
			size int64
			perm fs.FileMode // of a file, as listed (Open keeps it)
		)
		if mode&fs.ModeSymlink != 0 {
			// A link the ignore rules leave out is not judged: it is no
			// part of the add-on. Emacs' lock files (.#a.yaml, a default
			// rule) are links that lead nowhere, and .addonignore is how
			// a folder leaves out a link to a build's output elsewhere.
			// Only a pattern for directories needs to know what the link
			// points to, judged below.
			if l.ignore.Match(d, false) && l.ignore.Match(d, true) {
				continue
			}
			// Judged as every tree's links are: through each other.
			if err := l.checkLink(s); err != nil {
				return err
			}
			st, err := l.root.Stat(s)
			if err != nil {
				target, _ := l.root.Readlink(s)
				return fmt.Errorf("%s -> %s: broken symlink: %w", filepath.Join(l.dir, s), target, errors.Unwrap(err))
			}
			mode, size, perm = st.Mode().Type(), st.Size(), st.Mode().Perm()
		} else if mode.IsRegular() {
			info, err := e.Info()
			if err != nil {
				return fmt.Errorf("read %s: %w", filepath.Join(l.dir, s), err)
			}
			size, perm = info.Size(), info.Mode().Perm()
		}
		if l.ignore.Match(d, mode.IsDir()) {
			continue
		}
		// The limits are checked before anything is read.
		if err := l.limits.CheckPath(d); err != nil {
			return err
		}
		if err := l.limits.CheckEntries(l.b.Count() + len(files) + 1); err != nil {
			return err
		}
		if mode.IsRegular() {
			if err := l.limits.CheckFile(d, size, l.b.Size()+l.held); err != nil {
				return err
			}
			l.held += size
		}
		switch {
		case mode.IsDir():
			next := depth
			if e.Type()&fs.ModeSymlink != 0 {
				next++
				if next > maxLinkDepth {
					return fmt.Errorf("%s: too many levels of directory symlinks", filepath.Join(l.dir, s))
				}
			}
			if err := l.b.Mkdir(d, 0o755); err != nil {
				return err
			}
			if err := l.walk(s, d, next); err != nil {
				return err
			}
		case mode.IsRegular():
			// A link is read through the top root (its target may be
			// anywhere in the tree), a file through its directory's.
			files = append(files, fileJob{src: s, dst: d, link: e.Type()&fs.ModeSymlink != 0, size: size, perm: perm})
		default:
			return fmt.Errorf("%s is a %s: %w (an add-on holds only files, directories and links to them)", filepath.Join(l.dir, s), typeName(mode), safetree.ErrUnsupportedType)
		}
	}
	for _, f := range files {
		l.held -= f.size
		if f.link {
			if l.o.links == nil {
				l.o.links = map[string]bool{}
			}
			l.o.links[f.src] = true
		}
		if err := l.b.WriteFileFrom(f.dst, l.o, f.src, f.size, f.perm); err != nil {
			return err
		}
		l.files++
	}
	return nil
}

// typeName names a type of file that an add-on cannot hold, in words: a
// mode string (p---------) says nothing to most readers.
func typeName(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeCharDevice != 0:
		return "character device"
	case m&fs.ModeDevice != 0:
		return "block device"
	}
	return fmt.Sprintf("file of type %v", m.Type())
}

// fileJob is a file of one directory, listed.
type fileJob struct {
	src, dst string // in the source and in the tree
	link     bool   // a link in the source
	size     int64  // as listed, counted against the limits
	perm     fs.FileMode
}

// checkLink judges a link by the rule of every tree (safetree.CheckLink):
// one whose target text is absolute, even if os.Root could resolve it
// (the tree must not depend on where it sits), or that resolves outside
// the folder through other links, is ErrSymlinkOutside; one to a folder
// that holds it, safetree.ErrLinkLoop.
func (l *loader) checkLink(s string) error {
	target, err := l.root.Readlink(s)
	if err != nil {
		return err
	}
	err = safetree.CheckLink(l.rootFS, filepath.ToSlash(s))
	switch {
	case errors.Is(err, safetree.ErrLinkLoop):
		return fmt.Errorf("%s -> %s: %w", filepath.Join(l.dir, s), target, err)
	case errors.Is(err, safetree.ErrUnsafe):
		return fmt.Errorf("%s -> %s: %w: %w", filepath.Join(l.dir, s), target, ErrSymlinkOutside, err)
	}
	return err
}
