package vectorgen

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/ulikunitz/xz"
)

// entry is one hand-made tar entry.
type entry struct {
	name string
	typ  byte
	body string
	link string
	mode int64
	// count repeats the entry (the entry-limit vector).
	count int
}

func file(name, body string) entry { return entry{name: name, typ: tar.TypeReg, body: body} }
func exe(name, body string) entry {
	return entry{name: name, typ: tar.TypeReg, body: body, mode: 0o755}
}
func dir(name string) entry             { return entry{name: name, typ: tar.TypeDir} }
func symlink(name, to string) entry     { return entry{name: name, typ: tar.TypeSymlink, link: to} }
func hardlink(name, to string) entry    { return entry{name: name, typ: tar.TypeLink, link: to} }
func whiteout(dir, name string) entry   { return file(dir+".wh."+name, "") }
func opaque(dir string) entry           { return file(dir+".wh..wh..opq", "") }
func special(name string, t byte) entry { return entry{name: name, typ: t} }

// tarOf writes entries as a tar stream: uid and gid 0, times at the
// epoch, ustar headers where they suffice.
func tarOf(entries []entry) []byte {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Typeflag: e.typ, Linkname: e.link, Mode: e.mode, ModTime: time.Unix(0, 0)}
		if h.Mode == 0 {
			h.Mode = 0o644
			if e.typ == tar.TypeDir {
				h.Mode = 0o755
			}
		}
		if e.typ == tar.TypeReg {
			h.Size = int64(len(e.body))
		}
		for range max(e.count, 1) {
			if err := tw.WriteHeader(h); err != nil {
				panic(fmt.Sprintf("tar header %q: %v", e.name, err))
			}
			if e.body != "" {
				if _, err := tw.Write([]byte(e.body)); err != nil {
					panic(err)
				}
			}
		}
	}
	if err := tw.Close(); err != nil {
		panic(err)
	}
	return buf.Bytes()
}

// compression of a layer blob.
type compression int

const (
	gz compression = iota
	zst
	none
	// xzc compresses whole archives (docker save | xz); no layer media
	// type has it, so a layer in it is refused (spec 9.3).
	xzc
)

// compress compresses b deterministically (single-threaded encoders of
// the version go.mod pins, no name or time in the gzip header).
func compress(b []byte, c compression) []byte {
	var buf bytes.Buffer
	var zw io.WriteCloser
	var err error
	switch c {
	case gz:
		zw, err = gzip.NewWriterLevel(&buf, gzip.DefaultCompression)
	case zst:
		zw, err = zstd.NewWriter(&buf, zstd.WithEncoderConcurrency(1), zstd.WithEncoderLevel(zstd.SpeedDefault))
	case xzc:
		zw, err = xz.NewWriter(&buf)
	default:
		return b
	}
	if err != nil {
		panic(err)
	}
	if _, err := zw.Write(b); err != nil {
		panic(err)
	}
	if err := zw.Close(); err != nil {
		panic(err)
	}
	return buf.Bytes()
}

func digestOf(b []byte) string {
	s := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(s[:])
}

func hexOf(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// mustJSON is compact JSON of v (struct fields in order, map keys
// sorted).
func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func mustUnmarshal(b []byte, v any) {
	if err := json.Unmarshal(b, v); err != nil {
		panic(err)
	}
}
