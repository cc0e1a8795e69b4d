package render_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"sync/atomic"
	"testing"
	"testing/fstest"
	"time"

	"github.com/addonpkg/addonpkg/pkg/addon"
	"github.com/addonpkg/addonpkg/pkg/render"
	"github.com/addonpkg/addonpkg/pkg/safetree"
)

// wideConfigMap is a ConfigMap whose data has keys keys, in block style.
func wideConfigMap(keys int) string {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big\ndata:\n")
	for i := range keys {
		fmt.Fprintf(&b, "  k%d: v\n", i)
	}
	return b.String()
}

// lines is n lines made by f.
func lines(n int, f func(int) string) string {
	var b strings.Builder
	for i := range n {
		b.WriteString(f(i) + "\n")
	}
	return b.String()
}

// A tree kustomize renders is refused, before kustomize reads it, when a
// mapping or a generated ConfigMap would have more keys than
// safetree.DefaultMaxMappingKeys (kustomize's time is quadratic in them);
// one at the cap renders, and plain manifests have no such cap.
func TestKustomizeMappingKeysCapped(t *testing.T) {
	max := safetree.DefaultMaxMappingKeys
	kust := func(extra string) string { return "resources:\n- cm.yaml\n" + extra }
	flow := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"big"},"data":{` +
		strings.TrimSuffix(lines(max+1, func(i int) string { return fmt.Sprintf(`"k%d":"v",`, i) }), ",\n") + "}}"
	for _, tc := range []struct {
		name    string
		files   map[string]string
		line    int
		refused string // the file named, "" when it renders
	}{
		{"at the cap", map[string]string{"kustomization.yaml": kust(""), "cm.yaml": wideConfigMap(max)}, 0, ""},
		{"block mapping", map[string]string{"kustomization.yaml": kust(""), "cm.yaml": wideConfigMap(max + 1)}, 6, "cm.yaml"},
		{"JSON object", map[string]string{"kustomization.yaml": "resources:\n- cm.json\n", "cm.json": flow}, 1, "cm.json"},
		// kustomize reads a resource whatever its file is named.
		{"resource not named .yaml", map[string]string{"kustomization.yaml": "resources:\n- cm.txt\n", "cm.txt": wideConfigMap(max + 1)}, 6, "cm.txt"},
		{"env file", map[string]string{
			"kustomization.yaml": kust("configMapGenerator:\n- name: gen\n  envs:\n  - big.env\n"),
			"cm.yaml":            wideConfigMap(1),
			"big.env":            "# a comment\n\n" + lines(max+1, func(i int) string { return fmt.Sprintf("K%d=v", i) }),
		}, 4, "kustomization.yaml"},
		{"literals", map[string]string{
			"kustomization.yaml": kust("secretGenerator:\n- name: gen\n  literals:\n" + lines(max+1, func(i int) string { return fmt.Sprintf("  - k%d=v", i) })),
			"cm.yaml":            wideConfigMap(1),
		}, 4, "kustomization.yaml"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fsys := fstest.MapFS{}
			for n, s := range tc.files {
				fsys[n] = &fstest.MapFile{Data: []byte(s)}
			}
			_, err := render.Render(context.Background(), fsys, render.Options{Kind: addon.KindKustomize})
			if tc.refused == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var le *safetree.LimitError
			var re *render.Error
			if !errors.As(err, &le) || le.Which != safetree.LimitMappingKeys || !errors.As(err, &re) || re.File != tc.refused || re.Line != tc.line {
				t.Fatalf("err = %v; want a mapping-keys LimitError at %s:%d", err, tc.refused, tc.line)
			}
			if strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), fmt.Sprint(max+1)+" keys") {
				t.Errorf("message %q: want one line naming the %d keys", err, max+1)
			}
		})
	}

	// A caller that trusts its tree raises the cap (and may lower it):
	// one key over the default renders under a cap of max+1, and a cap
	// of 10 refuses 11 keys.
	for _, tc := range []struct {
		keys, cap int
		refused   bool
	}{{max + 1, max + 1, false}, {11, 10, true}, {10, 10, false}} {
		fsys := fstest.MapFS{
			"kustomization.yaml": &fstest.MapFile{Data: []byte(kust(""))},
			"cm.yaml":            &fstest.MapFile{Data: []byte(wideConfigMap(tc.keys))},
		}
		_, err := render.Render(context.Background(), fsys, render.Options{Kind: addon.KindKustomize, MaxMappingKeys: tc.cap})
		var le *safetree.LimitError
		if refused := errors.As(err, &le) && le.Which == safetree.LimitMappingKeys && le.Limit == int64(tc.cap); refused != tc.refused || (!tc.refused && err != nil) {
			t.Errorf("%d keys, MaxMappingKeys %d: err = %v; want refused %v", tc.keys, tc.cap, err, tc.refused)
		}
	}

	// Plain manifests render in linear time: no cap.
	fsys := fstest.MapFS{"cm.yaml": &fstest.MapFile{Data: []byte(wideConfigMap(8 * max))}}
	res, err := render.Render(context.Background(), fsys, render.Options{Kind: addon.KindManifests})
	if err != nil || len(res.Documents) != 1 {
		t.Fatalf("plain manifests of %d keys: %v", 8*max, err)
	}
}

// blockingFS counts the opens of name and, when at is not 0, blocks the
// at-th until release is closed, after it said so on opened. It has only
// Open, so every read of the tree goes through it.
type blockingFS struct {
	fsys    fstest.MapFS
	name    string
	at      int32
	opens   *atomic.Int32
	opened  chan struct{}
	release chan struct{}
}

func (b blockingFS) Open(name string) (fs.File, error) {
	if name == b.name && b.opens.Add(1) == b.at {
		close(b.opened)
		<-b.release
	}
	return b.fsys.Open(name)
}

// kustomize takes no context, but a render does: when ctx ends while
// kustomize runs, Render returns ctx's error then, not when kustomize is
// done.
func TestKustomizeRenderHonoursContext(t *testing.T) {
	tree := fstest.MapFS{
		"kustomization.yaml": &fstest.MapFile{Data: []byte("resources:\n- cm.yaml\n")},
		"cm.yaml":            &fstest.MapFile{Data: []byte(wideConfigMap(2))},
	}
	// The last open of cm.yaml in a render is kustomize's: the checks
	// before it read the tree first.
	count := blockingFS{fsys: tree, name: "cm.yaml", opens: new(atomic.Int32)}
	if _, err := render.Render(context.Background(), count, render.Options{Kind: addon.KindKustomize}); err != nil {
		t.Fatal(err)
	}
	fsys := blockingFS{fsys: tree, name: "cm.yaml", at: count.opens.Load(), opens: new(atomic.Int32), opened: make(chan struct{}), release: make(chan struct{})}
	defer close(fsys.release)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := render.Render(ctx, fsys, render.Options{Kind: addon.KindKustomize})
		errc <- err
	}()
	select {
	case <-fsys.opened: // kustomize is reading, and waits
	case err := <-errc:
		t.Fatalf("render returned before kustomize read cm.yaml: %v", err)
	}
	cancel()
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("render cancelled while kustomize runs: %v, want context.Canceled", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("render did not return when its context ended: it waits for kustomize")
	}
}

// Renders of kustomize trees take turns. A render whose context ends
// while it waits for its turn returns then, and its kustomize never runs
// once the turn comes: it would hold the turn from the renders still
// waited for, for nobody.
func TestKustomizeRenderLeftWhileWaitingDoesNotRun(t *testing.T) {
	tree := fstest.MapFS{
		"kustomization.yaml": &fstest.MapFile{Data: []byte("resources:\n- cm.yaml\n")},
		"cm.yaml":            &fstest.MapFile{Data: []byte(wideConfigMap(2))},
	}
	count := blockingFS{fsys: tree, name: "cm.yaml", opens: new(atomic.Int32)}
	if _, err := render.Render(context.Background(), count, render.Options{Kind: addon.KindKustomize}); err != nil {
		t.Fatal(err)
	}
	// The first render holds the turn: its kustomize blocks reading cm.yaml.
	first := blockingFS{fsys: tree, name: "cm.yaml", at: count.opens.Load(), opens: new(atomic.Int32), opened: make(chan struct{}), release: make(chan struct{})}
	firstDone := make(chan error, 1)
	go func() {
		_, err := render.Render(context.Background(), first, render.Options{Kind: addon.KindKustomize})
		firstDone <- err
	}()
	<-first.opened
	// The second checks its tree, waits for the turn, and is given up.
	second := blockingFS{fsys: tree, name: "cm.yaml", opens: new(atomic.Int32)}
	ctx, cancel := context.WithCancel(context.Background())
	secondDone := make(chan error, 1)
	go func() {
		_, err := render.Render(ctx, second, render.Options{Kind: addon.KindKustomize})
		secondDone <- err
	}()
	time.Sleep(200 * time.Millisecond) // its checks take well under a millisecond
	cancel()
	if err := <-secondDone; !errors.Is(err, context.Canceled) {
		t.Fatalf("second render: %v, want context.Canceled", err)
	}
	opened := second.opens.Load()
	// The turn goes to the second render's goroutine, which has waited
	// longest (sync.Mutex hands a mutex waited for over 1ms to the first
	// waiter), then to a third render, run to its end.
	close(first.release)
	if err := <-firstDone; err != nil {
		t.Fatal(err)
	}
	if _, err := render.Render(context.Background(), tree, render.Options{Kind: addon.KindKustomize}); err != nil {
		t.Fatal(err)
	}
	if n := second.opens.Load(); n != opened {
		t.Errorf("the given-up render's kustomize ran once its turn came: cm.yaml opened %d more times", n-opened)
	}
}
