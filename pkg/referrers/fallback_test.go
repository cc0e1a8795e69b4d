package referrers_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/addonpkg/addonpkg/pkg/layout"
	"github.com/addonpkg/addonpkg/pkg/referrers"
)

// A layout's referrers are found where a registry's would be: a manifest
// of index.json whose subject is the image, and one listed only in the
// image's sha256-HEX fallback index (the referrers tag schema a copy
// carried into the layout), which referrers.Layout read only the first
// of before discovery had one home. A manifest listed in the fallback
// index but referring to something else is not one.
func TestLayoutReferrersScanTheFallbackIndex(t *testing.T) {
	ctx := context.Background()
	for _, repo := range []string{"", "addons/x"} {
		t.Run("repo "+repo, func(t *testing.T) {
			st, err := layout.Init(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			img, err := random.Image(64, 1)
			if err != nil {
				t.Fatal(err)
			}
			tagged := func(tag string) []string {
				if repo != "" {
					return []string{repo + ":" + tag}
				}
				return []string{tag}
			}
			subject, err := st.WriteImage(ctx, img, nil, tagged("1")...)
			if err != nil {
				t.Fatal(err)
			}
			referrer := func(seed string, sub v1.Descriptor) v1.Image {
				r := mutate.Annotations(empty.Image, map[string]string{"seed": seed}).(v1.Image)
				r = mutate.MediaType(r, types.OCIManifestSchema1)
				r = mutate.ConfigMediaType(r, "application/vnd.example.sig")
				return mutate.Subject(r, sub).(v1.Image)
			}
			top := referrer("top", subject)
			if _, err := st.WriteImage(ctx, top, nil); err != nil {
				t.Fatal(err)
			}
			other, err := random.Image(32, 1)
			if err != nil {
				t.Fatal(err)
			}
			otherDesc, err := st.WriteImage(ctx, other, nil)
			if err != nil {
				t.Fatal(err)
			}
			inFallback := referrer("fallback", subject)
			stranger := referrer("stranger", otherDesc)
			fallback := mutate.AppendManifests(mutate.IndexMediaType(empty.Index, types.OCIImageIndex),
				mutate.IndexAddendum{Add: inFallback}, mutate.IndexAddendum{Add: stranger})
			if _, err := st.WriteIndex(ctx, fallback, nil, tagged(strings.Replace(subject.Digest.String(), ":", "-", 1))...); err != nil {
				t.Fatal(err)
			}

			got, err := referrers.Layout(st, repo).Referrers(ctx, subject.Digest)
			if err != nil {
				t.Fatal(err)
			}
			var digests []v1.Hash
			for _, d := range got {
				digests = append(digests, d.Digest)
				if d.ArtifactType != "application/vnd.example.sig" {
					t.Errorf("%s: artifactType %q, want the config's media type", d.Digest, d.ArtifactType)
				}
			}
			var want []v1.Hash
			for _, r := range []v1.Image{top, inFallback} {
				d, err := r.Digest()
				if err != nil {
					t.Fatal(err)
				}
				want = append(want, d)
			}
			slices.SortFunc(want, func(a, b v1.Hash) int { return strings.Compare(a.Hex, b.Hex) })
			if !slices.Equal(digests, want) {
				t.Errorf("referrers %v, want %v (the one in index.json and the one in the fallback index)", digests, want)
			}
		})
	}
}
