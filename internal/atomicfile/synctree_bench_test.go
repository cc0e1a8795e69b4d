package atomicfile

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkSyncTree compares the two ways SyncTree makes a fresh tree
// durable: one sync per file and folder, and one syncfs(2) of the file
// system (Linux), for trees of 1 to 1000 files of 4 KiB, ten to a
// folder, with nothing else left dirty on the file system (other=0) or
// 32 MiB written beside the tree and not synced (other=32MiB: what an
// unpack leaves in spill files, or another program in its files, which
// syncfs writes back too). The numbers set oneByOneMax; they depend on
// the disk and on what else writes to it, so run it with -count:
//
//	go test -run '^$' -bench SyncTree -count 5 ./internal/atomicfile
func BenchmarkSyncTree(b *testing.B) {
	ways := map[string]func(dir string) error{
		"entries": syncer{file: syncFile, dir: SyncDir}.tree,
	}
	if syncFS != nil {
		ways["syncfs"] = syncFS
	}
	for _, other := range []int{0, 32} {
		for _, files := range []int{1, 10, 100, 1000} {
			for _, way := range []string{"entries", "syncfs"} {
				sync, ok := ways[way]
				if !ok {
					continue
				}
				name := fmt.Sprintf("other=%dMiB/files=%d/%s", other, files, way)
				b.Run(name, func(b *testing.B) { benchSyncTree(b, sync, files, other<<20) })
			}
		}
	}
}

// benchSyncTree times sync of a fresh tree of files files, with other
// bytes left dirty beside it.
func benchSyncTree(b *testing.B, sync func(dir string) error, files, other int) {
	base := b.TempDir()
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		dir := filepath.Join(base, fmt.Sprint(i))
		writeBenchTree(b, dir, files)
		// A new file each time: rewriting one in place would have ext4
		// flush it at close (auto_da_alloc), whichever way is timed.
		otherName := filepath.Join(base, fmt.Sprint("other", i))
		if other > 0 {
			if err := os.WriteFile(otherName, make([]byte, other), 0o644); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
		if err := sync(dir); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if err := os.RemoveAll(dir); err != nil {
			b.Fatal(err)
		}
		if err := os.RemoveAll(otherName); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
}

// writeBenchTree writes files files of 4 KiB under dir, ten to a folder.
func writeBenchTree(b *testing.B, dir string, files int) {
	data := make([]byte, 4096)
	for i := range files {
		sub := filepath.Join(dir, fmt.Sprintf("d%d", i/10))
		if err := os.MkdirAll(sub, 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(sub, fmt.Sprintf("f%d", i)), data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
}
