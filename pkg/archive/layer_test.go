package archive_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/addonpkg/addonpkg/pkg/archive"
	"github.com/addonpkg/addonpkg/pkg/mediatypes"
)

// Gzip compresses on every core; its bytes must not depend on how many
// there are, or the same add-on would get another digest on another
// machine.
func TestGzipSameBytesOnAnyNumberOfCores(t *testing.T) {
	// Several blocks of compressible, non-repeating text.
	rng := rand.New(rand.NewPCG(1, 2))
	var in bytes.Buffer
	for in.Len() < 5<<20 {
		fmt.Fprintf(&in, "key-%d: value %d\n", rng.IntN(50_000), rng.IntN(1000))
	}
	compress := func() []byte {
		var out bytes.Buffer
		w, err := archive.Compressor(&out, mediatypes.Gzip)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(in.Bytes()); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		return out.Bytes()
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	var first []byte
	for _, procs := range []int{1, 2, 8} {
		runtime.GOMAXPROCS(procs)
		got := compress()
		if first == nil {
			first = got
			continue
		}
		if !bytes.Equal(got, first) {
			t.Errorf("GOMAXPROCS=%d: %d compressed bytes differ from GOMAXPROCS=1's %d", procs, len(got), len(first))
		}
	}
}
