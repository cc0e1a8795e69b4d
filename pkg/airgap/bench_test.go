package airgap_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/addonpkg/addonpkg/pkg/airgap"
	"github.com/addonpkg/addonpkg/pkg/source"
)

// BenchmarkCopyWithImages500 is copy --with-images of an add-on whose
// lock pins 500 tiny images, from a layout to an oci-archive and from
// that archive to a layout, referrers included, as the command runs it:
// issue 25's case (500 images in a 400 KB archive took 130 s, the cost
// growing with the square of the images). TestCopyWithImagesIsLinear
// holds the linearity without a clock; this says how fast.
func BenchmarkCopyWithImages500(b *testing.B) {
	const n = 500
	ctx := context.Background()
	src := manyImages(b, n)
	ref := func(s string) source.Ref {
		r, err := source.Parse(s)
		if err != nil {
			b.Fatal(err)
		}
		return r
	}
	b.ResetTimer()
	for b.Loop() {
		tmp := b.TempDir()
		archive := filepath.Join(tmp, "out.tar")
		if _, err := airgap.Copy(ctx, ref("oci:"+src+":1"), ref("oci-archive:"+archive+":1"), withReferrers()); err != nil {
			b.Fatal(err)
		}
		if _, err := airgap.Copy(ctx, ref("oci-archive:"+archive+":1"), ref("oci:"+filepath.Join(tmp, "again")+":1"), withReferrers()); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N)/(2*n), "ms/image")
}
