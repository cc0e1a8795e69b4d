package render

import (
	"context"
	"errors"
	"io/fs"
	"slices"
	"sync"
	"testing"
	"testing/fstest"
)

// gateFS holds the first open of its gate file until released, and
// records the names opened.
type gateFS struct {
	fsys    fstest.MapFS
	gate    string
	reached chan struct{}
	release chan struct{}
	once    sync.Once
	mu      sync.Mutex
	opened  []string
}

func (g *gateFS) Open(name string) (fs.File, error) {
	g.mu.Lock()
	g.opened = append(g.opened, name)
	g.mu.Unlock()
	if name == g.gate {
		g.once.Do(func() {
			close(g.reached)
			<-g.release
		})
	}
	return g.fsys.Open(name)
}

// kustomize takes no context, but reads the tree through treeFS, which
// fails every read once the render's ctx has ended: a run whose caller
// left stops at its next read (here, of the resource after the one it
// was reading), and frees the lock for the renders waiting, rather
// than going through the whole tree for nobody. Its result is the
// ctx's error, not kustomize's.
func TestKustomizeStopsReadingWhenCtxEnds(t *testing.T) {
	cm := func(n string) *fstest.MapFile {
		return &fstest.MapFile{Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + n + "\n")}
	}
	g := &gateFS{
		fsys: fstest.MapFS{
			"kustomization.yaml": {Data: []byte("resources:\n- a.yaml\n- b.yaml\n- c.yaml\n")},
			"a.yaml":             cm("a"), "b.yaml": cm("b"), "c.yaml": cm("c"),
		},
		gate: "b.yaml", reached: make(chan struct{}), release: make(chan struct{}),
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, _, err := runKustomize(ctx, treeFS{fsys: g})
		done <- err
	}()
	<-g.reached
	cancel()
	close(g.release)
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v; want context.Canceled", err)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if slices.Contains(g.opened, "c.yaml") {
		t.Errorf("kustomize read on after its ctx ended: opened %v", g.opened)
	}
}
