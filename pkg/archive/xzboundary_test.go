package archive_test

import (
	"bytes"
	"errors"
	"io"
	"os/exec"
	"testing"

	"github.com/addonpkg/addonpkg/pkg/archive"
)

// The walks read an xz file through a 4 KiB window that follows them
// from stream to stream. Wherever a window's edge falls (in a block, a
// stream's end, its padding, the next stream's magic, an index, a
// footer), the verdict is xz -t's: concatenated streams with stream
// padding in groups of four zero bytes are read, whole; padding of
// another length, before another stream or at the end, is refused as
// ErrXzStructure. xz -t judges one file of each padding; the others
// move the same streams across the window's edges 4 bytes at a time.
func TestDecompressArchiveXzWindowEdges(t *testing.T) {
	plain := sampleTar(t)
	data := runTool(t, plain, "xz", "-c", "--check=crc32")
	for _, padding := range []int{0, 2, 4} {
		for _, tail := range []int{0, 2, 4} {
			var judged bool
			var xzOK bool
			for blocks := 250; blocks <= 260; blocks++ {
				for lead := 0; lead < 16; lead += 4 {
					in := emptyXzBlocks(0)
					in = append(in, make([]byte, lead)...)
					in = append(in, emptyXzBlocks(blocks)...)
					in = append(in, make([]byte, padding)...)
					in = append(in, data...)
					in = append(in, make([]byte, tail)...)
					if !judged {
						cmd := exec.Command("xz", "-t")
						cmd.Stdin = bytes.NewReader(in)
						xzOK, judged = cmd.Run() == nil, true
						if want := padding%4 == 0 && tail%4 == 0; xzOK != want {
							t.Fatalf("padding %d, tail %d: xz -t says %v", padding, tail, xzOK)
						}
					}
					zr, _, err := archive.DecompressArchive(bytes.NewReader(in), int64(len(in)))
					var got []byte
					if err == nil {
						got, err = io.ReadAll(zr)
						zr.Close()
					}
					switch {
					case xzOK && (err != nil || !bytes.Equal(got, plain)):
						t.Errorf("blocks %d, lead %d, padding %d, tail %d: xz -t reads it; got %d bytes, %v", blocks, lead, padding, tail, len(got), err)
					case !xzOK && !errors.Is(err, archive.ErrXzStructure):
						t.Errorf("blocks %d, lead %d, padding %d, tail %d: xz -t refuses it; err = %v", blocks, lead, padding, tail, err)
					}
				}
			}
		}
	}
}
