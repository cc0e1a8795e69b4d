package build_test

import (
	"context"
	"io"
	"os"
	"testing"

	"github.com/addonpkg/addonpkg/internal/testing/benchdata"
	"github.com/addonpkg/addonpkg/pkg/build"
	"github.com/addonpkg/addonpkg/pkg/folder"
	"github.com/addonpkg/addonpkg/pkg/pack"
	"github.com/addonpkg/addonpkg/pkg/safetree"
)

// benchBuild builds the tree in the given form on every iteration. Build
// validates (renders) the tree and compresses the layer eagerly, and
// computes the manifest digest; the layer is read out as well, so that the
// benchmark keeps measuring the whole build should any of it become lazy.
func benchBuild(b *testing.B, f pack.Format, n, size int) {
	fsys, err := benchdata.ManifestTree(n, size)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.SetBytes(fsys.Size())
	b.ReportAllocs()
	for b.Loop() {
		res, err := build.Build(ctx, fsys, build.Options{Format: f, Name: "bench"})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := res.Image.Digest(); err != nil {
			b.Fatal(err)
		}
		layers, err := res.Image.Layers()
		if err != nil {
			b.Fatal(err)
		}
		for _, l := range layers {
			rc, err := l.Compressed()
			if err != nil {
				b.Fatal(err)
			}
			_, err = io.Copy(io.Discard, rc)
			rc.Close()
			if err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkBuildSmall measures build.Build (validation, tar, gzip, config
// and manifest) of an image-form add-on of 50 ConfigMaps of 4 KiB.
func BenchmarkBuildSmall(b *testing.B) { benchBuild(b, pack.FormatImage, 50, 4<<10) }

// BenchmarkBuildMedium measures build.Build of an image-form add-on of
// 2,000 ConfigMaps of 10 KiB.
func BenchmarkBuildMedium(b *testing.B) { benchBuild(b, pack.FormatImage, 2000, 10<<10) }

// BenchmarkBuildLarge measures build.Build of an image-form add-on of
// 20,000 ConfigMaps of 10 KiB.
func BenchmarkBuildLarge(b *testing.B) { benchBuild(b, pack.FormatImage, 20000, 10<<10) }

// BenchmarkBuildArtifactLarge measures build.Build of the same large tree
// in the artifact form (add-on config as the config blob, tree at the
// layer's root).
func BenchmarkBuildArtifactLarge(b *testing.B) {
	benchBuild(b, pack.FormatArtifact, 20000, 10<<10)
}

// benchBuildFolder builds the tree written to a folder, listed by
// folder.Open on every iteration and read from disk (page cache) as
// `addonpkg build DIR` reads it. Allocated bytes per operation stay far
// below the folder's size: what a build holds is its shape, not its bytes.
func benchBuildFolder(b *testing.B, n, size int) {
	fsys, err := benchdata.ManifestTree(n, size)
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	if err := os.CopyFS(dir, fsys); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.SetBytes(fsys.Size())
	fsys = nil
	b.ReportAllocs()
	for b.Loop() {
		tree, err := folder.Open(dir, safetree.Limits{})
		if err != nil {
			b.Fatal(err)
		}
		res, err := build.Build(ctx, tree, build.Options{Name: "bench"})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := res.Image.Digest(); err != nil {
			b.Fatal(err)
		}
		tree.Close()
	}
}

// BenchmarkBuildFolderMedium measures folder.Open and build.Build of a
// folder of 2,000 ConfigMaps of 10 KiB.
func BenchmarkBuildFolderMedium(b *testing.B) { benchBuildFolder(b, 2000, 10<<10) }

// BenchmarkBuildFolderLarge measures folder.Open and build.Build of a
// folder of 20,000 ConfigMaps of 10 KiB.
func BenchmarkBuildFolderLarge(b *testing.B) { benchBuildFolder(b, 20000, 10<<10) }
