package archive_test

import (
	"bytes"
	"fmt"
	"io"
	"runtime"
	"testing"
	"time"

	"github.com/addonpkg/addonpkg/pkg/archive"
)

// A decoder allocates each xz block's dictionary as its header states
// it; a block never needs more than it holds. An archive of many small
// blocks, each stating a 64 MiB dictionary (xz -9 --block-size=4KiB),
// made the reader allocate, and clear, 64 MiB a block: 6 GiB for a
// 60 kB file. Each block's dictionary is at most what its header and the
// index say it holds, so the reader allocates about what it outputs.
func TestDecompressArchiveXzSmallBlocksBigDictionaries(t *testing.T) {
	var plain bytes.Buffer
	for i := range 20000 {
		fmt.Fprintf(&plain, "line %d\n", i*7919%100003)
	}
	b := runTool(t, plain.Bytes(), "xz", "-c", "-9", "-T1", "--block-size=4KiB")

	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	zr, _, err := archive.DecompressArchive(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	if !bytes.Equal(got, plain.Bytes()) {
		t.Fatalf("read %d bytes, want the %d written", len(got), plain.Len())
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > uint64(archive.MaxDecoderWindow) {
		t.Errorf("%d blocks of at most 4 KiB (%d bytes in all) took %d MiB of allocations and %v", plain.Len()/4096+1, len(b), grew>>20, time.Since(start))
	}
}
