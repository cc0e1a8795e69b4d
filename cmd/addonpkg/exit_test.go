package main

import (
	"bytes"
	"context"
	"errors"
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
