package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
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
