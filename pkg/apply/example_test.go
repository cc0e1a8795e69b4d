package apply_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/addonpkg/addonpkg/pkg/addonset"
	"github.com/addonpkg/addonpkg/pkg/apply"
)

// An installer applies a rendered add-on and waits for it. (It needs a
// cluster, so it is compiled, not run; the tests run the same calls
// against a real API server.)
func ExampleClient_Apply() {
	ctx := context.Background()
	c, err := apply.Connect(ctx, apply.ConnectOptions{}) // KUBECONFIG, ~/.kube/config or in-cluster
	if err != nil {
		log.Fatal(err)
	}
	stream, err := os.ReadFile("rendered.yaml") // for example render.Result.YAML()
	if err != nil {
		log.Fatal(err)
	}
	objs, err := apply.DecodeObjects(stream)
	if err != nil {
		log.Fatal(err)
	}
	cs, err := c.Apply(ctx, apply.Addon{
		Name:    "coredns",
		Version: "1.12.0",
		Source:  "oci://registry.example.com/addons/coredns@sha256:...",
		Digest:  "sha256:...",
		Values:  map[string]string{"DNS_SERVER_IP": "10.96.0.10"}, // what it was rendered with
		Objects: objs,
	}, apply.Options{Wait: true, Timeout: 5 * time.Minute})
	var pe *apply.PreflightError
	switch {
	case errors.As(err, &pe):
		fmt.Println("missing permissions:", pe.Missing)
	case errors.Is(err, apply.ErrTimeout):
		fmt.Println("not ready in time:", err)
	case err != nil:
		log.Fatal(err)
	}
	fmt.Print(cs)
}

// An installer installs an add-on set as its lock pins it, in dependsOn
// order. (It needs a cluster, so it is compiled, not run; TestFromSet runs
// the conversion and examples/installer the whole path.)
func ExampleFromSet() {
	ctx := context.Background()
	res, err := addonset.RenderLocked(ctx, "addons.yaml", addonset.RenderOptions{})
	if err != nil {
		log.Fatal(err)
	}
	addons, err := apply.FromSet(res)
	if err != nil {
		log.Fatal(err)
	}
	c, err := apply.Connect(ctx, apply.ConnectOptions{})
	if err != nil {
		log.Fatal(err)
	}
	sets, err := c.ApplyAll(ctx, addons, apply.Options{Timeout: 5 * time.Minute})
	for _, cs := range sets {
		fmt.Print(cs) // the members installed before a failure stay installed
	}
	if err != nil {
		log.Fatal(err)
	}
}

// A status report lists every installed add-on. A corrupt inventory (a
// Secret edited by hand) is a row of its own, with PhaseInvalid, and the
// error beside the list names it: the others are still reported. (It
// needs a cluster, so it is compiled, not run.)
func ExampleClient_Status() {
	ctx := context.Background()
	c, err := apply.Connect(ctx, apply.ConnectOptions{})
	if err != nil {
		log.Fatal(err)
	}
	list, err := c.Status(ctx)
	if list == nil && err != nil {
		log.Fatal(err)
	}
	for _, a := range list {
		if a.Phase == apply.PhaseInvalid {
			fmt.Printf("%s: %s\n", a.Name, a.Error)
			continue
		}
		fmt.Printf("%s %s: %d/%d ready\n", a.Name, a.Version, a.Ready, a.Objects)
	}
	if errors.Is(err, apply.ErrCorruptInventory) {
		os.Exit(1)
	}
}

// A set comes out the other way it went in: metrics-server depends on the
// Gateway API CRDs in the example set, so it goes before them. The order
// needs no cluster; UninstallAll does (and passes over a member that is
// not installed, naming it in its error).
func ExampleUninstallOrder() {
	set, err := addonset.Load(context.Background(), "../../examples/addon-set/addons.yaml")
	if err != nil {
		log.Fatal(err)
	}
	names, err := apply.UninstallOrder(set)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(names)
	// Output: [metrics-server gateway-api-crds coredns]
}
