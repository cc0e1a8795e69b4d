package apply_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"k8s.io/client-go/rest"

	"github.com/addonpkg/addonpkg/pkg/addonset"
	"github.com/addonpkg/addonpkg/pkg/apply"
	"github.com/addonpkg/addonpkg/pkg/registry"
	"github.com/addonpkg/addonpkg/pkg/render"
	"github.com/addonpkg/addonpkg/pkg/signature"
	"github.com/addonpkg/addonpkg/pkg/source"
	"github.com/addonpkg/addonpkg/pkg/unpack"
	"github.com/addonpkg/addonpkg/pkg/values"
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
	addons, err := apply.FromSet(res.Members)
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

// An installer that has its own *rest.Config (a cluster it just made)
// fetches an add-on from a registry, checked against a cosign key and
// read through the registry's retries, renders it with the values it
// declares, installs it with its progress and the API server's warnings
// in the installer's own logger, and tells the errors apart by type.
// The *rest.Config is the one the program has: a controller-runtime
// manager's (mgr.GetConfig()), rest.InClusterConfig() in a Job, or
// clientcmd.RESTConfigFromKubeConfig of a kubeconfig it holds (kubeadm's
// admin.conf, a Cluster API workload cluster's Secret). New gives
// namespaced objects that name none "default" unless
// ClientOptions.Namespace says otherwise: a Job that wants its own
// namespace, as Connect takes a Pod's, names it (the downward API's
// metadata.namespace). (It needs a registry and a cluster, so it is
// compiled, not run.)
func ExampleNew() {
	ctx := context.Background()
	log := slog.Default()
	var cfg *rest.Config // the installer's own (see above)
	keys, err := signature.LoadKeyVerifier("cosign.pub")
	if err != nil {
		log.Error("key", "err", err)
		return
	}
	sopts := source.Options{
		Registry: registry.Options{Retries: 5, Logger: log},
		Verify:   keys, // nothing unsigned is read: signature.ErrNoSignature, ErrBadSignature
	}
	ad, err := source.Resolve(ctx, "registry.example.com/addons/coredns:1.12", sopts, unpack.Options{})
	if err != nil {
		log.Error("fetch", "err", err) // errdef.ErrNotFound, registry.ErrUnauthorized, ...
		return
	}
	res, err := render.Addon(ctx, ad, render.Options{Values: map[string]string{"DNS_SERVER_IP": "10.96.0.10"}})
	var missing *values.MissingError
	if errors.As(err, &missing) {
		log.Error("values", "missing", missing.Missing)
		return
	} else if err != nil {
		log.Error("render", "err", err)
		return
	}
	addon, err := apply.FromRendered("", ad, res)
	if err != nil {
		log.Error("decode", "err", err)
		return
	}
	c, err := apply.New(cfg, apply.ClientOptions{Logger: log})
	if err != nil {
		log.Error("client", "err", err)
		return
	}
	cs, err := c.Apply(ctx, addon, apply.Options{
		Wait:    true,
		Timeout: 5 * time.Minute,
		Progress: func(s apply.Stage) { // on Apply's goroutine, never after it returns
			log.Info("addon", "name", s.Addon, "stage", s.Name, "objects", len(s.Changes))
		},
	})
	var pe *apply.PreflightError
	var oe *apply.OwnershipError
	var nce *apply.NameClaimError
	var we *apply.WaitError
	switch {
	case errors.As(err, &pe):
		log.Error("missing permissions", "user", pe.User, "missing", pe.Missing)
	case errors.As(err, &nce):
		// Another add-on of that name is installed: FromRendered with a
		// name replaces it, or installs beside it.
		log.Error("name taken", "addon", nce.Addon, "installed from", nce.Installed, "this from", nce.Claimant)
	case errors.As(err, &oe):
		log.Error("owned by another add-on", "object", oe.Object, "owner", oe.Owner)
	case errors.As(err, &we):
		log.Error("not ready", "objects", we.Objects, "timedOut", errors.Is(err, apply.ErrTimeout))
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		log.Error("stopped; the next Apply finishes the job", "err", err)
	case err != nil:
		log.Error("apply", "err", err)
	default:
		log.Info("installed", "created", cs.Count(apply.Created), "configured", cs.Count(apply.Configured))
	}

	// Later: uninstall it, objects in reverse order, then its inventory.
	if _, err := c.Uninstall(ctx, addon.Name, apply.UninstallOptions{}); errors.Is(err, apply.ErrNotInstalled) {
		log.Info("was not installed")
	}
}

// FromRendered is what Apply takes from an unpacked, rendered add-on:
// its objects, and the name, version, source and values its inventory
// records. A folder has no pinned form: its Source is the folder's
// absolute path, which names it read back from any directory (so is a
// relative oci:DIR's: oci:/abs/DIR@sha256:...). Without a name of the
// installer's, the name is the config's, and the Addon says so
// (NameFromConfig): Apply refuses it when the add-on installed under
// that name came from elsewhere.
func ExampleFromRendered() {
	ctx := context.Background()
	ad, err := source.Resolve(ctx, "../../examples/coredns", source.Options{}, unpack.Options{})
	if err != nil {
		log.Fatal(err)
	}
	res, err := render.Addon(ctx, ad, render.Options{Values: map[string]string{"DNS_SERVER_IP": "10.96.0.10"}})
	if err != nil {
		log.Fatal(err)
	}
	addon, err := apply.FromRendered("", ad, res)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(addon.Name, len(addon.Objects), "objects")
	fmt.Println(addon.Values)
	fmt.Println("source absolute:", filepath.IsAbs(addon.Source), filepath.Base(addon.Source))
	fmt.Println("name from config:", addon.NameFromConfig)
	// Output:
	// coredns 6 objects
	// map[DNS_DOMAIN:cluster.local DNS_MEMORY_LIMIT:170Mi DNS_SERVER_IP:10.96.0.10]
	// source absolute: true coredns
	// name from config: true
}

// A controller that installs add-ons sets the conditions of its own
// resource from the objects that are not ready, by their status word,
// never by reading the lines people read. The list is Status's
// (Installed.UnreadyObjects) or a failed wait's (WaitError.Statuses);
// here it is written out, as Status returned it of an add-on one of
// whose objects another add-on adopted.
func ExampleObjectStatus() {
	unready := []apply.ObjectStatus{
		{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "kube-system", Name: "coredns", Status: apply.InProgress, Message: "Available: 0/2"},
		{Version: "v1", Kind: "ConfigMap", Namespace: "kube-system", Name: "coredns", Status: apply.OwnedByOther, Owner: "dns"},
		{Version: "v1", Kind: "Service", Namespace: "kube-system", Name: "kube-dns", Status: apply.NotFound},
	}
	for _, s := range unready {
		switch s.Status {
		case apply.InProgress, apply.Terminating:
			fmt.Printf("Progressing: %s %s/%s: %s\n", s.Kind, s.Namespace, s.Name, s.Message)
		case apply.OwnedByOther:
			fmt.Printf("Conflict: %s %s/%s belongs to add-on %s\n", s.Kind, s.Namespace, s.Name, s.Owner)
		case apply.Unreadable:
			fmt.Printf("Unknown: %s %s/%s: %s\n", s.Kind, s.Namespace, s.Name, s.Message)
		default: // Failed, NotFound, NotOwned, or a word a later kstatus computes
			fmt.Printf("Degraded: %s %s/%s is %s\n", s.Kind, s.Namespace, s.Name, s.Status)
		}
	}
	// What Installed.Unready and `addonpkg status NAME` say of them:
	for _, s := range unready {
		fmt.Println(s)
	}
	// Output:
	// Progressing: Deployment kube-system/coredns: Available: 0/2
	// Conflict: ConfigMap kube-system/coredns belongs to add-on dns
	// Degraded: Service kube-system/kube-dns is NotFound
	// Deployment/kube-system/coredns: InProgress: Available: 0/2
	// ConfigMap/kube-system/coredns: owned by add-on dns
	// Service/kube-system/kube-dns: NotFound
}
