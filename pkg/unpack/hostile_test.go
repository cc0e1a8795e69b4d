package unpack_test

import (
	"archive/tar"
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/addonpkg/addonpkg/pkg/errdef"
	"github.com/addonpkg/addonpkg/pkg/layout"
	"github.com/addonpkg/addonpkg/pkg/mediatypes"
	"github.com/addonpkg/addonpkg/pkg/safetree"
	"github.com/addonpkg/addonpkg/pkg/unpack"
)

// hostileCase is one image that must be refused with a given sentinel.
type hostileCase struct {
	name string
	// build prepares the image (not timed, not measured) and returns the
	// call under test.
	build func(t *testing.T) func(ctx context.Context) error
	// is is the sentinel errors.Is must find; nil means any error, or,
	// with anyOutcome, success too.
	is         error
	anyOutcome bool
	// check looks further at the error (errors.As and the like).
	check func(t *testing.T, err error)
	// within bounds the call's wall time (default 20 s).
	within time.Duration
	// maxAlloc, when set, bounds the bytes allocated during the call
	// (TotalAlloc delta) and the peak heap growth.
	maxAlloc uint64
}

// img wraps an image-form image in the call under test.
func img(opts unpack.Options, mk func(t *testing.T) v1.Image) func(t *testing.T) func(context.Context) error {
	return func(t *testing.T) func(context.Context) error {
		im := mk(t)
		return func(ctx context.Context) error {
			_, err := unpack.Image(ctx, im, opts)
			return err
		}
	}
}

// oneLayer is an OCI image-form image of one gzip layer of entries.
func oneLayer(entries ...ent) func(t *testing.T) v1.Image {
	return func(t *testing.T) v1.Image { return imageOf(t, imageOpts{}, ociLayer(entries...)) }
}

func entryErr(t *testing.T, err error) {
	t.Helper()
	var ee *unpack.EntryError
	if !errors.As(err, &ee) {
		t.Errorf("err %T %v: want an *unpack.EntryError", err, err)
	}
}

func limitErr(flag safetree.LimitID) func(t *testing.T, err error) {
	return func(t *testing.T, err error) {
		t.Helper()
		var le *safetree.LimitError
		if !errors.As(err, &le) {
			t.Fatalf("err %T %v: want an *safetree.LimitError", err, err)
		}
		if le.Which != flag {
			t.Errorf("safetree.LimitError.Which = %q, want %q", le.Which, flag)
		}
	}
}

// lyingLayer is a layer whose Compressed returns other bytes than the
// blob its digest names.
func lyingLayer(l *testLayer, body []byte) *testLayer {
	c := *l
	c.body = body
	return &c
}

// touchGzip returns a copy of a gzip blob with another MTIME in its
// header: the same size, the same decompressed bytes, another digest.
func touchGzip(blob []byte) []byte {
	b := bytes.Clone(blob)
	b[4] ^= 0x5a
	return b
}

// nestedIndex wraps an image in n single-entry indexes.
func nestedIndex(t *testing.T, n int) v1.ImageIndex {
	var idx v1.ImageIndex = mutate.AppendManifests(empty.Index, mutate.IndexAddendum{Add: imageOf(t, imageOpts{}, ociLayer(file("addon/a", "a")))})
	for range n - 1 {
		idx = mutate.AppendManifests(empty.Index, mutate.IndexAddendum{Add: idx})
	}
	return idx
}

// bombLimits are the limits the 3 GiB bombs meet: the defaults (2 GiB of
// decompressed image), except under -race where inflating 2 GiB takes a
// minute; there the image limit is 256 MiB, still far below the bomb.
func bombLimits() safetree.Limits {
	if raceEnabled {
		return safetree.Limits{MaxImageBytes: 256 << 20}
	}
	return safetree.Limits{}
}

// bombErr checks the bombs' error: the image size limit, at its default
// unless under -race.
func bombErr(t *testing.T, err error) {
	t.Helper()
	limitErr(safetree.LimitImageBytes)(t, err)
	var le *safetree.LimitError
	if errors.As(err, &le) && le.Limit != cmp.Or(bombLimits().MaxImageBytes, safetree.DefaultMaxImageBytes) {
		t.Errorf("safetree.LimitError.Limit = %d", le.Limit)
	}
}

func hostileCases() []hostileCase {
	big := time.Minute // bombs
	return []hostileCase{
		{name: "entry ../escape", build: img(unpack.Options{}, oneLayer(file("addon/a", "a"), file("../escape", "x"))), is: safetree.ErrUnsafe, check: entryErr},
		{name: "entry addon/../../escape", build: img(unpack.Options{}, oneLayer(file("addon/../../escape", "x"))), is: safetree.ErrUnsafe, check: entryErr},
		{name: "entry /abs", build: img(unpack.Options{}, oneLayer(file("addon/a", "a"), file("/abs", "x"))), is: safetree.ErrUnsafe, check: entryErr},
		{name: "entry /addon/abs", build: img(unpack.Options{}, oneLayer(file("/addon/abs", "x"))), is: safetree.ErrUnsafe, check: entryErr},
		{name: "symlink addon/etc -> /etc", build: img(unpack.Options{}, oneLayer(file("addon/a", "a"), symlink("addon/etc", "/etc"))), is: safetree.ErrUnsafe, check: entryErr},
		{name: "symlink addon/l -> ../../x", build: img(unpack.Options{}, oneLayer(file("addon/a", "a"), symlink("addon/l", "../../x"))), is: safetree.ErrUnsafe, check: entryErr},
		{name: "symlink addon/d/l -> ../../x", build: img(unpack.Options{}, oneLayer(file("addon/d/a", "a"), symlink("addon/d/l", "../../x"))), is: safetree.ErrUnsafe, check: entryErr},
		{name: "symlink addon/l -> sub/../../x", build: img(unpack.Options{}, oneLayer(file("addon/a", "a"), symlink("addon/l", "sub/../../x"))), is: safetree.ErrUnsafe, check: entryErr},
		{name: "symlink with an empty target", build: img(unpack.Options{}, oneLayer(file("addon/a", "a"), symlink("addon/l", ""))), is: safetree.ErrUnsafe, check: entryErr},
		{
			name:  "symlink addon/d -> sub, then addon/d/x in the same layer",
			build: img(unpack.Options{}, oneLayer(dirE("addon/"), dirE("addon/sub/"), symlink("addon/d", "sub"), file("addon/d/x", "through the link"))),
			is:    safetree.ErrUnsafe, check: entryErr,
		},
		{
			// spec 9.4: "refuse an entry whose path passes through a
			// symbolic link". Layer 1 leaves addon/d a link; layer 2's
			// addon/d/x passes through it. umoci writes it to addon/sub/x.
			name: "symlink addon/d -> sub in a lower layer, addon/d/x in an upper one",
			build: img(unpack.Options{}, func(t *testing.T) v1.Image {
				return imageOf(t, imageOpts{},
					ociLayer(dirE("addon/"), dirE("addon/sub/"), symlink("addon/d", "sub")),
					ociLayer(file("addon/d/x", "through the link")))
			}),
			is: safetree.ErrUnsafe,
		},
		{name: "hardlink to /etc/passwd", build: img(unpack.Options{}, oneLayer(file("addon/a", "a"), hardlink("addon/h", "/etc/passwd"))), is: safetree.ErrUnsafe, check: entryErr},
		{name: "hardlink to ../x", build: img(unpack.Options{}, oneLayer(file("addon/a", "a"), hardlink("addon/h", "../x"))), is: safetree.ErrUnsafe, check: entryErr},
		{name: "hardlink to etc/passwd outside /addon", build: img(unpack.Options{}, oneLayer(file("etc/passwd", "root"), file("addon/a", "a"), hardlink("addon/h", "etc/passwd"))), is: safetree.ErrUnsafe, check: entryErr},
		{
			// spec 4.4 item 8: a hard link names a file of its own layer;
			// one to a lower layer's file is refused, not left dangling.
			name: "hardlink to a file of a lower layer",
			build: img(unpack.Options{}, func(t *testing.T) v1.Image {
				return imageOf(t, imageOpts{}, ociLayer(file("addon/a", "a")), ociLayer(hardlink("addon/h", "addon/a")))
			}),
			is: safetree.ErrUnsafe, check: entryErr,
		},
		{name: "hardlink to a directory", build: img(unpack.Options{}, oneLayer(dirE("addon/d/"), file("addon/a", "a"), hardlink("addon/h", "addon/d"))), is: safetree.ErrUnsafe, check: entryErr},
		{name: "char device in /addon", build: img(unpack.Options{}, oneLayer(file("addon/a", "a"), ent{name: "addon/null", typ: tar.TypeChar})), is: safetree.ErrUnsafe, check: entryErr},
		{name: "block device in /addon", build: img(unpack.Options{}, oneLayer(file("addon/a", "a"), ent{name: "addon/sda", typ: tar.TypeBlock})), is: safetree.ErrUnsafe, check: entryErr},
		{
			// GNU tar --format=posix --sparse writes a sparse file as a
			// regular entry with GNU.sparse.* records, which Go's reader
			// hands over with its holes filled: the same file as type 'S'.
			name: "GNU sparse file in the PAX format in /addon",
			build: img(unpack.Options{}, func(t *testing.T) v1.Image {
				return imageOf(t, imageOpts{}, tarLayer(paxSparse(t, "addon/holes.yaml", 1<<20), mediatypes.Gzip, types.OCILayer))
			}),
			is: safetree.ErrUnsupportedType, check: entryErr,
		},
		{name: "fifo in /addon", build: img(unpack.Options{}, oneLayer(file("addon/a", "a"), ent{name: "addon/fifo", typ: tar.TypeFifo})), is: safetree.ErrUnsafe, check: entryErr},
		{
			name: "gzip bomb: 3 GiB of zeros outside /addon, default limits",
			build: func(t *testing.T) func(context.Context) error {
				blob := bombBlob(t, "var/bomb", 3<<30, mediatypes.Gzip)
				t.Logf("gzip bomb: %d compressed bytes for 3 GiB", len(blob))
				im := imageOf(t, imageOpts{noDiff: true}, ociLayer(file("addon/a", "a")), rawLayer(blob, types.OCILayer))
				return func(ctx context.Context) error {
					_, err := unpack.Image(ctx, im, unpack.Options{Limits: bombLimits()})
					return err
				}
			},
			is: safetree.ErrLimit, check: bombErr, within: big, maxAlloc: 256 << 20,
		},
		{
			name: "zstd bomb: 3 GiB of zeros outside /addon, default limits",
			build: func(t *testing.T) func(context.Context) error {
				blob := bombBlob(t, "var/bomb", 3<<30, mediatypes.Zstd)
				t.Logf("zstd bomb: %d compressed bytes for 3 GiB", len(blob))
				im := imageOf(t, imageOpts{noDiff: true}, ociLayer(file("addon/a", "a")), rawLayer(blob, types.OCILayerZStd))
				return func(ctx context.Context) error {
					_, err := unpack.Image(ctx, im, unpack.Options{Limits: bombLimits()})
					return err
				}
			},
			is: safetree.ErrLimit, check: bombErr, within: big, maxAlloc: 256 << 20,
		},
		{
			name: "200 MiB file in /addon over MaxFileBytes 64 MiB",
			build: func(t *testing.T) func(context.Context) error {
				blob := bombBlob(t, "addon/big", 200<<20, mediatypes.Gzip)
				im := imageOf(t, imageOpts{noDiff: true}, rawLayer(blob, types.OCILayer))
				return func(ctx context.Context) error {
					_, err := unpack.Image(ctx, im, unpack.Options{Limits: safetree.Limits{MaxFileBytes: 64 << 20}})
					return err
				}
			},
			is: safetree.ErrLimit, check: limitErr(safetree.LimitFileBytes), within: big, maxAlloc: 256 << 20,
		},
		{
			name: "MaxEntries crossed",
			build: img(unpack.Options{Limits: safetree.Limits{MaxEntries: 10}}, func(t *testing.T) v1.Image {
				var e []ent
				for i := range 20 {
					e = append(e, file("addon/f"+strings.Repeat("x", i), "x"))
				}
				return imageOf(t, imageOpts{}, ociLayer(e...))
			}),
			is: safetree.ErrLimit, check: limitErr(safetree.LimitEntries),
		},
		{
			// spec 4.4: entries outside the content directory "still count
			// against the limits of section 9.5", whose entry limit is on
			// "tar entries, all layers".
			name: "MaxEntries crossed by entries outside /addon",
			build: img(unpack.Options{Limits: safetree.Limits{MaxEntries: 10}}, func(t *testing.T) v1.Image {
				e := []ent{file("addon/a", "a")}
				for i := range 50 {
					e = append(e, file("junk/f"+strings.Repeat("x", i), "x"))
				}
				return imageOf(t, imageOpts{}, ociLayer(e...))
			}),
			is: safetree.ErrLimit, check: limitErr(safetree.LimitEntries),
		},
		{
			name:  "MaxPathLength crossed",
			build: img(unpack.Options{Limits: safetree.Limits{MaxPathLength: 100}}, oneLayer(file("addon/a", "a"), file("addon/"+strings.Repeat("p", 150), "x"))),
			is:    safetree.ErrLimit, check: limitErr(safetree.LimitPathLength),
		},
		{
			name:  "MaxDepth crossed",
			build: img(unpack.Options{Limits: safetree.Limits{MaxDepth: 8}}, oneLayer(file("addon/a", "a"), file("addon/"+strings.Repeat("d/", 12)+"f", "x"))),
			is:    safetree.ErrLimit, check: limitErr(safetree.LimitDepth),
		},
		{
			name: "MaxAddonBytes crossed",
			build: img(unpack.Options{Limits: safetree.Limits{MaxAddonBytes: 2048}}, oneLayer(
				file("addon/a", strings.Repeat("a", 1000)), file("addon/b", strings.Repeat("b", 1000)), file("addon/c", strings.Repeat("c", 1000)))),
			is: safetree.ErrLimit, check: limitErr(safetree.LimitAddonBytes),
		},
		{
			name: "MaxAddonBytes crossed by ORAS file layers",
			build: img(unpack.Options{Limits: safetree.Limits{MaxAddonBytes: 2048}}, func(t *testing.T) v1.Image {
				var ls []*testLayer
				for _, n := range []string{"a.yaml", "b.yaml", "c.yaml"} {
					l := rawLayer([]byte(strings.Repeat("x", 1000)), types.OCIUncompressedLayer)
					l.annotations = map[string]string{mediatypes.AnnotationTitle: n}
					ls = append(ls, l)
				}
				return artifactOf(t, mediatypes.OCIEmpty, "", []byte("{}"), nil, ls...)
			}),
			is: safetree.ErrLimit, check: limitErr(safetree.LimitAddonBytes),
		},
		{
			// oras pull refuses both: as layers, the later file would
			// silently replace the earlier one.
			name:  "ORAS file layers sub and sub/b.yaml",
			build: img(unpack.Options{}, orasFiles("sub", "sub/b.yaml")),
			is:    unpack.ErrCorrupt,
		},
		{
			name:  "ORAS file layers with one title",
			build: img(unpack.Options{}, orasFiles("a.yaml", "./a.yaml")),
			is:    unpack.ErrCorrupt,
		},
		{
			name: "MaxEntries crossed by ORAS file layers",
			build: img(unpack.Options{Limits: safetree.Limits{MaxEntries: 3}}, func(t *testing.T) v1.Image {
				var ls []*testLayer
				for _, n := range []string{"a.yaml", "b.yaml", "c.yaml", "d.yaml", "e.yaml"} {
					l := rawLayer([]byte(n), types.OCIUncompressedLayer)
					l.annotations = map[string]string{mediatypes.AnnotationTitle: n}
					ls = append(ls, l)
				}
				return artifactOf(t, mediatypes.OCIEmpty, "", []byte("{}"), nil, ls...)
			}),
			is: safetree.ErrLimit, check: limitErr(safetree.LimitEntries),
		},
		{
			// spec 6.3: "when the metadata that they are using ... states
			// another kind, [readers] MUST refuse the add-on".
			name: "artifact config claims kind kustomize for a manifests tree",
			build: img(unpack.Options{}, func(t *testing.T) v1.Image {
				tr := tree{"cm.yaml": F(cmYAML)}
				cfg := configLabel("demo", "1.0.0", "kustomize", "/", identityOf(t, tr))
				l := tarLayer(tarBytes(file("cm.yaml", cmYAML)), mediatypes.Gzip, mediatypes.AddonContentGzip)
				return artifactOf(t, mediatypes.AddonConfig, mediatypes.AddonConfig, []byte(cfg), nil, l)
			}),
		},
		{
			name: "image config label claims kind manifests for a kustomize tree",
			build: img(unpack.Options{}, func(t *testing.T) v1.Image {
				kz := "resources:\n- cm.yaml\n"
				tr := tree{"cm.yaml": F(cmYAML), "kustomization.yaml": F(kz)}
				return imageOf(t, imageOpts{labels: map[string]string{
					mediatypes.LabelConfig: configLabel("demo", "1.0.0", "manifests", "/addon", identityOf(t, tr)),
				}}, ociLayer(dirE("addon/"), file("addon/cm.yaml", cmYAML), file("addon/kustomization.yaml", kz)))
			}),
		},
		{
			name: "MaxDepth crossed by an ORAS file title",
			build: img(unpack.Options{Limits: safetree.Limits{MaxDepth: 8}}, func(t *testing.T) v1.Image {
				l := rawLayer([]byte(cmYAML), types.OCIUncompressedLayer)
				l.annotations = map[string]string{mediatypes.AnnotationTitle: strings.Repeat("d/", 12) + "cm.yaml"}
				return artifactOf(t, mediatypes.OCIEmpty, "", []byte("{}"), nil, l)
			}),
			is: safetree.ErrLimit, check: limitErr(safetree.LimitDepth),
		},
		{
			name: "MaxPathLength crossed by an ORAS file title",
			build: img(unpack.Options{Limits: safetree.Limits{MaxPathLength: 100}}, func(t *testing.T) v1.Image {
				l := rawLayer([]byte(cmYAML), types.OCIUncompressedLayer)
				l.annotations = map[string]string{mediatypes.AnnotationTitle: strings.Repeat("n", 150) + ".yaml"}
				return artifactOf(t, mediatypes.OCIEmpty, "", []byte("{}"), nil, l)
			}),
			is: safetree.ErrLimit, check: limitErr(safetree.LimitPathLength),
		},
		{
			// No limit counts layers, and an empty layer crosses none: each
			// layer must then stay cheap. 1000 descriptors of one empty
			// blob fit in a 150 KB manifest.
			name: "1000 empty layers",
			build: img(unpack.Options{}, func(t *testing.T) v1.Image {
				ls := []*testLayer{ociLayer(file("addon/a", "a"))}
				empty := rawLayer(nil, types.OCIUncompressedLayer)
				for range 1000 {
					ls = append(ls, empty)
				}
				return artifactOf(t, types.OCIConfigJSON, "", []byte(imageConfig), nil, ls...)
			}),
			anyOutcome: true, maxAlloc: 256 << 20,
		},
		{
			// spec 9.2 and the package doc: "Every blob is verified as it
			// is read". The in-memory layer serves bytes that decode to
			// the same tar (so the DiffID matches) but are not its digest.
			name: "layer bytes that do not match their digest (v1.Layer wrapper)",
			build: img(unpack.Options{}, func(t *testing.T) v1.Image {
				l := ociLayer(dirE("addon/"), file("addon/a", "a"))
				return imageOf(t, imageOpts{}, lyingLayer(l, touchGzip(l.blob)))
			}),
			is: errdef.ErrDigestMismatch,
		},
		{
			name: "layer bytes of another layer (v1.Layer wrapper)",
			build: img(unpack.Options{}, func(t *testing.T) v1.Image {
				l := ociLayer(dirE("addon/"), file("addon/a", "a"))
				other := ociLayer(dirE("addon/"), file("addon/a", "evil"))
				return imageOf(t, imageOpts{noDiff: true}, lyingLayer(l, other.blob))
			}),
			check: func(t *testing.T, err error) {
				if !errors.Is(err, errdef.ErrDigestMismatch) && !errors.Is(err, errdef.ErrSizeMismatch) {
					t.Errorf("err = %v, want errdef.ErrDigestMismatch or errdef.ErrSizeMismatch", err)
				}
			},
		},
		{
			name: "blob overwritten in an OCI layout",
			build: func(t *testing.T) func(context.Context) error {
				dir := t.TempDir()
				s, err := layout.Init(dir)
				if err != nil {
					t.Fatal(err)
				}
				l := ociLayer(dirE("addon/"), file("addon/a", "a"))
				d, err := s.WriteImage(context.Background(), imageOf(t, imageOpts{}, l), nil, "tag")
				if err != nil {
					t.Fatal(err)
				}
				p := filepath.Join(dir, "blobs", "sha256", sha(l.blob).Hex)
				if err := os.WriteFile(p, touchGzip(l.blob), 0o644); err != nil {
					t.Fatal(err)
				}
				im, err := s.Image(d)
				if err != nil {
					t.Fatal(err)
				}
				return func(ctx context.Context) error { _, err := unpack.Image(ctx, im, unpack.Options{}); return err }
			},
			is: errdef.ErrDigestMismatch,
		},
		{
			name: "config diff_ids do not match the layer",
			build: img(unpack.Options{}, func(t *testing.T) v1.Image {
				l := ociLayer(dirE("addon/"), file("addon/a", "a"))
				l.diffID = sha([]byte("something else"))
				return imageOf(t, imageOpts{}, l)
			}),
			is: unpack.ErrCorrupt,
		},
		{
			name: "truncated gzip layer",
			build: img(unpack.Options{}, func(t *testing.T) v1.Image {
				tb := tarBytes(dirE("addon/"), file("addon/a", strings.Repeat("abcdefgh", 4096)), file("addon/b", "b"))
				gz := compress(tb, mediatypes.Gzip)
				return imageOf(t, imageOpts{}, &testLayer{blob: gz[:len(gz)/2], mt: types.OCILayer, diffID: sha(tb)})
			}),
			is: unpack.ErrCorrupt,
		},
		{
			name:  "no /addon in the image",
			build: img(unpack.Options{}, oneLayer(file("etc/hostname", "x"), file("app/addon/a", "not at /addon"))),
			is:    unpack.ErrNoContent,
		},
		{
			name: "/addon whited out by the top layer",
			build: img(unpack.Options{}, func(t *testing.T) v1.Image {
				return imageOf(t, imageOpts{}, ociLayer(file("addon/a", "a")), ociLayer(whiteout("", "addon")))
			}),
			is: unpack.ErrNoContent,
		},
		{
			name: "layer media type application/vnd.example.foo",
			build: img(unpack.Options{}, func(t *testing.T) v1.Image {
				l := ociLayer(dirE("addon/"), file("addon/a", "a"))
				l.mt = "application/vnd.example.foo"
				return imageOf(t, imageOpts{}, l)
			}),
			is: unpack.ErrUnsupported,
		},
		{
			name: "artifact layer media type application/vnd.example.foo",
			build: img(unpack.Options{}, func(t *testing.T) v1.Image {
				l := ociLayer(file("a", "a"))
				l.mt = "application/vnd.example.foo"
				return artifactOf(t, mediatypes.AddonConfig, mediatypes.AddonConfig, []byte("{}"), nil, l)
			}),
			is: unpack.ErrUnsupported,
		},
		{
			name: "index nested 10 levels",
			build: func(t *testing.T) func(context.Context) error {
				idx := nestedIndex(t, 10)
				return func(ctx context.Context) error { _, err := unpack.Index(ctx, idx, unpack.Options{}); return err }
			},
			is: unpack.ErrUnsupported,
		},
		{
			name: "index platform names with control characters",
			build: func(t *testing.T) func(context.Context) error {
				im := imageOf(t, imageOpts{}, ociLayer(file("addon/a", "a")))
				idx := mutate.AppendManifests(empty.Index, mutate.IndexAddendum{Add: im, Descriptor: v1.Descriptor{
					Platform: &v1.Platform{OS: "linux\nFATAL: forged log line", Architecture: "arm64\x1b[31m"}}})
				return func(ctx context.Context) error {
					_, err := unpack.Index(ctx, idx, unpack.Options{Platform: &v1.Platform{OS: "linux", Architecture: "amd64"}})
					return err
				}
			},
			is: unpack.ErrNoPlatform,
			check: func(t *testing.T, err error) {
				var pe *unpack.PlatformError
				if !errors.As(err, &pe) {
					t.Errorf("err %T: want a *PlatformError", err)
				}
			},
		},
		{
			name:       "non-UTF-8 names in /addon",
			build:      img(unpack.Options{}, oneLayer(file("addon/ok.yaml", "a"), file("addon/caf\xe9.yaml", "latin-1"), file("addon/\xff\xfe/x", "x"))),
			anyOutcome: true,
		},
		{
			name:  "long non-UTF-8 absolute name",
			build: img(unpack.Options{}, oneLayer(file("addon/a", "a"), file("/"+strings.Repeat("\xff", 300), "x"))),
			is:    safetree.ErrUnsafe,
		},
		{
			name:  "long multi-byte name over MaxPathLength",
			build: img(unpack.Options{Limits: safetree.Limits{MaxPathLength: 300}}, oneLayer(file("addon/a", "a"), file("addon/"+strings.Repeat("€", 200), "x"))),
			is:    safetree.ErrLimit, check: limitErr(safetree.LimitPathLength),
		},
		{
			name:  "control characters in a refused name",
			build: img(unpack.Options{}, oneLayer(file("addon/a", "a"), symlink("addon/l\nERROR: forged", "/etc\r\n"))),
			is:    safetree.ErrUnsafe, check: entryErr,
		},
	}
}

// memSampler samples the heap while a call runs.
type memSampler struct {
	stop chan struct{}
	done sync.WaitGroup
	peak uint64
}

func startMemSampler() *memSampler {
	s := &memSampler{stop: make(chan struct{})}
	s.done.Add(1)
	go func() {
		defer s.done.Done()
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			s.peak = max(s.peak, ms.HeapInuse)
			select {
			case <-s.stop:
				return
			case <-tick.C:
			}
		}
	}()
	return s
}

func (s *memSampler) Stop() uint64 {
	close(s.stop)
	s.done.Wait()
	return s.peak
}

// TestHostile runs every case alone (not in parallel) so that the memory
// figures are the call's own.
func TestHostile(t *testing.T) {
	for _, c := range hostileCases() {
		t.Run(c.name, func(t *testing.T) {
			call := c.build(t)
			within := c.within
			if within == 0 {
				within = 20 * time.Second
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*within)
			defer cancel()

			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			var sampler *memSampler
			if c.maxAlloc != 0 {
				sampler = startMemSampler()
			}
			start := time.Now()
			res := make(chan error, 1)
			go func() { res <- call(ctx) }()
			var err error
			select {
			case err = <-res:
			case <-time.After(within):
				t.Fatalf("the call did not return within %v", within)
			}
			elapsed := time.Since(start)
			if sampler != nil {
				peak := sampler.Stop()
				runtime.ReadMemStats(&after)
				alloc := after.TotalAlloc - before.TotalAlloc
				var growth uint64
				if peak > before.HeapInuse {
					growth = peak - before.HeapInuse
				}
				t.Logf("%v; allocated %d MiB, peak heap in use +%d MiB, heap from OS %d -> %d MiB",
					elapsed.Round(time.Millisecond), alloc>>20, growth>>20, before.HeapSys>>20, after.HeapSys>>20)
				if alloc > c.maxAlloc {
					t.Errorf("allocated %d MiB during the call, want < %d MiB", alloc>>20, c.maxAlloc>>20)
				}
				if growth > c.maxAlloc {
					t.Errorf("heap grew by %d MiB during the call, want < %d MiB", growth>>20, c.maxAlloc>>20)
				}
			}

			if err == nil {
				if !c.anyOutcome {
					t.Fatalf("unpacked without error, want %v", cmp.Or[any](c.is, "an error"))
				}
				return
			}
			msg := err.Error()
			t.Logf("error: %s", msg)
			if strings.ContainsAny(msg, "\n\r") {
				t.Errorf("error message is not a single line: %q", msg)
			}
			if !utf8.ValidString(msg) {
				t.Errorf("error message is not valid UTF-8: %q", msg)
			}
			if strings.ContainsFunc(msg, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
				t.Errorf("error message holds control characters: %q", msg)
			}
			if c.is != nil && !errors.Is(err, c.is) {
				t.Errorf("errors.Is(err, %v) = false; err = %v", c.is, err)
			}
			if c.check != nil {
				c.check(t, err)
			}
		})
	}
}

// paxSparse is a layer holding addon/a and name, a GNU sparse file of
// size bytes in the PAX format 0.1 (GNU.sparse.map and .size records; as
// GNU tar --format=posix --sparse --sparse-version=0.1 writes it) whose
// only data is its last byte. Go's tar writer refuses GNU.sparse.*
// records, so they are written under a name of the same length and
// renamed in the bytes.
func paxSparse(t *testing.T, name string, size int64) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	if err := tw.WriteHeader(&tar.Header{Name: "addon/a", Typeflag: tar.TypeReg, Size: 1, Mode: 0o644}); err != nil {
		t.Fatal(err)
	}
	if _, err := tw.Write([]byte("a")); err != nil {
		t.Fatal(err)
	}
	hdr := &tar.Header{Name: name, Typeflag: tar.TypeReg, Size: 1, Mode: 0o644, Format: tar.FormatPAX, PAXRecords: map[string]string{
		"GNU_sparse_map": fmt.Sprintf("%d,1", size-1), "GNU_sparse_size": fmt.Sprint(size), "GNU_sparse_numblocks": "1",
	}}
	if err := tw.WriteHeader(hdr); err != nil {
		t.Fatal(err)
	}
	if _, err := tw.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	b := bytes.ReplaceAll(buf.Bytes(), []byte("GNU_sparse_"), []byte("GNU.sparse."))
	// The layer must read as the sparse file it claims to be.
	tr := tar.NewReader(bytes.NewReader(b))
	for {
		h, err := tr.Next()
		if err != nil {
			t.Fatalf("no sparse entry %s: %v", name, err)
		}
		if h.Name == name {
			if h.Size != size {
				t.Fatalf("sparse entry %s reads as %d bytes, want %d", name, h.Size, size)
			}
			return b
		}
	}
}

// orasFiles is an oras artifact of one file layer per title, each file
// a ConfigMap.
func orasFiles(titles ...string) func(t *testing.T) v1.Image {
	return func(t *testing.T) v1.Image {
		var ls []*testLayer
		for _, n := range titles {
			l := rawLayer([]byte(cmYAML), types.OCIUncompressedLayer)
			l.annotations = map[string]string{mediatypes.AnnotationTitle: n}
			ls = append(ls, l)
		}
		return artifactOf(t, mediatypes.OCIEmpty, "", []byte("{}"), nil, ls...)
	}
}
