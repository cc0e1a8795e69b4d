package transfer_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	ggcrregistry "github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/addonpkg/addonpkg/internal/testing/benchdata"
	"github.com/addonpkg/addonpkg/pkg/build"
	"github.com/addonpkg/addonpkg/pkg/layout"
	"github.com/addonpkg/addonpkg/pkg/source"
	"github.com/addonpkg/addonpkg/pkg/transfer"
)

// benchAddon builds an image-form add-on of n ConfigMaps of about size
// bytes each, spread over 20 directories as in pkg/unpack's benchmarks,
// and says how many bytes a copy of it moves (layer, config, manifest).
func benchAddon(b *testing.B, n, size int) (*source.Artifact, int64) {
	b.Helper()
	fsys, err := benchdata.ManifestTree(n, size)
	if err != nil {
		b.Fatal(err)
	}
	// Validation is the build benchmarks' business: skip it here.
	res, err := build.Build(context.Background(), fsys, build.Options{Name: "bench", NoValidate: true})
	if err != nil {
		b.Fatal(err)
	}
	m, err := res.Image.Manifest()
	if err != nil {
		b.Fatal(err)
	}
	raw, err := res.Image.RawManifest()
	if err != nil {
		b.Fatal(err)
	}
	total := m.Config.Size + int64(len(raw))
	for _, l := range m.Layers {
		total += l.Size
	}
	return &source.Artifact{Image: res.Image, Digest: res.Digest}, total
}

// benchBlobKey names a blob inside one repository.
type benchBlobKey struct {
	repo string
	h    v1.Hash
}

// benchBlobs is a registry blob store scoped by repository.
// go-containerregistry's in-memory store answers for a digest in every
// repository once any holds it, so a push to a fresh repository would
// upload nothing after the first; here each repository has its own blobs.
type benchBlobs struct {
	mu sync.Mutex
	m  map[benchBlobKey][]byte
}

// key scopes h to repo. The registry names the repository of an upload
// (PATCH or PUT .../blobs/uploads/ID) with a trailing "/blobs".
func (s *benchBlobs) key(repo string, h v1.Hash) benchBlobKey {
	return benchBlobKey{strings.TrimSuffix(repo, "/blobs"), h}
}

func (s *benchBlobs) Stat(_ context.Context, repo string, h v1.Hash) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.m[s.key(repo, h)]
	if !ok {
		return 0, ggcrregistry.ErrNotFound
	}
	return int64(len(b)), nil
}

func (s *benchBlobs) Get(_ context.Context, repo string, h v1.Hash) (io.ReadCloser, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.m[s.key(repo, h)]
	if !ok {
		return nil, ggcrregistry.ErrNotFound
	}
	return io.NopCloser(bytes.NewReader(b)), nil
}

// Put keeps the blob once the registry's digest check, which runs as rc is
// read, has passed.
func (s *benchBlobs) Put(_ context.Context, repo string, h v1.Hash, rc io.ReadCloser) error {
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[s.key(repo, h)] = b
	return nil
}

// drop forgets a repository's blobs.
func (s *benchBlobs) drop(repo string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k := range s.m {
		if k.repo == repo {
			delete(s.m, k)
		}
	}
}

// benchRegistry starts an in-memory registry on 127.0.0.1 (plain HTTP, as
// for any loopback registry) and returns its host:port.
func benchRegistry(b *testing.B) (string, *benchBlobs) {
	b.Helper()
	blobs := &benchBlobs{m: map[benchBlobKey][]byte{}}
	srv := httptest.NewServer(ggcrregistry.New(
		ggcrregistry.Logger(log.New(io.Discard, "", 0)),
		ggcrregistry.WithBlobHandler(blobs),
	))
	b.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://"), blobs
}

// benchPush writes the add-on to a new repository on every iteration, so
// every blob is uploaded, and reports the bytes uploaded.
func benchPush(b *testing.B, n, size int) {
	art, total := benchAddon(b, n, size)
	host, blobs := benchRegistry(b)
	ctx := context.Background()
	b.SetBytes(total)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		repo := fmt.Sprintf("bench/push-%d", i)
		i++
		dst, err := source.Parse(host + "/" + repo + ":1")
		if err != nil {
			b.Fatal(err)
		}
		res, err := transfer.Write(ctx, art, dst, transfer.Options{})
		if err != nil {
			b.Fatal(err)
		}
		if res.Digest != art.Digest.String() {
			b.Fatalf("pushed %s, want %s", res.Digest, art.Digest)
		}
		b.StopTimer()
		blobs.drop(repo)
		b.StartTimer()
	}
}

// BenchmarkPushSmall measures transfer.Write of an add-on of 50 ConfigMaps
// of 4 KiB to a registry on 127.0.0.1: blob existence checks, uploads,
// manifest put and the check of the pushed digest. MB/s is of the bytes
// uploaded (compressed layer, config and manifest).
func BenchmarkPushSmall(b *testing.B) { benchPush(b, 50, 4<<10) }

// BenchmarkPushMedium measures transfer.Write of an add-on of 2,000
// ConfigMaps of 10 KiB to a registry on 127.0.0.1.
func BenchmarkPushMedium(b *testing.B) { benchPush(b, 2000, 10<<10) }

// BenchmarkPushLarge measures transfer.Write of an add-on of 20,000
// ConfigMaps of 10 KiB to a registry on 127.0.0.1.
func BenchmarkPushLarge(b *testing.B) { benchPush(b, 20000, 10<<10) }

// benchPull pushes the add-on once, then copies it into a new, empty local
// store on every iteration, so every blob is downloaded and verified, and
// reports the bytes downloaded.
func benchPull(b *testing.B, n, size int) {
	art, total := benchAddon(b, n, size)
	host, _ := benchRegistry(b)
	ctx := context.Background()
	src, err := source.Parse(host + "/bench/pull:1")
	if err != nil {
		b.Fatal(err)
	}
	if _, err := transfer.Write(ctx, art, src, transfer.Options{}); err != nil {
		b.Fatal(err)
	}
	dst := source.Ref{Kind: source.KindStore, Name: "bench/pull:1"}
	tmp := b.TempDir()
	b.SetBytes(total)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		b.StopTimer()
		dir := filepath.Join(tmp, fmt.Sprint(i))
		i++
		st, err := layout.Init(dir)
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		res, err := transfer.Copy(ctx, src, dst, transfer.Options{Options: source.Options{Store: st}})
		if err != nil {
			b.Fatal(err)
		}
		if res.Digest != art.Digest.String() {
			b.Fatalf("pulled %s, want %s", res.Digest, art.Digest)
		}
		b.StopTimer()
		if err := os.RemoveAll(dir); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
}

// BenchmarkPullSmall measures transfer.Copy of an add-on of 50 ConfigMaps
// of 4 KiB from a registry on 127.0.0.1 into an empty local store (pkg/
// layout): tag resolution, manifest and blob downloads, verified writes,
// index update. MB/s is of the bytes downloaded.
func BenchmarkPullSmall(b *testing.B) { benchPull(b, 50, 4<<10) }

// BenchmarkPullMedium measures transfer.Copy of an add-on of 2,000
// ConfigMaps of 10 KiB from a registry on 127.0.0.1 into an empty store.
func BenchmarkPullMedium(b *testing.B) { benchPull(b, 2000, 10<<10) }

// BenchmarkPullLarge measures transfer.Copy of an add-on of 20,000
// ConfigMaps of 10 KiB from a registry on 127.0.0.1 into an empty store.
func BenchmarkPullLarge(b *testing.B) { benchPull(b, 20000, 10<<10) }
