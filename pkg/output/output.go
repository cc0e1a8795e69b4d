// Package output writes an add-on tree to disk, atomically and confined:
// everything goes into a temp directory, through os.Root, and is moved
// into place only when complete. The temp directory is beside a target
// that does not exist yet, and inside one that exists (it must be empty),
// which is then filled and never replaced. The tree is made durable
// before it is moved into place (atomicfile.SyncTree), and the move
// after, so that a crash never leaves empty files in the target: a new
// target is there with all of the tree or not at all (one rename); an
// existing empty one is filled a top-level entry at a time, so a crash
// while it is filled can leave some of them there, beside the temp
// directory.
package output

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"unicode/utf8"

	"github.com/addonpkg/addonpkg/internal/atomicfile"
	"github.com/addonpkg/addonpkg/pkg/filetree"
	"github.com/addonpkg/addonpkg/pkg/safetree"
)

// ErrNotEmpty marks a target directory that already has content.
var ErrNotEmpty = errors.New("output directory is not empty")

// WriteDir writes fsys into dir, which must not exist or be empty. On
// failure nothing is left behind.
func WriteDir(fsys fs.FS, dir string) error {
	w, err := NewWriter(dir)
	if err != nil {
		return err
	}
	return w.Commit(fsys)
}

// Writer writes a tree into a temp directory and moves it into place on
// Commit (NewWriter says where the temp directory is). Files may be
// handed over early, with WriteFile, while the rest of the tree is still
// being read: they are written in the background, so reading and writing
// overlap.
type Writer struct {
	dir, tmp string
	root     *os.Root
	// inPlace: dir existed, tmp is inside it, and Commit moves the
	// tree's entries into it instead of renaming tmp to dir.
	inPlace bool
	// made are the folders above dir that NewWriter made: a failed or
	// aborted write removes them too (atomicfile.RemoveMade).
	made []string

	jobs chan writeJob
	wg   sync.WaitGroup

	mu       sync.Mutex
	dirs     map[string]*os.Root // opened directories of tmp
	dirFiles map[string]*os.File // and their descriptors, where writeData uses them
	written  map[string]bool     // files WriteFile or Copy handed over
	copies   []copyJob           // made at Commit, once their sources are written
	firstErr error
	stopped  bool
	done     bool

	// queued is the bytes handed to WriteFile and not written yet,
	// inflight the jobs not finished; drained signals that either went
	// down.
	queued   int64
	inflight int
	drained  *sync.Cond
	// spill is the directory of tmp that SpillDir made ("" until then).
	spill string

	unlockTmp func() // drops the temp directory's lock (stale.go)
}

// maxQueued bounds the bytes WriteFile holds for the writers: past it,
// WriteFile waits, so a reader faster than the disk cannot pile the tree
// up in memory.
const maxQueued = 8 << 20

type copyJob struct {
	name, src string
	perm      fs.FileMode
}

type writeJob struct {
	name string
	data []byte
	from string // a file of the spill directory to move to name instead
	perm fs.FileMode
}

// writers is how many files are written at once.
const writers = 2

// NewWriter checks that dir does not exist or is an empty directory and
// makes the temp directory. Call Commit or Abort.
//
// A dir that does not exist is made by renaming the temp directory, made
// beside it, into place. A dir that exists (a symlink to one included) is
// filled, not replaced: the temp directory is made inside it and Commit
// moves the tree's entries into it. Replacing it (remove, then rename)
// could not write into a mount point (a container's volume, EBUSY), the
// current directory (-o ., EINVAL, or a working directory deleted under
// the shell), a directory whose parent the user may not write, or through
// a symlink (the link itself was replaced); and it dropped the
// directory's own mode and owner.
func NewWriter(dir string) (*Writer, error) {
	dir = filepath.Clean(dir)
	inPlace, err := existingDir(dir)
	if err != nil {
		return nil, &fs.PathError{Op: "output", Path: dir, Err: err}
	}
	parent, base := filepath.Dir(dir), tempBase(filepath.Base(dir))
	if inPlace {
		// A directory with content is refused untouched; in an empty one,
		// what a killed writer left goes first.
		if err := checkEmpty(dir); errors.Is(err, ErrNotEmpty) {
			return nil, err
		} else if err != nil {
			return nil, &fs.PathError{Op: "output", Path: dir, Err: err}
		}
		removeStaleTemps(dir, inPlaceBase)
		parent, base = dir, inPlaceBase
	}
	var made []string
	if !inPlace {
		if made, err = atomicfile.MakeParent(dir); err != nil {
			atomicfile.RemoveMade(made)
			return nil, &fs.PathError{Op: "output", Path: dir, Err: err}
		}
	}
	tmp, unlockTmp, err := newTempDir(parent, base)
	if err != nil {
		atomicfile.RemoveMade(made)
		return nil, &fs.PathError{Op: "output", Path: dir, Err: err}
	}
	root, err := os.OpenRoot(tmp)
	if err == nil {
		// The temp directory was made private (0700); the tree it becomes
		// gets what a mkdir gives, as its subdirectories and files do.
		err = os.Chmod(tmp, dirPerm(root))
	}
	if err != nil {
		if root != nil {
			root.Close()
		}
		os.RemoveAll(tmp)
		unlockTmp()
		atomicfile.RemoveMade(made)
		return nil, &fs.PathError{Op: "output", Path: dir, Err: err}
	}
	w := &Writer{
		dir: dir, tmp: tmp, root: root, unlockTmp: unlockTmp, inPlace: inPlace, made: made,
		jobs:    make(chan writeJob, 256),
		dirs:    map[string]*os.Root{".": root},
		written: map[string]bool{},
	}
	w.drained = sync.NewCond(&w.mu)
	for range writers {
		w.wg.Add(1)
		go w.work()
	}
	return w, nil
}

// WriteFile queues a regular file of the final tree, making its parent
// directories. data must not change until Commit or Abort returns. A
// failure is reported by Commit.
func (w *Writer) WriteFile(name string, data []byte, perm fs.FileMode) {
	n := int64(len(data))
	w.mu.Lock()
	w.written[name] = true
	for w.queued > 0 && w.queued+n > maxQueued && w.firstErr == nil {
		w.drained.Wait()
	}
	w.queued += n
	w.inflight++
	w.mu.Unlock()
	w.jobs <- writeJob{name: name, data: data, perm: filePerm(perm)}
}

// SpillDir returns a directory inside the temp tree where an unpack may
// stream large files (unpack.Options.SpillDir): TakeFile then moves them
// into place without a copy, and Commit and Abort remove what is left.
func (w *Writer) SpillDir() (string, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.spill == "" {
		var r [8]byte
		if _, err := rand.Read(r[:]); err != nil {
			return "", err
		}
		name := spillPrefix + hex.EncodeToString(r[:])
		if err := w.root.Mkdir(name, 0o700); err != nil {
			return "", fmt.Errorf("output %s: %w", w.dir, err)
		}
		w.spill = name
	}
	return filepath.Join(w.tmp, w.spill), nil
}

// spillPrefix names the spill directory; the random rest makes it a name
// no add-on has (Commit checks).
const spillPrefix = ".addonpkg-spill-"

// TakeFile makes the file at path, in SpillDir, the tree's file name: it
// is moved into place (with mode perm) by the writers. With File and
// Copy, it makes a Writer an unpack.DiskSink.
func (w *Writer) TakeFile(name, path string, mode fs.FileMode) {
	w.mu.Lock()
	w.written[name] = true
	spill := w.spill
	w.inflight++
	w.mu.Unlock()
	from := path
	if rel, err := filepath.Rel(filepath.Join(w.tmp, spill), path); err == nil && spill != "" && filepath.IsLocal(rel) {
		from = filepath.ToSlash(filepath.Join(spill, rel))
	} else {
		w.fail(fmt.Errorf("%s: %s is not in the spill directory", name, path))
		w.written1(0)
		return
	}
	w.jobs <- writeJob{name: name, from: from, perm: filePerm(mode)}
}

// File is WriteFile: with Copy, it makes a Writer an unpack.Sink.
func (w *Writer) File(name string, data []byte, mode fs.FileMode) { w.WriteFile(name, data, mode) }

// Copy makes name a copy of src, a file handed over before, at Commit.
func (w *Writer) Copy(name, src string, mode fs.FileMode) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.written[name] = true
	w.copies = append(w.copies, copyJob{name: name, src: src, perm: filePerm(mode)})
}

// copyFiles makes the copies Copy asked for; every write has finished.
func (w *Writer) copyFiles() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, c := range w.copies {
		if err := w.copyLocked(c); err != nil {
			return err
		}
	}
	return nil
}

// copyLocked makes one copy; w.mu is held.
func (w *Writer) copyLocked(c copyJob) error {
	from, err := w.dirOfLocked(path.Dir(c.src))
	if err != nil {
		return err
	}
	b, err := from.ReadFile(path.Base(c.src))
	if err != nil {
		return fmt.Errorf("%s: copy of %s: %w", c.name, c.src, err)
	}
	to, err := w.dirOfLocked(path.Dir(c.name))
	if err != nil {
		return err
	}
	if err := to.WriteFile(path.Base(c.name), b, c.perm); err != nil {
		return fmt.Errorf("%s: %w", c.name, err)
	}
	return nil
}

func (w *Writer) work() {
	defer w.wg.Done()
	for j := range w.jobs {
		if err := w.write(j); err != nil {
			w.fail(fmt.Errorf("%s: %w", j.name, err))
		}
	}
}

func (w *Writer) write(j writeJob) error {
	defer w.written1(int64(len(j.data)))
	d, err := w.dirOf(path.Dir(j.name))
	if err != nil {
		return err
	}
	if j.from != "" {
		// Both names are inside the temp tree, which has no links yet.
		if err := w.root.Rename(j.from, j.name); err != nil {
			return err
		}
		return w.root.Chmod(j.name, j.perm)
	}
	return w.writeData(d, path.Dir(j.name), path.Base(j.name), j.data, j.perm)
}

// written1 takes a finished write (of n bytes) off the queue.
func (w *Writer) written1(n int64) {
	w.mu.Lock()
	w.queued -= n
	w.inflight--
	w.mu.Unlock()
	w.drained.Broadcast()
}

// Remove takes back name, a file or directory handed over before, with
// everything below it: the same path twice in one layer, the later entry
// replaces the first (unpack.Remover). It waits for the queued writes;
// a copy (a hard link) of a file it removes is made first, from the old
// file, as the link was made before the file was replaced.
func (w *Writer) Remove(name string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for w.inflight > 0 && w.firstErr == nil {
		w.drained.Wait()
	}
	under := func(p string) bool { return p == name || strings.HasPrefix(p, name+"/") }
	var keep []copyJob
	for _, c := range w.copies {
		switch {
		case under(c.name):
		case under(c.src):
			if err := w.copyLocked(c); err != nil && w.firstErr == nil {
				w.firstErr = err
			}
		default:
			keep = append(keep, c)
		}
	}
	w.copies = keep
	for k, d := range w.dirs {
		if k != "." && under(k) {
			d.Close()
			delete(w.dirs, k)
		}
	}
	for k, f := range w.dirFiles {
		if k != "." && under(k) {
			f.Close()
			delete(w.dirFiles, k)
		}
	}
	for k := range w.written {
		if under(k) {
			delete(w.written, k)
		}
	}
	if err := w.root.RemoveAll(name); err != nil && w.firstErr == nil {
		w.firstErr = fmt.Errorf("%s: %w", name, err)
	}
}

// dirOf opens (making it if needed) a directory of the temp tree, once.
func (w *Writer) dirOf(name string) (*os.Root, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.dirOfLocked(name)
}

func (w *Writer) dirOfLocked(name string) (*os.Root, error) {
	if d, ok := w.dirs[name]; ok {
		return d, nil
	}
	parent, err := w.dirOfLocked(path.Dir(name))
	if err != nil {
		return nil, err
	}
	base := path.Base(name)
	if err := parent.Mkdir(base, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, err
	}
	// os.Root refuses to open a symlink that leads out, and the tree has
	// no symlinks yet while files are written: they come last.
	d, err := parent.OpenRoot(base)
	if err != nil {
		return nil, err
	}
	w.dirs[name] = d
	return d, nil
}

func (w *Writer) fail(err error) {
	w.mu.Lock()
	if w.firstErr == nil {
		w.firstErr = err
	}
	w.mu.Unlock()
	w.drained.Broadcast()
}

// Commit writes what of fsys was not handed over yet (directories,
// symlinks, other files), waits for the writes, and renames the temp
// directory into place. On failure nothing is left behind.
func (w *Writer) Commit(fsys fs.FS) error {
	defer w.unlockTmp()
	err := w.complete(fsys)
	w.stopWorkers()
	if err == nil {
		err = w.Err()
	}
	if err == nil {
		err = w.copyFiles()
	}
	if err == nil && w.spill != "" {
		err = w.root.RemoveAll(w.spill)
	}
	w.finish()
	// The tree's bytes reach the disk before the rename that publishes
	// it, and the rename after it: a crash leaves no empty files in dir.
	if err == nil {
		err = syncTree(w.tmp)
	}
	if err == nil && w.inPlace {
		err = w.moveIn()
		if err == nil {
			err = syncDir(w.dir)
		}
	} else if err == nil {
		err = w.renameIn()
		if err == nil {
			err = syncDir(filepath.Dir(w.dir))
		}
	}
	if err != nil {
		os.RemoveAll(w.tmp)
		atomicfile.RemoveMade(w.made)
		return fmt.Errorf("output %s: %w", w.dir, err)
	}
	return nil
}

// syncTree and syncDir are atomicfile's: variables so that a test can
// watch them.
var (
	syncTree = atomicfile.SyncTree
	syncDir  = atomicfile.SyncDir
)

// Abort drops everything written so far.
func (w *Writer) Abort() {
	defer w.unlockTmp()
	w.finish()
	os.RemoveAll(w.tmp)
	atomicfile.RemoveMade(w.made)
}

// stopWorkers waits for every queued write, once.
func (w *Writer) stopWorkers() {
	w.mu.Lock()
	stopped := w.stopped
	w.stopped = true
	w.mu.Unlock()
	if !stopped {
		close(w.jobs)
		w.wg.Wait()
	}
}

// finish stops the workers and closes the directories, once.
func (w *Writer) finish() {
	w.stopWorkers()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done {
		return
	}
	w.done = true
	for _, d := range w.dirs {
		d.Close()
	}
	for _, f := range w.dirFiles {
		f.Close()
	}
}

// complete queues the files of fsys not handed over yet, makes its
// directories and symlinks, and waits for every write.
func (w *Writer) complete(fsys fs.FS) error {
	// What goes to disk passes the rules for untrusted trees once more,
	// whoever built fsys: links judged through each other, and no two
	// names that a case-folding file system would merge.
	if rl, ok := fsys.(fs.ReadLinkFS); ok {
		if err := safetree.CheckLinks(rl); err != nil {
			return err
		}
	}
	if err := safetree.CheckCase(fsys); err != nil {
		return err
	}
	if w.spill != "" {
		if _, err := fs.Lstat(fsys, w.spill); err == nil {
			return fmt.Errorf("%s: the tree holds the name of the spill directory", w.spill)
		}
	}
	walkErr := fs.WalkDir(fsys, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || name == "." {
			return err
		}
		switch t := d.Type(); {
		case t.IsDir():
			_, err := w.dirOf(name)
			return err
		case t&fs.ModeSymlink != 0:
			target, err := fs.ReadLink(fsys, name)
			if err != nil {
				return err
			}
			// os.Root does not check a link's target: do it here.
			if err := safetree.CheckLinkText(name, target); err != nil {
				return err
			}
			parent, err := w.dirOf(path.Dir(name))
			if err != nil {
				return err
			}
			return parent.Symlink(target, path.Base(name))
		case t.IsRegular():
			w.mu.Lock()
			early := w.written[name]
			w.mu.Unlock()
			if early {
				return nil
			}
			info, err := d.Info()
			if err != nil {
				return err
			}
			b, err := filetree.ReadOnly(fsys, name)
			if err != nil {
				return err
			}
			w.WriteFile(name, b, info.Mode())
			return nil
		}
		return fmt.Errorf("%s: unsupported file type", name)
	})
	if walkErr != nil {
		return walkErr
	}
	// Every file handed over early must be a file of the final tree.
	w.mu.Lock()
	defer w.mu.Unlock()
	for name := range w.written {
		if st, err := fs.Stat(fsys, name); err != nil || !st.Mode().IsRegular() {
			return fmt.Errorf("%s: written early but not a file of the tree", name)
		}
	}
	return nil
}

// Err reports the first write that failed so far, so a caller can stop
// early; Commit reports it too.
func (w *Writer) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.firstErr
}

// dirPerm is the mode a directory made with mkdir(0755) in root gets
// under the process's umask: 0755 under the usual 022, 0700 under 077.
// It is read by making one, as umask(2) can only be read by setting it,
// which would race with the other goroutines' creations.
func dirPerm(root *os.Root) fs.FileMode {
	const probe = ".addonpkg-umask"
	if err := root.Mkdir(probe, 0o755); err != nil {
		return 0o755
	}
	defer root.Remove(probe)
	fi, err := root.Stat(probe)
	if err != nil {
		return 0o755
	}
	return fi.Mode().Perm()
}

func filePerm(m fs.FileMode) fs.FileMode {
	if m.Perm()&0o111 != 0 {
		return 0o755
	}
	return 0o644
}

// renameIn renames the temp directory to the target, which did not exist
// when NewWriter looked. What another process made there since is kept:
// an empty directory is replaced (rename cannot do that), one with
// content is ErrNotEmpty (another unpack to the same target finished
// first), and anything else is refused, never removed (os.Remove would
// have removed a file).
func (w *Writer) renameIn() error {
	if st, err := os.Lstat(w.dir); err == nil {
		if !st.IsDir() {
			return fmt.Errorf("%s appeared while the tree was written: %w", w.dir, fs.ErrExist)
		}
		if err := os.Remove(w.dir); err != nil {
			return notEmpty(w.dir, err)
		}
	}
	return notEmpty(w.dir, os.Rename(w.tmp, w.dir))
}

// notEmpty is err, or ErrNotEmpty when it says that dir holds entries.
func notEmpty(dir string, err error) error {
	if errors.Is(err, syscall.ENOTEMPTY) || errors.Is(err, syscall.EEXIST) {
		return &fs.PathError{Op: "write", Path: dir, Err: ErrNotEmpty}
	}
	return err
}

// inPlaceBase names the temp directories made inside an existing target:
// ".addonpkg-out.tmp-N".
const inPlaceBase = "addonpkg-out"

// existingDir reports whether dir is a directory that exists, or a
// symlink to one, which is then filled in place. A symlink that leads
// nowhere is refused: writing would replace the link.
func existingDir(dir string) (bool, error) {
	st, err := os.Stat(dir)
	switch {
	case err == nil && st.IsDir():
		return true, nil
	case err == nil:
		return false, syscall.ENOTDIR
	case !errors.Is(err, fs.ErrNotExist):
		return false, err
	}
	if target, lerr := os.Readlink(dir); lerr == nil {
		return false, fmt.Errorf("symbolic link to %s: %w", target, fs.ErrNotExist)
	}
	return false, nil
}

// checkEmpty refuses an existing target that holds anything but the temp
// directories of writers filling it.
func checkEmpty(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if !e.IsDir() || !isTempName(e.Name(), inPlaceBase) {
			return &fs.PathError{Op: "write", Path: dir, Err: ErrNotEmpty}
		}
	}
	return nil
}

// moveIn moves the finished tree from its temp directory inside the
// target into the target, one rename per top-level entry, and removes the
// temp directory. It holds an exclusive flock on the target meanwhile, so
// two writers filling one directory take turns and the second finds it
// no longer empty. A failed rename moves back what was moved. (Between
// the first rename and the last, a SIGKILL leaves part of the tree: the
// next writer refuses the directory as not empty.)
func (w *Writer) moveIn() error {
	// Where the target cannot be locked (a file system without flock),
	// the checks below still hold against everything but a race.
	if l := lockDir(w.dir); l.Lock() == nil {
		defer l.Unlock()
	}
	if err := checkEmpty(w.dir); err != nil {
		return err
	}
	target, err := os.OpenRoot(w.dir)
	if err != nil {
		return err
	}
	defer target.Close()
	tmpName := filepath.Base(w.tmp)
	entries, err := os.ReadDir(w.tmp)
	if err != nil {
		return err
	}
	var moved []string
	undo := func(err error) error {
		for _, name := range moved {
			_ = target.Rename(name, tmpName+"/"+name)
		}
		return err
	}
	for _, e := range entries {
		name := e.Name()
		if _, err := target.Lstat(name); err == nil {
			return undo(fmt.Errorf("%s: %w", filepath.Join(w.dir, name), ErrNotEmpty))
		}
		if err := target.Rename(tmpName+"/"+name, name); err != nil {
			return undo(err)
		}
		moved = append(moved, name)
	}
	return target.Remove(tmpName)
}

// tempBase is the part of a temp directory's name taken from its
// target's base name: all of it, but for a name so long (up to the 255
// bytes of NAME_MAX) that ".BASE.tmp-N" could not be made; then its first
// maxTempBase bytes, cut at a character.
func tempBase(base string) string {
	if len(base) <= maxTempBase {
		return base
	}
	b := base[:maxTempBase]
	for !utf8.ValidString(b) {
		b = b[:len(b)-1]
	}
	return b
}

// maxTempBase leaves room in 255 bytes for ".", ".tmp-" and
// os.MkdirTemp's suffix (at most 20 digits).
const maxTempBase = 255 - len(".") - len(".tmp-") - 20
