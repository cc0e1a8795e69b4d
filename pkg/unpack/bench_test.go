package unpack_test

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/addonpkg/addonpkg/pkg/archive"
	"github.com/addonpkg/addonpkg/pkg/filetree"
	"github.com/addonpkg/addonpkg/pkg/mediatypes"
	"github.com/addonpkg/addonpkg/pkg/output"
	"github.com/addonpkg/addonpkg/pkg/unpack"
)

// benchImage makes a four-layer image-form add-on of n manifests of about
// size bytes each: three layers of content, then a patch layer that
// rewrites some files and whites out others.
func benchImage(b *testing.B, n, size int) v1.Image {
	b.Helper()
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	doc := func(i int, v string) []byte {
		return fmt.Appendf(nil, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-%d\ndata:\n  v: %q\n  pad: %q\n", i, v, strings.Repeat("x", size))
	}
	var layers []v1.Layer
	for part := range 3 {
		t := filetree.NewBuilder()
		for i := part; i < n; i += 3 {
			_ = t.WriteFile(fmt.Sprintf("c%d/cm-%05d.yaml", i%20, i), doc(i, "base"), 0o644)
		}
		l, err := archive.BuildLayer(t.FS(), archive.TarOptions{Prefix: "addon"}, mediatypes.Gzip, mediatypes.OCILayerGzip)
		if err != nil {
			b.Fatal(err)
		}
		layers = append(layers, l)
	}
	patch := filetree.NewBuilder()
	var whiteouts []string
	for i := 0; i < n; i += 20 {
		_ = patch.WriteFile(fmt.Sprintf("c%d/cm-%05d.yaml", i%20, i), doc(i, "patched"), 0o644)
		if i+1 < n {
			whiteouts = append(whiteouts, fmt.Sprintf("c%d/cm-%05d.yaml", (i+1)%20, i+1))
		}
	}
	l, err := archive.BuildLayer(patch.FS(), archive.TarOptions{Prefix: "addon", Whiteouts: whiteouts}, mediatypes.Gzip, mediatypes.OCILayerGzip)
	if err != nil {
		b.Fatal(err)
	}
	img, err = mutate.AppendLayers(img, append(layers, l)...)
	if err != nil {
		b.Fatal(err)
	}
	return img
}

func benchUnpack(b *testing.B, n, size int) {
	img := benchImage(b, n, size)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := unpack.Image(context.Background(), img, unpack.Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkUnpackSmall(b *testing.B)  { benchUnpack(b, 50, 4<<10) }
func BenchmarkUnpackMedium(b *testing.B) { benchUnpack(b, 2000, 10<<10) }
func BenchmarkUnpackLarge(b *testing.B)  { benchUnpack(b, 20000, 10<<10) }

// benchUnpackToDir unpacks img as `addonpkg unpack -o` does (output.Writer
// as a DiskSink, SinkOnly, its spill directory) on every iteration, and
// reports, besides the allocations, the largest heap seen while it ran
// (peak-heap-MiB): the memory-critical path, whose heap must not grow
// with the add-on or its files.
func benchUnpackToDir(b *testing.B, img v1.Image) {
	dir := b.TempDir()
	b.ReportAllocs()
	runtime.GC() // what making the image left behind is not the unpack's
	stop := watchHeap()
	i := 0
	for b.Loop() {
		i++
		w, err := output.NewWriter(filepath.Join(dir, fmt.Sprint(i)))
		if err != nil {
			b.Fatal(err)
		}
		spill, err := w.SpillDir()
		if err != nil {
			b.Fatal(err)
		}
		ad, err := unpack.Image(context.Background(), img, unpack.Options{Sink: w, SinkOnly: true, SpillDir: spill})
		if err != nil {
			w.Abort()
			b.Fatal(err)
		}
		if err := w.Commit(ad.FS); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(stop())/(1<<20), "peak-heap-MiB")
}

// watchHeap samples the heap's objects (live and not yet swept) every
// millisecond until the returned function is called, which reports the
// largest.
func watchHeap() func() uint64 {
	done := make(chan struct{})
	peak := make(chan uint64)
	go func() {
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		var top uint64
		for {
			metrics.Read(s)
			top = max(top, s[0].Value.Uint64())
			select {
			case <-done:
				peak <- top
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	return func() uint64 { close(done); return <-peak }
}

// BenchmarkUnpackLargeToDir is BenchmarkUnpackLarge written to disk as
// `unpack -o` does: 20,000 files of 10 KiB in four layers.
func BenchmarkUnpackLargeToDir(b *testing.B) { benchUnpackToDir(b, benchImage(b, 20000, 10<<10)) }

// BenchmarkUnpackBigFileToDir unpacks an add-on with a 64 MiB file to
// disk: the file streams to the spill directory and is moved into place,
// so the heap stays far below its size.
func BenchmarkUnpackBigFileToDir(b *testing.B) {
	benchUnpackToDir(b, imageOf(b, imageOpts{}, zeroFileLayer(b, 64<<20)))
}
