package unpack

import (
	"archive/tar"
	"bytes"
	"io"
	"math/rand/v2"
	"testing"
)

// Seek skips across chunk boundaries without losing or repeating a byte,
// and stops at the end of the stream.
func TestPrefetchSeek(t *testing.T) {
	data := make([]byte, 3*chunkSize+123)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range data {
		data[i] = byte(r.Uint32())
	}
	p := prefetch(bytes.NewReader(data), 2)
	defer p.Close()
	head := make([]byte, 10)
	if _, err := io.ReadFull(p, head); err != nil || !bytes.Equal(head, data[:10]) {
		t.Fatalf("first read: %v", err)
	}
	if pos, err := p.Seek(0, io.SeekCurrent); pos != 10 || err != nil {
		t.Fatalf("Seek(0) = %d, %v; want 10", pos, err)
	}
	skip := int64(chunkSize + 5000) // crosses a chunk boundary
	if pos, err := p.Seek(skip, io.SeekCurrent); pos != 10+skip || err != nil {
		t.Fatalf("Seek(%d) = %d, %v", skip, pos, err)
	}
	next := make([]byte, 100)
	if _, err := io.ReadFull(p, next); err != nil || !bytes.Equal(next, data[10+skip:10+skip+100]) {
		t.Fatalf("read after seek: %v", err)
	}
	if _, err := p.Seek(-1, io.SeekCurrent); err == nil {
		t.Fatal("a backward seek succeeded")
	}
	if _, err := p.Seek(0, io.SeekStart); err == nil {
		t.Fatal("an absolute seek succeeded")
	}
	if pos, err := p.Seek(int64(len(data)), io.SeekCurrent); pos != int64(len(data)) || err != nil {
		t.Fatalf("seek past the end = %d, %v; want %d", pos, err, len(data))
	}
	if n, err := p.Read(next); n != 0 || err != io.EOF {
		t.Fatalf("read at the end = %d, %v", n, err)
	}
}

// archive/tar skips entries through Seek: what it reads after a skipped
// entry is the next entry, and a stream cut inside a skipped entry is an
// error, not a short success.
func TestPrefetchTarSkip(t *testing.T) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	big := bytes.Repeat([]byte("x"), 2*chunkSize+17)
	for _, f := range []struct {
		name string
		body []byte
	}{{"skipped", big}, {"kept", []byte("hello")}} {
		if err := tw.WriteHeader(&tar.Header{Name: f.name, Mode: 0o644, Size: int64(len(f.body)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		tw.Write(f.body)
	}
	tw.Close()

	p := prefetch(bytes.NewReader(buf.Bytes()), 2)
	defer p.Close()
	tr := tar.NewReader(p)
	if h, err := tr.Next(); err != nil || h.Name != "skipped" {
		t.Fatalf("first entry: %v", err)
	}
	h, err := tr.Next()
	if err != nil || h.Name != "kept" {
		t.Fatalf("second entry: %v %v", h, err)
	}
	if b, _ := io.ReadAll(tr); string(b) != "hello" {
		t.Fatalf("kept = %q", b)
	}

	cut := prefetch(bytes.NewReader(buf.Bytes()[:512+chunkSize]), 2)
	defer cut.Close()
	tr = tar.NewReader(cut)
	if _, err := tr.Next(); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Next(); err != io.ErrUnexpectedEOF {
		t.Fatalf("next after a cut entry = %v, want io.ErrUnexpectedEOF", err)
	}
}
