package airgap_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/addonpkg/addonpkg/pkg/airgap"
	"github.com/addonpkg/addonpkg/pkg/build"
	"github.com/addonpkg/addonpkg/pkg/folder"
	"github.com/addonpkg/addonpkg/pkg/imagelock"
	"github.com/addonpkg/addonpkg/pkg/layout"
)

// manyImages writes to a new layout an add-on tagged 1 that runs n tiny
// images, the images, and the add-on's lock pinning them: what copy
// --with-images leaves in a layout (issue 25: 500 such images in a
// 400 KB archive took 130 s to copy on).
func manyImages(tb testing.TB, n int) string {
	tb.Helper()
	ctx := context.Background()
	dir := filepath.Join(tb.TempDir(), "src")
	st, err := layout.Init(dir)
	if err != nil {
		tb.Fatal(err)
	}
	base := mutate.MediaType(mutate.ConfigMediaType(empty.Image, types.OCIConfigJSON), types.OCIManifestSchema1)
	lock := &imagelock.Lock{Images: []imagelock.Image{}}
	var containers strings.Builder
	for i := range n {
		img, err := mutate.AppendLayers(base, static.NewLayer([]byte(fmt.Sprintf("layer %d", i)), types.OCILayer))
		if err != nil {
			tb.Fatal(err)
		}
		d, err := st.WriteImage(ctx, img, nil)
		if err != nil {
			tb.Fatal(err)
		}
		ref := fmt.Sprintf("registry.example/app/i%d:1", i)
		mirrored, err := imagelock.MirrorReference("", ref, d.Digest.String())
		if err != nil {
			tb.Fatal(err)
		}
		lock.Images = append(lock.Images, imagelock.Image{Image: ref, Digest: d.Digest.String(), MediaType: string(d.MediaType), Mirrored: mirrored})
		fmt.Fprintf(&containers, "      - name: c%d\n        image: %s\n", i, ref)
	}
	doc := "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  template:\n    spec:\n      containers:\n" + containers.String()
	tree, err := folder.LoadBytes("deploy.yaml", []byte(doc))
	if err != nil {
		tb.Fatal(err)
	}
	res, err := build.Build(ctx, tree, build.Options{Name: "demo", NoValidate: true})
	if err != nil {
		tb.Fatal(err)
	}
	ad, err := st.WriteImage(ctx, res.Image, nil, "1")
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := imagelock.Store(ctx, lock, ad, st); err != nil {
		tb.Fatal(err)
	}
	return dir
}

// withReferrers are copy --with-images's options: each image's and the
// add-on's referrers travel too, as the command asks.
func withReferrers() airgap.Options {
	var o airgap.Options
	o.Referrers = true
	return o
}

// procIO reads this process's I/O counters: bytes read and written
// through system calls (rchar, wchar, page cache included) and the calls
// (syscr, syscw).
func procIO(t *testing.T) map[string]int64 {
	t.Helper()
	f, err := os.Open("/proc/self/io")
	if err != nil {
		t.Skipf("no /proc/self/io: %v", err)
	}
	defer f.Close()
	out := map[string]int64{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ": ")
		if !ok {
			continue
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err == nil {
			out[k] = n
		}
	}
	return out
}

// TestCopyWithImagesIsLinear is issue 25's quadratic copy --with-images,
// counted rather than timed: the bytes the copy reads and writes, and
// the system calls it makes, per image, must not grow with the images of
// the lock. They did: every image re-read and re-parsed index.json,
// listed its referrers by reading every manifest of the layout,
// re-indexed the source archive, and rewrote index.json whole.
//
// Copied from a layout to an archive, then from that archive to a layout
// (both the source and destination sides), with 30 images and with 120:
// linear costs give about the same per image, quadratic ones four times
// as much; the test allows 1.5 times.
func TestCopyWithImagesIsLinear(t *testing.T) {
	ctx := context.Background()
	perImage := map[int]map[string]float64{}
	for _, n := range []int{30, 120} {
		src := manyImages(t, n)
		archive := filepath.Join(t.TempDir(), "out.tar")
		before := procIO(t)
		if _, err := airgap.Copy(ctx, parse(t, "oci:"+src+":1"), parse(t, "oci-archive:"+archive+":1"), withReferrers()); err != nil {
			t.Fatal(err)
		}
		if _, err := airgap.Copy(ctx, parse(t, "oci-archive:"+archive+":1"), parse(t, "oci:"+filepath.Join(t.TempDir(), "again")+":1"), withReferrers()); err != nil {
			t.Fatal(err)
		}
		after := procIO(t)
		perImage[n] = map[string]float64{}
		for _, k := range []string{"rchar", "wchar", "syscr", "syscw"} {
			perImage[n][k] = float64(after[k]-before[k]) / float64(n)
		}
		t.Logf("%d images, per image: %.0f bytes read in %.0f calls, %.0f bytes written in %.0f calls",
			n, perImage[n]["rchar"], perImage[n]["syscr"], perImage[n]["wchar"], perImage[n]["syscw"])
	}
	for _, k := range []string{"rchar", "wchar", "syscr", "syscw"} {
		if small, large := perImage[30][k], perImage[120][k]; large > 1.5*small {
			t.Errorf("%s per image: %.0f with 120 images, %.0f with 30: it grows with the images (%.1fx)", k, large, small, large/small)
		}
	}
}
