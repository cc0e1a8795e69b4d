// Command adversarial writes the perf lab's two adversarial inputs for the memory rows
// of docs/benchmarks.md, as OCI layouts that addonpkg reads with oci:DIR:TAG:
//
//	adversarial -kind bomb -out DIR   # 1 gzip layer: addon/a.yaml + 40 files of 128 MiB of
//	                                  # zeros (5 GiB that compress to a few MB); addonpkg must
//	                                  # refuse it at its add-on size limit (512 MiB) in
//	                                  # constant memory. DIR/tree holds the same files,
//	                                  # sparse, for `addonpkg build`.
//	adversarial -kind huge -out DIR   # a 1 GiB add-on of 16,384 ConfigMaps of 64 KiB in 64
//	                                  # directories, as 4 gzip layers of 256 MiB (DIR/layout,
//	                                  # tag huge) and as a directory (DIR/tree/addon)
//
// Deterministic (fixed seeds, fixed times). No dependencies: tar, gzip and sha256 of the
// standard library; the layout is written by hand (oci-layout, index.json, blobs/).
package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"hash"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"
)

func main() {
	kind := flag.String("kind", "", "bomb or huge")
	out := flag.String("out", "", "output directory (replaced)")
	flag.Parse()
	if *out == "" || (*kind != "bomb" && *kind != "huge") {
		fmt.Fprintln(os.Stderr, "usage: adversarial -kind bomb|huge -out DIR")
		os.Exit(2)
	}
	must(os.RemoveAll(*out))
	lw := newLayout(filepath.Join(*out, "layout"))
	switch *kind {
	case "bomb":
		bomb(lw, filepath.Join(*out, "tree", "addon"))
	case "huge":
		huge(lw, filepath.Join(*out, "tree", "addon"))
	}
	lw.finish(*kind)
}

var mtime = time.Unix(1704067200, 0).UTC()

const (
	bombFiles = 40
	bombSize  = 128 << 20
	chunk     = 1 << 20
)

var doc = []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n")

func bomb(lw *layoutWriter, tree string) {
	l := lw.layer()
	// The tar stream is cut in 1 MiB chunks, each a gzip member of its own, and an
	// all-zero chunk is compressed once: 5 GiB are written in seconds.
	zw := &members{w: l.blob, zero: gzipOf(make([]byte, chunk))}
	tw := tar.NewWriter(io.MultiWriter(zw, l.diff))
	must(tw.WriteHeader(&tar.Header{Name: "addon/", Typeflag: tar.TypeDir, Mode: 0o755, ModTime: mtime}))
	must(tw.WriteHeader(&tar.Header{Name: "addon/a.yaml", Typeflag: tar.TypeReg, Size: int64(len(doc)), Mode: 0o644, ModTime: mtime}))
	_, err := tw.Write(doc)
	must(err)
	zeros := make([]byte, chunk)
	for i := range bombFiles {
		must(tw.WriteHeader(&tar.Header{Name: fmt.Sprintf("addon/z%02d.bin", i), Typeflag: tar.TypeReg, Size: bombSize, Mode: 0o644, ModTime: mtime}))
		for left := bombSize; left > 0; left -= chunk {
			_, err := tw.Write(zeros[:min(left, chunk)])
			must(err)
		}
	}
	must(tw.Close())
	must(zw.flush())
	l.done()
	// the same tree on disk, sparse: no disk space, zeros when read
	must(os.MkdirAll(tree, 0o755))
	must(os.WriteFile(filepath.Join(tree, "a.yaml"), doc, 0o644))
	for i := range bombFiles {
		f, err := os.Create(filepath.Join(tree, fmt.Sprintf("z%02d.bin", i)))
		must(err)
		must(f.Truncate(bombSize))
		must(f.Close())
	}
}

const (
	hugeFiles  = 16384
	hugeSize   = 64 << 10
	hugeDirs   = 64
	hugeLayers = 4
)

var words = strings.Fields(`apps v1 pod spec container image registry port service namespace label
selector replica volume mount secret config probe liveness readiness resource limit request cpu
memory node affinity toleration taint ingress egress policy role binding account token webhook
controller manager leader election metrics health endpoint cluster domain tls certificate issuer
annotation finalizer owner reference status condition reason message generation observed`)

func huge(lw *layoutWriter, tree string) {
	rng := rand.New(rand.NewPCG(16, 16))
	per := hugeFiles / hugeLayers
	for layer := range hugeLayers {
		l := lw.layer()
		zw, err := gzip.NewWriterLevel(l.blob, gzip.BestSpeed)
		must(err)
		tw := tar.NewWriter(io.MultiWriter(zw, l.diff))
		if layer == 0 {
			must(tw.WriteHeader(&tar.Header{Name: "addon/", Typeflag: tar.TypeDir, Mode: 0o755, ModTime: mtime}))
		}
		for i := layer * per; i < (layer+1)*per; i++ {
			name := fmt.Sprintf("d%02d/cm-%05d.yaml", i%hugeDirs, i)
			var b bytes.Buffer
			fmt.Fprintf(&b, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-%05d\n  namespace: huge\ndata:\n", i)
			for k := 0; b.Len() < hugeSize-100; k++ {
				fmt.Fprintf(&b, "  key-%04d: \"", k)
				for w := range 12 {
					if w > 0 {
						b.WriteByte(' ')
					}
					b.WriteString(words[rng.IntN(len(words))])
				}
				b.WriteString("\"\n")
			}
			must(tw.WriteHeader(&tar.Header{Name: "addon/" + name, Typeflag: tar.TypeReg, Size: int64(b.Len()), Mode: 0o644, ModTime: mtime}))
			_, err := tw.Write(b.Bytes())
			must(err)
			p := filepath.Join(tree, filepath.FromSlash(name))
			must(os.MkdirAll(filepath.Dir(p), 0o755))
			must(os.WriteFile(p, b.Bytes(), 0o644))
		}
		must(tw.Close())
		must(zw.Close())
		l.done()
	}
}

// members writes its input as gzip members of chunk bytes each.
type members struct {
	w    io.Writer
	buf  []byte
	zero []byte
}

func (m *members) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		k := min(len(p), chunk-len(m.buf))
		m.buf, p = append(m.buf, p[:k]...), p[k:]
		if len(m.buf) == chunk {
			if err := m.flush(); err != nil {
				return 0, err
			}
		}
	}
	return n, nil
}

func (m *members) flush() error {
	if len(m.buf) == 0 {
		return nil
	}
	member := m.zero
	if len(m.buf) != chunk || !allZero(m.buf) {
		member = gzipOf(m.buf)
	}
	m.buf = m.buf[:0]
	_, err := m.w.Write(member)
	return err
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

func gzipOf(b []byte) []byte {
	var out bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&out, gzip.BestCompression)
	zw.Write(b)
	zw.Close()
	return out.Bytes()
}

// layoutWriter writes an OCI image layout with one image.
type layoutWriter struct {
	dir    string
	layers []descriptor
	diffs  []string
}

type descriptor struct {
	MediaType   string            `json:"mediaType"`
	Digest      string            `json:"digest"`
	Size        int64             `json:"size"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

func newLayout(dir string) *layoutWriter {
	must(os.MkdirAll(filepath.Join(dir, "blobs", "sha256"), 0o755))
	must(os.WriteFile(filepath.Join(dir, "oci-layout"), []byte(`{"imageLayoutVersion":"1.0.0"}`), 0o644))
	return &layoutWriter{dir: dir}
}

// layerWriter is one layer being written: blob gets the compressed bytes, diff the
// uncompressed tar.
type layerWriter struct {
	lw   *layoutWriter
	f    *os.File
	h    hash.Hash
	n    *counter
	blob io.Writer
	diff hash.Hash
}

type counter struct{ n int64 }

func (c *counter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

func (lw *layoutWriter) layer() *layerWriter {
	f, err := os.CreateTemp(filepath.Join(lw.dir, "blobs"), "layer-*")
	must(err)
	l := &layerWriter{lw: lw, f: f, h: sha256.New(), n: &counter{}, diff: sha256.New()}
	l.blob = io.MultiWriter(f, l.h, l.n)
	return l
}

func (l *layerWriter) done() {
	must(l.f.Close())
	d := hex.EncodeToString(l.h.Sum(nil))
	must(os.Rename(l.f.Name(), filepath.Join(l.lw.dir, "blobs", "sha256", d)))
	l.lw.layers = append(l.lw.layers, descriptor{MediaType: "application/vnd.oci.image.layer.v1.tar+gzip", Digest: "sha256:" + d, Size: l.n.n})
	l.lw.diffs = append(l.lw.diffs, "sha256:"+hex.EncodeToString(l.diff.Sum(nil)))
}

func (lw *layoutWriter) blob(mt string, b []byte) descriptor {
	s := sha256.Sum256(b)
	d := hex.EncodeToString(s[:])
	must(os.WriteFile(filepath.Join(lw.dir, "blobs", "sha256", d), b, 0o644))
	return descriptor{MediaType: mt, Digest: "sha256:" + d, Size: int64(len(b))}
}

func (lw *layoutWriter) finish(tag string) {
	cfg, err := json.Marshal(map[string]any{
		"architecture": "amd64", "os": "linux", "created": mtime.Format(time.RFC3339),
		"config": map[string]any{},
		"rootfs": map[string]any{"type": "layers", "diff_ids": lw.diffs},
	})
	must(err)
	m, err := json.Marshal(map[string]any{
		"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
		"config": lw.blob("application/vnd.oci.image.config.v1+json", cfg),
		"layers": lw.layers,
	})
	must(err)
	md := lw.blob("application/vnd.oci.image.manifest.v1+json", m)
	md.Annotations = map[string]string{"org.opencontainers.image.ref.name": tag}
	idx, err := json.Marshal(map[string]any{"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json", "manifests": []descriptor{md}})
	must(err)
	must(os.WriteFile(filepath.Join(lw.dir, "index.json"), idx, 0o644))
}

func must(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "adversarial:", err)
		os.Exit(1)
	}
}
