package source

import (
	"archive/tar"
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/addonpkg/addonpkg/pkg/layout"
	"github.com/addonpkg/addonpkg/pkg/safetree"
)

// fuzzTar is a small tar of the named files (a symlink when the content
// starts with "->").
func fuzzTar(files ...string) []byte {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for i := 0; i+1 < len(files); i += 2 {
		name, body := files[i], files[i+1]
		if len(body) > 2 && body[:2] == "->" {
			tw.WriteHeader(&tar.Header{Name: name, Typeflag: tar.TypeSymlink, Linkname: body[2:]})
			continue
		}
		tw.WriteHeader(&tar.Header{Name: name, Typeflag: tar.TypeReg, Size: int64(len(body)), Mode: 0o644})
		tw.Write([]byte(body))
	}
	tw.Close()
	return buf.Bytes()
}

// FuzzDockerArchive feeds arbitrary bytes to the docker-archive reader
// (the pre-scan, then go-containerregistry's tarball reader it guards):
// nothing panics or hangs, and what the pre-scan refuses is typed.
func FuzzDockerArchive(f *testing.F) {
	layer := string(fuzzTar("addon/a.yaml", "a: b\n"))
	f.Add(fuzzTar("manifest.json", `[{"Config":"c.json","RepoTags":["x:1"],"Layers":["l.tar"]}]`, "c.json", `{"rootfs":{"type":"layers","diff_ids":[]}}`, "l.tar", layer))
	f.Add(fuzzTar("manifest.json", "->m2.json", "m2.json", "->manifest.json"))
	f.Add(fuzzTar("manifest.json", `[{"Config":"c.json","Layers":["l.tar","l.tar"]}]`, "c.json", "->c.json", "l.tar", "->x/../l.tar"))
	f.Add(fuzzTar("manifest.json", `[{"Config":"../c.json","Layers":["/l.tar"]}]`))
	f.Add([]byte("not a tar"))
	f.Fuzz(func(t *testing.T, b []byte) {
		file := filepath.Join(t.TempDir(), "a.tar")
		if err := os.WriteFile(file, b, 0o644); err != nil {
			t.Fatal(err)
		}
		af, _, err := layout.OpenArchiveFile(file, 1<<20)
		if err != nil {
			if !errors.Is(err, layout.ErrCorruptArchive) && !errors.Is(err, safetree.ErrLimit) {
				t.Fatalf("untyped refusal of a compressed archive: %v", err)
			}
			return
		}
		err = checkDockerArchive(af, 16, true)
		af.Close()
		if err != nil {
			if !errors.Is(err, ErrBadArchive) && !errors.Is(err, safetree.ErrLimit) && !errors.Is(err, ErrBadSource) {
				t.Fatalf("untyped refusal: %v", err)
			}
			return
		}
		ref := Ref{Kind: KindDockerArchive, Path: file}
		a, err := Open(t.Context(), ref, Options{MaxLayers: 16})
		if err == nil {
			a.Close()
		}
	})
}
