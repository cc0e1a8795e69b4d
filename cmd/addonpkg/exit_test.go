package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/addonpkg/addonpkg/pkg/addonset"
)

// A command whose exit codes belong to a mode (lock --check) gives them
// to every error once the mode's flag is on, wherever the flag stands:
// a bad flag before it, an argument refused, a crash.
func TestExitOnErrorWhen(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		code int
	}{
		{"stale", []string{"--check", "stale"}, 1},
		{"trouble", []string{"--check", "trouble"}, 2},
		{"crash", []string{"--check", "crash"}, 2},
		{"crash without the mode", []string{"crash"}, 1},
		{"trouble without the mode", []string{"trouble"}, 1},
		{"bad flag before", []string{"--bogus", "--check", "stale"}, 2},
		{"bad flag after", []string{"--check", "--bogus", "stale"}, 2},
		{"bad value before", []string{"--n=x", "--check", "stale"}, 2},
		{"root flag before", []string{"-v", "--bogus", "--check", "stale"}, 2},
		{"bad flag without the mode", []string{"--bogus", "stale"}, 1},
		{"mode turned off", []string{"--bogus", "--check", "--check=false", "stale"}, 1},
		{"too many arguments", []string{"--check", "stale", "stale"}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stderr bytes.Buffer
			root, a := newRoot(strings.NewReader(""), &bytes.Buffer{}, &stderr)
			var check bool
			var n int
			c := &cobra.Command{Use: "probe", Args: cobra.ExactArgs(1), RunE: func(_ *cobra.Command, args []string) error {
				switch args[0] {
				case "stale":
					return addonset.ErrLockStale
				case "crash":
					var m map[string]int
					m["crash"]++
				}
				return errors.New("could not tell")
			}}
			c.Flags().BoolVar(&check, "check", false, "")
			c.Flags().IntVar(&n, "n", 0, "")
			a.exitOnErrorWhen(c, "check", checkExit)
			root.AddCommand(c)
			if code := execute(context.Background(), root, a, append([]string{"probe"}, tc.args...)); code != tc.code {
				t.Errorf("exit %d, want %d (stderr %q)", code, tc.code, stderr.String())
			}
		})
	}
}

// Errors joined (uninstall or status of several add-ons not installed)
// are one "addonpkg: " line each, not run together on one line; an
// error that says more than its parts (a prefix, two %w) stays one line.
func TestJoinedErrorsOneLineEach(t *testing.T) {
	t.Parallel()
	a1 := errors.New("status a: add-on not installed")
	b1 := errors.New("status b: add-on not installed")
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"joined", errors.Join(a1, b1), "addonpkg: status a: add-on not installed\naddonpkg: status b: add-on not installed\n"},
		{"joined in a join", errors.Join(nil, errors.Join(a1, b1)), "addonpkg: status a: add-on not installed\naddonpkg: status b: add-on not installed\n"},
		{"one", errors.Join(nil, a1), "addonpkg: status a: add-on not installed\n"},
		{"prefixed", fmt.Errorf("uninstall: %w", errors.Join(a1, b1)), "addonpkg: uninstall: status a: add-on not installed status b: add-on not installed\n"},
		{"two %w", fmt.Errorf("%w: %w", a1, b1), "addonpkg: status a: add-on not installed: status b: add-on not installed\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stderr bytes.Buffer
			root, a := newRoot(strings.NewReader(""), &bytes.Buffer{}, &stderr)
			root.AddCommand(&cobra.Command{Use: "probe", RunE: func(*cobra.Command, []string) error { return tc.err }})
			if code := execute(context.Background(), root, a, []string{"probe"}); code != 1 || stderr.String() != tc.want {
				t.Errorf("exit %d, stderr %q, want 1 and %q", code, stderr.String(), tc.want)
			}
		})
	}
}
