package build

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/addonpkg/addonpkg/pkg/ignore"
	"github.com/addonpkg/addonpkg/pkg/memfs"
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
// and the default ignore rules. Symlinks that stay inside dir are stored
// as their target's content; any that leads out is refused. The reads go
// through os.Root, so nothing outside dir is ever opened.
func LoadDir(dir string) (*memfs.FS, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("read source %s: %w", dir, errors.Unwrap(err))
	}
	if !st.IsDir() {
		return LoadFile(dir)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("open source %s: %w", dir, err)
	}
	defer root.Close()

	rules, err := root.ReadFile(ignore.FileName)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("read %s: %w", filepath.Join(dir, ignore.FileName), err)
	}
	m, err := ignore.Parse(rules)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	l := &loader{dir: dir, root: root, ignore: m, b: memfs.NewBuilder()}
	if err := l.walk(".", ".", 0); err != nil {
		return nil, err
	}
	if l.files == 0 {
		return nil, fmt.Errorf("%s: %w (the directory is empty or every file is ignored)", dir, ErrEmpty)
	}
	return l.b.FS(), nil
}

// LoadFile makes a one-file tree from a single manifest file.
func LoadFile(file string) (*memfs.FS, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("read source %s: %w", file, errors.Unwrap(err))
	}
	return LoadBytes(filepath.Base(file), b)
}

// LoadReader makes a one-file tree named name from r (a YAML stream on stdin).
func LoadReader(name string, r io.Reader) (*memfs.FS, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	return LoadBytes(name, b)
}

// LoadBytes makes a one-file tree.
func LoadBytes(name string, b []byte) (*memfs.FS, error) {
	if len(b) == 0 {
		return nil, fmt.Errorf("%s: %w (the file is empty)", name, ErrEmpty)
	}
	mb := memfs.NewBuilder()
	if err := mb.WriteFile(name, b, 0o644); err != nil {
		return nil, err
	}
	return mb.FS(), nil
}

type loader struct {
	dir    string
	root   *os.Root
	ignore *ignore.Matcher
	b      *memfs.Builder
	files  int
}

// walk copies the source directory src into the tree at dst. They differ
// only below a symlinked directory. Files are opened relative to their own
// directory (one openat each) rather than resolved from the root again.
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
	var files []fileJob // read together below, while dir is open
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
		if mode&fs.ModeSymlink != 0 {
			st, err := l.root.Stat(s)
			if err != nil {
				target, _ := l.root.Readlink(s)
				if isEscape(err) || filepath.IsAbs(target) {
					return fmt.Errorf("%s -> %s: %w", filepath.Join(l.dir, s), target, ErrSymlinkOutside)
				}
				return fmt.Errorf("%s -> %s: broken symlink: %w", filepath.Join(l.dir, s), target, errors.Unwrap(err))
			}
			if err := l.checkLinkInside(s); err != nil {
				return err
			}
			mode = st.Mode().Type()
		}
		if l.ignore.Match(d, mode.IsDir()) {
			continue
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
			// Through the top root for links (their target may be anywhere
			// in the tree), through this directory's root otherwise.
			opener := dir
			name := e.Name()
			if e.Type()&fs.ModeSymlink != 0 {
				opener, name = l.root, s
			}
			files = append(files, fileJob{opener: opener, name: name, src: s, dst: d})
		default:
			return fmt.Errorf("%s: unsupported file type (%v): an add-on holds only files and directories", filepath.Join(l.dir, s), mode)
		}
	}
	readFiles(files)
	for _, f := range files {
		if f.err != nil {
			return fmt.Errorf("read %s: %w", filepath.Join(l.dir, f.src), f.err)
		}
		if err := l.b.WriteFile(f.dst, f.data, f.perm); err != nil {
			return err
		}
		l.files++
	}
	return nil
}

// fileJob is a file of one directory to read.
type fileJob struct {
	opener   *os.Root
	name     string // in opener
	src, dst string // in the source and in the tree
	data     []byte
	perm     fs.FileMode
	err      error
}

// readFiles reads the files on every core: for a large add-on, the open,
// read and close calls are a good part of a build.
func readFiles(files []fileJob) {
	workers := min(runtime.GOMAXPROCS(0), len(files))
	if workers <= 1 {
		for i := range files {
			f := &files[i]
			f.data, f.perm, f.err = readFile(f.opener, f.name)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < len(files); i = int(next.Add(1) - 1) {
				f := &files[i]
				f.data, f.perm, f.err = readFile(f.opener, f.name)
			}
		}()
	}
	wg.Wait()
}

// readFile reads a whole file and its permissions with one open.
func readFile(r *os.Root, name string) ([]byte, fs.FileMode, error) {
	f, err := r.Open(name)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, 0, err
	}
	data := make([]byte, st.Size())
	if _, err := io.ReadFull(f, data); err != nil {
		return nil, 0, fmt.Errorf("file changed while read: %w", err)
	}
	return data, st.Mode().Perm(), nil
}

// checkLinkInside refuses a link whose target text is absolute, even if
// os.Root could resolve it: the tree must not depend on where it sits.
func (l *loader) checkLinkInside(s string) error {
	target, err := l.root.Readlink(s)
	if err != nil {
		return err
	}
	joined := path.Join(path.Dir(s), filepath.ToSlash(target))
	if filepath.IsAbs(target) || joined == ".." || strings.HasPrefix(joined, "../") {
		return fmt.Errorf("%s -> %s: %w", filepath.Join(l.dir, s), target, ErrSymlinkOutside)
	}
	return nil
}

func isEscape(err error) bool {
	return err != nil && strings.Contains(err.Error(), "escapes")
}
