package render_test

import (
	"io/fs"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/addonpkg/addonpkg/pkg/render"
)

// countingFS counts the reads of each file's content.
type countingFS struct {
	fstest.MapFS
	mu    sync.Mutex
	reads map[string]int
}

func (c *countingFS) ReadFile(name string) ([]byte, error) {
	c.mu.Lock()
	c.reads[name]++
	c.mu.Unlock()
	return c.MapFS.ReadFile(name)
}

func (c *countingFS) Open(name string) (fs.File, error) {
	f, err := c.MapFS.Open(name)
	if st, serr := fs.Stat(c.MapFS, name); err == nil && serr == nil && !st.IsDir() {
		// Reading goes through ReadFile; an Open is counted as a read
		// only when its file's content is read through it.
		return &countedFile{File: f, count: func() { c.mu.Lock(); c.reads[name]++; c.mu.Unlock() }}, nil
	}
	return f, err
}

type countedFile struct {
	fs.File
	count func()
	once  sync.Once
}

func (f *countedFile) Read(b []byte) (int, error) {
	f.once.Do(f.count)
	return f.File.Read(b)
}

// A render reads each file kustomize reads once, for the walk, the
// checks, kustomize and its warnings, and kustomize reads the very bytes
// the checks read (a tree changed on disk between the two cannot slip
// unchecked text in). Each was read three to five times.
func TestKustomizeReadsEachFileOnce(t *testing.T) {
	files := tree(map[string]string{
		"kustomization.yaml":     "resources:\n- cm.yaml\n- sub\nconfigMapGenerator:\n- name: g\n  envs: [app.env]\npatches:\n- path: p.yaml\n",
		"cm.yaml":                configMap,
		"app.env":                "A=b\n",
		"p.yaml":                 configMap + "data:\n  patched: \"yes\"\n",
		"sub/kustomization.yaml": "resources:\n- cm2.yaml\n",
		"sub/cm2.yaml":           "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm2\n",
	})
	c := &countingFS{MapFS: files, reads: map[string]int{}}
	if _, err := render.Render(t.Context(), c, render.Options{}); err != nil {
		t.Fatal(err)
	}
	for name := range files {
		if n := c.reads[name]; n != 1 {
			t.Errorf("%s read %d times, want once", name, n)
		}
	}
}
