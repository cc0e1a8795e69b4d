//go:build !linux

package atomicfile

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// SyncTree makes a tree written under dir durable before it is renamed
// into place, so that after a crash the renamed tree holds its files'
// bytes, not empty files (a rename can reach the disk before the data
// it names). Without Linux's syncfs(2), each regular file is synced,
// then each directory (SyncDir), deepest last.
func SyncTree(dir string) error {
	var dirs []string
	err := filepath.WalkDir(dir, func(name string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir():
			dirs = append(dirs, name)
		case d.Type().IsRegular():
			return syncFile(name)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	for _, d := range dirs {
		if err := SyncDir(d); err != nil {
			return err
		}
	}
	return nil
}

// syncFile syncs the file name; it is opened for writing, which Windows
// asks of FlushFileBuffers.
func syncFile(name string) error {
	f, err := os.OpenFile(name, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
