package main

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/klauspost/compress/gzip"

	"github.com/addonpkg/addonpkg/internal/testing/benchdata"
	"github.com/addonpkg/addonpkg/pkg/filetree"
	"github.com/addonpkg/addonpkg/pkg/render"
	"github.com/addonpkg/addonpkg/pkg/source"
)

// stdoutTree generates, deterministically, a plain-manifest add-on of n
// files of about size bytes, spread over 16 directories, and hands each
// file to put in tree order: ConfigMaps, with multi-document files whose
// Services and the Namespaces of late files the apply order moves ahead,
// CRLF line ends, a file without a final newline, empty documents and
// JSON. kustomize, when set, adds a kustomization naming every file.
func stdoutTree(n, size int, kustomize bool, put func(name string, data []byte)) {
	rng := rand.New(rand.NewPCG(16, 2))
	// Values are lines drawn from a pool: random words read and compress
	// like real YAML, and drawing lines is fast enough for 256 MiB.
	pool := make([]string, 4096)
	for i := range pool {
		var b bytes.Buffer
		benchdata.Sentence(&b, rng, 14)
		pool[i] = b.String()
	}
	name := func(i int) string { return fmt.Sprintf("d%02d/m%05d.yaml", i%16, i) }
	var names []string
	for i := range n {
		names = append(names, name(i))
	}
	// WalkDir order: by directory, then by name.
	byDir := make([][]int, 16)
	for i := range n {
		byDir[i%16] = append(byDir[i%16], i)
	}
	for _, ids := range byDir {
		for _, i := range ids {
			var doc bytes.Buffer
			switch {
			case i%97 == 5:
				fmt.Fprintf(&doc, `{"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "sa-%d"}}`+"\n---\n", i)
			case i%61 == 7:
				fmt.Fprintf(&doc, "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ns-%d\n...\n", i)
			case i%16 == 3:
				fmt.Fprintf(&doc, "---\napiVersion: v1\nkind: Service\nmetadata:\n  name: svc-%d\nspec:\n  ports:\n  - port: 80\n---\n# nothing\n---\n", i)
			}
			fmt.Fprintf(&doc, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-%05d\n  namespace: stdout\ndata:\n", i)
			for k := 0; doc.Len() < size; k++ {
				fmt.Fprintf(&doc, "  key-%03d: \"%s\"\n", k, pool[rng.IntN(len(pool))])
			}
			b := doc.Bytes()
			switch i % 50 {
			case 11:
				b = bytes.ReplaceAll(b, []byte("\n"), []byte("\r\n"))
			case 13:
				b = bytes.TrimSuffix(b, []byte("\n"))
			}
			put(name(i), b)
		}
	}
	if kustomize {
		var k bytes.Buffer
		k.WriteString("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n")
		for _, nm := range names {
			k.WriteString("- " + nm + "\n")
		}
		put("kustomization.yaml", k.Bytes())
	}
}

// stdoutLayer writes the add-on as one gzip image layer under addon/, and
// the same files to a filetree tree for the test's own render.
func stdoutLayer(t *testing.T, dir string, n, size int) (*hostileCLILayer, *filetree.FS) {
	t.Helper()
	f, err := os.CreateTemp(dir, "addon-*.tar.gz")
	must(t, err)
	defer f.Close()
	h, diff := sha256.New(), sha256.New()
	zw, err := gzip.NewWriterLevel(io.MultiWriter(f, h), gzip.BestSpeed)
	must(t, err)
	tw := tar.NewWriter(io.MultiWriter(zw, diff))
	tree := filetree.NewBuilder()
	dirs := map[string]bool{}
	stdoutTree(n, size, false, func(name string, data []byte) {
		if d := filepath.Dir(name); !dirs[d] {
			dirs[d] = true
			must(t, tw.WriteHeader(&tar.Header{Name: "addon/" + d + "/", Typeflag: tar.TypeDir, Mode: 0o755}))
		}
		must(t, tw.WriteHeader(&tar.Header{Name: "addon/" + name, Typeflag: tar.TypeReg, Size: int64(len(data)), Mode: 0o644}))
		_, err := tw.Write(data)
		must(t, err)
		must(t, tree.WriteFile(name, data, 0o644))
	})
	must(t, tw.Close())
	must(t, zw.Close())
	st, err := f.Stat()
	must(t, err)
	return &hostileCLILayer{
		file:   f.Name(),
		digest: v1.Hash{Algorithm: "sha256", Hex: hex.EncodeToString(h.Sum(nil))},
		size:   st.Size(),
		diffID: v1.Hash{Algorithm: "sha256", Hex: hex.EncodeToString(diff.Sum(nil))},
		mt:     types.OCILayer,
	}, tree.FS()
}

// Issue 16, item 2: unpack to stdout holds neither the add-on nor its
// stream in memory. A 256 MiB add-on of 8,192 manifests is written with a
// peak RSS of at most 96 MiB above start-up, byte for byte the stream that a render held
// whole in memory (the path before DropText and the memory budget) gives,
// and the temporary directory is gone afterwards.
func TestUnpackStdoutPeakRSS(t *testing.T) {
	bigData(t, "writes a 256 MiB add-on")
	binary(t)
	work := t.TempDir()
	layer, tree := stdoutLayer(t, work, 8192, 32<<10)
	if tree.Size() < 256<<20 {
		t.Fatalf("the add-on is %d bytes, want 256 MiB", tree.Size())
	}
	res, err := render.Render(context.Background(), tree, render.Options{})
	must(t, err)
	want := sha256.New()
	wantN, err := res.WriteTo(want)
	must(t, err)
	res, tree = nil, nil
	runtime.GC()
	layoutDir := hostileCLIWrite(t, filepath.Join(work, "layout"), hostileCLIImage(t, layer))
	must(t, os.Remove(layer.file))

	dir := t.TempDir()
	r := runPeak(t, dir, []string{"ADDONPKG_HOME=" + filepath.Join(dir, "home"), "TMPDIR=" + dir}, "unpack", "oci:"+layoutDir+":t")
	t.Logf("exit %d in %v, peak RSS %.1f MiB, %d bytes out", r.code, r.took, float64(r.peak)/(1<<20), len(r.stdout))
	if r.code != 0 {
		t.Fatalf("unpack: exit %d: %s", r.code, r.stderr)
	}
	if got := sha256.Sum256([]byte(r.stdout)); int64(len(r.stdout)) != wantN || !bytes.Equal(got[:], want.Sum(nil)) {
		t.Errorf("the stream (%d bytes) differs from the in-memory render's (%d bytes)", len(r.stdout), wantN)
	}
	if r.peak > 96<<20 {
		t.Errorf("peak RSS %.1f MiB above start-up, want at most 96 MiB for a 256 MiB add-on", float64(r.peak)/(1<<20))
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "addonpkg-unpack-*")); len(left) != 0 {
		t.Errorf("left behind: %v", left)
	}
}

// The stream of a tree past the memory budget (its files partly on disk,
// its documents' text read back as they are written) is byte for byte
// the stream of a render held in memory: the rendered stream and --raw of
// a plain-manifest add-on, --raw of a kustomize add-on (whose rendered
// stream kustomize makes in memory, as before).
func TestUnpackStdoutSameStream(t *testing.T) {
	bigData(t, "renders 10 MB of YAML twice")
	for _, kustomize := range []bool{false, true} {
		t.Run(fmt.Sprint("kustomize=", kustomize), func(t *testing.T) {
			cliNewHome(t)
			dir := t.TempDir()
			stdoutTree(480, 20<<10, kustomize, func(name string, data []byte) {
				must(t, os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755))
				must(t, os.WriteFile(filepath.Join(dir, name), data, 0o644))
			})
			cliMust(t, "build", dir, "-t", "big:1")
			fsys := os.DirFS(dir)
			raw, err := render.Render(context.Background(), fsys, render.Options{Raw: true})
			must(t, err)
			cases := []struct {
				args []string
				want []byte
			}{
				{[]string{"unpack", "big:1", "--raw"}, raw.YAML()},
			}
			if !kustomize {
				rendered, err := render.Render(context.Background(), fsys, render.Options{})
				must(t, err)
				cases = append(cases, struct {
					args []string
					want []byte
				}{[]string{"unpack", "big:1"}, rendered.YAML()})
			}
			for _, tc := range cases {
				got := cliMust(t, tc.args...)
				if len(tc.want) < source.SpilledMemoryBudget+1<<20 {
					t.Fatalf("the stream is %d bytes: the tree does not pass the memory budget", len(tc.want))
				}
				if got != string(tc.want) {
					t.Errorf("%s: the stream (%d bytes) differs from the in-memory render's (%d bytes) from byte %d", strings.Join(tc.args, " "), len(got), len(tc.want), firstDiff(got, string(tc.want)))
				}
			}
		})
	}
}

func firstDiff(a, b string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}
