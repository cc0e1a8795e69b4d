//go:build !linux

package atomicfile

// syncFS is nil without Linux's syncfs(2): SyncTree syncs every tree
// entry by entry.
var syncFS func(dir string) error
