// Package output writes an add-on tree to disk, atomically and confined:
// everything goes into a temp directory beside the target, through
// os.Root, and is renamed into place only when complete.
package output

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
)

// ErrNotEmpty marks a target directory that already has content.
var ErrNotEmpty = errors.New("output directory is not empty")

// WriteDir writes fsys into dir, which must not exist or be empty. On
// failure nothing is left behind.
func WriteDir(fsys fs.FS, dir string) error {
	dir = filepath.Clean(dir)
	if entries, err := os.ReadDir(dir); err == nil {
		if len(entries) > 0 {
			return fmt.Errorf("%s: %w", dir, ErrNotEmpty)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("output %s: %w", dir, err)
	}
	parent := filepath.Dir(dir)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return fmt.Errorf("output %s: %w", dir, err)
	}
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(dir)+".tmp-*")
	if err != nil {
		return fmt.Errorf("output %s: %w", dir, err)
	}
	ok := false
	defer func() {
		if !ok {
			os.RemoveAll(tmp)
		}
	}()
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	if err := writeTree(fsys, tmp); err != nil {
		return fmt.Errorf("output %s: %w", dir, err)
	}
	// An empty target directory is replaced; rename cannot do that.
	if err := os.Remove(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("output %s: %w", dir, err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		return fmt.Errorf("output %s: %w", dir, err)
	}
	ok = true
	return nil
}

// writeTree copies fsys into dir through os.Root, which refuses any path
// that would leave dir, even through a symlink written earlier. Each
// directory is opened once and its files written by their base names (one
// openat each), by two workers.
func writeTree(fsys fs.FS, dir string) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	type job struct {
		dir  *os.Root
		name string // base name in dir
		full string // path in fsys
		perm fs.FileMode
	}
	jobs := make(chan job, 64)
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
	)
	fail := func(err error) {
		mu.Lock()
		if firstErr == nil {
			firstErr = err
		}
		mu.Unlock()
	}
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				b, err := fs.ReadFile(fsys, j.full)
				if err == nil {
					err = j.dir.WriteFile(j.name, b, j.perm)
				}
				if err != nil {
					fail(fmt.Errorf("%s: %w", j.full, err))
				}
			}
		}()
	}
	var roots []*os.Root
	dirs := map[string]*os.Root{".": root}
	walkErr := fs.WalkDir(fsys, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || name == "." {
			return err
		}
		parent := dirs[path.Dir(name)]
		base := path.Base(name)
		switch t := d.Type(); {
		case t.IsDir():
			if err := parent.Mkdir(base, 0o755); err != nil {
				return err
			}
			sub, err := parent.OpenRoot(base)
			if err != nil {
				return err
			}
			roots = append(roots, sub)
			dirs[name] = sub
			return nil
		case t&fs.ModeSymlink != 0:
			target, err := fs.ReadLink(fsys, name)
			if err != nil {
				return err
			}
			// os.Root does not check a link's target: do it here.
			j := path.Join(path.Dir(name), target)
			if path.IsAbs(target) || j == ".." || strings.HasPrefix(j, "../") {
				return fmt.Errorf("%s: symlink %q leads out of the tree", name, target)
			}
			return parent.Symlink(target, base)
		case t.IsRegular():
			info, err := d.Info()
			if err != nil {
				return err
			}
			perm := fs.FileMode(0o644)
			if info.Mode().Perm()&0o111 != 0 {
				perm = 0o755
			}
			jobs <- job{dir: parent, name: base, full: name, perm: perm}
			return nil
		}
		return fmt.Errorf("%s: unsupported file type", name)
	})
	close(jobs)
	wg.Wait()
	for _, r := range roots {
		r.Close()
	}
	if walkErr != nil {
		return walkErr
	}
	return firstErr
}
