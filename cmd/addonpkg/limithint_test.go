package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/addonpkg/addonpkg/pkg/apply"
	"github.com/addonpkg/addonpkg/pkg/safetree"
)

// Every limit a reader refuses with is a *safetree.LimitError with its
// LimitID; the hint names --max-ID on the commands that have that flag,
// and nothing on the others (the document caps have no flag, so their
// defaults hold everywhere).
func TestLimitHintNamesOnlyTheCommandsFlags(t *testing.T) {
	t.Parallel()
	root := newRootCmd(strings.NewReader(""), io.Discard, io.Discard)
	unpack, _, err := root.Find([]string{"unpack"})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []safetree.LimitID{
		safetree.LimitAddonBytes, safetree.LimitImageBytes, safetree.LimitEntries, safetree.LimitFileBytes,
		safetree.LimitPathLength, safetree.LimitDepth, safetree.LimitLayers, safetree.LimitDownloadBytes,
		safetree.LimitManifestBytes, safetree.LimitIndexBytes, safetree.LimitConfigBytes, safetree.LimitLockBytes,
		safetree.LimitSignatureBytes, safetree.LimitDeclarationBytes, safetree.LimitBundleReferrers, safetree.LimitBundleSearchBytes,
	} {
		err := fmt.Errorf("read: %w", &safetree.LimitError{Name: "x", Limit: 1, Which: id})
		hint := flagHint(unpack, err)
		has := unpack.Flags().Lookup("max-"+string(id)) != nil
		if want := " (raise it with --max-" + string(id) + ")"; has && hint != want {
			t.Errorf("%s: hint %q on unpack, which has the flag; want %q", id, hint, want)
		}
		if !has && hint != "" {
			t.Errorf("%s: hint %q on unpack, which has no such flag", id, hint)
		}
	}
}

// A wait that timed out names --wait-timeout, also when its error wraps
// context.DeadlineExceeded (a deletion's does), which on its own means
// a network timeout and --timeout; a user who raised --timeout, as
// helm's --timeout would have raised the wait, is told which is which.
func TestWaitTimeoutHintNamesWaitTimeout(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"apply", "uninstall"} {
		root := newRootCmd(strings.NewReader(""), io.Discard, io.Discard)
		cmd, _, err := root.Find([]string{name})
		if err != nil {
			t.Fatal(err)
		}
		for _, werr := range []error{
			&apply.WaitError{Op: "readiness", TimedOut: true, Err: errors.New("timeout")},
			&apply.WaitError{Op: "deletion", TimedOut: true, Err: context.DeadlineExceeded},
		} {
			if got, want := flagHint(cmd, werr), " (raise it with --wait-timeout)"; got != want {
				t.Errorf("%s, %s wait: hint %q, want %q", name, werr.(*apply.WaitError).Op, got, want)
			}
		}
		if cmd.Flags().Lookup("timeout") == nil {
			continue
		}
		if err := cmd.Flags().Set("timeout", "10m"); err != nil {
			t.Fatal(err)
		}
		got := flagHint(cmd, &apply.WaitError{Op: "readiness", TimedOut: true, Err: errors.New("timeout")})
		if want := " (raise it with --wait-timeout: --timeout is the registries' and sources')"; got != want {
			t.Errorf("%s --timeout 10m: hint %q, want %q", name, got, want)
		}
	}
}
