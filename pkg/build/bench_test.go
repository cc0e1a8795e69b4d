package build_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/addonpkg/addonpkg/pkg/build"
	"github.com/addonpkg/addonpkg/pkg/memfs"
)

// benchWords are the words the generated manifests are made of: random
// words from a small vocabulary compress about as well as real YAML, where
// a run of one letter would make gzip unrealistically fast.
var benchWords = []string{
	"apps", "v1", "pod", "spec", "container", "image", "registry", "port",
	"service", "namespace", "label", "selector", "replica", "volume", "mount",
	"secret", "config", "probe", "liveness", "readiness", "resource", "limit",
	"request", "cpu", "memory", "node", "affinity", "toleration", "taint",
	"ingress", "egress", "policy", "role", "binding", "account", "token",
	"webhook", "controller", "manager", "leader", "election", "metrics",
	"health", "endpoint", "cluster", "domain", "tls", "certificate", "issuer",
	"annotation", "finalizer", "owner", "reference", "status", "condition",
	"reason", "message", "generation", "observed", "true", "false", "100m",
	"256Mi", "8443",
}

// benchTree makes a plain-manifest add-on of n ConfigMaps of about size
// bytes each, spread over 20 directories as in pkg/unpack's benchmarks.
func benchTree(b *testing.B, n, size int) *memfs.FS {
	b.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	t := memfs.NewBuilder()
	for i := range n {
		var doc bytes.Buffer
		fmt.Fprintf(&doc, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-%05d\n  namespace: bench\n  labels:\n    app.kubernetes.io/name: bench\n    app.kubernetes.io/part-of: addon\ndata:\n", i)
		for k := 0; doc.Len() < size; k++ {
			fmt.Fprintf(&doc, "  key-%03d: \"", k)
			for range 14 {
				doc.WriteString(benchWords[rng.IntN(len(benchWords))])
				doc.WriteByte(' ')
			}
			doc.WriteString("end\"\n")
		}
		if err := t.WriteFile(fmt.Sprintf("c%d/cm-%05d.yaml", i%20, i), doc.Bytes(), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return t.FS()
}

// benchBuild builds the tree in the given form on every iteration. Build
// validates (renders) the tree and compresses the layer eagerly, and
// computes the manifest digest; the layer is read out as well, so that the
// benchmark keeps measuring the whole build should any of it become lazy.
func benchBuild(b *testing.B, f build.Format, n, size int) {
	fsys := benchTree(b, n, size)
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
func BenchmarkBuildSmall(b *testing.B) { benchBuild(b, build.FormatImage, 50, 4<<10) }

// BenchmarkBuildMedium measures build.Build of an image-form add-on of
// 2,000 ConfigMaps of 10 KiB.
func BenchmarkBuildMedium(b *testing.B) { benchBuild(b, build.FormatImage, 2000, 10<<10) }

// BenchmarkBuildLarge measures build.Build of an image-form add-on of
// 20,000 ConfigMaps of 10 KiB.
func BenchmarkBuildLarge(b *testing.B) { benchBuild(b, build.FormatImage, 20000, 10<<10) }

// BenchmarkBuildArtifactLarge measures build.Build of the same large tree
// in the artifact form (add-on config as the config blob, tree at the
// layer's root).
func BenchmarkBuildArtifactLarge(b *testing.B) {
	benchBuild(b, build.FormatArtifact, 20000, 10<<10)
}
