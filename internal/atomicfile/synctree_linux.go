package atomicfile

import (
	"os"

	"golang.org/x/sys/unix"
)

// syncFS is syncfs(2) of the file system that holds dir.
var syncFS = func(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	for {
		err = unix.Syncfs(int(d.Fd()))
		if err != unix.EINTR {
			return err
		}
	}
}
