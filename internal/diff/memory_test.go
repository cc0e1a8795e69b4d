package diff

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/addonpkg/addonpkg/pkg/safetree"
)

// bigConfigMap is a ConfigMap of about size bytes: short keys, each
// value holding tag, the densest YAML there is (a node every 15 bytes).
func bigConfigMap(name, tag string, size int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\ndata:\n", name)
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "  k%07d: %s%d\n", i, tag, i)
	}
	return b.String()
}

// Issue 25: the diff of two 6 MB one-ConfigMap folders peaked at 850 MiB
// and allocated as much (each object parsed and written again whole, then
// diffed line by line). Past safetree.DefaultMaxDiffObjectBytes an object
// is compared by its bytes: the diff and its text allocate almost
// nothing.
func TestDiffLargeObjectsAllocate(t *testing.T) {
	a := renderFiles(t, map[string]string{"cm.yaml": bigConfigMap("big", "a", 6<<20)})
	b := renderFiles(t, map[string]string{"cm.yaml": bigConfigMap("big", "b", 6<<20)})
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	r := Diff(context.Background(), a, b)
	if err := r.WriteText(io.Discard); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("diff of two 6 MiB objects: %.1f MiB allocated", float64(alloc)/(1<<20))
	if len(r.Changed) != 1 {
		t.Fatalf("changed = %d objects, want 1", len(r.Changed))
	}
	if alloc > 1<<20 {
		t.Errorf("the diff of two 6 MiB objects allocated %.1f MiB, want under 1 MiB", float64(alloc)/(1<<20))
	}
}

// What is compared line by line is bounded: an object over
// MaxDiffObjectBytes on either side, and every object changed once the
// report holds MaxDiffBytes of unified diffs, is reported by its sizes,
// in the JSON and the text; the same bytes are no change, whatever their
// size.
func TestDiffLimits(t *testing.T) {
	ctx := context.Background()
	small := func(name, v string) string {
		return fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\ndata:\n  k: %s\n", name, v)
	}
	a := renderFiles(t, map[string]string{
		"a.yaml": bigConfigMap("big", "a", 4096) + "---\n" + small("one", "x") + "---\n" + small("two", "x") + "---\n" + small("three", "x") + "---\n" + bigConfigMap("same", "s", 8192),
	})
	b := renderFiles(t, map[string]string{
		"b.yaml": bigConfigMap("big", "b", 4096) + "---\n" + small("one", "y") + "---\n" + small("two", "y") + "---\n" + small("three", "y") + "---\n" + bigConfigMap("same", "s", 8192),
	})
	one := Diff(ctx, a, b).Changed
	if len(one) != 4 || one[0].Summary != "" || len(one[1].UnifiedDiff) == 0 {
		t.Fatalf("with the defaults: %+v", one)
	}
	shown := len(one[1].UnifiedDiff)
	r := DiffWith(ctx, a, b, Options{Limits: safetree.Limits{MaxDiffObjectBytes: 4096, MaxDiffBytes: int64(shown + shown/2)}})
	if len(r.Changed) != 4 {
		t.Fatalf("changed = %+v, want 4 objects (the same bytes are no change)", r.Changed)
	}
	big, first, rest := r.Changed[0], r.Changed[1], r.Changed[2:]
	if big.UnifiedDiff != "" || !strings.Contains(big.Summary, "not compared line by line") || big.BytesA <= 4096 || big.BytesB <= 4096 {
		t.Errorf("an object over MaxDiffObjectBytes: %+v", big)
	}
	if first.UnifiedDiff != one[1].UnifiedDiff || first.Summary != "" {
		t.Errorf("the first small object: %+v, want its diff", first)
	}
	for _, c := range rest {
		if c.UnifiedDiff != "" || !strings.Contains(c.Summary, "at most") || c.BytesA == 0 {
			t.Errorf("an object past MaxDiffBytes: %+v, want its sizes", c)
		}
	}
	var text strings.Builder
	if err := r.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"Objects a/v1/ConfigMap big and b/v1/ConfigMap big differ: ",
		"Objects a/v1/ConfigMap three and b/v1/ConfigMap three differ: ",
		"+++ b/v1/ConfigMap one\n",
	} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, text.String())
		}
	}
	// The same bytes, whatever their size, are no change: no limit is met.
	same := renderFiles(t, map[string]string{"a.yaml": bigConfigMap("big", "a", 3<<20)})
	if r := Diff(ctx, same, same); !r.Equal() {
		t.Errorf("an object diffed with itself: %+v", r.Changed)
	}
}

// Each Encode of a normalized document writes at most about splitNodes
// nodes, however large the document: yaml.v3 holds a whole Encode's
// events, about 280 bytes each, until it ends.
func TestEmitBoundsEachEncode(t *testing.T) {
	// A dense mapping of 1 MiB, and a mapping of 256 KiB nested in it.
	doc := bigConfigMap("big", "v", 1<<20) + "  nested:\n" + strings.TrimPrefix(bigConfigMap("x", "n", 256<<10), "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n")
	largest := 0
	defer func(f func(*yaml.Node) (string, error)) { encode = f }(encode)
	encode = func(n *yaml.Node) (string, error) {
		largest = max(largest, count(n, 1<<30))
		return yaml.String(n)
	}
	out := Normalize([]byte(doc))
	if !strings.Contains(out, "k0000000: v0\n") {
		t.Fatalf("normalized: %.200s", out)
	}
	t.Logf("%d bytes, the largest Encode %d nodes", len(doc), largest)
	if largest > 2*splitNodes+8 {
		t.Errorf("an Encode of %d nodes, want at most about %d", largest, splitNodes)
	}
}
