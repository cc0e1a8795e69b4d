package layout_test

import (
	"archive/tar"
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/addonpkg/addonpkg/pkg/layout"
)

func fuzzArchive(files ...string) []byte {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for i := 0; i+1 < len(files); i += 2 {
		tw.WriteHeader(&tar.Header{Name: files[i], Typeflag: tar.TypeReg, Size: int64(len(files[i+1])), Mode: 0o644})
		tw.Write([]byte(files[i+1]))
	}
	tw.Close()
	return buf.Bytes()
}

// FuzzOCIArchive feeds arbitrary bytes to the oci-archive reader: it
// never panics, and an archive it opens lists its manifests and resolves
// each of them (or fails) without panicking either.
func FuzzOCIArchive(f *testing.F) {
	f.Add(fuzzArchive("oci-layout", `{"imageLayoutVersion":"1.0.0"}`, "index.json", `{"schemaVersion":2,"manifests":[]}`))
	f.Add(fuzzArchive("oci-layout", `{"imageLayoutVersion":"1.0.0"}`, "index.json",
		`{"schemaVersion":2,"manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:0000000000000000000000000000000000000000000000000000000000000000","size":2,"annotations":{"org.opencontainers.image.ref.name":"v1"}}]}`,
		"blobs/sha256/0000000000000000000000000000000000000000000000000000000000000000", "{}"))
	f.Add(fuzzArchive("index.json", "{", "../escape", "x"))
	f.Add([]byte("not a tar"))
	f.Fuzz(func(t *testing.T, b []byte) {
		file := filepath.Join(t.TempDir(), "a.tar")
		if err := os.WriteFile(file, b, 0o644); err != nil {
			t.Fatal(err)
		}
		st, err := layout.OpenArchive(file)
		if err != nil {
			return
		}
		defer st.Close()
		ds, err := st.Descriptors()
		if err != nil {
			return
		}
		for _, d := range ds {
			if img, err := st.Image(d); err == nil {
				img.RawConfigFile()
				img.Layers()
			}
		}
	})
}
