package addonset

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
)

// ErrNoLock marks a lock file that is not there (CheckFile,
// RenderLocked).
var ErrNoLock = errors.New("no lock file")

// The file-level operations of the commands: each reads the declaration's
// lock beside it, refuses to write over what it reads (CheckOutputs), and
// writes what it makes atomically.

// loadLock reads a lock file; ok is false when there is none.
func loadLock(file string) (l *LockFile, ok bool, err error) {
	l, err = LoadLock(file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	return l, err == nil, err
}

// LockTo locks the set (Lock) into the lock file out ("" is
// LockPath(s.File)), starting from the lock already there (none: every
// member is resolved; opts.Previous is ignored), and writes it. It
// returns the lock and what changed from the previous one (Diff).
func LockTo(ctx context.Context, s *Set, out string, opts LockOptions) (*LockFile, []Change, error) {
	out = lockOut(s, out)
	if err := CheckOutputs(s.inputFiles(), []string{out}); err != nil {
		return nil, nil, err
	}
	prev, _, err := loadLock(out)
	if err != nil {
		return nil, nil, err
	}
	opts.Previous = prev
	l, err := Lock(ctx, s, opts)
	if err != nil {
		return nil, nil, err
	}
	if err := WriteLock(l, out); err != nil {
		return nil, nil, err
	}
	return l, Diff(prev, l), nil
}

// CheckFile checks the set against the lock file lock ("" is
// LockPath(s.File)), as Check does, and returns the lock. A missing lock
// wraps ErrNoLock; every error names the lock file.
func CheckFile(ctx context.Context, s *Set, lock string, opts Options) (*LockFile, error) {
	lock = lockOut(s, lock)
	if err := CheckOutputs(s.inputFiles(), []string{lock}); err != nil {
		return nil, err
	}
	l, ok, err := loadLock(lock)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("%s: %w", lock, ErrNoLock)
	}
	if err := Check(ctx, s, l, opts); err != nil {
		return nil, fmt.Errorf("%s: %w", lock, err)
	}
	return l, nil
}

// RenderLocked loads the set declared in file and renders it (Render)
// exactly as the lock beside it (LockPath(file)) pins it: what an
// installer calls, since an install installs what was reviewed. A missing
// lock wraps ErrNoLock and names both files, so the set is never resolved
// afresh behind the reviewer's back; a lock that no longer pins the
// declaration is a *StaleError, a pinned source that yields other content
// a *MismatchError. opts.Lock is ignored.
func RenderLocked(ctx context.Context, file string, opts RenderOptions) (*Result, error) {
	s, err := Load(ctx, file)
	if err != nil {
		return nil, err
	}
	lock := LockPath(file)
	l, ok, err := loadLock(lock)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("%s: %w %s", file, ErrNoLock, lock)
	}
	opts.Lock = l
	return Render(ctx, s, opts)
}

func lockOut(s *Set, out string) string {
	if out == "" {
		return LockPath(s.File)
	}
	return out
}

// MirrorFiles are the files MirrorTo wrote.
type MirrorFiles struct {
	// Declaration is the mirrored set's declaration; Lock its lock,
	// beside it.
	Declaration, Lock string
}

// MirrorTo mirrors the set (Mirror) as the lock beside its declaration
// pins it (none: the set is locked first; opts.Lock is ignored), and
// writes the mirrored declaration to out ("" is NAME-mirror.yaml beside
// the declaration) and its lock beside that. Nothing is copied when an
// output would overwrite an input or another output (the declaration,
// its lock, a member's oci-archive, an oci-archive: destination).
func MirrorTo(ctx context.Context, s *Set, out string, opts MirrorOptions) (*MirrorResult, MirrorFiles, error) {
	if out == "" {
		ext := filepath.Ext(s.File)
		out = strings.TrimSuffix(s.File, ext) + "-mirror" + ext
	}
	files := MirrorFiles{Declaration: out, Lock: LockPath(out)}
	l, _, err := loadLock(LockPath(s.File))
	if err != nil {
		return nil, files, err
	}
	archive, _ := strings.CutPrefix(opts.To, "oci-archive:")
	if archive == opts.To {
		archive = ""
	}
	if err := CheckOutputs(s.inputFiles(LockPath(s.File)), []string{out, files.Lock, archive}); err != nil {
		return nil, files, err
	}
	opts.Lock, opts.DeclDir = l, filepath.Dir(out)
	res, err := Mirror(ctx, s, opts)
	if err != nil {
		return nil, files, err
	}
	if err := WriteDeclaration(res.Set, out); err != nil {
		return nil, files, err
	}
	if err := WriteLock(res.Lock, files.Lock); err != nil {
		return nil, files, err
	}
	return res, files, nil
}
