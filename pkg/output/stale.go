package output

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/gofrs/flock"
)

// Temp directories and killed writers.
//
// A Writer builds its tree in ".BASE.tmp-N" beside the target BASE (N is
// os.MkdirTemp's random decimal suffix), or in ".addonpkg-out.tmp-N"
// inside a target that exists (NewWriter), and holds an exclusive flock on
// that directory for as long as it lives; the kernel drops the lock when
// the process ends, however it ends. So a temp directory of BASE whose
// lock can be taken belongs to no live writer, in this process or any
// other on the machine: it is what a killed writer (SIGKILL, power loss)
// left, and the next Writer for the same target removes it before it
// makes its own. One whose lock is held is left alone: a concurrent writer
// is still filling it.
//
// Only entries that look exactly like a Writer's temp directory are
// touched: a real directory (not a symlink) named "." + BASE + ".tmp-"
// and digits. Where a directory cannot be locked at all (a file system
// without flock), nothing is removed and the writer goes on unlocked.

// tempPattern is the os.MkdirTemp pattern of a Writer's temp directory.
func tempPattern(base string) string { return "." + base + ".tmp-*" }

// isTempName reports whether name is a temp directory name of base.
func isTempName(name, base string) bool {
	rest, ok := strings.CutPrefix(name, "."+base+".tmp-")
	if !ok || rest == "" {
		return false
	}
	for _, r := range rest {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// lockDir opens the directory p read-only, to flock it.
func lockDir(p string) *flock.Flock { return flock.New(p, flock.SetFlag(os.O_RDONLY)) }

// removeStaleTemps removes the temp directories of parent/base that no
// live writer holds, and reports how many it removed. It is best effort:
// what it cannot list, lock or remove stays.
func removeStaleTemps(parent, base string) int {
	entries, err := os.ReadDir(parent)
	if err != nil {
		return 0
	}
	removed := 0
	for _, e := range entries {
		if !e.IsDir() || !isTempName(e.Name(), base) {
			continue // e.IsDir is false for a symlink: never followed
		}
		p := filepath.Join(parent, e.Name())
		l := lockDir(p)
		ok, err := l.TryLock()
		if err != nil || !ok {
			continue // held by a live writer, or not lockable here
		}
		// Holding the lock, remove: a writer that made this directory
		// but has not locked it yet waits for the lock, then sees its
		// directory gone and makes another (newTempDir).
		if os.RemoveAll(p) == nil {
			removed++
		}
		_ = l.Unlock()
	}
	return removed
}

// newTempDir removes stale temp directories of parent/base, then makes
// and locks a new one. release drops the lock; call it once the directory
// is renamed into place or removed.
func newTempDir(parent, base string) (tmp string, release func(), err error) {
	removeStaleTemps(parent, base)
	for try := 0; ; try++ {
		tmp, err := os.MkdirTemp(parent, tempPattern(base))
		if err != nil {
			return "", nil, err
		}
		l := lockDir(tmp)
		if err := l.Lock(); err != nil {
			// Not lockable here: no cleaner can lock it either.
			return tmp, func() {}, nil
		}
		if _, err := os.Lstat(tmp); err == nil {
			var once sync.Once
			return tmp, func() { once.Do(func() { _ = l.Unlock() }) }, nil
		}
		// A cleaner took it between MkdirTemp and Lock: make another.
		_ = l.Unlock()
		if try == 3 {
			return "", nil, fmt.Errorf("make a temp directory in %s: removed by another process %d times", parent, try+1)
		}
	}
}
