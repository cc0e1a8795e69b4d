// Command addonpkg packages Kubernetes add-ons as OCI images, moves them
// through registries, and unpacks them anywhere without a container
// runtime, and installs them into clusters. Every command is a thin layer
// over the packages in pkg/ (and the command-only ones in internal/):
// flags to options, one call, print.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	root, a := newRoot(os.Stdin, os.Stdout, os.Stderr)
	routeProcessOutput()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// The first Ctrl-C cancels ctx: the command cleans up and exits 130.
	// From then on the default applies, so a second one stops at once.
	go func() { <-ctx.Done(); stop() }()
	code := execute(ctx, root, a, os.Args[1:])
	stop()
	os.Exit(code)
}
