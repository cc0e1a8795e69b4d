// Command installer is what a cluster installer needs from addonpkg, in
// about a hundred lines to copy: load an add-on set, check that its lock
// pins the declaration and that every pinned source still yields the
// locked content, render the members in dependency order, and install
// them one by one, each waited for until ready before the next (with
// -kubeconfig), or hand the stream on (to stdout, for 'kubectl apply -f -').
//
//	go run ./examples/installer -f examples/addon-set/addons.yaml -kubeconfig ~/.kube/config
//	go run ./examples/installer -f examples/addon-set/addons.yaml | kubectl apply -f -
//
// Registry credentials come from the docker config, as for addonpkg.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"time"

	"github.com/addonpkg/addonpkg/pkg/addonset"
	"github.com/addonpkg/addonpkg/pkg/apply"
	"github.com/addonpkg/addonpkg/pkg/registry"
	"github.com/addonpkg/addonpkg/pkg/source"
)

func main() {
	file := flag.String("f", "addons.yaml", "the add-on set's declaration; its lock is beside it")
	caFile := flag.String("ca-file", "", "PEM file of CA certificates to trust (registries, https, git)")
	timeout := flag.Duration("timeout", 5*time.Minute, "how long the whole install may take")
	kubeconfig := flag.String("kubeconfig", "", "install into this cluster (else print the stream)")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()

	var err error
	if *kubeconfig != "" {
		err = installInto(ctx, *file, *caFile, apply.ConnectOptions{Kubeconfig: *kubeconfig}, apply.Options{Wait: true})
	} else {
		err = install(ctx, *file, *caFile, os.Stdout)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "installer:", explain(err))
		os.Exit(1)
	}
}

// install loads the set, checks it against its lock, renders it and
// writes the stream to w. Nothing is written unless every member checked
// out and rendered.
func install(ctx context.Context, file, caFile string, w io.Writer) error {
	res, err := renderSet(ctx, file, caFile)
	if err != nil {
		return err
	}
	// Members are separated by "# addonpkg-set-member: NAME" comment lines.
	bw := bufio.NewWriter(w)
	if _, err := res.WriteTo(bw); err != nil {
		return err
	}
	return bw.Flush()
}

// installInto applies the members in dependency order, each one waited
// for until ready before the next; each keeps its own inventory, so a
// member dropped from the set is what 'addonpkg uninstall NAME' removes.
func installInto(ctx context.Context, file, caFile string, conn apply.ConnectOptions, opts apply.Options) error {
	res, err := renderSet(ctx, file, caFile)
	if err != nil {
		return err
	}
	addons, err := apply.FromSet(res.Members)
	if err != nil {
		return err
	}
	c, err := apply.Connect(ctx, conn)
	if err != nil {
		return err
	}
	sets, err := c.ApplyAll(ctx, addons, opts)
	for _, cs := range sets {
		fmt.Fprintf(os.Stderr, "installer: %s: %d created, %d configured, %d unchanged\n", cs.Addon,
			cs.Count(apply.Created), cs.Count(apply.Configured), cs.Count(apply.Unchanged))
	}
	return err
}

// renderSet renders the set from exactly what its lock pins. An installer
// installs what was reviewed: a missing or stale lock, a moved tag or
// other content than the lock records is refused.
func renderSet(ctx context.Context, file, caFile string) (*addonset.Result, error) {
	opts := addonset.Options{
		Source: source.Options{Registry: registry.Options{CAFile: caFile}},
	}
	return addonset.RenderLocked(ctx, file, addonset.RenderOptions{Options: opts})
}

// explain adds what to do to the errors an operator will meet.
func explain(err error) error {
	var stale *addonset.StaleError
	var mismatch *addonset.MismatchError
	switch {
	case errors.As(err, &stale):
		return fmt.Errorf("%w; review the change, then run 'addonpkg lock'", err)
	case errors.As(err, &mismatch):
		return fmt.Errorf("%w; the source changed since it was locked: do not install", err)
	case errors.Is(err, addonset.ErrNoLock):
		return fmt.Errorf("%w; run 'addonpkg lock' and review the lock file", err)
	}
	return err
}
