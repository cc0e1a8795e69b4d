package diff

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"
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

