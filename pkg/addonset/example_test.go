package addonset_test

import (
	"bytes"
	"context"
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
