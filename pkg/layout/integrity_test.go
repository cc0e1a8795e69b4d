package layout_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/addonpkg/addonpkg/pkg/errdef"
	"github.com/addonpkg/addonpkg/pkg/layout"
	"github.com/addonpkg/addonpkg/pkg/mediatypes"
)

// claimedImage says a media type its manifest does not have, as a remote
// image does when the registry sends another Content-Type.
type claimedImage struct {
	v1.Image
	claim types.MediaType
}

func (c claimedImage) MediaType() (types.MediaType, error) { return c.claim, nil }

type anIndex = v1.ImageIndex

type claimedIndex struct {
	anIndex
	claim types.MediaType
}

func (c claimedIndex) MediaType() (types.MediaType, error) { return c.claim, nil }

// The store records what the manifest's bytes say, not the source's claim.
func TestWriteRecordsContentMediaType(t *testing.T) {
	ctx := context.Background()
	st := newStore(t)
	img := randomImage(t)
	m, err := img.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	own := m.MediaType // random.Image writes a Docker manifest
	if own == "" {
		t.Fatal("random.Image has no mediaType field")
	}
	d, err := st.WriteImage(ctx, claimedImage{img, "text/plain"}, nil, "img:1")
	if err != nil {
		t.Fatal(err)
	}
	if d.MediaType != own {
		t.Errorf("WriteImage: %q, want %q", d.MediaType, own)
	}
	idx := mutate.AppendManifests(empty.Index, mutate.IndexAddendum{Add: img})
	if _, err := st.WriteIndex(ctx, claimedIndex{idx, "application/octet-stream"}, nil, "idx:1"); err != nil {
		t.Fatal(err)
	}
	for _, m := range readIndex(t, st).Manifests {
		want := own
		if m.Annotations[mediatypes.AnnotationRefName] == "idx:1" {
			want = types.OCIImageIndex
		}
		if m.MediaType != want {
			t.Errorf("%s: index.json records %q, want %q", m.Annotations[mediatypes.AnnotationRefName], m.MediaType, want)
		}
	}
	// An index handed over as an image is refused, not stored.
	if _, err := st.WriteIndex(ctx, claimedIndex{claimIndexOf(t, img), types.OCIImageIndex}, nil, "bad:1"); !errors.Is(err, mediatypes.ErrNotManifest) {
		t.Errorf("an image manifest written as an index: %v, want ErrNotManifest", err)
	}
}

// claimIndexOf presents an image's manifest as an index.
func claimIndexOf(t *testing.T, img v1.Image) v1.ImageIndex {
	t.Helper()
	return imageAsIndex{img}
}

type imageAsIndex struct{ img v1.Image }

func (i imageAsIndex) MediaType() (types.MediaType, error)       { return types.OCIImageIndex, nil }
func (i imageAsIndex) Digest() (v1.Hash, error)                  { return i.img.Digest() }
func (i imageAsIndex) Size() (int64, error)                      { return i.img.Size() }
func (i imageAsIndex) IndexManifest() (*v1.IndexManifest, error) { return &v1.IndexManifest{}, nil }
func (i imageAsIndex) RawManifest() ([]byte, error)              { return i.img.RawManifest() }
func (i imageAsIndex) Image(v1.Hash) (v1.Image, error)           { return nil, errors.New("none") }
func (i imageAsIndex) ImageIndex(v1.Hash) (v1.ImageIndex, error) { return nil, errors.New("none") }

// Presence is verified presence, and a write replaces a corrupt blob.
func TestCorruptBlobReplaced(t *testing.T) {
	ctx := context.Background()
	st := newStore(t)
	img := randomImage(t)
	if _, err := st.WriteImage(ctx, img, nil, "x:1"); err != nil {
		t.Fatal(err)
	}
	m, _ := img.Manifest()
	for _, c := range []struct {
		name   string
		h      v1.Hash
		damage func([]byte) []byte
	}{
		{"layer flipped", m.Layers[0].Digest, func(b []byte) []byte { b[0] ^= 1; return b }},
		{"layer truncated", m.Layers[1].Digest, func(b []byte) []byte { return b[:len(b)-1] }},
		{"config emptied", m.Config.Digest, func([]byte) []byte { return nil }},
		{"manifest grown", digest(t, img), func(b []byte) []byte { return append(b, ' ') }},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(st.Dir(), "blobs", "sha256", c.h.Hex)
			good, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, c.damage(bytes.Clone(good)), 0o644); err != nil {
				t.Fatal(err)
			}
			if st.HasBlob(c.h) {
				t.Error("HasBlob reports a corrupted blob present")
			}
			// Rewriting the image repairs it.
			if _, err := st.WriteImage(ctx, img, nil, "x:1"); err != nil {
				t.Fatal(err)
			}
			if got, _ := os.ReadFile(p); !bytes.Equal(got, good) {
				t.Error("WriteImage left the corrupted blob in place")
			}
			if !st.HasBlob(c.h) {
				t.Error("HasBlob after the repair: absent")
			}
		})
	}
	// WriteBlob alone repairs too, and keeps refusing wrong bytes.
	h := m.Layers[0].Digest
	p := filepath.Join(st.Dir(), "blobs", "sha256", h.Hex)
	good, _ := os.ReadFile(p)
	if err := os.WriteFile(p, []byte("junk"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := st.WriteBlob(h, int64(len(good)), bytes.NewReader([]byte("still junk"))); !errors.Is(err, errdef.ErrDigestMismatch) {
		t.Errorf("WriteBlob of wrong bytes over a corrupt blob: %v", err)
	}
	if err := st.WriteBlob(h, int64(len(good)), bytes.NewReader(good)); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(p); !bytes.Equal(got, good) {
		t.Error("WriteBlob left the corrupt blob in place")
	}
}

// GC reads what a tag reaches from the manifests' bytes, and deletes
// nothing while any tag's tree cannot be read; an untagged entry nothing
// reaches goes whether or not it can be read.
func TestGCUnreadable(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name    string
		damage  func(t *testing.T, st *layout.Store, idxDigest, childDigest v1.Hash)
		refused string // the entry GC must name; "" when GC runs
	}{
		{"media types in index.json are not manifests'", func(t *testing.T, st *layout.Store, _, _ v1.Hash) {
			editIndex(t, st, func(d *v1.Descriptor) { d.MediaType = "text/plain" })
		}, ""},
		{"index missing", func(t *testing.T, st *layout.Store, idx, _ v1.Hash) {
			removeBlob(t, st, idx)
		}, "idx:1"},
		{"child manifest missing", func(t *testing.T, st *layout.Store, _, child v1.Hash) {
			removeBlob(t, st, child)
		}, "idx:1"},
		{"size in index.json wrong", func(t *testing.T, st *layout.Store, idx, _ v1.Hash) {
			editIndex(t, st, func(d *v1.Descriptor) {
				if d.Digest == idx {
					d.Size++
				}
			})
		}, "idx:1"},
		{"untagged entry unreadable", func(t *testing.T, st *layout.Store, idx, child v1.Hash) {
			editIndex(t, st, func(d *v1.Descriptor) {
				if d.Digest == idx {
					d.Annotations = nil
				}
			})
			removeBlob(t, st, child)
		}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := newStore(t)
			img := randomImage(t)
			idx := mutate.AppendManifests(empty.Index, mutate.IndexAddendum{Add: img})
			d, err := st.WriteIndex(ctx, idx, nil, "idx:1")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := st.WriteImage(ctx, randomImage(t), nil, "drop:1"); err != nil {
				t.Fatal(err)
			}
			if err := st.Untag("drop:1"); err != nil {
				t.Fatal(err)
			}
			c.damage(t, st, d.Digest, digest(t, img))
			before := blobs(t, st)

			res, err := st.GarbageCollect()
			n := 0
			if res != nil {
				n = res.Files
			}
			if c.name == "untagged entry unreadable" {
				if err != nil {
					t.Fatal(err)
				}
				if len(res.Removed) != 1 || res.Removed[0].Digest != d.Digest || !strings.Contains(res.Removed[0].Why, "untagged") {
					t.Errorf("removed %+v, want the untagged idx", res.Removed)
				}
				if got := readIndex(t, st).Manifests; len(got) != 0 {
					t.Errorf("index.json after GC: %+v", got)
				}
				return
			}
			if c.refused == "" {
				if err != nil {
					t.Fatal(err)
				}
				got := blobs(t, st)
				for _, h := range append(imageBlobs(t, img), d.Digest.Hex) {
					if !slices.Contains(got, h) {
						t.Errorf("GC removed %s, which idx:1 reaches", h)
					}
				}
				if n != 4 {
					t.Errorf("GC removed %d files, want the 4 of drop:1", n)
				}
				return
			}
			var ue *layout.UnreadableError
			if !errors.Is(err, layout.ErrUnreadable) || !errors.As(err, &ue) || len(ue.Entries) != 1 {
				t.Fatalf("GC: %v, want one UnreadableError entry", err)
			}
			e := ue.Entries[0]
			if e.Name != c.refused || e.Digest != d.Digest {
				t.Errorf("entry %+v, want %s %s", e, c.refused, d.Digest)
			}
			if n != 0 || !slices.Equal(blobs(t, st), before) {
				t.Errorf("GC refused but removed %d files", n)
			}
		})
	}
}

func removeBlob(t *testing.T, st *layout.Store, h v1.Hash) {
	t.Helper()
	if err := os.Remove(filepath.Join(st.Dir(), "blobs", "sha256", h.Hex)); err != nil {
		t.Fatal(err)
	}
}

// editIndex changes every entry of index.json behind the store's back.
func editIndex(t *testing.T, st *layout.Store, change func(*v1.Descriptor)) {
	t.Helper()
	idx := readIndex(t, st)
	for i := range idx.Manifests {
		change(&idx.Manifests[i])
	}
	b, err := json.Marshal(idx)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(st.Dir(), "index.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// A library caller writing while GC runs: no write fails, no tag ever
// names a blob that is gone, and what Hold covers survives until it is
// tagged. Run it under -race.
func TestLibraryWritersRaceGC(t *testing.T) {
	ctx := context.Background()
	st := newStore(t)
	base := randomImage(t)
	if _, err := st.WriteImage(ctx, base, nil, "base:1"); err != nil {
		t.Fatal(err)
	}
	const rounds = 30
	stop := make(chan struct{})
	var (
		gcWG, wg sync.WaitGroup
		mu       sync.Mutex
		errs     []error
		gcRuns   int
	)
	report := func(err error) {
		mu.Lock()
		errs = append(errs, err)
		mu.Unlock()
	}
	gcWG.Add(1)
	go func() {
		defer gcWG.Done()
		// Its own Store value, as another process would have.
		other, err := layout.Open(st.Dir())
		if err != nil {
			report(err)
			return
		}
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, _, err := other.GC(); err != nil {
				report(fmt.Errorf("gc: %w", err))
			}
			mu.Lock()
			gcRuns++
			mu.Unlock()
		}
	}()

	wg.Add(3)
	go func() { // loose blobs
		defer wg.Done()
		for i := range rounds {
			b := []byte(fmt.Sprintf("loose blob %d", i))
			h, _, _ := v1.SHA256(bytes.NewReader(b))
			if err := st.WriteBlob(h, int64(len(b)), bytes.NewReader(b)); err != nil {
				report(fmt.Errorf("WriteBlob: %w", err))
			}
		}
	}()
	go func() { // blobs first, then the image that names them, under Hold
		defer wg.Done()
		for i := range rounds {
			img := randomImage(t)
			release, err := st.Hold()
			if err != nil {
				report(err)
				return
			}
			m, _ := img.Manifest()
			ls, _ := img.Layers()
			for j, l := range ls {
				rc, err := l.Compressed()
				if err == nil {
					err = st.WriteBlob(m.Layers[j].Digest, m.Layers[j].Size, rc)
					rc.Close()
				}
				if err != nil {
					report(fmt.Errorf("WriteBlob under Hold: %w", err))
				}
			}
			for _, l := range m.Layers {
				if !st.HasBlob(l.Digest) {
					report(fmt.Errorf("round %d: layer %s written under Hold is gone before its tag", i, l.Digest))
				}
			}
			if _, err := st.WriteImage(ctx, img, nil, fmt.Sprintf("held:%d", i)); err != nil {
				report(fmt.Errorf("WriteImage: %w", err))
			}
			release()
		}
	}()
	go func() { // tags come and go
		defer wg.Done()
		for i := range rounds {
			name := fmt.Sprintf("t:%d", i)
			if _, err := st.Tag("base:1", name); err != nil {
				report(fmt.Errorf("Tag: %w", err))
			}
			if i%2 == 0 {
				if err := st.Untag(name); err != nil {
					report(fmt.Errorf("Untag: %w", err))
				}
			}
		}
	}()
	wg.Wait()
	close(stop)
	gcWG.Wait()
	for _, err := range errs {
		t.Error(err)
	}
	// Every name reads completely, every blob verified.
	entries, err := st.List()
	if err != nil {
		t.Fatal(err)
	}
	if want := 1 + rounds + rounds/2; len(entries) != want {
		t.Errorf("%d names, want %d", len(entries), want)
	}
	for _, e := range entries {
		img, err := st.Image(e.Descriptor)
		if err != nil {
			t.Errorf("%s: %v", e.Name, err)
			continue
		}
		if _, err := img.RawConfigFile(); err != nil {
			t.Errorf("%s: %v", e.Name, err)
		}
		ls, _ := img.Layers()
		for _, l := range ls {
			rc, err := l.Compressed()
			if err == nil {
				_, err = io.Copy(io.Discard, rc)
				rc.Close()
			}
			if err != nil {
				t.Errorf("%s: %v", e.Name, err)
			}
		}
	}
	t.Logf("%d gc runs", gcRuns)
}
