package main

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/addonpkg/addonpkg/pkg/apply"
)

// The positional-argument validators of the commands, declared on each
// (Args: exactArgs("SRC", "DST")) as cobra's ExactArgs, RangeArgs,
// MinimumNArgs and NoArgs are, but naming what is missing ("missing
// argument REF") or unexpected, as a usageError. A command that takes
// any arguments uses cobra.ArbitraryArgs. TestArgsAgreeWithUse checks
// each against its Use line.

// noArgs refuses any argument (cobra.NoArgs).
func noArgs(cmd *cobra.Command, args []string) error {
	return checkArgs(cmd, args, nil, nil, false)
}

// exactArgs takes exactly the arguments named (cobra.ExactArgs).
func exactArgs(names ...string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		return checkArgs(cmd, args, names, nil, false)
	}
}

// rangeArgs takes the required arguments and up to len(optional) more
// (cobra.RangeArgs).
func rangeArgs(required []string, optional ...string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		return checkArgs(cmd, args, required, optional, false)
	}
}

// minimumArgs takes the required arguments and any number more
// (cobra.MinimumNArgs).
func minimumArgs(required ...string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		return checkArgs(cmd, args, required, nil, true)
	}
}

// checkArgs names the first missing argument of required, or the first
// one beyond required and optional more unless variadic, or the first
// that is empty: no command takes "" for a name, a SOURCE or a registry,
// and letting one through gives messages about nothing (":latest: not
// found in store").
func checkArgs(cmd *cobra.Command, args, required, optional []string, variadic bool) error {
	names := append(slices.Clip(required), optional...)
	switch {
	case len(args) < len(required):
		missing := required[len(args):]
		what := "argument " + missing[0]
		if len(missing) > 1 {
			what = "arguments " + strings.Join(missing, " ")
		}
		return &usageError{cmd: cmd, msg: "missing " + what}
	case !variadic && len(args) > len(names):
		takes := "no arguments"
		if len(names) > 0 {
			// What the usage line says it takes.
			takes = strings.Join(strings.Fields(cmd.Use)[1:], " ")
		}
		arg := args[len(names)]
		msg := fmt.Sprintf("unexpected argument %q (%s takes %s)", arg, cmd.Name(), takes)
		// --dry-run alone is a dry run, so "--dry-run server" leaves
		// server an argument, as in kubectl.
		if f := cmd.Flags().Lookup("dry-run"); f != nil && f.NoOptDefVal != "" && slices.Contains([]string{"server", "client", "none"}, arg) {
			msg += fmt.Sprintf("; --dry-run takes its value after '=': --dry-run=%s", arg)
		}
		return &usageError{cmd: cmd, msg: msg}
	}
	for i, arg := range args {
		if arg == "" {
			return &usageError{cmd: cmd, msg: fmt.Sprintf("empty argument %s", names[min(i, len(names)-1)])}
		}
	}
	return nil
}

// rootArgs answers an unknown command with cobra's suggestions, each on
// its own line.
func rootArgs(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	e := &usageError{cmd: cmd, msg: fmt.Sprintf("unknown command %q", args[0])}
	if sug := cmd.SuggestionsFor(args[0]); len(sug) > 0 {
		e.extra = append(e.extra, "Did you mean this?")
		for _, s := range sug {
			e.extra = append(e.extra, "    addonpkg "+s)
		}
	}
	e.extra = append(e.extra, "Run 'addonpkg --help' for the commands.")
	return e
}

// flagError turns cobra's flag errors into usage errors. kubectl's,
// helm's and flux's -o json is this CLI's --json: a command that prints
// JSON says so when -o or --output is unknown to it. helm's -n and -A
// (a release lives in a namespace) are unknown to status and uninstall,
// whose add-ons are named cluster-wide: they say where the inventories
// are instead.
func flagError(cmd *cobra.Command, err error) error {
	ue := &usageError{cmd: cmd, msg: err.Error()}
	var ne *pflag.NotExistError
	if !errors.As(err, &ne) {
		return ue
	}
	name, f := ne.GetSpecifiedName(), cmd.Flags()
	switch {
	case slices.Contains([]string{"o", "output"}, name) && f.Lookup("json") != nil:
		ue.msg += " (addonpkg prints JSON with --json, not -o json)"
	case slices.Contains([]string{"n", "namespace", "A", "all-namespaces"}, name) && f.Lookup("namespace") == nil && f.Lookup("inventory-namespace") != nil:
		ue.msg += " (an add-on is named cluster-wide, not in a namespace: its inventory is in --inventory-namespace, default " + apply.DefaultInventoryNamespace + ")"
	}
	return ue
}

// rootFlagError is flagError for a flag the root does not know, given
// before the command (addonpkg --json images, as kubectl takes
// --context X before get). cobra takes the word after a flag it does not
// know for the flag's value, finds no command, and the root refuses the
// flag: the error says to give it after the command, naming the command
// of args that has it, and points at the help.
func rootFlagError(root *cobra.Command, err error, args []string) error {
	ferr := flagError(root, err)
	var ue *usageError
	var ne *pflag.NotExistError
	if !errors.As(ferr, &ue) || !errors.As(err, &ne) {
		return ferr
	}
	name := ne.GetSpecifiedName()
	for _, arg := range args {
		c, _, ferr := root.Find([]string{arg})
		if ferr != nil || c == root || !c.IsAvailableCommand() {
			continue
		}
		if f := c.Flags().Lookup(name); f != nil || (len(name) == 1 && c.Flags().ShorthandLookup(name) != nil) {
			ue.extra = append(ue.extra, fmt.Sprintf("%s is a flag of %s: give it after the command (addonpkg %s %s ...)", dashes(name), c.Name(), c.Name(), dashes(name)))
			break
		}
	}
	ue.extra = append(ue.extra, "Run 'addonpkg --help' for the commands.")
	return ue
}

// dashes is how the flag named name is written: -x or --name.
func dashes(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}
