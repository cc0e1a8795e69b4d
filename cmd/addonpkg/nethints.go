package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/addonpkg/addonpkg/internal/netguard"
	"github.com/addonpkg/addonpkg/pkg/apply"
	"github.com/addonpkg/addonpkg/pkg/publish"
	"github.com/addonpkg/addonpkg/pkg/registry"
	"github.com/addonpkg/addonpkg/pkg/render"
	"github.com/addonpkg/addonpkg/pkg/safetree"
	"github.com/addonpkg/addonpkg/pkg/source"
	"github.com/addonpkg/addonpkg/pkg/unpack"
	"github.com/addonpkg/addonpkg/pkg/values"
)

// flagHint names the flag of cmd that changes what err ran into. The
// library's errors are typed (a limit's LimitID, a sentinel) and know no
// flag names: this is the one place that maps them to the command line,
// and it names only flags that cmd has.
func flagHint(cmd *cobra.Command, err error) string {
	has := func(name string) bool { return cmd != nil && cmd.Flags().Lookup(name) != nil }
	var (
		le  *safetree.LimitError
		oe  *apply.OwnershipError
		nce *apply.NameClaimError
		ne  *apply.NameError
	)
	switch {
	case errors.As(err, &le) && le.Which != "":
		if flag := "max-" + string(le.Which); has(flag) {
			return " (raise it with --" + flag + ")"
		}
	case errors.Is(err, apply.ErrTimeout) && has("wait-timeout"):
		// Before the network's case: a deletion's wait wraps
		// context.DeadlineExceeded too. helm's --timeout is its wait's;
		// one raised here, for the same, is said to be another.
		if has("timeout") && cmd.Flags().Changed("timeout") && !cmd.Flags().Changed("wait-timeout") {
			return " (raise it with --wait-timeout: --timeout is the registries' and sources')"
		}
		return " (raise it with --wait-timeout)"
	case errors.Is(err, netguard.ErrIdleTimeout), errors.Is(err, context.DeadlineExceeded):
		if has("timeout") {
			return " (raise it with --timeout)"
		}
	case errors.Is(err, source.ErrPlainHTTP):
		if has("plain-http") {
			return " (or pass --plain-http)"
		}
	case errors.Is(err, render.ErrRemote):
		if has("allow-remote") {
			return " (pass --allow-remote to allow it)"
		}
	case errors.Is(err, values.ErrMissing):
		if has("set") {
			return " (give it with --set NAME=VALUE or --values FILE)"
		}
	case errors.Is(err, render.ErrOutsideRoot) && cmd != nil && cmd.Name() == "build":
		// An overlay of a tree whose base sits beside it.
		return " (an add-on is one tree: render the overlay first, kustomize build DIR | addonpkg build -)"
	case errors.As(err, &oe):
		them := "it"
		if oe.More > 0 {
			them = "them"
		}
		switch {
		case oe.Owner != "" && !oe.Elsewhere && oe.Others == 0 && has("name") && !cmd.Flags().Changed("file"):
			// Every object in the way is one add-on's: most likely that
			// add-on, applied again under another name (a set's member
			// takes its name from the set, not --name).
			hint := fmt.Sprintf(" (if this is add-on %q, add --name %s", oe.Owner, oe.Owner)
			if has("force") {
				hint += "; else --force adopts " + them
			}
			return hint + ")"
		case has("force"):
			return " (--force adopts " + them + ")"
		}
	case errors.As(err, &ne):
		if has("name") {
			return " (name it with --name)"
		}
	case errors.As(err, &nce):
		// The config's name was taken (no --name): an explicit name is
		// the override, whichever it is.
		if has("name") {
			return fmt.Sprintf(" (pass --name %s to replace it from the new source, or another --name to install beside it)", nce.Addon)
		}
	case errors.Is(err, apply.ErrImmutable):
		switch {
		case has("recreate"):
			return " (--recreate deletes and creates it again)"
		case cmd != nil && cmd.Name() == "diff":
			// diff --cluster asks what apply would do: apply refuses
			// too, unless told to recreate.
			return " (apply refuses it too; apply --recreate deletes and creates it again)"
		}
	case errors.Is(err, publish.ErrPlatformsBase):
		if has("platform") {
			return " (choose one with --platform)"
		}
	case errors.Is(err, unpack.ErrNoPlatform):
		var pe *unpack.PlatformError
		if errors.As(err, &pe) && len(pe.Have) == 0 {
			return "" // no platform to choose
		}
		var alts []string
		if has("platform") {
			alts = append(alts, "choose one with --platform")
		}
		if has("all-platforms") {
			alts = append(alts, "copy every platform with --all-platforms")
		}
		if len(alts) > 0 {
			return " (" + strings.Join(alts, ", or ") + ")"
		}
	}
	return ""
}

// registryHint is the command line's words for what to do about a
// registry error, by its kind: they replace the library's hint, which
// names no flag.
func registryHint(cmd *cobra.Command, e *registry.Error) string {
	has := func(name string) bool { return cmd != nil && cmd.Flags().Lookup(name) != nil }
	switch {
	case errors.Is(e, registry.ErrUntrustedCertificate) && has("ca-file"):
		return "trust the registry's CA with --ca-file, or skip verification with --insecure-skip-tls-verify"
	case errors.Is(e, registry.ErrRefused) && has("format"):
		return "if this is an artifact-form add-on, the registry may reject its media types: build it with --format image"
	case errors.Is(e, registry.ErrPlainHTTP) && has("plain-http"):
		return "add --plain-http"
	case errors.Is(e, registry.ErrUnreachable) && errors.Is(e.Err, context.DeadlineExceeded) && has("timeout"):
		return "check the registry, or allow more time with --timeout"
	}
	return e.Hint
}
