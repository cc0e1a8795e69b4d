package atomicfile

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// SyncTree makes a tree written under dir durable before it is renamed
// into place, so that after a crash the renamed tree holds its files'
// bytes, not empty files (a rename can reach the disk before the data
// it names). On Linux that is one syncfs(2) of dir's file system: it
// writes back every file of the tree, and the directories, in one call,
// where an fsync per file waits for a journal commit each: for 20,000
// files of 10 KiB on ext4, 1.3 s against 43 s. (GNU tar, umoci, oras
// and go-containerregistry's layout do not sync what they extract at
// all; they do not rename a tree into place either, so a crash shows
// them half done, not complete and empty.) syncfs also writes back what
// other programs left dirty on that file system, which they would have
// paid for soon.
func SyncTree(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	for {
		err = unix.Syncfs(int(d.Fd()))
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}
