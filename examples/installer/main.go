// Command installer is what a cluster installer needs from addonpkg, in
// about a hundred lines to copy: load an add-on set, check that its lock
// pins the declaration and that every pinned source still yields the
// locked content, render the members in dependency order, and hand the
// stream on (here to stdout, for 'kubectl apply -f -').
//
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
	"github.com/addonpkg/addonpkg/pkg/registry"
	"github.com/addonpkg/addonpkg/pkg/source"
)

func main() {
	file := flag.String("f", "addons.yaml", "the add-on set's declaration; its lock is beside it")
	caFile := flag.String("ca-file", "", "PEM file of CA certificates to trust (registries, https, git)")
	timeout := flag.Duration("timeout", 5*time.Minute, "how long the whole install may take")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()

	if err := install(ctx, *file, *caFile, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "installer:", explain(err))
		os.Exit(1)
	}
}

// install loads the set, checks it against its lock, renders it and
// writes the stream to w. Nothing is written unless every member checked
// out and rendered.
func install(ctx context.Context, file, caFile string, w io.Writer) error {
	set, err := addonset.Load(ctx, file)
	if err != nil {
		return err
	}
	// An installer installs what was reviewed: no lock, no install.
	lock, err := addonset.LoadLock(addonset.LockPath(file))
	if err != nil {
		return fmt.Errorf("read the lock: %w", err)
	}
	// The lock must pin the declaration as it is now (render checks this
	// too; checking first gives the clearest message).
	if err := lock.Stale(set); err != nil {
		return err
	}
	opts := addonset.Options{
		Source: source.Options{Registry: registry.Options{CAFile: caFile}},
	}
	// Render fetches exactly the pinned sources and refuses anything that
	// differs from the lock: a stale lock, a moved tag, other content.
	res, err := addonset.Render(ctx, set, addonset.RenderOptions{Options: opts, Lock: lock})
	if err != nil {
		return err
	}
	for _, m := range res.Members {
		fmt.Fprintf(os.Stderr, "installer: %s %s (%d objects)\n", m.Name, m.Identity, len(m.Result.Documents))
	}
	// Members are separated by "# addonpkg-set-member: NAME" comment
	// lines: an installer that waits for each member to become ready
	// would apply res.Members one by one instead.
	bw := bufio.NewWriter(w)
	if _, err := res.WriteTo(bw); err != nil {
		return err
	}
	return bw.Flush()
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
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("%w; run 'addonpkg lock' and review the lock file", err)
	}
	return err
}
