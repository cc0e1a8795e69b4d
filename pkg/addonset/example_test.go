package addonset_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"testing"

	"github.com/addonpkg/addonpkg/pkg/addonset"
)

const exampleSet = "../../examples/addon-set/addons.yaml"

// Render a set from its lock: load the declaration, read the lock, render
// every member from exactly what the lock pins, in dependency order.
func Example() {
	ctx := context.Background()
	set, err := addonset.Load(ctx, exampleSet)
	if err != nil {
		log.Fatal(err)
	}
	lock, err := addonset.LoadLock(addonset.LockPath(exampleSet))
	if err != nil {
		log.Fatal(err)
	}
	res, err := addonset.Render(ctx, set, addonset.RenderOptions{Lock: lock})
	if err != nil {
		log.Fatal(err)
	}
	for _, m := range res.Members {
		fmt.Println(m.Name, len(m.Result.Documents), "objects")
	}
	// res.WriteTo(os.Stdout) prints the stream for kubectl apply -f -.
	// Output:
	// coredns 6 objects
	// gateway-api-crds 3 objects
	// metrics-server 9 objects
}

// RenderLocked is what an installer calls: the declaration and the lock
// beside it, rendered from exactly the pinned sources. A set without a
// lock is refused with ErrNoLock, never resolved afresh.
func ExampleRenderLocked() {
	res, err := addonset.RenderLocked(context.Background(), exampleSet, addonset.RenderOptions{})
	if errors.Is(err, addonset.ErrNoLock) {
		log.Fatalf("%v: lock the set and review the lock first", err)
	}
	if err != nil {
		log.Fatal(err)
	}
	for _, m := range res.Members {
		fmt.Println(m.Name, "from", m.Pinned)
	}
	// Output:
	// coredns from ../coredns
	// gateway-api-crds from ../gateway-api-crds
	// metrics-server from ../metrics-server
}

// TestExampleSetLock keeps examples/addon-set/addons.lock true: it holds
// exactly the bytes a fresh lock of the declaration gives, and checks.
// After changing an example: go run ./cmd/addonpkg lock -f
// examples/addon-set/addons.yaml.
func TestExampleSetLock(t *testing.T) {
	ctx := context.Background()
	set, err := addonset.Load(ctx, exampleSet)
	if err != nil {
		t.Fatal(err)
	}
	l, err := addonset.Lock(ctx, set, addonset.LockOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := l.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(addonset.LockPath(exampleSet))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is not what 'addonpkg lock' writes now; run it again. It should read:\n%s", addonset.LockPath(exampleSet), got)
	}
	onDisk, err := addonset.ParseLock(want, addonset.LockPath(exampleSet))
	if err != nil {
		t.Fatal(err)
	}
	if err := addonset.Check(ctx, set, onDisk, addonset.Options{}); err != nil {
		t.Error(err)
	}
}

// Parse checks a declaration before anything is fetched: here a cycle,
// reported as one line that names it.
func ExampleParse() {
	decl := `apiVersion: addon.cncf.io/v1alpha1
kind: AddonSet
addons:
  - name: cni
    source: registry.example.com/addons/cni
    version: "~1.11"
    dependsOn: [policies]
  - name: policies
    source: registry.example.com/addons/policies:1.0
    dependsOn: [cni]
`
	_, err := addonset.Parse([]byte(decl), "addons.yaml", "")
	fmt.Println(err)
	fmt.Println(errors.Is(err, addonset.ErrCycle))
	// Output:
	// addons.yaml: dependency cycle: cni -> policies -> cni
	// true
}

// Lock pins every member; Marshal gives the lock file's bytes.
func ExampleLock() {
	ctx := context.Background()
	set, err := addonset.Load(ctx, exampleSet)
	if err != nil {
		log.Fatal(err)
	}
	lock, err := addonset.Lock(ctx, set, addonset.LockOptions{})
	if err != nil {
		log.Fatal(err)
	}
	for _, m := range lock.Addons {
		fmt.Println(m.Name, m.Pinned, m.Identity[:17])
	}
	// Output:
	// coredns ../coredns sha256:9df63e2faa
	// gateway-api-crds ../gateway-api-crds sha256:ac244e8636
	// metrics-server ../metrics-server sha256:afa51911a9
}

// A set comes out the other way it went in: metrics-server depends on the
// Gateway API CRDs in the example set, so it goes before them. The order
// needs no cluster; apply.Client.UninstallAll does (and passes over a member that is
// not installed, naming it in its error).
func ExampleSet_UninstallOrder() {
	set, err := addonset.Load(context.Background(), "../../examples/addon-set/addons.yaml")
	if err != nil {
		log.Fatal(err)
	}
	names, err := set.UninstallOrder()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(names)
	// Output: [metrics-server gateway-api-crds coredns]
}
