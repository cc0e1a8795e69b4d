package main

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// gnuSparse is a GNU sparse tar entry (type 'S') whose logical size is
// size and whose only data is its last byte: a few hundred bytes in the
// archive, size bytes for a reader that reads it whole.
func gnuSparse(t *testing.T, name string, size int64) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	if err := tw.WriteHeader(&tar.Header{Name: name, Typeflag: tar.TypeReg, Size: 1, Mode: 0o644, Format: tar.FormatGNU}); err != nil {
		t.Fatal(err)
	}
	if _, err := tw.Write([]byte{'x'}); err != nil {
		t.Fatal(err)
	}
	if err := tw.Flush(); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()[:1024] // header and one data block
	octal := func(off, n int, v int64) {
		s := strconv.FormatInt(v, 8)
		field := b[off : off+n]
		for i := range field {
			field[i] = '0'
		}
		copy(field[n-1-len(s):], s)
		field[n-1] = 0
	}
	b[156] = 'S'
	octal(386, 12, size-1) // sparse map: one extent, the last byte
	octal(398, 12, 1)
	octal(483, 12, size) // real size
	for i := 148; i < 156; i++ {
		b[i] = ' '
	}
	var sum int64
	for _, c := range b[:512] {
		sum += int64(c)
	}
	copy(b[148:156], fmt.Sprintf("%06o\x00 ", sum))
	return b
}

// dockerArchive writes a docker-save tarball: regular files, then raw
// tar blocks, then the end of the archive.
func dockerArchive(t *testing.T, file string, files map[string]string, links map[string]string, raw ...[]byte) {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, name := range sortedKeys(files) {
		must(t, tw.WriteHeader(&tar.Header{Name: name, Typeflag: tar.TypeReg, Size: int64(len(files[name])), Mode: 0o644}))
		_, err := tw.Write([]byte(files[name]))
		must(t, err)
	}
	for _, name := range sortedKeys(links) {
		must(t, tw.WriteHeader(&tar.Header{Name: name, Typeflag: tar.TypeSymlink, Linkname: links[name], Mode: 0o777}))
	}
	must(t, tw.Flush())
	for _, r := range raw {
		buf.Write(r)
	}
	buf.Write(make([]byte, 1024))
	must(t, os.WriteFile(file, buf.Bytes(), 0o644))
}

func sortedKeys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

// Issue 11, finding 2: a small docker-archive cannot make addonpkg read a
// huge or endless manifest.json or config, or follow links forever.
func TestHostileDockerArchive(t *testing.T) {
	t.Parallel()
	binary(t)
	layer := string(hostileCLITar(t, hostileCLIFile("addon/a.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n")))
	manifest := func(layers ...string) string {
		b, err := json.Marshal([]map[string]any{{"Config": "config.json", "RepoTags": []string{"x:1"}, "Layers": layers}})
		must(t, err)
		return string(b)
	}
	many := make([]string, 1001)
	for i := range many {
		many[i] = "l.tar"
	}
	for _, tc := range []struct {
		name  string
		files map[string]string
		links map[string]string
		raw   func(t *testing.T) [][]byte
		want  []string
	}{
		{
			name:  "sparse 3 GiB config.json",
			files: map[string]string{"manifest.json": manifest("l.tar"), "l.tar": layer},
			raw:   func(t *testing.T) [][]byte { return [][]byte{gnuSparse(t, "config.json", 3<<30)} },
			want:  []string{"config.json", "limit of 8388608 exceeded"},
		},
		{
			name:  "sparse 3 GiB manifest.json",
			files: map[string]string{"config.json": "{}", "l.tar": layer},
			raw:   func(t *testing.T) [][]byte { return [][]byte{gnuSparse(t, "manifest.json", 3<<30)} },
			want:  []string{"manifest.json", "limit of 4194304 exceeded"},
		},
		{
			name:  "manifest.json in a link loop",
			files: map[string]string{"config.json": "{}", "l.tar": layer},
			links: map[string]string{"manifest.json": "m2.json", "m2.json": "manifest.json"},
			want:  []string{"manifest.json", "links to follow"},
		},
		{
			name:  "config.json missing",
			files: map[string]string{"manifest.json": manifest("l.tar"), "l.tar": layer},
			want:  []string{"config.json is not in the archive"},
		},
		{
			name:  "1001 layers",
			files: map[string]string{"manifest.json": manifest(many...), "config.json": "{}", "l.tar": layer},
			want:  []string{"layer count limit of 1000 exceeded", "--max-layers"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			file := filepath.Join(dir, "evil.tar")
			var raw [][]byte
			if tc.raw != nil {
				raw = tc.raw(t)
			}
			dockerArchive(t, file, tc.files, tc.links, raw...)
			if st, _ := os.Stat(file); st.Size() > 64<<10 {
				t.Fatalf("the archive is %d bytes, want a small one", st.Size())
			}
			r := runPeak(t, dir, []string{"ADDONPKG_HOME=" + filepath.Join(dir, "home")}, "unpack", "docker-archive:"+file, "-o", "out")
			checkRefused(t, r, 256<<20, tc.want...)
			if _, err := os.Stat(filepath.Join(dir, "out")); err == nil {
				t.Error("out was written")
			}
		})
	}
}

// rawLayer is an uncompressed-tar layer of raw tar bytes.
func rawLayer(t *testing.T, parts ...[]byte) *hostileCLILayer {
	t.Helper()
	var tb []byte
	for _, p := range parts {
		tb = append(tb, p...)
	}
	tb = append(tb, make([]byte, 1024)...)
	return hostileCLIGzipLayer(t, tb, "application/vnd.oci.image.layer.v1.tar+gzip")
}

// tarBlocks is the tar of the entries without its end marker.
func tarBlocks(t *testing.T, entries ...hostileCLIEntry) []byte {
	b := hostileCLITar(t, entries...)
	return b[:len(b)-1024]
}

// Issue 11, finding 12: a GNU sparse entry, a broken header and a name
// longer than file systems hold are refused with an error that names the
// entry (or the one before a header that does not parse).
func TestHostileEntryNames(t *testing.T) {
	t.Parallel()
	binary(t)
	cm := hostileCLIFile("addon/a.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n")
	broken := gnuSparse(t, "addon/broken.yaml", 1<<20)
	copy(broken[386:398], "77777777777\x00") // an extent past the end
	var sum int64
	for i := range 512 {
		if i >= 148 && i < 156 {
			sum += ' '
		} else {
			sum += int64(broken[i])
		}
	}
	copy(broken[148:156], fmt.Sprintf("%06o\x00 ", sum))
	long := "addon/" + strings.Repeat("n", 300) + ".yaml"
	for _, tc := range []struct {
		name  string
		layer func(t *testing.T) *hostileCLILayer
		want  []string
	}{
		{"GNU sparse entry", func(t *testing.T) *hostileCLILayer {
			return rawLayer(t, tarBlocks(t, cm), gnuSparse(t, "addon/holes.yaml", 1<<20))
		}, []string{"addon/holes.yaml", "sparse"}},
		{"broken sparse header", func(t *testing.T) *hostileCLILayer {
			return rawLayer(t, tarBlocks(t, cm), broken)
		}, []string{`after "addon/a.yaml"`, "invalid"}},
		{"300-byte name", func(t *testing.T) *hostileCLILayer {
			return rawLayer(t, tarBlocks(t, cm, hostileCLIFile(long, "x: y\n")))
		}, []string{"nnnnnnnn", "255"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			work := t.TempDir()
			layoutDir := hostileCLIWrite(t, filepath.Join(work, "layout"), hostileCLIImage(t, tc.layer(t)))
			for _, args := range [][]string{{"-o", "out"}, nil} {
				r := hostileCLIRun(t, work, []string{"ADDONPKG_HOME=" + filepath.Join(work, "home")}, append([]string{"unpack", "oci:" + layoutDir + ":t"}, args...)...)
				checkRefused(t, peakResult{hostileCLIResult: r}, 1<<40, tc.want...)
			}
			if _, err := os.Stat(filepath.Join(work, "out")); err == nil {
				t.Error("out was written")
			}
		})
	}
}
