package apply_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/addonpkg/addonpkg/internal/testing/kubeenv"
	"github.com/addonpkg/addonpkg/pkg/apply"
)

// benchStream is a generated add-on of n objects: a Namespace and n-1
// ConfigMaps in it.
func benchStream(ns string, n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: %s\n", ns)
	for i := 1; i < n; i++ {
		fmt.Fprintf(&b, "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-%04d\n  namespace: %s\ndata:\n  key: value-%d\n", i, ns, i)
	}
	return b.String()
}

// BenchmarkApply1000 applies a generated 1,000-object add-on (a fresh
// namespace each time) and re-applies it unchanged, side by side with
// `kubectl apply --server-side -f -` of the same stream, against the same
// real API server (make bench runs them in one go; compare them in one
// run, the machine is shared).
func BenchmarkApply1000(b *testing.B) {
	env := kubeenv.Shared(b)
	c, err := apply.New(env.Admin, apply.ClientOptions{})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	addon := func(b *testing.B, name string) apply.Addon {
		objs, err := apply.DecodeObjects([]byte(benchStream(name, 1000)))
		if err != nil {
			b.Fatal(err)
		}
		return apply.Addon{Name: name, Version: "1", Objects: objs}
	}
	kubectl := func(b *testing.B, stream string) {
		cmd := exec.Command("kubectl", "--kubeconfig", env.AdminKubeconfig, "--cache-dir", b.TempDir(), "apply", "--server-side", "-f", "-")
		cmd.Stdin = strings.NewReader(stream)
		cmd.Env = append(os.Environ(), "HOME="+b.TempDir())
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			b.Fatalf("kubectl apply --server-side: %v\n%s", err, out.String())
		}
	}
	n := 0
	fresh := func(tool string) string { n++; return fmt.Sprintf("bench-%s-%d", tool, n) }

	b.Run("addonpkg/install", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			a := addon(b, fresh("a"))
			b.StartTimer()
			if _, err := c.Apply(ctx, a, apply.Options{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("kubectl/install", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			s := benchStream(fresh("k"), 1000)
			b.StartTimer()
			kubectl(b, s)
		}
	})
	b.Run("addonpkg/reapply", func(b *testing.B) {
		a := addon(b, fresh("a"))
		if _, err := c.Apply(ctx, a, apply.Options{}); err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			cs, err := c.Apply(ctx, a, apply.Options{})
			if err != nil || cs.Changed() {
				b.Fatalf("re-apply changed something (%v):\n%s", err, cs)
			}
		}
	})
	b.Run("kubectl/reapply", func(b *testing.B) {
		s := benchStream(fresh("k"), 1000)
		kubectl(b, s)
		for b.Loop() {
			kubectl(b, s)
		}
	})
}
