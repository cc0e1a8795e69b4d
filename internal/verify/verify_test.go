package verify_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"io"
	"log"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/addonpkg/addonpkg/internal/verify"
	"github.com/addonpkg/addonpkg/pkg/errdef"
	"github.com/addonpkg/addonpkg/pkg/safetree"
)

func sha(t *testing.T, b []byte) v1.Hash {
	t.Helper()
	h, _, err := v1.SHA256(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func randomBytes(t *testing.T, n int) []byte {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return b
}

// source is a blob body that counts what was read of it and whether it
// was closed.
type source struct {
	r      io.Reader
	read   int64
	closed bool
}

func (s *source) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	s.read += int64(n)
	return n, err
}

func (s *source) Close() error { s.closed = true; return nil }

// endless is a body that never ends.
type endless struct{}

func (endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	return len(p), nil
}

func TestReader(t *testing.T) {
	blob := randomBytes(t, 100_000)
	h := sha(t, blob)
	other := bytes.Clone(blob)
	other[len(other)/2] ^= 1
	for _, c := range []struct {
		name string
		body io.Reader
		size int64
		want error // nil: the blob reads whole and verified
		// sizeErr: the error is ErrSizeMismatch (which is also a digest
		// mismatch); else a digest mismatch that is no size mismatch.
		sizeErr bool
	}{
		{"right bytes and size", bytes.NewReader(blob), int64(len(blob)), nil, false},
		{"right bytes, size unknown", bytes.NewReader(blob), -1, nil, false},
		{"one bit changed", bytes.NewReader(other), int64(len(blob)), errdef.ErrDigestMismatch, false},
		{"one bit changed, size unknown", bytes.NewReader(other), -1, errdef.ErrDigestMismatch, false},
		{"truncated", bytes.NewReader(blob[:len(blob)-1]), int64(len(blob)), errdef.ErrDigestMismatch, true},
		{"truncated, size unknown", bytes.NewReader(blob[:len(blob)-1]), -1, errdef.ErrDigestMismatch, false},
		{"empty", strings.NewReader(""), int64(len(blob)), errdef.ErrDigestMismatch, true},
		{"one byte more", io.MultiReader(bytes.NewReader(blob), strings.NewReader("x")), int64(len(blob)), errdef.ErrDigestMismatch, true},
		{"smaller size described", bytes.NewReader(blob), 10, errdef.ErrDigestMismatch, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := &source{r: c.body}
			r, err := verify.NewReader(src, h, c.size)
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(r)
			if c.want == nil {
				if err != nil || !bytes.Equal(got, blob) {
					t.Fatalf("read %d bytes, %v; want the blob", len(got), err)
				}
			} else {
				if !errors.Is(err, c.want) {
					t.Fatalf("got %v, want %v", err, c.want)
				}
				if errors.Is(err, errdef.ErrSizeMismatch) != c.sizeErr {
					t.Fatalf("errors.Is(%v, ErrSizeMismatch) = %v, want %v", err, !c.sizeErr, c.sizeErr)
				}
				// The error sticks.
				if n, again := r.Read(make([]byte, 10)); n != 0 || again == nil || again.Error() != err.Error() {
					t.Errorf("read after the error: %d, %v; want 0, %v", n, again, err)
				}
			}
			if err := r.Close(); err != nil || !src.closed {
				t.Errorf("Close: %v, closed %v", err, src.closed)
			}
		})
	}
}

// A body longer than described fails as soon as it passes the size, not
// at its end (it may have none).
func TestReaderStopsPastSize(t *testing.T) {
	src := &source{r: endless{}}
	r, err := verify.NewReader(src, sha(t, []byte("small")), 1000)
	if err != nil {
		t.Fatal(err)
	}
	n, err := io.Copy(io.Discard, r)
	if !errors.Is(err, errdef.ErrSizeMismatch) {
		t.Fatalf("got %v, want ErrSizeMismatch", err)
	}
	if n > 1000 || src.read > 1000+64<<10 {
		t.Errorf("passed %d bytes and read %d of an endless body described as 1000", n, src.read)
	}
}

func TestNewReaderAlgorithm(t *testing.T) {
	src := &source{r: strings.NewReader("x")}
	h := v1.Hash{Algorithm: "sha512", Hex: strings.Repeat("0", 128)}
	if _, err := verify.NewReader(src, h, 1); err == nil || !strings.Contains(err.Error(), "sha512") {
		t.Errorf("got %v, want an error naming the algorithm", err)
	}
	if !src.closed {
		t.Error("the body of a refused reader was left open")
	}
}

func TestReadAll(t *testing.T) {
	blob := randomBytes(t, 4096)
	h := sha(t, blob)
	for _, c := range []struct {
		name      string
		body      io.Reader
		size, max int64
		want      error
		maxRead   int64 // the most of the body that may be read
	}{
		{"fits", bytes.NewReader(blob), 4096, 4096, nil, 4096},
		{"fits, size unknown", bytes.NewReader(blob), -1, 4096, nil, 4096},
		{"described over the cap: nothing read", bytes.NewReader(blob), 4096, 4095, safetree.ErrLimit, 0},
		{"size unknown, body over the cap", bytes.NewReader(blob), -1, 100, safetree.ErrLimit, 100 + 64<<10},
		{"size unknown, endless body", endless{}, -1, 100, safetree.ErrLimit, 100 + 64<<10},
		{"described small, body endless", endless{}, 50, 100, errdef.ErrSizeMismatch, 100 + 64<<10},
		{"wrong bytes", bytes.NewReader(bytes.Repeat([]byte{1}, 4096)), 4096, 4096, errdef.ErrDigestMismatch, 4096},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := &source{r: c.body}
			got, err := verify.ReadAll(src, h, c.size, safetree.Cap{Which: safetree.LimitManifestBytes, Max: c.max})
			if c.want == nil {
				if err != nil || !bytes.Equal(got, blob) {
					t.Fatalf("got %d bytes, %v; want the blob", len(got), err)
				}
			} else if !errors.Is(err, c.want) || got != nil {
				t.Fatalf("got %d bytes, %v; want nil, %v", len(got), err, c.want)
			}
			if src.read > c.maxRead {
				t.Errorf("read %d bytes of the body, want at most %d", src.read, c.maxRead)
			}
			if !src.closed {
				t.Error("body left open")
			}
		})
	}
}

func TestBytes(t *testing.T) {
	b := []byte("config")
	h := sha(t, b)
	if err := verify.Bytes(b, h); err != nil {
		t.Errorf("matching bytes: %v", err)
	}
	if err := verify.Bytes([]byte("other"), h); !errors.Is(err, errdef.ErrDigestMismatch) {
		t.Errorf("other bytes: %v, want ErrDigestMismatch", err)
	}
	if err := verify.Bytes(b, v1.Hash{Algorithm: "sha512", Hex: h.Hex}); !errors.Is(err, errdef.ErrDigestMismatch) {
		t.Errorf("another algorithm: %v, want ErrDigestMismatch", err)
	}
}

// withManifest is an image whose manifest is replaced, the rest (its
// config and layers by digest) served by the image underneath.
type withManifest struct {
	v1.Image
	m *v1.Manifest
}

func (w withManifest) Manifest() (*v1.Manifest, error) { return w.m, nil }

// layersOnly hides everything but LayerByDigest of its image, as a
// wrapper that forwards only v1.Image's methods does.
type layersOnly struct{ v1.Image }

// servesConfig is an image whose blobs, its config among them, all hold
// body.
type servesConfig struct {
	v1.Image
	body []byte
}

func (s servesConfig) LayerByDigest(v1.Hash) (v1.Layer, error) {
	return static.NewLayer(s.body, types.OCIConfigJSON), nil
}

// holdsConfig is an image that serves no blob but holds its config, as
// images built in memory do.
type holdsConfig struct {
	v1.Image
	config []byte
}

func (h holdsConfig) LayerByDigest(v1.Hash) (v1.Layer, error) { return nil, errors.New("no blobs") }
func (h holdsConfig) RawConfigFile() ([]byte, error)          { return h.config, nil }

// editManifest returns img with its manifest changed by edit.
func editManifest(t *testing.T, img v1.Image, edit func(*v1.Manifest)) v1.Image {
	t.Helper()
	m, err := img.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	m = m.DeepCopy()
	edit(m)
	return withManifest{Image: img, m: m}
}

// remoteImage pushes img to an in-memory registry and reads it back
// remotely: its config is then fetched as a blob.
func remoteImage(t *testing.T, img v1.Image) v1.Image {
	t.Helper()
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	ref, err := name.ParseReference(strings.TrimPrefix(srv.URL, "http://") + "/verify/test:1")
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(ref, img, remote.WithContext(context.Background())); err != nil {
		t.Fatal(err)
	}
	got, err := remote.Image(ref)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func TestConfig(t *testing.T) {
	img, err := random.Image(256, 1)
	if err != nil {
		t.Fatal(err)
	}
	want, err := img.RawConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	size := int64(len(want))
	remoteImg := remoteImage(t, img)
	// Bodies that are not the config the manifest names.
	tampered := bytes.Clone(want)
	tampered[len(tampered)/2] ^= 1
	bigger := append(bytes.Clone(want), bytes.Repeat([]byte(" "), 10_000)...)

	for _, c := range []struct {
		name string
		img  v1.Image
		max  int64
		want error // nil: the config reads whole
	}{
		{"in memory", img, size, nil},
		{"in memory, over the cap", img, size - 1, safetree.ErrLimit},
		{"remote", remoteImg, size, nil},
		{"remote, over the cap", remoteImg, size - 1, safetree.ErrLimit},
		{"through a wrapper", layersOnly{remoteImg}, size, nil},
		{"descriptor claims less than the body", editManifest(t, remoteImg, func(m *v1.Manifest) { m.Config.Size = 10 }), size, errdef.ErrSizeMismatch},
		{"descriptor claims more than the cap", editManifest(t, remoteImg, func(m *v1.Manifest) { m.Config.Size = 1 << 40 }), size, safetree.ErrLimit},
		{"embedded data", editManifest(t, img, func(m *v1.Manifest) { m.Config.Data = want }), size, nil},
		{"embedded data over the cap", editManifest(t, img, func(m *v1.Manifest) { m.Config.Data = want }), size - 1, safetree.ErrLimit},
		{"embedded data that does not match", editManifest(t, img, func(m *v1.Manifest) { m.Config.Data = tampered }), size, errdef.ErrDigestMismatch},
		{"streamed body that does not match", servesConfig{img, tampered}, size, errdef.ErrDigestMismatch},
		{"streamed body longer than described", servesConfig{img, bigger}, int64(len(bigger)), errdef.ErrSizeMismatch},
		{"held config", holdsConfig{img, want}, size, nil},
		{"held config over the cap", holdsConfig{img, want}, size - 1, safetree.ErrLimit},
		{"held config that does not match", holdsConfig{img, tampered}, size, errdef.ErrDigestMismatch},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := verify.Config(c.img, safetree.Cap{Which: safetree.LimitConfigBytes, Max: c.max})
			if c.want == nil {
				if err != nil || !bytes.Equal(got, want) {
					t.Fatalf("got %q, %v; want the config", got, err)
				}
				return
			}
			if !errors.Is(err, c.want) || got != nil {
				t.Fatalf("got %d bytes, %v; want nil, %v", len(got), err, c.want)
			}
		})
	}
}

// Layer reads a small layer whole, and refuses one over the cap or whose
// descriptor does not match its bytes.
func TestLayer(t *testing.T) {
	body := []byte(`{"critical":{}}`)
	l := static.NewLayer(body, "application/vnd.dev.cosign.simplesigning.v1+json")
	img, err := mutate.AppendLayers(empty.Image, l)
	if err != nil {
		t.Fatal(err)
	}
	m, err := img.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	d := m.Layers[0]
	if got, err := verify.Layer(img, d, safetree.Cap{Which: safetree.LimitSignatureBytes, Max: 1 << 10}); err != nil || !bytes.Equal(got, body) {
		t.Fatalf("Layer = %q, %v", got, err)
	}
	if _, err := verify.Layer(img, d, safetree.Cap{Which: safetree.LimitSignatureBytes, Max: 4}); !errors.Is(err, safetree.ErrLimit) {
		t.Errorf("over the cap: %v, want ErrLimit", err)
	}
	short := d
	short.Size--
	if _, err := verify.Layer(img, short, safetree.Cap{Which: safetree.LimitSignatureBytes, Max: 1 << 10}); !errors.Is(err, errdef.ErrDigestMismatch) {
		t.Errorf("a size that lies: %v, want ErrDigestMismatch", err)
	}
}
