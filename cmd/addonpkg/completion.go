package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// shells are the shells cobra's completion command writes scripts for.
var shells = []string{"bash", "zsh", "fish", "powershell"}

// strictCompletionAndHelp makes `completion` and `help` refuse what they
// do not know, as kubectl's do: cobra's print the help and exit 0 for
// `completion tcsh` (so `completion tcsh > file` wrote the help where a
// script belongs) and for `help nosuch`.
func strictCompletionAndHelp(root *cobra.Command) {
	root.InitDefaultCompletionCmd()
	root.InitDefaultHelpCmd()
	noFileCompletion(root)
	for _, c := range root.Commands() {
		switch c.Name() {
		case "completion":
			want := "want one of " + strings.Join(shells, ", ")
			c.Args = func(cmd *cobra.Command, args []string) error {
				if len(args) > 0 {
					return &usageError{cmd: cmd, msg: fmt.Sprintf("unsupported shell %q: %s", args[0], want)}
				}
				return nil
			}
			c.RunE = func(cmd *cobra.Command, _ []string) error {
				return &usageError{cmd: cmd, msg: "no shell named: " + want}
			}
		case "help":
			c.RunE = func(cmd *cobra.Command, args []string) error {
				target, rest, err := root.Find(args)
				if err != nil || len(rest) > 0 {
					return &usageError{cmd: cmd, msg: fmt.Sprintf("unknown help topic %q", strings.Join(args, " "))}
				}
				return target.Help()
			}
		}
	}
}

// pathFlags are the flags whose value is a file or folder on this
// machine (or may be: --to oci-archive:FILE, --base ./dir, build's -o
// oci:DIR): the shell completes paths for them.
var pathFlags = []string{"ca-file", "key", "verify-key", "file", "output", "values", "vectors", "kubeconfig", "lock", "store", "base", "to"}

// noFileCompletion makes every flag of c and its commands that has no
// completion of its own and is no path (pathFlags) complete nothing (a
// bool's --flag= too): the shell offered the files of the working directory
// for --name, --tag, --set, --timeout and the like, as kubectl does not.
// TestFlagCompletionOffersPathsOnlyForPaths keeps new flags to it.
func noFileCompletion(c *cobra.Command) {
	c.Flags().VisitAll(func(f *pflag.Flag) {
		if slices.Contains(pathFlags, f.Name) {
			return
		}
		if _, ok := c.GetFlagCompletionFunc(f.Name); !ok {
			_ = c.RegisterFlagCompletionFunc(f.Name, cobra.NoFileCompletions)
		}
	})
	for _, sub := range c.Commands() {
		noFileCompletion(sub)
	}
}
