//go:build unix

package folder

import "syscall"

// openFlags open a file without blocking: a file swapped for a FIFO after
// the listing must not hang the reader (the tree's check of its type,
// filetree's, then refuses it). On a regular file the flag changes nothing, and it saves
// the os package setting and clearing it (two fcntl calls per file).
const openFlags = syscall.O_NONBLOCK
