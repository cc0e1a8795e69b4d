package layout_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/addonpkg/addonpkg/pkg/layout"
)

// countingIndex counts the index manifests read through it (the work of
// walking a graph) and gives up past a cap, so that a walk without dedup
// fails at once instead of running for minutes.
type countingIndex struct {
	inner
	n *int
}

type inner = v1.ImageIndex

var errTooMuchWork = errors.New("more than 10,000 index visits")

func (c countingIndex) IndexManifest() (*v1.IndexManifest, error) {
	*c.n++
	if *c.n > 10_000 {
		return nil, errTooMuchWork
	}
	return c.inner.IndexManifest()
}

func (c countingIndex) ImageIndex(h v1.Hash) (v1.ImageIndex, error) {
	idx, err := c.inner.ImageIndex(h)
	if err != nil {
		return nil, err
	}
	return countingIndex{idx, c.n}, nil
}

// fanGraph is levels indexes, each listing the next ten times; the last
// lists one image ten times.
func fanGraph(t *testing.T, levels int) v1.ImageIndex {
	t.Helper()
	img, err := random.Image(64, 1)
	if err != nil {
		t.Fatal(err)
	}
	var idx v1.ImageIndex
	for l := 0; l < levels; l++ {
		var adds []mutate.IndexAddendum
		for i := 0; i < 10; i++ {
			var add mutate.Appendable = img
			if idx != nil {
				add = idx
			}
			adds = append(adds, mutate.IndexAddendum{Add: add, Descriptor: v1.Descriptor{Annotations: map[string]string{"i": fmt.Sprint(i)}}})
		}
		idx = mutate.IndexMediaType(mutate.AppendManifests(empty.Index, adds...), types.OCIImageIndex)
	}
	return idx
}

// An index graph is walked once per distinct manifest and bounded in
// depth as unpack bounds it (issue 25: six 10-entry indexes each listing
// the next ten times were a million visits and hung copy and pull). Work
// is counted, not timed.
func TestWriteIndexGraphBounded(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		levels    int
		ok        bool
		maxVisits int
	}{
		{4, true, 4},  // 1+10+100+1000 visits without dedup
		{6, false, 6}, // deeper than safetree.MaxIndexDepth
	} {
		t.Run(fmt.Sprintf("%d levels", tc.levels), func(t *testing.T) {
			g := fanGraph(t, tc.levels)
			for _, step := range []string{"CheckIndexGraph", "WriteIndex"} {
				n := 0
				idx := countingIndex{g, &n}
				var err error
				if step == "CheckIndexGraph" {
					err = layout.CheckIndexGraph(ctx, idx)
				} else {
					st, ierr := layout.Init(t.TempDir())
					if ierr != nil {
						t.Fatal(ierr)
					}
					_, err = st.WriteIndex(ctx, idx, nil, "1")
				}
				if tc.ok && err != nil {
					t.Errorf("%s: %v", step, err)
				}
				if !tc.ok && !errors.Is(err, layout.ErrIndexGraph) {
					t.Errorf("%s: %v, want layout.ErrIndexGraph", step, err)
				}
				if n > tc.maxVisits {
					t.Errorf("%s read %d index manifests, want at most %d (one per distinct index)", step, n, tc.maxVisits)
				}
			}
		})
	}
}
